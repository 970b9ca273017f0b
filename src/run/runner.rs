//! The per-scenario pipeline and bounded concurrency.
//!
//! [`Runner::run`] is synchronous: it owns a tokio runtime and runs up to
//! `jobs` scenarios at once. Each scenario gets a fresh temporary
//! workspace, its own registry and faux provider, the real agent loop, a
//! time budget, and the checks. A scenario that breaks (a panic, a loop
//! invariant) fails alone; the others go on. Workspaces are removed when a
//! scenario ends, on failure and on Ctrl-C too, unless kept on request.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::agent::CallRecord;
use crate::agent::FauxProvider;
use crate::agent::LoopOptions;
use crate::agent::TokenCounter;
use crate::agent::run_loop;
use crate::scenario::CheckInput;
use crate::scenario::Failure;
use crate::scenario::Scenario;
use crate::scenario::check;
use crate::scenario::snapshot;
use crate::scenario::workspace;
use crate::tools::CallArguments;
use crate::tools::Registry;
use crate::tools::Workspace;

use super::outcome::CallStat;
use super::outcome::RunSummary;
use super::outcome::ScenarioOutcome;
use super::outcome::ScenarioStats;
use super::outcome::Status;
use super::outcome::TurnStat;

/// How a run is configured.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Scenarios at once (default: the number of cores).
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

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            fail_fast: false,
            keep_workspaces: false,
            update_snapshots: false,
            timeout: None,
            tokens: Arc::new(crate::agent::Chars4),
        }
    }
}

/// What the runner reports while it runs.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The run began with this many scenarios.
    Started {
        /// Scenarios to run.
        total: usize,
    },
    /// A scenario finished.
    Finished(&'a ScenarioOutcome),
}

/// Runs scenarios.
#[derive(Debug)]
pub struct Runner {
    config: RunConfig,
}

impl Runner {
    /// A runner with this configuration.
    pub fn new(config: RunConfig) -> Self {
        Self { config }
    }

