//! Running a built [`Runner`]: bounded concurrency over the scenarios, each
//! through the per-scenario pipeline (a workspace, the loop, the checks),
//! and the [`RunSummary`] that comes back.
//!
//! [`Runner::execute`] is synchronous: the runner owns the tokio runtime
//! that [`super::RunnerBuilder::build`] started and runs up to `jobs`
//! scenarios at once. A scenario that breaks (a panic, a loop invariant)
//! fails alone; the others go on. Ctrl-C stops the run cleanly.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::agent::TokenCounter;
use crate::scenario::Failure;
use crate::scenario::Scenario;

use super::gate::Gate;
use super::outcome::LoadError;
use super::outcome::RunSummary;
use super::outcome::ScenarioOutcome;
use super::outcome::Status;
use super::partition::PartitionInfo;
use super::pipeline::Job;
use super::pipeline::millis;
use super::snapshots::SnapshotCache;
use super::snapshots::write_snapshots;

/// How each scenario runs, as resolved by the builder.
#[derive(Clone, Debug)]
pub(super) struct RunConfig {
    /// Scenarios at once.
    pub jobs: usize,
    /// Stop starting scenarios after the first failure.
    pub fail_fast: bool,
    /// Keep workspaces (and report where they are).
    pub keep_workspaces: bool,
    /// Accept new and changed snapshots.
    pub update_snapshots: bool,
    /// Overrides every scenario's time budget.
    pub timeout: Option<Duration>,
    /// Counts tokens.
    pub tokens: Arc<dyn TokenCounter>,
}

/// What the runner reports while it runs.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The run began.
    Started {
        /// Scenarios to run (those of the partition, with one).
        total: usize,
        /// The partition this run is, if it is one.
        partition: Option<PartitionInfo>,
    },
    /// A scenario finished.
    Finished(&'a ScenarioOutcome),
}

/// Why a run did not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Nothing was selected and no file failed to load.
    #[error(
        "no scenarios found in {} (with the given --filter/--tag)",
        paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    )]
    NoScenarios {
        /// The paths searched.
        paths: Vec<PathBuf>,
    },
}

/// A run, configured and checked, ready to execute: made by
/// [`super::RunnerBuilder::build`].
#[derive(Debug)]
pub struct Runner {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) config: RunConfig,
    /// The scenarios to run (those of the partition, with one).
    pub(super) scenarios: Vec<Scenario>,
    /// Each scenario's position in the whole selection.
    pub(super) positions: Vec<usize>,
    /// Scenarios in the whole selection.
    pub(super) selected: usize,
    pub(super) partition: Option<PartitionInfo>,
    pub(super) load_errors: Vec<LoadError>,
    pub(super) gates: Vec<Gate>,
    pub(super) paths: Vec<PathBuf>,
}

impl Runner {
    /// The tokenizer every figure is counted with.
    pub fn tokenizer(&self) -> &str {
        self.config.tokens.name()
    }

    /// The gates the run records (`harness.yaml`, overridden by the
    /// command line), sorted by key.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// Runs every scenario and returns the whole run; `on_event` is called
    /// on this thread as the run starts and as scenarios finish. Fails
    /// before anything runs when nothing was selected and no scenario file
    /// failed to load.
    pub fn execute(self, mut on_event: impl FnMut(RunEvent<'_>)) -> Result<RunSummary, RunError> {
        if self.selected == 0 && self.load_errors.is_empty() {
            return Err(RunError::NoScenarios { paths: self.paths });
        }
        on_event(RunEvent::Started {
            total: self.scenarios.len(),
            partition: self.partition,
        });
        let started = Instant::now();
        let cancel = CancellationToken::new();
        let interrupted = Arc::new(AtomicBool::new(false));
        let mut outcomes = self.runtime.block_on(async {
            {
                let cancel = cancel.clone();
                let interrupted = Arc::clone(&interrupted);
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        interrupted.store(true, Ordering::SeqCst);
                        cancel.cancel();
                    }
                });
            }
            run_all(&self.config, &self.scenarios, &cancel, &mut on_event).await
        });
        // Let killed processes and blocking tasks finish before returning.
        self.runtime.shutdown_timeout(Duration::from_secs(5));
        for (outcome, position) in outcomes.iter_mut().zip(&self.positions) {
            outcome.index = *position;
        }
        Ok(RunSummary {
            scenarios: outcomes,
            tokenizer: self.config.tokens.name().to_owned(),
            duration_ms: millis(started.elapsed()),
            interrupted: interrupted.load(Ordering::SeqCst),
            partition: self.partition,
            load_errors: self.load_errors,
            gates: self.gates.iter().map(Gate::to_string).collect(),
        })
    }
}

/// Runs the scenarios, up to `jobs` at once, and returns their outcomes in
/// the scenarios' order.
async fn run_all(
    config: &RunConfig,
    scenarios: &[Scenario],
    cancel: &CancellationToken,
    on_event: &mut impl FnMut(RunEvent<'_>),
) -> Vec<ScenarioOutcome> {
    let semaphore = Arc::new(Semaphore::new(config.jobs.max(1)));
    let stop = CancellationToken::new();
    let snapshots = Arc::new(SnapshotCache::default());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for (index, scenario) in scenarios.iter().enumerate() {
        let scenario = scenario.clone();
        let semaphore = Arc::clone(&semaphore);
        let config = config.clone();
        let cancel = cancel.clone();
        let stop = stop.clone();
        let snapshots = Arc::clone(&snapshots);
        let tx = tx.clone();
        tokio::spawn(async move {
            let outcome = async {
                let Ok(_permit) = semaphore.acquire_owned().await else {
                    return ScenarioOutcome::skipped(&scenario, "the run stopped");
                };
                if cancel.is_cancelled() {
                    return ScenarioOutcome::skipped(&scenario, "the run was interrupted");
                }
                if stop.is_cancelled() {
                    return ScenarioOutcome::skipped(
                        &scenario,
                        "not run: --fail-fast stopped the run after a failure",
                    );
                }
                // A panic in the pipeline fails this scenario only.
                let job = tokio::spawn({
                    let scenario = scenario.clone();
                    let cancel = cancel.clone();
                    async move {
                        Job {
                            scenario: &scenario,
                            config: &config,
                            cancel: &cancel,
                            snapshots: &snapshots,
                        }
                        .run()
                        .await
                    }
                });
                job.await.unwrap_or_else(|err| {
                    ScenarioOutcome::broken(
                        &scenario,
                        Failure::new(
                            None,
                            "harness",
                            "the scenario runs to the end",
                            format!("the harness failed while running it: {err}"),
                        ),
                    )
                })
            }
            .await;
            let _ = tx.send((index, outcome));
        });
    }
    drop(tx);
    let mut outcomes: Vec<Option<ScenarioOutcome>> = (0..scenarios.len()).map(|_| None).collect();
    while let Some((index, outcome)) = rx.recv().await {
        if outcome.status == Status::Failed && config.fail_fast {
            stop.cancel();
        }
        on_event(RunEvent::Finished(&outcome));
        outcomes[index] = Some(outcome);
    }
    let outcomes: Vec<ScenarioOutcome> = outcomes
        .into_iter()
        .zip(scenarios)
        .map(|(o, s)| o.unwrap_or_else(|| ScenarioOutcome::skipped(s, "the run stopped")))
        .collect();
    write_snapshots(&outcomes, config.update_snapshots);
    outcomes
}
