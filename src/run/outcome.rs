//! What a run produced: the only input of the report layer.

use serde::Deserialize;
use serde::Serialize;

use crate::judge::Failure;
use crate::judge::Figures;
use crate::judge::SnapshotOutcome;
use crate::scenario::Scenario;
use crate::scenario::ScenarioError;

use super::partition::PartitionInfo;
use super::transcript::KeptTranscript;
use crate::judge::drift::ReplayStats;
use crate::judge::tally::CallStat;
use crate::judge::tally::TurnStat;

/// Milliseconds of a duration, saturating.
pub(super) fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// How a scenario ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every check held.
    Passed,
    /// A check failed, or the run broke.
    Failed,
    /// Not run (`skip:` or `--fail-fast`).
    Skipped,
}

impl Status {
    /// `passed`, `failed` or `skipped`, as reports write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Passed => "passed",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// A scenario's figures and its wall time. In `run.json` the figures and
/// `duration_ms` are one flat object, figures first.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub(crate) struct ScenarioStats {
    /// Turns, calls, errors, retries and tokens.
    #[serde(flatten)]
    pub(crate) figures: Figures,
    /// Wall time, in milliseconds. In the totals of a run: the sum of the
    /// scenarios' wall times (the run's own wall time is the report's
    /// top-level `duration_ms`).
    pub(crate) duration_ms: u64,
}

/// One scenario's outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScenarioOutcome {
    /// The scenario's name.
    pub(crate) name: String,
    /// Its position in the whole selection, in discovery order (0-based).
    /// A partition keeps the positions of the whole selection, so merged
    /// partitions come back in the unpartitioned order.
    #[serde(default)]
    pub(crate) index: usize,
    /// The file it came from.
    pub(crate) file: String,
    /// Tags.
    pub(crate) tags: Vec<String>,
    /// Passed, failed or skipped.
    pub(crate) status: Status,
    /// Why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) skip_reason: Option<String>,
    /// Failed checks.
    pub(crate) failures: Vec<Failure>,
    /// Figures.
    pub(crate) stats: ScenarioStats,
    /// Per-call figures, in the order the calls were sent.
    pub(crate) calls: Vec<CallStat>,
    /// Per-request usage.
    pub(crate) turns: Vec<TurnStat>,
    /// Where the workspace was kept (`--keep-workspaces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) workspace: Option<String>,
    /// Snapshots compared (written after the run).
    #[serde(skip)]
    pub(crate) snapshots: Vec<SnapshotOutcome>,
    /// The snapshot file of the scenario.
    #[serde(skip)]
    pub(crate) snapshot_file: Option<std::path::PathBuf>,
    /// An imported session's comparison with its recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replay: Option<ReplayStats>,
    /// With `--coverage`: calls that showed each behaviour, by area (a
    /// tool, or `loop`) and behaviour (`run::coverage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) coverage:
        Option<std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>>>,
    /// The MCP servers it used, each named with what it said of itself
    /// and how it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) servers: Vec<super::servers::ServerOutcome>,
    /// What the model saw and did, turn by turn, within the bounds of
    /// `run::transcript::Bounds`; absent for a scenario that did not
    /// reach its loop (skipped, or its workspace could not be built).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) transcript: Option<KeptTranscript>,
    /// With `--repeat`: the scenario's runs summed up (its figures,
    /// failures and transcript are those of one run, its `duration_ms`
    /// the median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) repeats: Option<super::repeat::Repeats>,
    /// A scenario served to a real agent: the agent, how it ended, its
    /// last words, its requests and side calls, its isolation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<super::agent_outcome::AgentOutcome>,
    /// The sandbox its programs ran in: what each part (`fs`, `network`,
    /// `processes`) was enforced by, or why there was none (`none`);
    /// absent for a scenario whose workspace was not made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sandbox: Option<super::env::sandbox::SandboxOutcome>,
}

impl ScenarioOutcome {
    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How it ended.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Each failure as the console words it: where (the step), which
    /// check, what was expected and what happened.
    pub fn failures(&self) -> Vec<String> {
        self.failures.iter().map(ToString::to_string).collect()
    }

    /// Its figures: turns, calls, errors, retries, tokens.
    pub fn figures(&self) -> &Figures {
        &self.stats.figures
    }

    /// An outcome with no figures.
    pub fn empty(name: &str, file: &str, tags: &[String], status: Status) -> Self {
        Self {
            name: name.to_owned(),
            index: 0,
            file: file.to_owned(),
            tags: tags.to_vec(),
            status,
            skip_reason: None,
            failures: Vec::new(),
            stats: ScenarioStats::default(),
            calls: Vec::new(),
            turns: Vec::new(),
            workspace: None,
            snapshots: Vec::new(),
            snapshot_file: None,
            replay: None,
            coverage: None,
            servers: Vec::new(),
            transcript: None,
            repeats: None,
            agent: None,
            sandbox: None,
        }
    }

