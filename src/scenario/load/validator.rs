//! The state of validating one document over its positioned tree, and
//! what every part of the validation shares: placing a problem at a node,
//! compiling a regex, numbers in range, paths inside the workspace.
//!
//! The parts live beside it: [`super::script`], [`super::expectations`],
//! [`super::fixture`], [`super::replay`], [`super::setup`], the
//! suite's values in [`super::suite`] and its limits in [`super::limits`].

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use crate::base::bounds::ONE_DAY;
use crate::base::bounds::seconds_fit;
use crate::scenario::de::DeProblem;
use crate::scenario::de::closest;
use crate::scenario::expect::CallCheck;
use crate::scenario::replay::Recorded;
use crate::scenario::vars;
use crate::scenario::yaml::Node;
use crate::scenario::yaml::PathText;
use crate::scenario::yaml::Seg;
use crate::tools::ALL_TOOL_NAMES;
use crate::tools::truncate::format_number;

use super::error::Problem;
use super::scenario::OpenCall;

/// `key` as a path segment.
pub(super) fn k(key: &str) -> Seg {
    Seg::Key(key.to_owned())
}

/// `base` followed by `more`.
pub(super) fn join(base: &[Seg], more: impl IntoIterator<Item = Seg>) -> Vec<Seg> {
    let mut path = base.to_vec();
    path.extend(more);
    path
}

/// The state of validating one document, over its tree.
pub(super) struct Validator<'a> {
    pub(super) root: &'a Node,
    pub(super) problems: Vec<Problem>,
    /// `model` was missing (already reported).
    pub(super) no_model: bool,
    /// Where the YAML reader already found a problem (the entry is gone
    /// from the tree; saying it is missing too would mislead).
    pub(super) reported: BTreeSet<String>,
    /// The nodes (paths as shown, never the root) that lost an entry or
    /// item to a problem already reported: what the validation would say
    /// of them now (a step with no kind, a server with no command) only
    /// follows from that problem, so it is not said.
    pub(super) emptied: BTreeSet<String>,
    pub(super) known_vars: BTreeSet<String>,
    pub(super) ids: BTreeSet<String>,
    pub(super) call_checks: BTreeMap<String, Box<CallCheck>>,
    pub(super) call_labels: BTreeMap<String, String>,
    /// The directory of the scenario file (sidecars and repositories are
    /// relative to it).
    pub(super) base_dir: PathBuf,
    /// Recorded results by call id.
    pub(super) recorded: BTreeMap<String, Recorded>,
    /// `cancel_after_ms` by call id, and where each was written.
    pub(super) cancel_after: BTreeMap<String, (Duration, Vec<Seg>)>,
    /// The names of server tools activated one by one (`SERVER/TOOL`,
    /// with the server's prefix): calls to them are known at load.
    pub(super) server_tools: BTreeSet<String>,
    /// The built-in tools that are active, in `tools` order, and how
    /// `tools` was given (`None`: every tool is active).
    pub(super) active_builtins: Option<(Vec<String>, String)>,
    /// A whole server is active: a call to another name is checked when
    /// the scenario starts.
    pub(super) open_tools: bool,
    /// Those calls.
    pub(super) open_calls: Vec<OpenCall>,
    /// The script is served to a real agent: its calls name the agent's
    /// tools, which only the agent knows.
    pub(super) any_tool: bool,
    /// The MCP servers declared for the scenario (its own and its
    /// suite's), active or not.
    pub(super) declared_servers: BTreeSet<String>,
    /// The servers the check steps and `SERVER/NAME` calls name, in
    /// order (started even when `tools` leaves them out).
    pub(super) checked_servers: Vec<String>,
}

impl<'a> Validator<'a> {
    pub(super) fn new(root: &'a Node) -> Self {
        Self {
            root,
            problems: Vec::new(),
            no_model: false,
            reported: BTreeSet::new(),
            emptied: BTreeSet::new(),
            known_vars: BTreeSet::from(["workspace".to_owned()]),
            ids: BTreeSet::new(),
            call_checks: BTreeMap::new(),
            call_labels: BTreeMap::new(),
            base_dir: PathBuf::new(),
            recorded: BTreeMap::new(),
            cancel_after: BTreeMap::new(),
            server_tools: BTreeSet::new(),
            active_builtins: None,
            open_tools: false,
            open_calls: Vec::new(),
            any_tool: false,
            declared_servers: BTreeSet::new(),
            checked_servers: Vec::new(),
        }
    }

