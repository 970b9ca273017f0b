//! The suite file, `harness.yaml`: reading it (one document) and the
//! checks of its values.

use std::path::Path;
use std::path::PathBuf;

use std::collections::BTreeMap;

use crate::scenario::de;
use crate::scenario::gate::Gate;
use crate::scenario::gate::GateError;
use crate::scenario::gate::GateKey;
use crate::scenario::gate::Limit;
use crate::scenario::gate::combine;
use crate::scenario::model::SuiteDoc;
use crate::scenario::settings::Budget;
use crate::scenario::settings::Jobs;
use crate::scenario::settings::Tokenizer;
use crate::scenario::text_file::read_regular;
use crate::scenario::yaml;

use super::error::Problem;
use super::error::ScenarioError;
use super::error::into_errors;
use super::scenario::ServerPlan;
use super::validator::Validator;
use super::validator::k;

/// The name of the suite file.
pub const SUITE_FILE: &str = "harness.yaml";

/// The largest `max_turns` a scenario or suite may give.
pub const MAX_TURNS: usize = 1_000_000_000;
/// Bytes of inline workspace files one scenario may generate, unless the
/// suite file's `max_generated_bytes` says otherwise (256 MiB).
pub const DEFAULT_MAX_GENERATED_BYTES: u64 = 256 * 1024 * 1024;
/// The most `max_generated_bytes` may be set to (4 GiB).
pub const MAX_GENERATED_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// A loaded `harness.yaml`.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    /// The directory holding the suite file (`None`: no suite file).
    pub dir: Option<PathBuf>,
    /// Its contents.
    pub doc: SuiteDoc,
    /// `jobs`, checked.
    pub jobs: Option<Jobs>,
    /// `timeout`, checked: every scenario's budget unless it has its own.
    pub timeout: Option<Budget>,
    /// Its MCP servers, checked (`${dir}` is the suite file's directory).
    pub servers: BTreeMap<String, ServerPlan>,
    /// `gates`, checked and sorted by key.
    pub gates: Vec<Gate>,
}

impl Suite {
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
        let mut settings = Settings::default();
        let mut servers = BTreeMap::new();
        if let Some(mut document) = documents.next() {
            problems.extend(document.problems.drain(..).map(Problem::from));
            let mut found = Vec::new();
            if let Some(parsed) =
                de::deserialize_all::<SuiteDoc>(&mut document.root, &mut found, |_, _| false)
            {
                doc = parsed;
            }
            let mut v = Validator::new(&document.root);
            v.after(&found);
            problems.extend(found.into_iter().map(Problem::from));
            servers = v.servers(&doc.servers, path.parent().unwrap_or(Path::new(".")));
            settings = v.suite(&doc, &doc.servers.keys().cloned().collect());
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
            jobs: settings.jobs,
            timeout: settings.timeout,
            servers,
            gates: settings.gates,
        })
    }

    /// The fixtures root: the suite's `fixtures` key (relative to the suite
    /// file), else `fixtures/` beside the suite file, else `fixtures/` in
    /// the current directory.
    pub fn fixtures_root(&self) -> PathBuf {
        self.fixtures_in(self.dir.as_deref().unwrap_or(Path::new("")))
    }

    /// The fixtures root of this suite's file were it in `dir` (the
    /// same directory named another way, as a directory search names it).
    pub fn fixtures_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.doc.fixtures.as_deref().unwrap_or("fixtures"))
    }

    /// Bytes of inline files one scenario may generate.
    pub fn max_generated_bytes(&self) -> u64 {
        self.doc
            .max_generated_bytes
            .unwrap_or(DEFAULT_MAX_GENERATED_BYTES)
    }
}

/// The settings of a suite file that loading types.
#[derive(Default)]
struct Settings {
    jobs: Option<Jobs>,
    timeout: Option<Budget>,
    gates: Vec<Gate>,
}

impl Validator<'_> {
    /// The checks of a suite file's values; its `jobs`, `timeout` and
    /// `gates` typed.
    fn suite(&mut self, doc: &SuiteDoc, servers: &std::collections::BTreeSet<String>) -> Settings {
        if let Some(tools) = &doc.tools {
            self.tools(&[k("tools")], tools, servers);
        }
        if let Some(limits) = &doc.limits {
            self.limits(&[k("limits")], limits);
        }
        let timeout = self.budget(&[k("timeout")], doc.timeout);
        let jobs = doc.jobs.and_then(|n| match Jobs::new(n) {
            Ok(jobs) => Some(jobs),
            Err(_) => {
                self.problem(&[k("jobs")], Jobs::problem(n));
                None
            }
        });
        self.count_in_range(&[k("max_turns")], doc.max_turns, MAX_TURNS);
        if let Some(n) = doc.max_generated_bytes
            && !(1..=MAX_GENERATED_BYTES).contains(&n)
        {
            self.problem(
                &[k("max_generated_bytes")],
                format!("must be a whole number of bytes from 1 to {MAX_GENERATED_BYTES} (4 GiB)"),
            );
        }
        if let Some(name) = &doc.tokenizer
            && let Err(err) = Tokenizer::check_name(name)
        {
            self.problem(&[k("tokenizer")], err);
        }
        if let Some(spec) = &doc.bash {
            let (_, _, problems) =
                crate::scenario::conditions::bash(spec, super::validator::is_inside);
            for (at, message) in problems {
                self.problem(&at, message);
            }
        }
        let gates = self.gates(doc.gates.iter().flatten());
        Settings {
            jobs,
            timeout,
            gates,
        }
    }

    /// `gates:`, each key and limit checked where it is written (as
    /// `harness run` would refuse them).
    fn gates<'g>(&mut self, gates: impl Iterator<Item = (&'g String, &'g String)>) -> Vec<Gate> {
        let mut parsed = Vec::new();
        for (key, limit) in gates {
            let at = [k("gates"), k(key)];
            let key = match key.parse::<GateKey>() {
                Ok(key) => Some(key),
                Err(err) => {
                    self.problem_at_key(&at, gate_problem(&err));
                    None
                }
            };
            let limit = match limit.parse::<Limit>() {
                Ok(limit) => Some(limit),
                Err(err) => {
                    self.problem(&at, gate_problem(&err));
                    None
                }
            };
            if let (Some(key), Some(limit)) = (key, limit) {
                parsed.push(Gate { key, limit });
            }
        }
        combine(parsed)
    }
}

/// How a suite file words a gate that does not parse: the gate
/// language's own words, with the hint for a key close to a known one.
fn gate_problem(err: &GateError) -> String {
    match err {
        GateError::UnknownKey { key, .. } => {
            let hint = de::closest(key, GateKey::all().map(GateKey::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            format!("{err}{hint}")
        }
        _ => err.to_string(),
    }
}
