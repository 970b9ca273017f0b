//! Configuring a run: [`RunnerBuilder`] resolves every setting (the
//! command line's, else the suite file's, else the default) before any
//! scenario starts, the way nextest's `TestRunnerBuilder` does: `build()?`,
//! then [`Runner::execute`]. It takes the settings typed
//! ([`crate::run::settings`]: parsed once, by the command line or the
//! suite loader, which also checks the suite's tokenizer name and its
//! gates where they are written); what it still checks is that the
//! tokenizer loads and that the runtime starts.
//!
//! | setting | command line | `harness.yaml` | default |
//! | --- | --- | --- | --- |
//! | tokenizer | `--tokenizer` | `tokenizer` | `o200k` |
//! | jobs | `--jobs` | `jobs` | the number of cores |
//! | timeout | `--timeout` | `timeout` (per scenario, when loaded) | 60 s |
//! | gates | `--gate` (overrides by key) | `gates` | none |
//!
//! The suite file that gives defaults is the first one discovery used.

use std::path::PathBuf;
use std::sync::Arc;

use crate::scenario::Scenario;
use crate::scenario::Suite;

use super::settings::Budget;
use super::settings::Jobs;
use super::settings::Tokenizer;
use super::settings::suite_gates;
use super::settings::suite_jobs;

use super::config::RunConfig;
use super::discover::Discovery;
use super::gate::Gate;
use super::gate::combine;
use super::outcome::LoadError;
use super::partition::Fingerprint;
use super::partition::Partition;
use super::partition::PartitionInfo;
use super::repeat::RepeatSpec;
use super::runner::Runner;

/// A run's configuration that cannot work; nothing has run. The texts are
/// those `harness run` prints.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The suite file's tokenizer cannot be loaded (an unknown name is a
    /// problem of the suite file, found when it is loaded).
    #[error("--tokenizer: {0}")]
    Tokenizer(String),
    /// The async runtime cannot be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Builds a [`Runner`].
#[derive(Debug, Default)]
pub struct RunnerBuilder {
    scenarios: Vec<Scenario>,
    load_errors: Vec<LoadError>,
    paths: Vec<PathBuf>,
    narrowed: bool,
    suite: Option<Suite>,
    tokenizer: Option<Tokenizer>,
    jobs: Option<Jobs>,
    timeout: Option<Budget>,
    gates: Vec<Gate>,
    partition: Option<Partition>,
    fail_fast: bool,
    keep_workspaces: bool,
    update_snapshots: bool,
    coverage: bool,
    audit_servers: bool,
    repeat: Option<RepeatSpec>,
    /// Leave each scenario's transcript out of its outcome.
    no_transcripts: bool,
}

impl RunnerBuilder {
    /// A run of these scenarios, with no suite file.
    pub fn new(scenarios: Vec<Scenario>) -> Self {
        Self {
            scenarios,
            ..Self::default()
        }
    }

    /// A run of what discovery found: its scenarios, its load errors (the
    /// summary records them) and the defaults of its first suite file.
    pub fn discovered(discovery: Discovery) -> Self {
        Self {
            scenarios: discovery.scenarios,
            load_errors: discovery.errors.iter().map(LoadError::from).collect(),
            paths: discovery.paths,
            narrowed: discovery.narrowed,
            suite: discovery.suites.into_iter().next(),
            ..Self::default()
        }
    }

    /// The tokenizer (`None`: the suite's, else `o200k`).
    pub fn tokenizer(mut self, tokenizer: Option<Tokenizer>) -> Self {
        self.tokenizer = tokenizer;
        self
    }

    /// Scenarios at once (`None`: the suite's, else the number of cores).
    pub fn jobs(mut self, jobs: Option<Jobs>) -> Self {
        self.jobs = jobs;
        self
    }

    /// The time every scenario may run, overriding each one's budget.
    pub fn timeout(mut self, budget: Option<Budget>) -> Self {
        self.timeout = budget;
        self
    }

    /// Gates (`--gate`); they override the suite's by key.
    pub fn gates(mut self, gates: Vec<Gate>) -> Self {
        self.gates = gates;
        self
    }

    /// Run only this partition of the scenarios.
    pub fn partition(mut self, partition: Option<Partition>) -> Self {
        self.partition = partition;
        self
    }

    /// Stop starting scenarios after the first failure.
    pub fn fail_fast(mut self, yes: bool) -> Self {
        self.fail_fast = yes;
        self
    }