    /// An outcome of `scenario` with no figures.
    pub fn of(scenario: &Scenario, status: Status) -> Self {
        Self::empty(
            &scenario.name,
            &scenario.file.display().to_string(),
            &scenario.tags,
            status,
        )
    }

    /// `scenario` did not run, for this reason.
    pub fn skipped(scenario: &Scenario, reason: impl Into<String>) -> Self {
        let mut outcome = Self::of(scenario, Status::Skipped);
        outcome.skip_reason = Some(reason.into());
        outcome
    }

    /// `scenario` failed as a whole, before its checks could run.
    pub fn broken(scenario: &Scenario, failure: Failure) -> Self {
        let mut outcome = Self::of(scenario, Status::Failed);
        outcome.failures.push(failure);
        outcome
    }
}

/// The whole run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Every scenario, in discovery order.
    pub(crate) scenarios: Vec<ScenarioOutcome>,
    /// The tokenizer the figures were counted with.
    pub(crate) tokenizer: String,
    /// Wall time of the whole run, in milliseconds; for merged partitions,
    /// the longest partition's (they run side by side).
    pub(crate) duration_ms: u64,
    /// Whether the run was interrupted.
    #[serde(default)]
    pub(crate) interrupted: bool,
    /// The partition this run was, if it was one.
    #[serde(default)]
    pub(crate) partition: Option<PartitionInfo>,
    /// Scenario files (or parts of them) that could not be loaded.
    #[serde(default)]
    pub(crate) load_errors: Vec<LoadError>,
    /// The gates configured for the run (`harness.yaml` and `--gate`), as
    /// written (`tokens=+5%`); they apply when a baseline is given, also
    /// later, to merged partitions.
    #[serde(default)]
    pub(crate) gates: Vec<String>,
    /// With `--repeat`: the runs of each scenario and the runs that must
    /// pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) repeat: Option<super::repeat::RepeatSpec>,
    /// With `--variant`: every variant's run, the first one's also being
    /// this run's `scenarios`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) variants: Vec<VariantRun>,
}

/// One variant's run (`harness run --variant NAME=FILE`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VariantRun {
    /// The variant's name.
    pub(crate) name: String,
    /// Its suite file, as given.
    pub(crate) file: String,
    /// Its run (without variants of its own).
    pub(crate) summary: RunSummary,
}

/// A scenario file problem that kept scenarios from running.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub(crate) struct LoadError {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong and what to change.
    pub message: String,
}

impl From<&ScenarioError> for LoadError {
    fn from(err: &ScenarioError) -> Self {
        Self {
            file: err.path.display().to_string(),
            line: err.line,
            column: err.column,
            message: err.message.clone(),
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )
    }
}

impl RunSummary {
    /// Each scenario's outcome, in discovery order.
    pub fn scenarios(&self) -> &[ScenarioOutcome] {
        &self.scenarios
    }

    /// The figures of every scenario, summed.
    pub fn figures(&self) -> Figures {
        self.totals().figures
    }

    /// Whether a signal stopped the run before every scenario ended.
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// The tokenizer the figures were counted with.
    pub fn tokenizer(&self) -> &str {
        &self.tokenizer
    }

    /// The `replay` sections of the scenarios summed (`None` when no
    /// scenario replayed a session).
    pub fn replay_totals(&self) -> Option<ReplayStats> {
        ReplayStats::sum(self.scenarios.iter().filter_map(|s| s.replay.as_ref()))
    }

    /// Scenarios with this status.
    pub fn count(&self, status: Status) -> usize {
        self.scenarios.iter().filter(|s| s.status == status).count()
    }

    /// Every scenario's stats summed, the `totals` of `run.json`. Its
    /// `duration_ms` is the sum of the scenarios' wall times, like every
    /// other total; the run's wall time is [`RunSummary::duration_ms`]. A
    /// sum does not depend on how the scenarios were partitioned, so merged
    /// partitions have the totals of the whole run.
    pub(crate) fn totals(&self) -> ScenarioStats {
        ScenarioStats {
            figures: Figures::sum(self.scenarios.iter().map(|s| &s.stats.figures)),
            duration_ms: self
                .scenarios
                .iter()
                .fold(0, |sum, s| sum.saturating_add(s.stats.duration_ms)),
        }
    }
}