    /// Runs every scenario and returns the summary; `on_event` is called on
    /// this thread as scenarios finish. Ctrl-C stops the run cleanly.
    pub fn run(
        &self,
        scenarios: &[Scenario],
        mut on_event: impl FnMut(RunEvent<'_>),
    ) -> RunSummary {
        let started = Instant::now();
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(self.config.jobs.clamp(2, 64))
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(err) => {
                let mut summary = RunSummary {
                    tokenizer: self.config.tokens.name().to_owned(),
                    ..RunSummary::default()
                };
                for s in scenarios {
                    let mut outcome = ScenarioOutcome::empty(
                        &s.name,
                        &s.file.display().to_string(),
                        &s.tags,
                        Status::Failed,
                    );
                    outcome.failures.push(Failure {
                        step: None,
                        check: "runtime".into(),
                        expected: "an async runtime".into(),
                        actual: format!("cannot start one: {err}"),
                    });
                    summary.scenarios.push(outcome);
                }
                return summary;
            }
        };
        on_event(RunEvent::Started {
            total: scenarios.len(),
        });
        let cancel = CancellationToken::new();
        let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let outcomes = runtime.block_on(async {
            {
                let cancel = cancel.clone();
                let interrupted = Arc::clone(&interrupted);
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
                        cancel.cancel();
                    }
                });
            }
            self.run_all(scenarios, &cancel, &mut on_event).await
        });
        // Let killed processes and blocking tasks finish before returning.
        runtime.shutdown_timeout(Duration::from_secs(5));
        let mut summary = RunSummary {
            tokenizer: self.config.tokens.name().to_owned(),
            duration_ms: millis(started.elapsed()),
            interrupted: interrupted.load(std::sync::atomic::Ordering::SeqCst),
            ..RunSummary::default()
        };
        for outcome in &outcomes {
            summary.totals.add(&outcome.stats);
        }
        summary.totals.duration_ms = summary.duration_ms;
        summary.scenarios = outcomes;
        summary
    }

    async fn run_all(
        &self,
        scenarios: &[Scenario],
        cancel: &CancellationToken,
        on_event: &mut impl FnMut(RunEvent<'_>),
    ) -> Vec<ScenarioOutcome> {
        let semaphore = Arc::new(Semaphore::new(self.config.jobs.max(1)));
        let stop = CancellationToken::new();
        let snapshots = Arc::new(SnapshotCache::default());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for (index, scenario) in scenarios.iter().enumerate() {
            let scenario = scenario.clone();
            let semaphore = Arc::clone(&semaphore);
            let config = self.config.clone();
            let cancel = cancel.clone();
            let stop = stop.clone();
            let snapshots = Arc::clone(&snapshots);
            let tx = tx.clone();
            tokio::spawn(async move {
                let outcome = async {
                    let Ok(_permit) = semaphore.acquire_owned().await else {
                        return not_run(&scenario, "the run stopped");
                    };
                    if cancel.is_cancelled() {
                        return not_run(&scenario, "the run was interrupted");
                    }
                    if stop.is_cancelled() {
                        return not_run(
                            &scenario,
                            "not run: --fail-fast stopped the run after a failure",
                        );
                    }
                    // A panic in the pipeline fails this scenario only.
                    let job = tokio::spawn({
                        let scenario = scenario.clone();
                        let cancel = cancel.clone();
                        async move { run_scenario(&scenario, &config, &cancel, &snapshots).await }
                    });
                    match job.await {
                        Ok(outcome) => outcome,
                        Err(err) => {
                            let mut outcome = ScenarioOutcome::empty(
                                &scenario.name,
                                &scenario.file.display().to_string(),
                                &scenario.tags,
                                Status::Failed,
                            );
                            outcome.failures.push(Failure {
                                step: None,
                                check: "harness".into(),
                                expected: "the scenario runs to the end".into(),
                                actual: format!("the harness failed while running it: {err}"),
                            });
                            outcome
                        }
                    }
                }
                .await;
                let _ = tx.send((index, outcome));
            });
        }
        drop(tx);
        let mut outcomes: Vec<Option<ScenarioOutcome>> =
            (0..scenarios.len()).map(|_| None).collect();
        while let Some((index, outcome)) = rx.recv().await {
            if outcome.status == Status::Failed && self.config.fail_fast {
                stop.cancel();
            }
            on_event(RunEvent::Finished(&outcome));
            outcomes[index] = Some(outcome);
        }
        let outcomes: Vec<ScenarioOutcome> = outcomes
            .into_iter()
            .zip(scenarios)
            .map(|(o, s)| o.unwrap_or_else(|| not_run(s, "the run stopped")))
            .collect();
        write_snapshots(&outcomes, self.config.update_snapshots);
        outcomes
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn not_run(scenario: &Scenario, reason: &str) -> ScenarioOutcome {
    let mut outcome = ScenarioOutcome::empty(
        &scenario.name,
        &scenario.file.display().to_string(),
        &scenario.tags,
        Status::Skipped,
    );
    outcome.skip_reason = Some(reason.to_owned());
    outcome
}

/// The stored snapshots of one file, or why they could not be read.
type StoredSnapshots = Result<BTreeMap<String, Value>, String>;

/// Stored snapshot files, read once per run.
#[derive(Debug, Default)]
struct SnapshotCache {
    files: Mutex<BTreeMap<PathBuf, StoredSnapshots>>,
}

impl SnapshotCache {
    fn get(&self, path: &Path) -> StoredSnapshots {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files
            .entry(path.to_path_buf())
            .or_insert_with(|| snapshot::load(path))
            .clone()
    }
}

/// Runs one scenario end to end.
async fn run_scenario(
    scenario: &Scenario,
    config: &RunConfig,
    cancel: &CancellationToken,
    snapshots: &SnapshotCache,
) -> ScenarioOutcome {
    let started = Instant::now();
    let file = scenario.file.display().to_string();
    if let Some(reason) = &scenario.skip {
        let mut outcome =
            ScenarioOutcome::empty(&scenario.name, &file, &scenario.tags, Status::Skipped);
        outcome.skip_reason = Some(reason.clone());
        return outcome;
    }
    let mut outcome = ScenarioOutcome::empty(&scenario.name, &file, &scenario.tags, Status::Failed);
    outcome.snapshot_file = Some(scenario.snapshot_file.clone());
    let fail = |outcome: &mut ScenarioOutcome, check: &str, expected: &str, actual: String| {
        outcome.failures.push(Failure {
            step: None,
            check: check.into(),
            expected: expected.into(),
            actual,
        });
    };
    let dir = match tempfile::Builder::new().prefix("harness-ws-").tempdir() {
        Ok(dir) => dir,
        Err(err) => {
            fail(
                &mut outcome,
                "workspace",
                "a temporary workspace",
                format!("cannot create one: {err}"),
            );
            return outcome;
        }
    };
    let plan = scenario.workspace.clone();
    let root = dir.path().to_path_buf();
    let built = tokio::task::spawn_blocking(move || workspace::build(&plan, &root)).await;
    match built {
        Ok(Ok(())) => {}
        Ok(Err(err)) => {
            fail(&mut outcome, "workspace", "the workspace is built", err);
            return outcome;
        }
        Err(err) => {
            fail(
                &mut outcome,
                "workspace",
                "the workspace is built",
                err.to_string(),
            );
            return outcome;
        }
    }
    let registry = match Workspace::local(dir.path()).map(|ws| ws.with_confine(scenario.confine)) {
        Ok(ws) => Registry::builder(ws)
            .limits(scenario.limits.clone())
            .allow(scenario.tools.iter().cloned())
            .build(),
        Err(err) => {
            fail(
                &mut outcome,
                "workspace",
                "a usable workspace",
                err.to_string(),
            );
            return outcome;
        }
    };
    let registry = match registry {
        Ok(registry) => registry,
        Err(err) => {
            fail(&mut outcome, "tools", "a valid tool set", err.to_string());
            return outcome;
        }
    };
    let root = registry.workspace().root().to_path_buf();
    let mut vars = BTreeMap::new();
    vars.insert("workspace".to_owned(), root.display().to_string());
    let mut provider = FauxProvider::new(scenario.script.clone(), Arc::clone(&config.tokens), vars);
    let options = LoopOptions {
        system_prompt: scenario.system.clone(),
        cancel: cancel.child_token(),
        ..LoopOptions::default()
    };
    let budget = config.timeout.unwrap_or(scenario.timeout);
    let mut ignore_events = |_| {};
    let run = run_loop(&mut provider, &registry, &options, &mut ignore_events);
    let transcript = match tokio::time::timeout(budget, run).await {
        Ok(transcript) => transcript,
        Err(_) => {
            options.cancel.cancel();
            fail(
                &mut outcome,
                "timeout",
                &format!("the scenario finishes within {:.1} s", budget.as_secs_f64()),
                "it was still running; its tools were stopped".to_owned(),
            );
            outcome.stats.duration_ms = millis(started.elapsed());
            keep_or_remove(dir, config.keep_workspaces, &mut outcome);
            return outcome;
        }
    };
    let report = provider.into_report();
    let figures = check::figures(&transcript, &report, config.tokens.as_ref());
    let stored = match snapshots.get(&scenario.snapshot_file) {
        Ok(stored) => stored,
        Err(err) => {
            fail(&mut outcome, "snapshot", "a readable snapshot file", err);
            BTreeMap::new()
        }
    };
    let checked = check::check(&CheckInput {
        scenario,
        transcript: &transcript,
        report: &report,
        figures: &figures,
        workspace: &root,
        tokens: config.tokens.as_ref(),
        stored_snapshots: &stored,
    });
    outcome.failures.extend(checked.failures);
    outcome.snapshots = checked.snapshots;
    if config.update_snapshots {
        // Accepted snapshots are not failures.
        outcome.failures.retain(|f| f.check != "snapshot");
    }
    if cancel.is_cancelled() {
        fail(
            &mut outcome,
            "run",
            "the run finishes",
            "interrupted".to_owned(),
        );
    }
    let retry_ids: std::collections::BTreeSet<&str> = report
        .turns
        .iter()
        .flat_map(|t| t.calls.iter())
        .filter(|c| c.retry.is_some())
        .map(|c| c.id.as_str())
        .collect();
    outcome.calls = transcript
        .calls
        .iter()
        .map(|record| {
            call_stat(
                record,
                retry_ids.contains(record.call.id.as_str()),
                config.tokens.as_ref(),
            )
        })
        .collect();
    outcome.turns = report
        .turns
        .iter()
        .map(|t| TurnStat {
            input_tokens: t.usage.input,
            output_tokens: t.usage.output,
            cache_read_tokens: t.usage.cache_read,
            cache_write_tokens: t.usage.cache_write,
            scripted: t.scripted,
        })
        .collect();
    outcome.stats = ScenarioStats {
        turns: figures.turns,
        calls: figures.calls,
        errors: figures.errors,
        retries: figures.retries,
        retries_avoided: figures.retries_avoided,
        result_tokens: figures.result_tokens,
        input_tokens: figures.input_tokens,
        output_tokens: figures.output_tokens,
        cache_read_tokens: figures.cache_read_tokens,
        cache_write_tokens: figures.cache_write_tokens,
        duration_ms: millis(started.elapsed()),
    };
    outcome.status = if outcome.failures.is_empty() {
        Status::Passed
    } else {
        Status::Failed
    };
    // Tools are done; stop what they left running before the directory goes.
    drop(registry);
    keep_or_remove(dir, config.keep_workspaces, &mut outcome);
    outcome
}

fn keep_or_remove(dir: tempfile::TempDir, keep: bool, outcome: &mut ScenarioOutcome) {
    if keep {
        outcome.workspace = Some(dir.keep().display().to_string());
    }
}

fn call_stat(record: &CallRecord, retry: bool, tokens: &dyn TokenCounter) -> CallStat {
    let args_text = match &record.call.arguments {
        CallArguments::Json(v) => v.to_string(),
        CallArguments::Text(t) => t.clone(),
    };
    let truncated = record
        .result
        .details
        .as_ref()
        .and_then(|d| d.get("truncation"))
        .and_then(|t| t.get("truncated"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    CallStat {
        id: record.call.id.clone(),
        tool: record.call.name.clone(),
        turn: record.turn as u64,
        retry,
        is_error: record.result.is_error,
        truncated,
        args_tokens: tokens.count(&format!("{}:{args_text}", record.call.name)),
        result_tokens: tokens.count(&check::priced_text(&record.result.content)),
        duration_ms: millis(record.duration),
    }
}

/// Writes snapshot files after the run: accepted values with
/// `update_snapshots`, otherwise a `.snap.yaml.new` beside any file whose
/// snapshots are missing or changed.
fn write_snapshots(outcomes: &[ScenarioOutcome], update: bool) {
    let mut by_file: BTreeMap<&Path, Vec<&check::SnapshotOutcome>> = BTreeMap::new();
    for outcome in outcomes {
        if let Some(file) = &outcome.snapshot_file
            && !outcome.snapshots.is_empty()
        {
            by_file
                .entry(file.as_path())
                .or_default()
                .extend(outcome.snapshots.iter());
        }
    }
    for (file, entries) in by_file {
        let changed = entries.iter().any(|e| !e.matched);
        let new_file = snapshot::new_path(file);
        if !changed {
            let _ = std::fs::remove_file(&new_file);
            continue;
        }
        let mut stored = snapshot::load(file).unwrap_or_default();
        for entry in entries {
            stored.insert(entry.key.clone(), entry.value.clone());
        }
        let target = if update {
            file.to_path_buf()
        } else {
            new_file.clone()
        };
        if snapshot::save(&target, &stored).is_ok() && update {
            let _ = std::fs::remove_file(&new_file);
        }
    }
}