    /// Keep each scenario's workspace (the outcome says where).
    pub fn keep_workspaces(mut self, yes: bool) -> Self {
        self.keep_workspaces = yes;
        self
    }

    /// Accept new and changed snapshots.
    pub fn update_snapshots(mut self, yes: bool) -> Self {
        self.update_snapshots = yes;
        self
    }

    /// Audit the tool definitions of each scenario's MCP servers
    /// (`harness run --audit-servers`): an error-level finding of
    /// `mcp::audit` fails the scenario before its first call.
    pub fn audit_servers(mut self, yes: bool) -> Self {
        self.audit_servers = yes;
        self
    }

    /// Run each scenario `runs` times; it passes when `min_pass` runs
    /// pass (`harness run --repeat N --min-pass K`).
    pub fn repeat(mut self, spec: Option<RepeatSpec>) -> Self {
        self.repeat = spec;
        self
    }

    /// Record what each scenario's calls exercised, for the coverage
    /// report (`harness run --coverage`).
    pub fn coverage(mut self, yes: bool) -> Self {
        self.coverage = yes;
        self
    }

    /// Keep each scenario's transcript in its outcome (default: yes). A
    /// run whose reports show no transcript (neither `run.json` nor
    /// `index.html` is written) can leave them out: they are most of a
    /// large run's memory.
    pub fn transcripts(mut self, yes: bool) -> Self {
        self.no_transcripts = !yes;
        self
    }

    /// Resolves and checks the configuration, selects the partition and
    /// starts the async runtime; the first problem, in the order of the
    /// variants of [`BuildError`], is the error.
    pub fn build(self) -> Result<Runner, BuildError> {
        let tokenizer = match &self.tokenizer {
            Some(tokenizer) => tokenizer.clone(),
            None => Tokenizer::parse(
                self.suite
                    .as_ref()
                    .and_then(|s| s.doc.tokenizer.as_deref())
                    .unwrap_or(Tokenizer::DEFAULT),
            )
            .map_err(BuildError::Tokenizer)?,
        };
        let gates = self.resolve_gates();
        let jobs = self
            .jobs
            .or(self.suite.as_ref().and_then(|s| suite_jobs(&s.doc)))
            .unwrap_or_else(Jobs::cores)
            .get();
        // The runtime's threads follow the machine, not --jobs: a scenario
        // waits on tools, processes and servers far more than it computes
        // (blocking work goes to the blocking pool, workspace removal to
        // the cleanup threads), so --jobs 16 on two cores needs no sixteen
        // threads, and --jobs 1 still has a second thread for its timers.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(Jobs::cores().get().clamp(2, 64))
            .enable_all()
            .build()
            .map_err(BuildError::Runtime)?;
        let selected = self.scenarios.len();
        let fingerprint = Fingerprint::of(self.scenarios.iter().map(|s| s.name.as_str()));
        let (scenarios, positions) = match &self.partition {
            Some(partition) => keep_partition(self.scenarios, partition),
            None => (self.scenarios, (0..selected).collect()),
        };
        Ok(Runner {
            runtime,
            config: RunConfig {
                jobs,
                fail_fast: self.fail_fast,
                keep_workspaces: self.keep_workspaces,
                update_snapshots: self.update_snapshots,
                timeout: self.timeout.map(Budget::duration),
                tokens: tokenizer.counter(),
                coverage: self.coverage,
                audit_servers: self.audit_servers,
                transcripts: !self.no_transcripts,
                repeat: self.repeat,
                harness: super::servers::harness_binary(),
                servers: Arc::default(),
                cleanup: Arc::default(),
                fixtures: Arc::default(),
            },
            scenarios,
            positions,
            selected,
            partition: self.partition.map(|spec| PartitionInfo {
                spec,
                suite_scenarios: selected,
                suite_fingerprint: Some(fingerprint),
            }),
            load_errors: self.load_errors,
            gates,
            paths: self.paths,
            narrowed: self.narrowed,
        })
    }

    /// The suite's gates (checked when it was loaded), then the given
    /// ones, combined by key.
    fn resolve_gates(&self) -> Vec<Gate> {
        let suite = self.suite.iter().flat_map(|s| suite_gates(&s.doc));
        combine(suite.chain(self.gates.iter().copied()))
    }
}

