//! Running a built [`Runner`]: bounded concurrency over the scenarios, each
//! through the per-scenario pipeline (a workspace, the loop, the checks),
//! and the [`RunSummary`] that comes back.
//!
//! [`Runner::execute`] is synchronous: the runner owns the tokio runtime
//! that [`super::RunnerBuilder::build`] started and runs up to `jobs`
//! scenarios at once, started in discovery order. A scenario that breaks
//! (a panic, a loop invariant) fails alone; the others go on. SIGINT
//! (Ctrl-C), SIGTERM and SIGHUP stop the run cleanly.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::judge::Failure;
use crate::scenario::Scenario;

use super::config::RunConfig;
use super::gate::Gate;
use super::outcome::LoadError;
use super::outcome::RunSummary;
use super::outcome::ScenarioOutcome;
use super::outcome::Status;
use super::outcome::millis;
use super::partition::PartitionInfo;
use super::pipeline::Job;
use super::rounds::fold_rounds;
use super::snapshots::SnapshotCache;
use super::snapshots::write_snapshots;

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
    /// A scenario finished (or was not started: skipped).
    Finished(&'a ScenarioOutcome),
    /// A signal interrupted the run: running scenarios are being stopped,
    /// and no more start.
    Interrupted {
        /// The signal's name (`SIGINT`, `SIGTERM`, `SIGHUP`).
        signal: &'static str,
    },
}

/// Why a run did not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Nothing was selected and no file failed to load.
    #[error("{}", no_scenarios(paths, *narrowed))]
    NoScenarios {
        /// The paths searched.
        paths: Vec<PathBuf>,
        /// Whether selection flags narrowed what was found.
        narrowed: bool,
    },
}

/// What to say when nothing was selected in `paths`.
pub(crate) fn no_scenarios(paths: &[PathBuf], narrowed: bool) -> String {
    let paths = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if narrowed {
        format!(
            "no scenarios in {paths} match the selection (--filter, --exact, --exclude, --tag, \
             --last-failed)"
        )
    } else {
        format!("no scenarios found in {paths}")
    }
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
    /// Whether selection flags narrowed what discovery found.
    pub(super) narrowed: bool,
}

impl Runner {
    /// The tokenizer every figure is counted with.
    pub fn tokenizer(&self) -> &str {
        self.config.tokens.name()
    }

    /// Scenarios run at once.
    pub fn jobs(&self) -> usize {
        self.config.jobs
    }

    /// The gates the run records (`harness.yaml`, overridden by the
    /// command line), sorted by key.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// The names of the scenarios this run will execute (those of the
    /// partition, with one), in discovery order.
    pub fn scenario_names(&self) -> impl Iterator<Item = &str> {
        self.scenarios.iter().map(|s| s.name.as_str())
    }

    /// Runs every scenario and returns the whole run; `on_event` is called
    /// on this thread as the run starts, as scenarios finish and when a
    /// signal interrupts the run. Fails before anything runs when nothing
    /// was selected and no scenario file failed to load.
    ///
    /// SIGINT (Ctrl-C), SIGTERM and SIGHUP are caught from before the first
    /// scenario starts until every scenario has ended: the run stops
    /// starting scenarios, cancels the running ones (their tools kill the
    /// process groups of their commands) and removes their workspaces,
    /// and the summary is marked interrupted.
    pub fn execute(self, mut on_event: impl FnMut(RunEvent<'_>)) -> Result<RunSummary, RunError> {
        if self.selected == 0 && self.load_errors.is_empty() {
            return Err(RunError::NoScenarios {
                paths: self.paths,
                narrowed: self.narrowed,
            });
        }
        on_event(RunEvent::Started {
            total: self.scenarios.len(),
            partition: self.partition,
        });
        let started = Instant::now();
        let cancel = CancellationToken::new();
        let interrupted = Arc::new(AtomicBool::new(false));
        // With --repeat, every scenario once per round, round after round.
        let rounds = self.config.repeat.map_or(1, |spec| spec.runs as usize);
        let count = self.scenarios.len();
        let scenarios = Arc::new(if rounds > 1 {
            let mut all = Vec::with_capacity(count.saturating_mul(rounds));
            for _ in 0..rounds {
                all.extend(self.scenarios.iter().cloned());
            }
            all
        } else {
            self.scenarios
        });
        let runs = self.runtime.block_on(async {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            // Registered here, before any scenario starts, so that no
            // signal of the run finds the default action (which would end
            // the process and leave workspaces and commands behind).
            let signals = crate::base::signals::StopSignals::register();
            {
                let cancel = cancel.clone();
                let interrupted = Arc::clone(&interrupted);
                let tx = tx.clone();
                tokio::spawn(async move {
                    let name = signals.recv().await;
                    interrupted.store(true, Ordering::SeqCst);
                    cancel.cancel();
                    let _ = tx.send(Message::Interrupted(name));
                });
            }
            run_all(&self.config, &scenarios, &cancel, tx, rx, &mut on_event).await
        });
        // Let killed processes and blocking tasks finish before returning,
        // and the workspaces be removed.
        self.runtime.shutdown_timeout(Duration::from_secs(5));
        self.config.cleanup.finish();
        let mut outcomes = match self.config.repeat {
            Some(spec) => fold_rounds(runs, count, spec),
            None => runs,
        };
        write_snapshots(&outcomes, self.config.update_snapshots);
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
            repeat: self.config.repeat,
            variants: Vec::new(),
        })
    }
}