    /// Whether a call to `name` is a call `SERVER/NAME` to a server of the
    /// scenario that no active tool's name takes; that server is then
    /// started with the scenario.
    pub(super) fn server_of_call(&mut self, name: &str) -> bool {
        if self.any_tool || self.server_tools.contains(name) {
            return false;
        }
        let Some((server, _)) = name.split_once('/') else {
            return false;
        };
        if !self.declared_servers.contains(server) {
            return false;
        }
        self.start_server(server);
        true
    }

    /// Notes that declared server `server` starts with the scenario even
    /// when `tools` leaves it out (a check step or a `SERVER/NAME` call
    /// names it), once, in the order first named.
    pub(super) fn start_server(&mut self, server: &str) {
        if !self.checked_servers.iter().any(|s| s == server) {
            self.checked_servers.push(server.to_owned());
        }
    }

    /// The problem of a call to (or an `order` entry naming) `name`, no
    /// active tool's name. When servers are declared but none of them is
    /// active, the name is most likely one of theirs: the message says how
    /// to activate them rather than suggest a built-in tool.
    pub(super) fn unknown_tool(&self, name: &str) -> String {
        if let Some((server, _)) = name.split_once('/')
            && !self.declared_servers.is_empty()
        {
            let servers: Vec<&str> = self.declared_servers.iter().map(String::as_str).collect();
            let hint = closest(server, servers.iter().copied())
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return format!(
                "unknown tool `{name}`: `{server}` is no MCP server of this scenario, so the call \
                 cannot be sent to it (`SERVER/NAME` calls a declared server's tool; the \
                 scenario declares {}){hint}",
                servers.join(", ")
            );
        }
        if self.declared_servers.is_empty() || self.open_tools || !self.server_tools.is_empty() {
            return unknown_tool_message(name, &self.server_tools);
        }
        let servers: Vec<&str> = self.declared_servers.iter().map(String::as_str).collect();
        let first = servers.first().copied().unwrap_or_default();
        format!(
            "unknown tool `{name}`: no MCP server is active in this scenario, and the built-in \
             tools are {}; if `{name}` is a tool of {}, activate {} in `tools:` (`tools: \
             [{first}]`, or `tools: [{first}/{name}]` for that tool alone), here or in \
             harness.yaml for every scenario",
            ALL_TOOL_NAMES.join(", "),
            match servers.len() {
                1 => format!("the server `{first}`"),
                _ => format!("one of the servers {}", servers.join(", ")),
            },
            if servers.len() == 1 {
                "it"
            } else {
                "the server"
            },
        )
    }

    /// A problem at the value at `at`.
    pub(super) fn problem(&mut self, at: &[Seg], message: impl Into<String>) {
        self.push(at, false, message.into());
    }

    /// A problem at the key of the entry at `at`.
    pub(super) fn problem_at_key(&mut self, at: &[Seg], message: impl Into<String>) {
        self.push(at, true, message.into());
    }

    /// Notes the entries serde's problems took out of the tree (see
    /// [`Validator::emptied`]).
    pub(super) fn after(&mut self, found: &[DeProblem]) {
        for removed in found.iter().filter_map(|p| p.removed.as_deref()) {
            if let Some((_, parent)) = removed.split_last()
                && !parent.is_empty()
            {
                self.emptied.insert(PathText(parent).to_string());
            }
        }
    }

    pub(super) fn push(&mut self, at: &[Seg], key: bool, message: String) {
        let path = PathText(at).to_string();
        if self.emptied.contains(&path) {
            return;
        }
        self.problems.push(Problem {
            pos: self.root.locate(at, key),
            path,
            message,
        });
    }