/// The scenarios of `partition`, and the positions (0-based) they had in
/// the whole selection, in order.
fn keep_partition(all: Vec<Scenario>, partition: &Partition) -> (Vec<Scenario>, Vec<usize>) {
    let positions = partition.select(all.iter().map(|s| s.name.as_str()));
    let mut kept = positions.iter().peekable();
    let scenarios = all
        .into_iter()
        .enumerate()
        .filter(|(position, _)| kept.next_if(|&&p| p == *position).is_some())
        .map(|(_, scenario)| scenario)
        .collect();
    (scenarios, positions)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::scenario::load_text;

    fn scenarios(names: &[&str]) -> Vec<Scenario> {
        let text: Vec<String> = names
            .iter()
            .map(|n| format!("name: {n}\nmodel:\n  - say: done\n"))
            .collect();
        let (scenarios, errors) =
            load_text(Path::new("s.yaml"), &text.join("---\n"), &Suite::default());
        assert_eq!(errors, []);
        scenarios
    }

    fn error(builder: RunnerBuilder) -> String {
        builder.build().unwrap_err().to_string()
    }

    #[test]
    fn bad_settings_of_the_suite_fail_before_anything_runs() {
        // A suite built by hand, not loaded (loading refuses the name at
        // its line and column).
        let mut suite = Suite {
            dir: Some(PathBuf::from("suite")),
            ..Suite::default()
        };
        suite.doc.tokenizer = Some("gpt2".into());
        let with_suite = RunnerBuilder {
            suite: Some(suite),
            ..RunnerBuilder::new(scenarios(&["a"]))
        };
        assert_eq!(
            error(with_suite),
            "--tokenizer: unknown tokenizer `gpt2` (known: o200k, cl100k, chars4)"
        );
    }

    #[test]
    fn the_suite_gives_jobs_and_the_command_line_overrides_them() {
        let mut suite = Suite::default();
        suite.doc.jobs = Some(3);
        let build = |jobs: Option<usize>| {
            RunnerBuilder {
                suite: Some(suite.clone()),
                ..RunnerBuilder::new(scenarios(&["a"]))
            }
            .tokenizer(Tokenizer::parse("chars4").ok())
            .jobs(jobs.and_then(|n| Jobs::new(n).ok()))
            .build()
            .unwrap()
            .jobs()
        };
        assert_eq!((build(None), build(Some(5))), (3, 5));
        let cores = RunnerBuilder::new(scenarios(&["a"]))
            .tokenizer(Tokenizer::parse("chars4").ok())
            .build()
            .unwrap()
            .jobs();
        assert_eq!(cores, Jobs::cores().get());
    }

    #[test]
    fn the_command_line_overrides_the_suite() {
        let mut suite = Suite::default();
        suite.doc.tokenizer = Some("cl100k".into());
        suite.doc.gates = Some(
            [("tokens", "+5%"), ("errors", "+0")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .into(),
        );
        let builder = RunnerBuilder {
            suite: Some(suite),
            ..RunnerBuilder::new(scenarios(&["a"]))
        };
        let runner = builder
            .tokenizer(Tokenizer::parse("chars4").ok())
            .gates(vec!["tokens=+10%".parse().unwrap()])
            .build()
            .unwrap();
        assert_eq!(runner.tokenizer(), "chars4");
        assert_eq!(
            runner
                .gates()
                .iter()
                .map(Gate::to_string)
                .collect::<Vec<_>>(),
            ["tokens=+10%", "errors=+0"]
        );
    }

    #[test]
    fn a_partition_keeps_the_positions_of_the_whole_selection() {
        let names = ["a", "b", "c", "d", "e"];
        let runner = RunnerBuilder::new(scenarios(&names))
            .tokenizer(Tokenizer::parse("chars4").ok())
            .partition(Some("slice:2/2".parse().unwrap()))
            .build()
            .unwrap();
        let summary = runner.execute(|_| {}).unwrap();
        assert_eq!(
            summary
                .scenarios
                .iter()
                .map(|o| (o.name.as_str(), o.index))
                .collect::<Vec<_>>(),
            [("b", 1), ("d", 3)]
        );
        assert_eq!(summary.partition.map(|p| p.suite_scenarios), Some(5));
        assert_eq!(summary.tokenizer, "chars4");
    }

    #[test]
    fn nothing_to_run_is_an_error_before_the_run_starts() {
        let mut started = false;
        let runner = RunnerBuilder::discovered(Discovery {
            paths: vec![PathBuf::from("a"), PathBuf::from("b")],
            ..Discovery::default()
        })
        .build()
        .unwrap();
        let err = runner
            .execute(|event| started |= matches!(event, super::super::RunEvent::Started { .. }))
            .unwrap_err();
        assert_eq!(err.to_string(), "no scenarios found in a, b");
        assert!(!started);
    }
}
