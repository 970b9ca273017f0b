//! Loading scenario files: the positioned YAML tree ([`super::yaml`]),
//! serde from it ([`super::de`]), and the validation that turns a
//! [`ScenarioDoc`] into a runnable [`Scenario`] (a faux script plus
//! checks).
//!
//! Every problem of a file is collected, not just the first, each at the
//! node it concerns (`file:line:col: path: message; hint`): YAML syntax,
//! nesting and aliases, duplicate keys, unknown keys (with a "did you
//! mean"), wrong types, missing keys, and then what serde cannot see:
//! step kinds, unknown tools, `${var}` used before it is captured (in
//! arguments and in expectations), bad regexes, missing fixtures, paths
//! that leave the workspace, files under a declared symlink, file modes,
//! generated file sizes, and every number against its range.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::fmt;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use regex::Regex;

use crate::agent::DEFAULT_SYSTEM_PROMPT;
use crate::agent::FauxArgs;
use crate::agent::FauxCall;
use crate::agent::FauxScript;
use crate::agent::FauxStep;
use crate::agent::faux::Capture;
use crate::agent::faux::var_refs;
use crate::tools::ALL_TOOL_NAMES;
use crate::tools::Limits;
use crate::tools::Preset;
use crate::tools::truncate::format_number;

use super::conditions;
use super::de;
use super::de::DeProblem;
pub use super::de::closest;
use super::exact;
use super::model::CallExpect;
use super::model::CallSpec;
use super::model::DetailCheck;
use super::model::ErrorExpect;
use super::model::FileExpect;
use super::model::FileObject;
use super::model::FileSpec;
use super::model::LimitsSpec;
use super::model::RunExpect;
use super::model::ScenarioDoc;
use super::model::StepSpec;
use super::model::SuiteDoc;
use super::model::ToolsSpec;
use super::model::WorkspaceSpec;
use super::pointer;
use super::replay::GitCheckoutSpec;
use super::replay::Recorded;
use super::replay::RecordedSpec;
use super::replay::RecordedText;
use super::replay::ReplayPlan;
use super::replay::ReplaySpec;
use super::template::Template;
use super::text_file::read_regular;
use super::vars;
use super::yaml;
use super::yaml::Kind;
use super::yaml::Node;
use super::yaml::PathText;
use super::yaml::Pos;
use super::yaml::Seg;

/// The name of the suite file.
pub const SUITE_FILE: &str = "harness.yaml";
/// Seconds a scenario may run when nothing else is configured.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
/// The most seconds a timeout in a scenario or suite file may give (one
/// day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;
/// The most scenarios a suite file may run at once.
pub const MAX_JOBS: usize = 1024;
/// The largest integer tool limit a file may set.
pub const MAX_LIMIT: usize = u32::MAX as usize;
/// The most `limits.max_log_bytes` may be set to (4 GiB).
pub const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Bytes of inline workspace files one scenario may generate, unless the
/// suite file's `max_generated_bytes` says otherwise (256 MiB).
pub const DEFAULT_MAX_GENERATED_BYTES: u64 = 256 * 1024 * 1024;
/// The most `max_generated_bytes` may be set to (4 GiB).
pub const MAX_GENERATED_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// A problem in a scenario or suite file, with where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong and what to change (after the path of the node in
    /// the document, when there is one: `model[2].expect: …`).
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioError {
    /// A problem with a whole file (or path), placed at its start.
    pub fn at_start(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: message.into(),
        }
    }
}

/// A problem found in one document: where, the path of its node, what.
#[derive(Clone, Debug)]
struct Problem {
    pos: Pos,
    path: String,
    message: String,
}

impl Problem {
    fn into_error(self, file: &Path) -> ScenarioError {
        ScenarioError {
            path: file.to_path_buf(),
            line: self.pos.line,
            column: self.pos.column,
            message: if self.path.is_empty() {
                self.message
            } else {
                format!("{}: {}", self.path, self.message)
            },
        }
    }
}

impl From<yaml::TreeProblem> for Problem {
    fn from(p: yaml::TreeProblem) -> Self {
        Self {
            pos: p.pos,
            path: p.path,
            message: p.message,
        }
    }
}

impl From<DeProblem> for Problem {
    fn from(p: DeProblem) -> Self {
        Self {
            pos: p.pos,
            path: PathText(&p.path).to_string(),
            message: p.message,
        }
    }
}

/// Problems in position order, as a file is read.
fn into_errors(mut problems: Vec<Problem>, file: &Path) -> Vec<ScenarioError> {
    problems.sort_by_key(|p| p.pos);
    problems.into_iter().map(|p| p.into_error(file)).collect()
}

/// `key` as a path segment.
fn k(key: &str) -> Seg {
    Seg::Key(key.to_owned())
}

/// `base` followed by `more`.
fn join(base: &[Seg], more: impl IntoIterator<Item = Seg>) -> Vec<Seg> {
    let mut path = base.to_vec();
    path.extend(more);
    path
}

/// A loaded `harness.yaml`.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    /// The directory holding the suite file (`None`: no suite file).
    pub dir: Option<PathBuf>,
    /// Its contents.
    pub doc: SuiteDoc,
}

impl Suite {
    /// Loads a suite file; the error is its first problem.
    pub fn load(path: &Path) -> Result<Self, ScenarioError> {
        Self::load_all(path).map_err(|mut errors| errors.swap_remove(0))
    }

    /// Loads a suite file, or lists every problem of it (never empty).
    pub fn load_all(path: &Path) -> Result<Self, Vec<ScenarioError>> {
        let text = read_regular(path).map_err(|err| {
            vec![ScenarioError::at_start(
                path,
                format!("cannot read the suite file: {err}"),
            )]
        })?;
        Self::from_text(path, &text)
    }

    /// The suite file `text`, as if read from `path`.
    pub fn from_text(path: &Path, text: &str) -> Result<Self, Vec<ScenarioError>> {
        let stream = yaml::parse(text);
        let mut problems: Vec<Problem> = Vec::new();
        problems.extend(stream.fatal.map(Problem::from));
        let mut documents = stream.documents.into_iter().filter(|d| !d.root.is_null());
        let mut doc = SuiteDoc::default();
        if let Some(mut document) = documents.next() {
            problems.extend(document.problems.drain(..).map(Problem::from));
            let mut found = Vec::new();
            if let Some(parsed) =
                de::deserialize_all::<SuiteDoc>(&mut document.root, &mut found, |_, _| false)
            {
                doc = parsed;
            }
            problems.extend(found.into_iter().map(Problem::from));
            let mut v = Validator::new(&document.root);
            v.suite(&doc);
            problems.extend(v.problems);
        }
        if let Some(extra) = documents.next() {
            problems.push(Problem {
                pos: extra.pos,
                path: String::new(),
                message: format!(
                    "{SUITE_FILE} holds one document; remove the `---` and what follows"
                ),
            });
        }
        if !problems.is_empty() {
            return Err(into_errors(problems, path));
        }
        Ok(Self {
            dir: path.parent().map(Path::to_path_buf),
            doc,
        })
    }

    /// The fixtures root: the suite's `fixtures` key (relative to the suite
    /// file), else `fixtures/` beside the suite file, else `fixtures/` in
    /// the current directory.
    pub fn fixtures_root(&self) -> PathBuf {
        match (&self.dir, &self.doc.fixtures) {
            (Some(dir), Some(rel)) => dir.join(rel),
            (Some(dir), None) => dir.join("fixtures"),
            (None, Some(rel)) => PathBuf::from(rel),
            (None, None) => PathBuf::from("fixtures"),
        }
    }

