//! The suite file, `harness.yaml`: reading it (one document) and the
//! checks of its values.

use std::path::Path;
use std::path::PathBuf;

use std::collections::BTreeMap;

use std::time::Duration;

use crate::scenario::de;
use crate::scenario::model::SuiteDoc;
use crate::scenario::text_file::read_regular;
use crate::scenario::yaml;
use crate::scenario::yaml::Seg;

use super::error::Problem;
use super::error::ScenarioError;
use super::error::into_errors;
use super::scenario::ServerPlan;
use super::validator::Validator;
use super::validator::k;

/// The name of the suite file.
pub(crate) const SUITE_FILE: &str = "harness.yaml";

/// The largest `max_turns` a scenario or suite may give.
pub(super) const MAX_TURNS: usize = 1_000_000_000;
/// Bytes of inline workspace files one scenario may generate, unless the
/// suite file's `max_generated_bytes` says otherwise (256 MiB).
pub(super) const DEFAULT_MAX_GENERATED_BYTES: u64 = 256 * 1024 * 1024;
/// The most `max_generated_bytes` may be set to (4 GiB).
pub(super) const MAX_GENERATED_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// A loaded `harness.yaml`.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    /// The directory holding the suite file (`None`: no suite file).
    pub(crate) dir: Option<PathBuf>,
    /// Its contents.
    pub(crate) doc: SuiteDoc,
    /// `timeout`, checked: every scenario's budget unless it has its own.
    pub(crate) timeout: Option<Duration>,
    /// Its MCP servers, checked (`${dir}` is the suite file's directory).
    pub(crate) servers: BTreeMap<String, ServerPlan>,
    /// Its `agents:`, checked.
    pub(crate) agents: std::sync::Arc<BTreeMap<String, crate::scenario::agent::AgentDef>>,
}

/// A problem of a suite file's run settings (`jobs`, `tokenizer`,
/// `gates`), found by the run layer, whose settings they are, and placed
/// by the loader with the file's other problems: the path of the value,
/// whether the problem is at its key rather than its value, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SettingProblem {
    /// The path of the value (`gates.tokens`).
    pub at: Vec<Seg>,
    /// The problem is the key's (an unknown gate key), not the value's.
    pub at_key: bool,
    /// What is wrong, in the file's words.
    pub message: String,
}

/// The check of a suite file's run settings, given by the layer that
/// types them (`run::settings::suite_problems`).
pub(super) type SettingsCheck<'a> = &'a dyn Fn(&SuiteDoc) -> Vec<SettingProblem>;

impl Suite {
    /// Loads a suite file, or lists every problem of it (never empty), its
    /// run settings checked by `check`.
    pub(crate) fn load_all(
        path: &Path,
        check: SettingsCheck<'_>,
    ) -> Result<Self, Vec<ScenarioError>> {
        let text = read_regular(path).map_err(|err| {
            vec![ScenarioError::at_start(
                path,
                format!("cannot read the suite file: {err}"),
            )]
        })?;
        Self::from_text(path, &text, check)
    }

    /// The suite file `text`, as if read from `path`.
    pub(crate) fn from_text(
        path: &Path,
        text: &str,
        check: SettingsCheck<'_>,
    ) -> Result<Self, Vec<ScenarioError>> {
        let stream = yaml::parse(text);
        let mut problems: Vec<Problem> = Vec::new();
        problems.extend(stream.fatal.map(Problem::from));
        let mut documents = stream.documents.into_iter().filter(|d| !d.root.is_null());
        let mut doc = SuiteDoc::default();
        let mut timeout = None;
        let mut servers = BTreeMap::new();
        let mut agents = BTreeMap::new();
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
            servers = v.servers(&doc.servers, &super::validator::dir_of(path));
            timeout = v.suite(&doc, &doc.servers.keys().cloned().collect());
            agents = v.agent_defs(&doc.agents);
            if let Some(name) = &doc.agent {
                v.agent_name(&[k("agent")], name, &agents);
            }
            let (_, sandbox_problems) =
                super::sandbox::plan(doc.sandbox.as_ref(), &super::validator::dir_of(path), true);
            for (at, message) in sandbox_problems {
                v.problem(&at, message);
            }
            for problem in check(&doc) {
                v.push(&problem.at, problem.at_key, problem.message);
            }
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
            timeout,
            servers,
            agents: std::sync::Arc::new(agents),
        })
    }

    /// The fixtures root: the suite's `fixtures` key (relative to the suite
    /// file), else `fixtures/` beside the suite file, else `fixtures/` in
    /// the current directory.
    pub(crate) fn fixtures_root(&self) -> PathBuf {
        self.fixtures_in(self.dir.as_deref().unwrap_or(Path::new("")))
    }

    /// The fixtures root of this suite's file were it in `dir` (the
    /// same directory named another way, as a directory search names it).
    pub(crate) fn fixtures_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.doc.fixtures.as_deref().unwrap_or("fixtures"))
    }

    /// Bytes of inline files one scenario may generate.
    pub(crate) fn max_generated_bytes(&self) -> u64 {
        self.doc
            .max_generated_bytes
            .unwrap_or(DEFAULT_MAX_GENERATED_BYTES)
    }
}

impl Validator<'_> {
    /// The checks of a suite file's values (but for its run settings,
    /// which the run layer checks); its `timeout` typed.
    fn suite(
        &mut self,
        doc: &SuiteDoc,
        servers: &std::collections::BTreeSet<String>,
    ) -> Option<Duration> {
        if let Some(tools) = &doc.tools {
            self.tools(&[k("tools")], tools, servers);
        }
        if let Some(limits) = &doc.limits {
            self.limits(&[k("limits")], limits);
        }
        let timeout = self.budget(&[k("timeout")], doc.timeout);
        self.count_in_range(&[k("max_turns")], doc.max_turns, MAX_TURNS);
        if let Some(n) = doc.max_generated_bytes
            && !(1..=MAX_GENERATED_BYTES).contains(&n)
        {
            self.problem(
                &[k("max_generated_bytes")],
                format!("must be a whole number of bytes from 1 to {MAX_GENERATED_BYTES} (4 GiB)"),
            );
        }
        if let Some(spec) = &doc.bash {
            let (_, _, problems) = super::setup::bash(spec, super::validator::is_inside);
            for (at, message) in problems {
                self.problem(&at, message);
            }
        }
        timeout
    }
}