/// What the tasks of a run tell the loop that reports events.
enum Message {
    /// The scenario at this index ended (or was not started).
    Finished(usize, Box<ScenarioOutcome>),
    /// A signal interrupted the run.
    Interrupted(&'static str),
}

/// Runs the scenarios, up to `jobs` at once, and returns their outcomes in
/// the scenarios' order.
///
/// One dispatcher starts the scenarios in discovery order, each once a
/// slot is free, so with `--jobs 1` they run one after the other in that
/// order. A scenario that fails under `--fail-fast` stops the run before
/// its slot is given back, so no scenario starts after it (with more jobs,
/// those already running finish).
async fn run_all(
    config: &RunConfig,
    scenarios: &Arc<Vec<Scenario>>,
    cancel: &CancellationToken,
    tx: tokio::sync::mpsc::UnboundedSender<Message>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Message>,
    on_event: &mut impl FnMut(RunEvent<'_>),
) -> Vec<ScenarioOutcome> {
    let snapshots = Arc::new(SnapshotCache::default());
    tokio::spawn(dispatch(
        config.clone(),
        Arc::clone(scenarios),
        cancel.clone(),
        Arc::clone(&snapshots),
        tx,
    ));
    let mut outcomes: Vec<Option<ScenarioOutcome>> = (0..scenarios.len()).map(|_| None).collect();
    let mut pending = scenarios.len();
    while pending > 0 {
        let Some(message) = rx.recv().await else {
            break;
        };
        match message {
            Message::Interrupted(signal) => on_event(RunEvent::Interrupted { signal }),
            Message::Finished(index, outcome) => {
                on_event(RunEvent::Finished(&outcome));
                if let Some(slot) = outcomes.get_mut(index) {
                    *slot = Some(*outcome);
                }
                pending -= 1;
            }
        }
    }
    let outcomes: Vec<ScenarioOutcome> = outcomes
        .into_iter()
        .zip(scenarios.iter())
        .map(|(o, s)| o.unwrap_or_else(|| ScenarioOutcome::skipped(s, "the run stopped")))
        .collect();
    config.servers.stop_all().await;
    outcomes
}

/// Starts the scenarios in order, each once one of the `jobs` slots is
/// free, and reports every outcome (skipped ones too) on `tx`.
async fn dispatch(
    config: RunConfig,
    scenarios: Arc<Vec<Scenario>>,
    cancel: CancellationToken,
    snapshots: Arc<SnapshotCache>,
    tx: tokio::sync::mpsc::UnboundedSender<Message>,
) {
    let slots = Arc::new(Semaphore::new(config.jobs.clamp(1, Semaphore::MAX_PERMITS)));
    // Cancelled by the first failure under --fail-fast.
    let stop = CancellationToken::new();
    for (index, scenario) in scenarios.iter().enumerate() {
        let permit = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            permit = Arc::clone(&slots).acquire_owned() => permit.ok(),
        };
        let not_started = if cancel.is_cancelled() {
            Some("the run was interrupted")
        } else if stop.is_cancelled() {
            Some("not run: --fail-fast stopped the run after a failure")
        } else if permit.is_none() {
            Some("the run stopped")
        } else {
            None
        };
        if let Some(reason) = not_started {
            let outcome = ScenarioOutcome::skipped(scenario, reason);
            let _ = tx.send(Message::Finished(index, Box::new(outcome)));
            continue;
        }
        // The tasks share the list rather than copy the scenario.
        let all = Arc::clone(&scenarios);
        let config = config.clone();
        let cancel = cancel.clone();
        let stop = stop.clone();
        let snapshots = Arc::clone(&snapshots);
        let tx = tx.clone();
        tokio::spawn(async move {
            let scenario = &all[index];
            // A panic in the pipeline fails this scenario only.
            let job = tokio::spawn({
                let all = Arc::clone(&all);
                let config = config.clone();
                async move {
                    Job {
                        scenario: &all[index],
                        config: &config,
                        cancel: &cancel,
                        snapshots: &snapshots,
                    }
                    .run()
                    .await
                }
            });
            let outcome = job.await.unwrap_or_else(|err| {
                ScenarioOutcome::broken(
                    scenario,
                    Failure::new(
                        None,
                        "harness",
                        "the scenario runs to the end",
                        format!("the harness failed while running it: {err}"),
                    ),
                )
            });
            if outcome.status == Status::Failed && config.fail_fast {
                stop.cancel();
            }
            let _ = tx.send(Message::Finished(index, Box::new(outcome)));
            // The slot is given back only now, after --fail-fast saw the
            // outcome.
            drop(permit);
        });
    }
}