    /// Bytes of inline files one scenario may generate.
    pub fn max_generated_bytes(&self) -> u64 {
        self.doc
            .max_generated_bytes
            .unwrap_or(DEFAULT_MAX_GENERATED_BYTES)
    }
}

/// Reads a file of `limits:` keys (what a scenario's or a suite's `limits:`
/// holds, at the top level of the file; `harness mcp --limits FILE`): pi's
/// limits with the file's over them, or every problem of the file, each
/// located as in a scenario file.
pub fn load_limits(path: &Path) -> Result<Limits, Vec<ScenarioError>> {
    let text = read_regular(path).map_err(|err| {
        vec![ScenarioError::at_start(
            path,
            format!("cannot read the limits file: {err}"),
        )]
    })?;
    limits_from_text(path, &text)
}

/// The limits file `text`, as if read from `path` (see [`load_limits`]).
pub fn limits_from_text(path: &Path, text: &str) -> Result<Limits, Vec<ScenarioError>> {
    let stream = yaml::parse(text);
    let mut problems: Vec<Problem> = stream.fatal.map(Problem::from).into_iter().collect();
    let mut documents = stream.documents.into_iter().filter(|d| !d.root.is_null());
    let mut limits = Limits::default();
    if let Some(mut document) = documents.next() {
        problems.extend(document.problems.drain(..).map(Problem::from));
        let mut found = Vec::new();
        let parsed =
            de::deserialize_all::<LimitsSpec>(&mut document.root, &mut found, |_, _| false);
        problems.extend(found.into_iter().map(|mut p| {
            if p.path.is_empty() && p.message.starts_with("unknown field `limits`") {
                p.message = "the keys of `limits:` go at the top level of a limits file \
                             (`max_lines: 500`), not under `limits:`"
                    .to_owned();
            }
            Problem::from(p)
        }));
        if let Some(spec) = parsed {
            let mut v = Validator::new(&document.root);
            v.limits(&[], &spec);
            problems.extend(v.problems);
            apply_limits(&mut limits, &spec);
        }
    }
    if let Some(extra) = documents.next() {
        problems.push(Problem {
            pos: extra.pos,
            path: String::new(),
            message: "a limits file holds one document; remove the `---` and what follows"
                .to_owned(),
        });
    }
    if problems.is_empty() {
        Ok(limits)
    } else {
        Err(into_errors(problems, path))
    }
}

/// What the temporary workspace is built from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkspacePlan {
    /// A fixture directory to copy first.
    pub fixture: Option<PathBuf>,
    /// Files to create, by relative path.
    pub files: Vec<(String, FileContent)>,
    /// Run `git init`.
    pub git: bool,
    /// Check out this repository at this revision first (`git_checkout`).
    pub git_checkout: Option<GitCheckout>,
}

/// A repository checked out at a revision into the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitCheckout {
    /// The repository's directory.
    pub repo: PathBuf,
    /// The revision.
    pub rev: String,
}

/// One file to create.
#[derive(Clone, Debug, PartialEq)]
pub enum FileContent {
    /// Bytes (BOM already added), with an optional mode.
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A `repeat:` file, made only when the workspace is built (a suite
    /// of large generated files never holds them all in memory).
    Generated {
        /// A UTF-8 byte-order mark before the copies.
        bom: bool,
        /// The parsed template.
        template: Template,
        /// How many copies.
        times: usize,
        /// Written between two copies.
        join: String,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A symlink.
    Symlink(String),
    /// An empty directory, with an optional mode.
    Dir(Option<u32>),
}

impl FileContent {
    /// The bytes of a file (`None` for a symlink or a directory), made now
    /// for a generated one.
    pub fn bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            Self::Bytes { data, .. } => Some(std::borrow::Cow::Borrowed(data)),
            Self::Generated {
                bom,
                template,
                times,
                join,
                ..
            } => {
                let mut text = String::new();
                if *bom {
                    text.push('\u{feff}');
                }
                template.render_into(&mut text, *times, join);
                Some(std::borrow::Cow::Owned(text.into_bytes()))
            }
            Self::Symlink(_) | Self::Dir(_) => None,
        }
    }
}

/// The checks of one call, with compiled regexes.
#[derive(Clone, Debug)]
pub struct CallCheck {
    /// Where the call is, for messages: `step 2 (grep)` or
    /// `step 2 (grep), retry 1`.
    pub label: String,
    /// Whether the call is a `retry:` of another, sent only when the call
    /// before it failed; a retry that was never sent is not a failure.
    pub retry: bool,
    /// The checks as written.
    pub expect: CallExpect,
    /// `error: REGEX`, compiled.
    pub error_regex: Option<Arc<Regex>>,
    /// `matches`, compiled.
    pub matches: Option<Arc<Regex>>,
    /// The `matches` of `details_at`, compiled, by pointer.
    pub details_regexes: BTreeMap<String, Arc<Regex>>,
}

/// The run checks, with compiled regexes.
#[derive(Clone, Debug, Default)]
pub struct RunCheck {
    /// As written.
    pub expect: RunExpect,
    /// Compiled `matches` of `files`, by path.
    pub file_regexes: BTreeMap<String, Arc<Regex>>,
    /// Decoded `bytes_base64` of `files`, by path.
    pub file_bytes: BTreeMap<String, Vec<u8>>,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique name.
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Which document of the file (0-based).
    pub document: usize,
    /// Free text.
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Active tool names, in order.
    pub tools: Vec<String>,
    /// Limits in force.
    pub limits: Limits,
    /// Confinement.
    pub confine: bool,
    /// The system prompt text before the tool section.
    pub system: String,
    /// What the workspace holds.
    pub workspace: WorkspacePlan,
    /// The faux model's script.
    pub script: FauxScript,
    /// Checks by call id.
    pub call_checks: BTreeMap<String, Box<CallCheck>>,
    /// Labels by call id (every scripted call, checked or not).
    pub call_labels: BTreeMap<String, String>,
    /// Run checks.
    pub run_check: RunCheck,
    /// Why it is skipped.
    pub skip: Option<String>,
    /// The snapshot file beside the scenario.
    pub snapshot_file: PathBuf,
    /// Snapshot key prefix (files with several scenarios).
    pub snapshot_prefix: Option<String>,
    /// Time budget.
    pub timeout: Duration,
    /// The suite's tokenizer, if set.
    pub tokenizer: Option<String>,
    /// For an imported session: the recorded results to compare with.
    pub replay: Option<ReplayPlan>,
    /// The conditions it runs under: faults, bash, cancellations.
    pub conditions: Conditions,
}

/// What a scenario runs under besides its workspace: injected faults
/// (`faults:`), bash's configuration (`bash:`), scripted cancellations
/// (`cancel_after_ms:`).
#[derive(Clone, Debug, Default)]
pub struct Conditions {
    /// Injected faults, in order.
    pub faults: Vec<crate::tools::ops::FaultRule>,
    /// How bash runs its commands.
    pub bash: crate::tools::BashConfig,
    /// The shell bash runs commands with, if not the default.
    pub shell: Option<PathBuf>,
    /// Scripted cancellations by call id.
    pub cancel_after: BTreeMap<String, Duration>,
}

/// Loads every scenario of a file: the valid ones, and every problem of
/// the others, each located. A valid document still runs when another
/// document of the same file is broken.
pub fn load_file(path: &Path, suite: &Suite) -> (Vec<Scenario>, Vec<ScenarioError>) {
    match read_regular(path) {
        Ok(text) => load_text(path, &text, suite),
        Err(err) => (
            Vec::new(),
            vec![ScenarioError::at_start(
                path,
                format!("cannot read the scenario file: {err}"),
            )],
        ),
    }
}