    /// The node at `at`, if the tree has it.
    pub(super) fn node(&self, at: &[Seg]) -> Option<&'a Node> {
        let mut node = self.root;
        for seg in at {
            node = match seg {
                Seg::Key(key) => node.get(key)?,
                Seg::Index(i) => node.item(*i)?,
            };
        }
        Some(node)
    }

    pub(super) fn compile(&mut self, at: &[Seg], pattern: &str) -> Option<Arc<Regex>> {
        match shared_regex(pattern) {
            Ok(regex) => Some(regex),
            Err(err) => {
                self.problem(at, regex_problem(pattern, &err));
                None
            }
        }
    }

    /// A regex of an expectation, which may hold `${var}`: its syntax is
    /// checked with placeholders, and it is compiled here only when it has
    /// none (else when the run is checked).
    pub(super) fn compile_expect(&mut self, at: &[Seg], pattern: &str) -> Option<Arc<Regex>> {
        let bare = vars::placeholder_pattern(pattern);
        if bare == pattern {
            return self.compile(at, pattern);
        }
        if let Err(err) = Regex::new(&bare) {
            self.problem(at, regex_problem(pattern, &err));
        }
        None
    }

    /// A number that must lie in `1..=max`.
    pub(super) fn count_in_range(&mut self, at: &[Seg], value: Option<usize>, max: usize) {
        if let Some(n) = value
            && !(1..=max).contains(&n)
        {
            self.problem(
                at,
                format!("must be a whole number from 1 to {max} (it is {n})"),
            );
        }
    }

    /// A number of seconds that must be positive and at most a day.
    pub(super) fn seconds_in_range(&mut self, at: &[Seg], value: Option<f64>) {
        if let Some(t) = value
            && !seconds_fit(t)
        {
            self.problem(at, seconds_problem(t));
        }
    }

    /// A time budget (`timeout:`): more than nothing, at most a day. (A
    /// value of less than half a nanosecond comes to no time at all.)
    pub(super) fn budget(&mut self, at: &[Seg], value: Option<f64>) -> Option<Duration> {
        let seconds = value?;
        match Duration::try_from_secs_f64(seconds) {
            Ok(budget) if seconds_fit(seconds) => Some(budget),
            _ => {
                self.problem(at, seconds_problem(seconds));
                None
            }
        }
    }
}

/// How a file words seconds that do not fit (after its path).
pub(super) fn seconds_problem(seconds: f64) -> String {
    format!(
        "must be a positive number of seconds, at most {ONE_DAY} (one day); it is {}",
        format_number(seconds)
    )
}

/// The time budget of a scenario that neither it nor its suite sets: a
/// minute.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Most distinct patterns whose compiled form is kept for sharing.
const MAX_SHARED_REGEXES: usize = 4096;

/// `pattern` compiled, shared with every scenario of the process that
/// uses the same pattern (a compiled regex is about 15 KB; a suite of
/// thousands of scenarios repeats its captures and checks).
pub(super) fn shared_regex(pattern: &str) -> Result<Arc<Regex>, regex::Error> {
    use std::sync::Mutex;
    use std::sync::PoisonError;
    static SHARED: Mutex<Option<HashMap<String, Arc<Regex>>>> = Mutex::new(None);
    let lock = || SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = lock().as_ref().and_then(|m| m.get(pattern)) {
        return Ok(Arc::clone(found));
    }
    let regex = Arc::new(Regex::new(pattern)?);
    let mut shared = lock();
    let shared = shared.get_or_insert_with(HashMap::new);
    if shared.len() < MAX_SHARED_REGEXES {
        shared.insert(pattern.to_owned(), Arc::clone(&regex));
    }
    Ok(regex)
}

/// A regex error on one line: the parser's own text spans several, with
/// the pattern and a caret; its last line says what is wrong.
fn regex_problem(pattern: &str, err: &regex::Error) -> String {
    let text = err.to_string();
    let what = text
        .lines()
        .last()
        .unwrap_or_default()
        .trim_start_matches("error: ");
    format!("invalid regex `{pattern}`: {what}; regexes use Rust's regex syntax")
}

/// The problem of a file path with a NUL character in it.
pub(super) const NUL_IN_PATH: &str =
    "a path cannot contain a NUL character (`\\0`): no file name can";

/// The directory of a file named by `path`, as `${dir}` and the paths
/// relative to the file take it: `.` for a file named without one
/// (`harness run dir.yaml`), never the empty path, which would make
/// `${dir}/x` the root's `/x`.
pub(super) fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether `rel` is a non-empty relative path without `..`.
pub(super) fn is_inside(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty()
        && !p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

pub(super) fn unknown_tool_message(name: &str, server_tools: &BTreeSet<String>) -> String {
    let candidates = ALL_TOOL_NAMES
        .into_iter()
        .chain(server_tools.iter().map(String::as_str));
    let hint = closest(name, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    let mut known = ALL_TOOL_NAMES.join(", ");
    for tool in server_tools {
        known.push_str(", ");
        known.push_str(tool);
    }
    format!("unknown tool `{name}` (the tools are {known}){hint}")
}