/// Loads the scenarios of `text` as if read from `path`.
pub fn load_text(path: &Path, text: &str, suite: &Suite) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let stream = yaml::parse(text);
    let documents: Vec<yaml::Document> = stream
        .documents
        .into_iter()
        .filter(|d| !d.root.is_null())
        .collect();
    let mut errors = Vec::new();
    if documents.is_empty() && stream.fatal.is_none() {
        errors.push(ScenarioError::at_start(
            path,
            "the file holds no scenario (it is empty or only comments); write one, or remove the \
             file",
        ));
    }
    let multi = documents.len() + usize::from(stream.fatal.is_some()) > 1;
    let mut scenarios = Vec::new();
    for document in documents {
        match load_document(path, document, multi, suite) {
            Ok(scenario) => scenarios.push(scenario),
            Err(problems) => errors.extend(into_errors(problems, path)),
        }
    }
    if let Some(fatal) = stream.fatal {
        errors.push(Problem::from(fatal).into_error(path));
    }
    (scenarios, errors)
}

/// One document: its tree problems, its serde problems (each removed from
/// the tree so the rest can be read), then the validation of what is left.
fn load_document(
    path: &Path,
    mut document: yaml::Document,
    multi: bool,
    suite: &Suite,
) -> Result<Scenario, Vec<Problem>> {
    let mut problems: Vec<Problem> = document.problems.drain(..).map(Problem::from).collect();
    let mut found = Vec::new();
    let mut no_model = false;
    let parsed = de::deserialize_all::<ScenarioDoc>(&mut document.root, &mut found, |root, err| {
        // Without `model` nothing else could be checked: go on with none.
        let at_root = err.at.as_ref().is_none_or(|at| at.steps.is_empty());
        if at_root
            && err.message == "missing field `model`"
            && !no_model
            && let Kind::Map(entries) = &mut root.kind
        {
            {
                let pos = root.pos;
                let node = |kind| Node { pos, kind };
                entries.push((
                    node(Kind::Scalar(yaml::Scalar {
                        text: "model".to_owned(),
                        plain: true,
                        tag: None,
                    })),
                    node(Kind::Seq(Vec::new())),
                ));
                no_model = true;
                return true;
            }
        }
        false
    });
    problems.extend(found.into_iter().map(|mut p| {
        if p.message == "missing field `model`" {
            p.message
                .push_str("; give the faux model's script, `model:` with at least one step");
        }
        Problem::from(p)
    }));
    let Some(doc) = parsed else {
        return Err(problems);
    };
    let mut v = Validator::new(&document.root);
    v.no_model = no_model;
    v.reported = problems.iter().map(|p| p.path.clone()).collect();
    let scenario = v.scenario(path, document.index, multi, doc, suite);
    problems.extend(v.problems);
    if problems.is_empty() {
        Ok(scenario)
    } else {
        Err(problems)
    }
}

/// The state of validating one document, over its tree.
struct Validator<'a> {
    root: &'a Node,
    problems: Vec<Problem>,
    /// `model` was missing (already reported).
    no_model: bool,
    /// Where the YAML reader already found a problem (the entry is gone
    /// from the tree; saying it is missing too would mislead).
    reported: BTreeSet<String>,
    known_vars: BTreeSet<String>,
    ids: BTreeSet<String>,
    call_checks: BTreeMap<String, Box<CallCheck>>,
    call_labels: BTreeMap<String, String>,
    /// The directory of the scenario file (sidecars and repositories are
    /// relative to it).
    base_dir: PathBuf,
    /// Recorded results by call id.
    recorded: BTreeMap<String, Recorded>,
    /// `cancel_after_ms` by call id, and where each was written.
    cancel_after: BTreeMap<String, (Duration, Vec<Seg>)>,
}

impl<'a> Validator<'a> {
    fn new(root: &'a Node) -> Self {
        Self {
            root,
            problems: Vec::new(),
            no_model: false,
            reported: BTreeSet::new(),
            known_vars: BTreeSet::from(["workspace".to_owned()]),
            ids: BTreeSet::new(),
            call_checks: BTreeMap::new(),
            call_labels: BTreeMap::new(),
            base_dir: PathBuf::new(),
            recorded: BTreeMap::new(),
            cancel_after: BTreeMap::new(),
        }
    }

    /// A problem at the value at `at`.
    fn problem(&mut self, at: &[Seg], message: impl Into<String>) {
        self.push(at, false, message.into());
    }

    /// A problem at the key of the entry at `at`.
    fn problem_at_key(&mut self, at: &[Seg], message: impl Into<String>) {
        self.push(at, true, message.into());
    }

    fn push(&mut self, at: &[Seg], key: bool, message: String) {
        self.problems.push(Problem {
            pos: self.root.locate(at, key),
            path: PathText(at).to_string(),
            message,
        });
    }

    /// The node at `at`, if the tree has it.
    fn node(&self, at: &[Seg]) -> Option<&'a Node> {
        let mut node = self.root;
        for seg in at {
            node = match seg {
                Seg::Key(key) => node.get(key)?,
                Seg::Index(i) => node.item(*i)?,
            };
        }
        Some(node)
    }

    fn compile(&mut self, at: &[Seg], pattern: &str) -> Option<Arc<Regex>> {
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
    fn compile_expect(&mut self, at: &[Seg], pattern: &str) -> Option<Arc<Regex>> {
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
    fn count_in_range(&mut self, at: &[Seg], value: Option<usize>, max: usize) {
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
    fn seconds_in_range(&mut self, at: &[Seg], value: Option<f64>) {
        if let Some(t) = value
            && !(t.is_finite() && t > 0.0 && t <= MAX_TIMEOUT_SECS)
        {
            self.problem(
                at,
                format!(
                    "must be a positive number of seconds, at most {MAX_TIMEOUT_SECS} (one day); \
                     it is {}",
                    format_number(t)
                ),
            );
        }
    }

    /// The checks of a suite file's values.
    fn suite(&mut self, doc: &SuiteDoc) {
        if let Some(tools) = &doc.tools {
            self.tools(&[k("tools")], tools);
        }
        if let Some(limits) = &doc.limits {
            self.limits(&[k("limits")], limits);
        }
        self.seconds_in_range(&[k("timeout")], doc.timeout);
        self.count_in_range(&[k("jobs")], doc.jobs, MAX_JOBS);
        if let Some(n) = doc.max_generated_bytes
            && !(1..=MAX_GENERATED_BYTES).contains(&n)
        {
            self.problem(
                &[k("max_generated_bytes")],
                format!("must be a whole number of bytes from 1 to {MAX_GENERATED_BYTES} (4 GiB)"),
            );
        }
    }

    fn tools(&mut self, at: &[Seg], tools: &ToolsSpec) {
        match tools {
            ToolsSpec::Preset(name) => {
                if Preset::parse(name).is_none() {
                    let hint = closest(name, ["coding", "readonly", "all"].into_iter())
                        .map(|c| format!("; did you mean `{c}`?"))
                        .unwrap_or_default();
                    self.problem(
                        at,
                        format!(
                            "unknown tool preset `{name}`: use coding, readonly, all or a list of \
                             tool names{hint}"
                        ),
                    );
                }
            }
            ToolsSpec::List(names) => {
                for (i, name) in names.iter().enumerate() {
                    if !ALL_TOOL_NAMES.contains(&name.as_str()) {
                        self.problem(&join(at, [Seg::Index(i)]), unknown_tool_message(name));
                    }
                }
            }
        }
    }

    fn limits(&mut self, at: &[Seg], limits: &LimitsSpec) {
        let counts = [
            ("max_lines", limits.max_lines),
            ("max_bytes", limits.max_bytes),
            ("grep_max_line", limits.grep_max_line),
            ("grep_limit", limits.grep_limit),
            ("find_limit", limits.find_limit),
            ("ls_limit", limits.ls_limit),
        ];
        for (key, value) in counts {
            self.count_in_range(&join(at, [k(key)]), value, MAX_LIMIT);
        }
        self.seconds_in_range(&join(at, [k("bash_timeout")]), limits.bash_timeout);
        self.seconds_in_range(&join(at, [k("grep_timeout")]), limits.grep_timeout);
        if let Some(n) = limits.max_log_bytes
            && n > MAX_LOG_BYTES
        {
            self.problem(
                &join(at, [k("max_log_bytes")]),
                format!(
                    "must be a whole number of bytes from 0 to {MAX_LOG_BYTES} (4 GiB); it is {n}"
                ),
            );
        }
    }

    /// A whole scenario document.
    fn scenario(
        &mut self,
        path: &Path,
        index: usize,
        multi: bool,
        doc: ScenarioDoc,
        suite: &Suite,
    ) -> Scenario {
        self.base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let name = doc.name.clone().unwrap_or_else(|| {
            let stem = path.with_extension("");
            if multi {
                format!("{}#{}", stem.display(), index + 1)
            } else {
                stem.display().to_string()
            }
        });
        if name.contains('\n') {
            self.problem(&[k("name")], "must be one line");
        }
        if let Some(tools) = &doc.tools {
            self.tools(&[k("tools")], tools);
        }
        if let Some(limits) = &doc.limits {
            self.limits(&[k("limits")], limits);
        }
        let tools_spec = doc
            .tools
            .clone()
            .or_else(|| suite.doc.tools.clone())
            .unwrap_or(ToolsSpec::Preset("all".to_owned()));
        let mut limits = Limits::default();
        for spec in [&suite.doc.limits, &doc.limits].into_iter().flatten() {
            apply_limits(&mut limits, spec);
        }
        let steps = self.script(&doc.model);
        let workspace = self.workspace(&doc.workspace, suite);
        let run_check = self.run_check(&doc.expect);
        let conditions = self.conditions(&doc);
        let replay_timeout = doc.replay.as_ref().and_then(|r| r.timeout);
        self.seconds_in_range(&[k("replay"), k("timeout")], replay_timeout);
        let timeout = replay_timeout
            .or(suite.doc.timeout)
            .unwrap_or(DEFAULT_TIMEOUT_SECS);
        let replay = self.replay_plan(doc.replay.as_ref(), suite);
        Scenario {
            snapshot_file: snapshot_path(path),
            snapshot_prefix: multi.then(|| name.clone()),
            name,
            file: path.to_path_buf(),
            document: index,
            description: doc.description,
            tags: doc.tags,
            tools: tool_names(&tools_spec),
            limits,
            confine: doc.confine.unwrap_or(true),
            system: doc
                .system
                .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_owned()),
            workspace,
            script: FauxScript { steps },
            call_checks: std::mem::take(&mut self.call_checks),
            call_labels: std::mem::take(&mut self.call_labels),
            run_check,
            skip: doc.skip,
            timeout: Duration::try_from_secs_f64(timeout)
                .unwrap_or(Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS)),
            tokenizer: suite.doc.tokenizer.clone(),
            replay,
            conditions,
        }
    }

    /// `faults:`, `bash:` and the calls' `cancel_after_ms`, which must be
    /// in the last step (the run ends with it).
    fn conditions(&mut self, doc: &ScenarioDoc) -> Conditions {
        let (faults, problems) = conditions::faults(&doc.faults);
        for (at, message) in problems {
            self.problem(&at, message);
        }
        let (bash, shell) = match &doc.bash {
            Some(spec) => {
                let (config, shell, problems) = conditions::bash(spec, is_inside);
                for (at, message) in problems {
                    self.problem(&at, message);
                }
                (config, shell)
            }
            None => Default::default(),
        };
        let last = doc.model.len().saturating_sub(1);
        let mut cancel_after = BTreeMap::new();
        for (id, (after, at)) in std::mem::take(&mut self.cancel_after) {
            if let Some(Seg::Index(step)) = at.get(1)
                && *step != last
            {
                self.problem_at_key(
                    &at,
                    format!(
                        "step {}: the run ends when this call is cancelled, so the steps after \
                         it would never run; make it the last step",
                        step + 1
                    ),
                );
            }
            cancel_after.insert(id, after);
        }
        Conditions {
            faults,
            bash,
            shell,
            cancel_after,
        }
    }

    /// The faux model's script, step by step.
    fn script(&mut self, model: &[StepSpec]) -> Vec<FauxStep> {
        if model.is_empty() && !self.no_model {
            self.problem(
                &[k("model")],
                "has no steps; give at least one `call`, `parallel` or `say` step",
            );
        }
        let mut steps = Vec::new();
        for (i, step) in model.iter().enumerate() {
            let n = i + 1;
            let at = vec![k("model"), Seg::Index(i)];
            let kinds = [
                step.call.is_some(),
                step.parallel.is_some(),
                step.say.is_some(),
            ]
            .iter()
            .filter(|k| **k)
            .count();
            if kinds != 1 {
                self.problem(
                    &at,
                    format!(
                        "step {n} must have exactly one of `call`, `parallel` or `say` (it has {kinds})"
                    ),
                );
                continue;
            }
            if let Some(tool) = &step.call {
                steps.push(self.call_step(n, &at, step, tool));
            } else if let Some(calls) = &step.parallel {
                steps.push(self.parallel_step(n, &at, calls));
            } else if let Some(text) = &step.say {
                steps.push(self.say_step(n, &at, text, n == model.len()));
            }
        }
        steps
    }

    /// `call: TOOL`: a message with one call.
    fn call_step(&mut self, n: usize, at: &[Seg], step: &StepSpec, tool: &str) -> FauxStep {
        let spec = CallSpec {
            call: tool.to_owned(),
            id: step.id.clone(),
            args: step.args.clone(),
            raw_args: step.raw_args.clone(),
            expect: step.expect.clone(),
            capture: step.capture.clone(),
            retry: step.retry.clone(),
            recorded: step.recorded.clone(),
            cancel_after_ms: step.cancel_after_ms,
        };
        let call = self.call(
            &spec,
            at,
            format!("call_{n}_1"),
            format!("step {n} ({tool})"),
            &BTreeSet::new(),
            false,
        );
        captured_names(&call, &mut self.known_vars);
        FauxStep::Calls(vec![call])
    }

    /// The keys a step has that only a call takes, in the order written.
    fn call_keys_of(&self, at: &[Seg]) -> Vec<&'static str> {
        const CALL_KEYS: [&str; 8] = [
            "id",
            "args",
            "raw_args",
            "expect",
            "capture",
            "retry",
            "recorded",
            "cancel_after_ms",
        ];
        let Some(Node {
            kind: Kind::Map(entries),
            ..
        }) = self.node(at)
        else {
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(key, _)| {
                let text = key.text()?;
                CALL_KEYS.iter().find(|c| **c == text).copied()
            })
            .collect()
    }

    /// `parallel: [...]`: a message with several calls, none of which may
    /// use what another captures.
    fn parallel_step(&mut self, n: usize, at: &[Seg], calls: &[CallSpec]) -> FauxStep {
        if let Some(stray) = self.call_keys_of(at).first() {
            self.problem_at_key(
                &join(at, [k(stray)]),
                format!(
                    "step {n}: `id`, `args`, `raw_args`, `expect`, `capture` and `retry` belong \
                     to each call inside `parallel`, not to the step"
                ),
            );
        }
        if calls.is_empty() {
            self.problem(
                &join(at, [k("parallel")]),
                format!("step {n} has no calls; give at least one, or use `call:`"),
            );
        }
        let batch: Vec<FauxCall> = calls
            .iter()
            .enumerate()
            .map(|(j, spec)| {
                self.call(
                    spec,
                    &join(at, [k("parallel"), Seg::Index(j)]),
                    format!("call_{n}_{}", j + 1),
                    format!("step {n}, call {} ({})", j + 1, spec.call),
                    &BTreeSet::new(),
                    false,
                )
            })
            .collect();
        for call in &batch {
            captured_names(call, &mut self.known_vars);
        }
        FauxStep::Calls(batch)
    }

    /// `say: TEXT`: the final message.
    fn say_step(&mut self, n: usize, at: &[Seg], text: &str, last: bool) -> FauxStep {
        if let Some(stray) = self.call_keys_of(at).first() {
            self.problem_at_key(
                &join(at, [k(stray)]),
                format!(
                    "step {n}: a `say` step takes none of `id`, `args`, `raw_args`, `expect`, \
                     `capture`, `retry`"
                ),
            );
        }
        if !last {
            self.problem(
                &join(at, [k("say")]),
                format!(
                    "step {n}: the run ends after `say`, so the steps after it would never run"
                ),
            );
        }
        FauxStep::Say(text.to_owned())
    }

    /// Reports the references of `refs` (paths below `base`) that are not
    /// among `known`.
    fn unknown_refs(
        &mut self,
        base: &[Seg],
        refs: Vec<vars::Ref>,
        known: &BTreeSet<String>,
        label: Option<&str>,
        when: &str,
    ) {
        for (name, rel) in refs {
            if known.contains(&name) {
                continue;
            }
            let listed = known
                .iter()
                .map(|v| format!("${{{v}}}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.problem(
                &join(base, rel),
                format!(
                    "{}`${{{name}}}` is used before it is captured; capture it {when} with \
                     `capture: {{ {name}: REGEX }}` (known here: {listed})",
                    label.map(|l| format!("{l}: ")).unwrap_or_default()
                ),
            );
        }
    }

    /// Validates one call (at `at`) and returns its faux form; `retry`:
    /// it is a `retry:` of another call.
    fn call(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        default_id: String,
        label: String,
        extra_vars: &BTreeSet<String>,
        retry: bool,
    ) -> FauxCall {
        let id = spec.id.clone().unwrap_or(default_id);
        if !self.ids.insert(id.clone()) {
            let id_at = if spec.id.is_some() {
                join(at, [k("id")])
            } else {
                at.to_vec()
            };
            self.problem(
                &id_at,
                format!("call id `{id}` is used twice; give each call its own `id`"),
            );
        }
        let deliberate_error = spec.expect.as_ref().is_some_and(|e| {
            matches!(
                e.error,
                Some(ErrorExpect::Flag(true) | ErrorExpect::Matches(_))
            )
        });
        if !ALL_TOOL_NAMES.contains(&spec.call.as_str()) && !deliberate_error {
            self.problem(
                &join(at, [k("call")]),
                format!(
                    "{} (to test the error for an unknown tool on purpose, add `expect: {{ error: \
                     true }}` to the call)",
                    unknown_tool_message(&spec.call)
                ),
            );
        }
        let known: BTreeSet<String> = self.known_vars.union(extra_vars).cloned().collect();
        let args = self.arguments(spec, at, &label, &known);
        let captures = self.captures(spec, at);
        if let Some(expect) = &spec.expect {
            let expect_at = join(at, [k("expect")]);
            let refs = vars::call_expect_refs(expect);
            self.unknown_refs(&expect_at, refs, &known, Some(&label), "in an earlier step");
            let check = self.call_check(expect, &expect_at, &label, retry);
            self.call_checks.insert(id.clone(), Box::new(check));
        }
        self.call_labels.insert(id.clone(), label.clone());
        if let Some(recorded) = &spec.recorded {
            self.recorded_result(&id, recorded, at, &label);
        }
        self.cancel_after_of(spec, at, &id, &label, retry);
        let retries = self.retries(spec, at, &id, &label, extra_vars, &captures, retry);
        FauxCall {
            id,
            name: spec.call.clone(),
            args,
            captures,
            retry: retries,
        }
    }

    /// A call's `cancel_after_ms`: in range, not on a retry, and without
    /// retries of its own (the run ends with the call).
    fn cancel_after_of(&mut self, spec: &CallSpec, at: &[Seg], id: &str, label: &str, retry: bool) {
        let Some(ms) = spec.cancel_after_ms else {
            return;
        };
        let key = join(at, [k("cancel_after_ms")]);
        if retry {
            self.problem_at_key(
                &key,
                format!(
                    "{label}: a retry cannot be cancelled; put `cancel_after_ms` on a call of the \
                     last step"
                ),
            );
            return;
        }
        if spec.retry.is_some() {
            self.problem_at_key(
                &join(at, [k("retry")]),
                format!(
                    "{label}: the run ends when this call is cancelled, so its `retry` would never \
                     be sent"
                ),
            );
        }
        match conditions::cancel_after(ms) {
            Ok(after) => {
                self.cancel_after.insert(id.to_owned(), (after, key));
            }
            Err(message) => self.problem(&key, message),
        }
    }

    /// `args` or `raw_args`, every `${var}` in them known by now.
    fn arguments(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        label: &str,
        known: &BTreeSet<String>,
    ) -> FauxArgs {
        let args = match (&spec.args, &spec.raw_args) {
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(at, [k("raw_args")]),
                    format!("{label}: give either `args` or `raw_args`, not both"),
                );
                return FauxArgs::Json(serde_json::json!({}));
            }
            (_, Some(raw)) => FauxArgs::Raw(raw.clone()),
            (Some(args), None) => FauxArgs::Json(args.clone()),
            (None, None) => FauxArgs::Json(serde_json::json!({})),
        };
        let mut refs = Vec::new();
        match &args {
            FauxArgs::Json(v) => vars::value_refs(v, vec![k("args")], &mut refs),
            FauxArgs::Raw(t) => {
                refs.extend(var_refs(t).into_iter().map(|n| (n, vec![k("raw_args")])))
            }
        }
        self.unknown_refs(at, refs, known, Some(label), "in an earlier step");
        args
    }

    /// `capture: { NAME: REGEX }`, compiled.
    fn captures(&mut self, spec: &CallSpec, at: &[Seg]) -> Vec<Capture> {
        let mut captures = Vec::new();
        for (name, pattern) in spec.capture.iter().flatten() {
            let capture_at = join(at, [k("capture"), k(name)]);
            if let Some(regex) = self.compile(&capture_at, pattern) {
                captures.push(Capture {
                    name: name.clone(),
                    regex,
                });
            }
        }
        captures
    }

    /// The checks of one call, with their regexes compiled.
    fn call_check(
        &mut self,
        expect: &CallExpect,
        at: &[Seg],
        label: &str,
        retry: bool,
    ) -> CallCheck {
        let error_regex = match &expect.error {
            Some(ErrorExpect::Matches(p)) => self.compile_expect(&join(at, [k("error")]), p),
            _ => None,
        };
        let matches = match &expect.matches {
            Some(p) => self.compile_expect(&join(at, [k("matches")]), p),
            None => None,
        };
        if expect.ok == Some(true)
            && matches!(
                expect.error,
                Some(ErrorExpect::Flag(true) | ErrorExpect::Matches(_))
            )
        {
            self.problem(
                &join(at, [k("ok")]),
                format!("{label}: `ok: true` and `error` contradict each other; keep one"),
            );
        }
        let details_regexes = self.details_at(expect, at, label);
        self.updates_bounds(expect, at, label);
        CallCheck {
            label: label.to_owned(),
            retry,
            expect: expect.clone(),
            error_regex,
            matches,
            details_regexes,
        }
    }

    /// `details_at`: pointers, matchers and regexes checked; the regexes
    /// compiled (those without `${var}`), by pointer.
    fn details_at(
        &mut self,
        expect: &CallExpect,
        at: &[Seg],
        label: &str,
    ) -> BTreeMap<String, Arc<Regex>> {
        let mut regexes = BTreeMap::new();
        for (pointer, check) in expect.details_at.iter().flatten() {
            let entry = join(at, [k("details_at"), k(pointer)]);
            if let Some(problem) = pointer::pointer_problem(pointer) {
                self.problem_at_key(&entry, format!("{label}: {problem}"));
                continue;
            }
            let DetailCheck::Matchers(m) = check else {
                continue;
            };
            if let Some((key, problem)) = pointer::matchers_problem(m) {
                let place = if key.is_empty() {
                    entry.clone()
                } else {
                    join(&entry, [k(key)])
                };
                self.problem(&place, format!("{label}: {problem}"));
            }
            if let Some(pattern) = &m.matches
                && let Some(regex) = self.compile_expect(&join(&entry, [k("matches")]), pattern)
            {
                regexes.insert(pointer.clone(), regex);
            }
        }
        regexes
    }

    /// `updates: { min, max }`: a range that some count can be in.
    fn updates_bounds(&mut self, expect: &CallExpect, at: &[Seg], label: &str) {
        if let Some(u) = &expect.updates
            && let (Some(min), Some(max)) = (u.min, u.max)
            && min > max
        {
            self.problem(
                &join(at, [k("updates"), k("max")]),
                format!("{label}: `max: {max}` is below `min: {min}`, so no run could pass"),
            );
        }
    }

    /// The `retry:` calls of call `id` (at `at`); each may use what the
    /// calls before it captured. A retry call has no `retry` of its own.
    #[allow(clippy::too_many_arguments, reason = "one call's context")]
    fn retries(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        id: &str,
        label: &str,
        extra_vars: &BTreeSet<String>,
        captures: &[Capture],
        is_retry: bool,
    ) -> Vec<FauxCall> {
        let Some(list) = &spec.retry else {
            return Vec::new();
        };
        let retry_at = join(at, [k("retry")]);
        if is_retry {
            self.problem_at_key(
                &retry_at,
                format!(
                    "{label}: a retry has no `retry` of its own; list every retry, in the order \
                     they are sent, in the first call's `retry:`"
                ),
            );
            return Vec::new();
        }
        let listed = matches!(self.node(&retry_at).map(|n| &n.kind), Some(Kind::Seq(_)));
        let mut retry_vars = extra_vars.clone();
        retry_vars.extend(captures.iter().map(|c| c.name.clone()));
        let mut retries = Vec::new();
        for (j, retry_spec) in list.0.iter().enumerate() {
            let item_at = if listed {
                join(&retry_at, [Seg::Index(j)])
            } else {
                retry_at.clone()
            };
            let call = self.call(
                retry_spec,
                &item_at,
                format!("{id}_retry{}", j + 1),
                format!("{label}, retry {}", j + 1),
                &retry_vars,
                true,
            );
            retry_vars.extend(call.captures.iter().map(|c| c.name.clone()));
            retries.push(call);
        }
        retries
    }

    /// What the workspace is built from: a fixture and files.
    fn workspace(&mut self, spec: &WorkspaceSpec, suite: &Suite) -> WorkspacePlan {
        let fixture = spec
            .fixture
            .as_ref()
            .and_then(|name| self.fixture(name, suite));
        let files_at = [k("workspace"), k("files")];
        let symlinks: BTreeMap<Vec<&str>, &str> = spec
            .files
            .iter()
            .filter(|(_, f)| {
                matches!(
                    f,
                    FileSpec::Object(FileObject {
                        symlink: Some(_),
                        ..
                    })
                )
            })
            .map(|(rel, _)| (components(rel), rel.as_str()))
            .collect();
        let budget = suite.max_generated_bytes();
        let mut generated: u64 = 0;
        let mut files = Vec::new();
        for (rel, file) in &spec.files {
            let at = join(&files_at, [k(rel)]);
            if rel.contains('\0') {
                self.problem_at_key(&at, NUL_IN_PATH);
                continue;
            }
            if !is_inside(rel) {
                self.problem_at_key(&at, "paths must be relative and may not contain `..`");
                continue;
            }
            let parts = components(rel);
            if let Some(link) = (1..parts.len()).find_map(|n| symlinks.get(&parts[..n])) {
                self.problem_at_key(
                    &at,
                    format!(
                        "`{rel}` is inside `{link}`, which this scenario makes a \
                         symlink; files are never written through a symlink: choose a path \
                         outside it"
                    ),
                );
                continue;
            }
            if (spec.git || spec.git_checkout.is_some())
                && let Some(message) = git_dir_problem(&parts, file)
            {
                self.problem_at_key(&at, message);
                continue;
            }
            // A `times` that is there but could not be read was reported
            // where it is written; saying it is missing too would mislead.
            if let FileSpec::Object(FileObject { times: None, .. }) = file
                && self
                    .reported
                    .contains(&PathText(&join(&at, [k("times")])).to_string())
            {
                continue;
            }
            let size = match planned_size(file) {
                Ok(size) => size,
                Err((sub, message)) => {
                    self.problem(&join(&at, sub), message);
                    continue;
                }
            };
            generated = generated.saturating_add(size);
            if generated > budget {
                let sub = match file {
                    FileSpec::Object(FileObject { times: Some(_), .. }) => vec![k("times")],
                    _ => Vec::new(),
                };
                self.problem(
                    &join(&at, sub),
                    format!(
                        "the inline files of this scenario come to more than {budget} bytes (this one: {size}); make them smaller, or raise \
                         `max_generated_bytes` in {SUITE_FILE}"
                    ),
                );
                continue;
            }
            match file_content(file) {
                Ok(content) => files.push((rel.clone(), content)),
                Err((sub, message)) => {
                    self.problem(&join(&at, sub), message);
                }
            }
        }
        let git_checkout = spec.git_checkout.as_ref().and_then(|checkout| {
            if spec.fixture.is_some() {
                self.problem_at_key(
                    &[k("workspace"), k("git_checkout")],
                    "a workspace is either a `fixture` or a `git_checkout`, not both; keep one",
                );
            }
            self.git_checkout(checkout)
        });
        WorkspacePlan {
            fixture,
            files,
            git: spec.git,
            git_checkout,
        }
    }

    // --- Replayed sessions (docs/replay.md) -------------------------------

    /// `recorded:` of call `id`: `text` or `file` (a sidecar beside the
    /// scenario, inside its directory).
    fn recorded_result(&mut self, id: &str, spec: &RecordedSpec, at: &[Seg], label: &str) {
        let at = join(at, [k("recorded")]);
        let text = match (&spec.text, &spec.file) {
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(&at, [k("file")]),
                    format!("{label}: give either `text` or `file`, not both"),
                );
                return;
            }
            (Some(text), None) => RecordedText::Inline(text.clone()),
            (None, Some(file)) => {
                let file_at = join(&at, [k("file")]);
                if !is_inside(file) {
                    self.problem(
                        &file_at,
                        format!(
                            "{label}: `{file}` must be a relative path below the scenario's \
                             directory, without `..`"
                        ),
                    );
                    return;
                }
                let path = self.base_dir.join(file);
                if !path.is_file() {
                    self.problem(
                        &file_at,
                        format!(
                            "{label}: the recorded text file {} does not exist; import the \
                             session again, or give the text inline",
                            path.display()
                        ),
                    );
                    return;
                }
                RecordedText::File(path)
            }
            (None, None) => RecordedText::Inline(String::new()),
        };
        self.recorded.insert(
            id.to_owned(),
            Recorded {
                is_error: spec.is_error,
                text,
                images: spec.images.unwrap_or(0),
                sync: spec.sync.unwrap_or(false),
            },
        );
    }

    /// The comparison plan of an imported scenario: present when it has
    /// `replay:` or a call with `recorded:`.
    fn replay_plan(&mut self, spec: Option<&ReplaySpec>, suite: &Suite) -> Option<ReplayPlan> {
        if spec.is_none() && self.recorded.is_empty() {
            return None;
        }
        let require = spec
            .and_then(|r| r.require)
            .or(suite.doc.replay.as_ref().and_then(|r| r.require))
            .unwrap_or_default();
        Some(ReplayPlan {
            cwd: spec.and_then(|r| r.cwd.clone()),
            require,
            skipped: spec.and_then(|r| r.skipped).unwrap_or(0),
            recorded: std::mem::take(&mut self.recorded),
        })
    }

    /// `git_checkout: { repo, rev }`: the repository is a directory
    /// (relative to the scenario file) and the revision cannot be read as
    /// an option.
    fn git_checkout(&mut self, spec: &GitCheckoutSpec) -> Option<GitCheckout> {
        let at = [k("workspace"), k("git_checkout")];
        let mut ok = true;
        let rev_ok = !spec.rev.is_empty()
            && !spec.rev.starts_with('-')
            && !spec
                .rev
                .chars()
                .any(|c| c.is_whitespace() || c.is_control());
        if !rev_ok {
            self.problem(
                &join(&at, [k("rev")]),
                format!(
                    "`{}` is not a revision: give a commit, tag or branch name (not empty, no \
                     spaces, not starting with `-`)",
                    spec.rev
                ),
            );
            ok = false;
        }
        let repo = self.base_dir.join(&spec.repo);
        if spec.repo.is_empty() || !repo.is_dir() {
            self.problem(
                &join(&at, [k("repo")]),
                format!(
                    "the repository {} is not a directory; give the path of a local git \
                     repository, relative to this scenario file",
                    repo.display()
                ),
            );
            ok = false;
        }
        ok.then(|| GitCheckout {
            repo,
            rev: spec.rev.clone(),
        })
    }

    /// The fixture directory `name` under the suite's fixtures root.
    fn fixture(&mut self, name: &str, suite: &Suite) -> Option<PathBuf> {
        let at = [k("workspace"), k("fixture")];
        if name.is_empty()
            || Path::new(name)
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            self.problem(
                &at,
                format!("fixture `{name}` must be a plain name or relative path without `..`"),
            );
            return None;
        }
        let dir = suite.fixtures_root().join(name);
        if dir.is_dir() {
            return Some(dir);
        }
        self.problem(
            &at,
            format!(
                "fixture `{name}` not found: looked for the directory {}; set `fixtures:` in \
                 harness.yaml or create it",
                dir.display()
            ),
        );
        None
    }

    /// The run checks, with their regexes compiled; `${var}` in them may be
    /// anything the script captures.
    fn run_check(&mut self, expect: &RunExpect) -> RunCheck {
        let mut run_check = RunCheck {
            expect: expect.clone(),
            file_regexes: BTreeMap::new(),
            file_bytes: BTreeMap::new(),
        };
        let files_at = [k("expect"), k("files")];
        let known = self.known_vars.clone();
        for (rel, file) in &expect.files {
            let at = join(&files_at, [k(rel)]);
            if rel.contains('\0') {
                self.problem_at_key(&at, NUL_IN_PATH);
                continue;
            }
            if !is_inside(rel) {
                self.problem_at_key(
                    &at,
                    "a checked file is a relative path inside the workspace, without `..`",
                );
                continue;
            }
            let refs = vars::file_expect_refs(file);
            self.unknown_refs(&at, refs, &known, None, "in a step");
            let FileExpect::Checks(checks) = &**file else {
                continue;
            };
            if let Some(pattern) = &checks.matches
                && let Some(regex) = self.compile_expect(&join(&at, [k("matches")]), pattern)
            {
                run_check.file_regexes.insert(rel.clone(), regex);
            }
            if let Some(mode) = &checks.mode
                && parse_mode(mode).is_none()
            {
                self.problem(
                    &join(&at, [k("mode")]),
                    format!("`{mode}` is not an octal mode like \"644\""),
                );
            }
            if let Some(encoded) = &checks.bytes_base64 {
                match exact::decode_base64(encoded) {
                    Ok(bytes) => {
                        run_check.file_bytes.insert(rel.clone(), bytes);
                    }
                    Err(problem) => self.problem(&join(&at, [k("bytes_base64")]), problem),
                }
            }
            if let Some(digest) = &checks.sha256
                && !exact::is_sha256(digest)
            {
                self.problem(
                    &join(&at, [k("sha256")]),
                    format!(
                        "`{digest}` is not a SHA-256 digest: give 64 hex digits (`sha256sum \
                         FILE` prints them)"
                    ),
                );
            }
        }
        for (i, name) in expect.order.iter().flatten().enumerate() {
            if !ALL_TOOL_NAMES.contains(&name.as_str()) {
                self.problem(
                    &[k("expect"), k("order"), Seg::Index(i)],
                    unknown_tool_message(name),
                );
            }
        }
        run_check
    }
}

/// Most distinct patterns whose compiled form is kept for sharing.
const MAX_SHARED_REGEXES: usize = 4096;

/// `pattern` compiled, shared with every scenario of the process that
/// uses the same pattern (a compiled regex is about 15 KB; a suite of
/// thousands of scenarios repeats its captures and checks).
pub fn shared_regex(pattern: &str) -> Result<Arc<Regex>, regex::Error> {
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
const NUL_IN_PATH: &str = "a path cannot contain a NUL character (`\\0`): no file name can";

/// Whether `rel` is a non-empty relative path without `..`.
fn is_inside(rel: &str) -> bool {
    let p = Path::new(rel);
    !rel.is_empty()
        && !p.is_absolute()
        && p.components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The names of a relative path, `.` left out.
/// With git run in the workspace (`git: true`, `git_checkout`), an entry
/// at or below `.git` that would make git work outside it: `.git` itself
/// as anything but a directory (a symlink, or a `gitdir:` file), or a
/// symlink inside it.
fn git_dir_problem(parts: &[&str], file: &FileSpec) -> Option<String> {
    if parts.first() != Some(&".git") {
        return None;
    }
    let (symlink, dir) = match file {
        FileSpec::Text(_) => (false, false),
        FileSpec::Object(o) => (o.symlink.is_some(), o.dir == Some(true)),
    };
    if parts.len() == 1 && !dir {
        Some(format!(
            "`.git` is declared as {}, but this workspace runs git, which would then work \
             where it points, outside the workspace; declare `.git: {{ dir: true }}` or leave \
             it out",
            if symlink { "a symlink" } else { "a file" }
        ))
    } else if symlink {
        Some(
            "a symlink inside `.git`, but this workspace runs git, which would follow it, maybe \
             outside the workspace; declare a file or a directory here, or leave it out"
                .to_owned(),
        )
    } else {
        None
    }
}

fn components(rel: &str) -> Vec<&str> {
    rel.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

fn unknown_tool_message(name: &str) -> String {
    let hint = closest(name, ALL_TOOL_NAMES.into_iter())
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    format!(
        "unknown tool `{name}` (the tools are {}){hint}",
        ALL_TOOL_NAMES.join(", ")
    )
}

fn captured_names(call: &FauxCall, out: &mut BTreeSet<String>) {
    out.extend(call.captures.iter().map(|c| c.name.clone()));
    for retry in &call.retry {
        captured_names(retry, out);
    }
}

/// Octal permission bits for a check: up to four digits.
fn parse_mode(text: &str) -> Option<u32> {
    if text.is_empty() || text.len() > 4 {
        return None;
    }
    u32::from_str_radix(text, 8).ok()
}

/// Octal permission bits for a file the workspace gets: at most `777`,
/// never setuid, setgid or sticky.
fn parse_file_mode(text: &str) -> Result<u32, String> {
    match parse_mode(text) {
        Some(mode) if mode <= 0o777 => Ok(mode),
        Some(_) => Err(format!(
            "mode `{text}` sets setuid, setgid or sticky bits, which a workspace file never \
             gets; give the permission bits only, like \"755\""
        )),
        None => Err(format!("mode `{text}` is not an octal mode like \"755\"")),
    }
}

/// The bytes `times` repetitions of `template` make, `{n}` counting from
/// 1, computed without making them; `None` when it overflows (or the
/// template does not parse, which [`file_content`] reports).
#[cfg(test)]
fn repeat_len(template: &str, times: u64) -> Option<u64> {
    Template::parse(template).ok()?.len(times, "")
}

/// The bytes a workspace file will hold, or what is wrong with it (and the
/// key below the file's own path it concerns).
fn planned_size(spec: &FileSpec) -> Result<u64, (Vec<Seg>, String)> {
    let object = match spec {
        FileSpec::Text(text) => return Ok(text.len() as u64),
        FileSpec::Object(object) => object,
    };
    let bom = if object.bom == Some(true) { 3 } else { 0 };
    let body = match (&object.text, &object.base64, &object.repeat) {
        (Some(text), _, _) => text.len() as u64,
        // Decoded base64 is never longer than its text.
        (_, Some(encoded), _) => encoded.len() as u64,
        (_, _, Some(template)) => {
            let times = object.times.unwrap_or(0) as u64;
            let template =
                Template::parse(template).map_err(|message| (vec![k("repeat")], message))?;
            let join = object.join.as_deref().unwrap_or("");
            template.len(times, join).ok_or_else(|| {
                (
                    vec![k("times")],
                    format!("`times: {times}` makes more bytes than can be counted"),
                )
            })?
        }
        _ => 0,
    };
    Ok(body.saturating_add(bom))
}

fn tool_names(tools: &ToolsSpec) -> Vec<String> {
    match tools {
        ToolsSpec::Preset(name) => Preset::parse(name)
            .unwrap_or(Preset::All)
            .names()
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        ToolsSpec::List(names) => names.clone(),
    }
}

fn apply_limits(limits: &mut Limits, spec: &LimitsSpec) {
    let pairs = [
        (&mut limits.max_lines, spec.max_lines),
        (&mut limits.max_bytes, spec.max_bytes),
        (&mut limits.grep_max_line, spec.grep_max_line),
        (&mut limits.grep_limit, spec.grep_limit),
        (&mut limits.find_limit, spec.find_limit),
        (&mut limits.ls_limit, spec.ls_limit),
    ];
    for (slot, value) in pairs {
        if let Some(value) = value {
            *slot = value;
        }
    }
    if spec.bash_timeout.is_some() {
        limits.bash_timeout = spec.bash_timeout;
    }
    if let Some(bytes) = spec.max_log_bytes {
        limits.max_log_bytes = bytes;
    }
    if spec.grep_timeout.is_some() {
        limits.grep_timeout = spec.grep_timeout;
    }
}

/// `dir/name.yaml` → `dir/name.snap.yaml`.
pub fn snapshot_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.snap.yaml"))
}

/// A workspace file's content, or what is wrong with it (and the key below
/// the file's own path it concerns). Its size is checked before.
fn file_content(spec: &FileSpec) -> Result<FileContent, (Vec<Seg>, String)> {
    let object = match spec {
        FileSpec::Text(text) => {
            return Ok(FileContent::Bytes {
                data: text.clone().into_bytes(),
                mode: None,
            });
        }
        FileSpec::Object(object) => object,
    };
    let whole = |message: &str| (Vec::new(), message.to_owned());
    let FileObject {
        text,
        base64,
        repeat,
        times,
        symlink,
        dir,
        bom,
        mode,
        join,
    } = object;
    let kinds = [
        text.is_some(),
        base64.is_some(),
        repeat.is_some(),
        symlink.is_some(),
        dir == &Some(true),
    ];
    if kinds.iter().filter(|k| **k).count() != 1 {
        return Err(whole(
            "give exactly one of `text`, `base64`, `repeat` (+ `times`), `symlink` or `dir: true`",
        ));
    }
    let mode = match mode {
        Some(m) => Some(parse_file_mode(m).map_err(|message| (vec![k("mode")], message))?),
        None => None,
    };
    if times.is_some() && repeat.is_none() {
        return Err((
            vec![k("times")],
            "`times` only goes with `repeat`".to_owned(),
        ));
    }
    if join.is_some() && repeat.is_none() {
        return Err((vec![k("join")], "`join` only goes with `repeat`".to_owned()));
    }
    if bom.is_some() && symlink.is_some() | (dir == &Some(true)) {
        return Err((
            vec![k("bom")],
            "`bom` only goes with file content".to_owned(),
        ));
    }
    let prefix: &[u8] = if bom == &Some(true) {
        b"\xEF\xBB\xBF"
    } else {
        b""
    };
    if let Some(target) = symlink {
        if mode.is_some() {
            return Err((vec![k("mode")], "a symlink has no `mode`".to_owned()));
        }
        return Ok(FileContent::Symlink(target.clone()));
    }
    if dir == &Some(true) {
        return Ok(FileContent::Dir(mode));
    }
    let body = if let Some(text) = text {
        text.clone().into_bytes()
    } else if let Some(encoded) = base64 {
        let cleaned: String = encoded.split_whitespace().collect();
        base64::engine::general_purpose::STANDARD
            .decode(cleaned)
            .map_err(|err| {
                (
                    vec![k("base64")],
                    format!("`base64` is not valid base64: {err}"),
                )
            })?
    } else if let Some(template) = repeat {
        let times = times.ok_or_else(|| whole("`repeat` needs `times`"))?;
        let template = Template::parse(template).map_err(|message| (vec![k("repeat")], message))?;
        return Ok(FileContent::Generated {
            bom: bom == &Some(true),
            template,
            times,
            join: join.clone().unwrap_or_default(),
            mode,
        });
    } else {
        Vec::new()
    };
    let mut data = prefix.to_vec();
    data.extend_from_slice(&body);
    Ok(FileContent::Bytes { data, mode })
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
