//! One scenario end to end: a fresh temporary workspace, its own registry
//! and faux provider, the real agent loop within a time budget, the checks
//! and the figures. The workspace is removed when the scenario ends, on
//! failure too, unless kept on request.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::agent::CallRecord;
use crate::agent::FauxProvider;
use crate::agent::FauxReport;
use crate::agent::LoopOptions;
use crate::agent::TokenCounter;
use crate::agent::Transcript;
use crate::agent::run_loop;
use crate::scenario::CheckInput;
use crate::scenario::Failure;
use crate::scenario::Figures;
use crate::scenario::Scenario;
use crate::scenario::check;
use crate::scenario::figures::priced_text;
use crate::scenario::workspace;
use crate::tools::CallArguments;
use crate::tools::Registry;
use crate::tools::Workspace;

use super::outcome::CallStat;
use super::outcome::ScenarioOutcome;
use super::outcome::ScenarioStats;
use super::outcome::Status;
use super::outcome::TurnStat;
use super::runner::RunConfig;
use super::snapshots::SnapshotCache;

/// Milliseconds of a duration, saturating.
pub(super) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A failure of the scenario as a whole (no step).
fn whole(check: &str, expected: &str, actual: impl Into<String>) -> Failure {
    Failure::new(None, check, expected, actual)
}

/// One scenario's run and what it needs.
pub(super) struct Job<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The run's configuration.
    pub config: &'a RunConfig,
    /// Cancelled on Ctrl-C.
    pub cancel: &'a CancellationToken,
    /// The stored snapshots of the run.
    pub snapshots: &'a SnapshotCache,
}

impl Job<'_> {
    /// Runs the scenario end to end.
    pub(super) async fn run(self) -> ScenarioOutcome {
        let scenario = self.scenario;
        if let Some(reason) = &scenario.skip {
            return ScenarioOutcome::skipped(scenario, reason.clone());
        }
        let started = Instant::now();
        let mut outcome = ScenarioOutcome::of(scenario, Status::Failed);
        outcome.snapshot_file = Some(scenario.snapshot_file.clone());
        let (dir, registry) = match prepare(scenario).await {
            Ok(prepared) => prepared,
            Err(failure) => {
                outcome.failures.push(failure);
                return outcome;
            }
        };
        let root = registry.workspace().root().to_path_buf();
        let vars = BTreeMap::from([("workspace".to_owned(), root.display().to_string())]);
        let tokens = Arc::clone(&self.config.tokens);
        let mut provider = FauxProvider::new(scenario.script.clone(), tokens, vars);
        let options = LoopOptions {
            system_prompt: scenario.system.clone(),
            cancel: self.cancel.child_token(),
            ..LoopOptions::default()
        };
        let budget = self.config.timeout.unwrap_or(scenario.timeout);
        let mut ignore_events = |_| {};
        let run = run_loop(&mut provider, &registry, &options, &mut ignore_events);
        let Ok(transcript) = tokio::time::timeout(budget, run).await else {
            options.cancel.cancel();
            outcome.failures.push(whole(
                "timeout",
                &format!("the scenario finishes within {:.1} s", budget.as_secs_f64()),
                "it was still running; its tools were stopped",
            ));
            outcome.stats.duration_ms = millis(started.elapsed());
            keep_or_remove(dir, self.config.keep_workspaces, &mut outcome);
            return outcome;
        };
        let report = provider.into_report();
        let figures = Figures::of(&transcript, &report, self.config.tokens.as_ref());
        self.check(&transcript, &report, &figures, &root, &mut outcome);
        outcome.calls = call_stats(&transcript, &report, self.config.tokens.as_ref());
        outcome.turns = turn_stats(&report);
        outcome.stats = ScenarioStats {
            figures,
            duration_ms: millis(started.elapsed()),
        };
        outcome.status = if outcome.failures.is_empty() {
            Status::Passed
        } else {
            Status::Failed
        };
        // Tools are done; stop what they left running before the directory goes.
        drop(registry);
        keep_or_remove(dir, self.config.keep_workspaces, &mut outcome);
        outcome
    }

    /// Runs the checks on a finished run and records what they found.
    fn check(
        &self,
        transcript: &Transcript,
        report: &FauxReport,
        figures: &Figures,
        root: &Path,
        outcome: &mut ScenarioOutcome,
    ) {
        let stored = match self.snapshots.get(&self.scenario.snapshot_file) {
            Ok(stored) => stored,
            Err(err) => {
                outcome
                    .failures
                    .push(whole("snapshot", "a readable snapshot file", err));
                BTreeMap::new()
            }
        };
        let checked = check::check(&CheckInput {
            scenario: self.scenario,
            transcript,
            report,
            figures,
            workspace: root,
            workspace_name: &root.display().to_string(),
            tokens: self.config.tokens.as_ref(),
            stored_snapshots: &stored,
        });
        outcome.failures.extend(checked.failures);
        outcome.snapshots = checked.snapshots;
        if self.config.update_snapshots {
            // Accepted snapshots are not failures.
            outcome.failures.retain(|f| f.check != "snapshot");
        }
        if self.cancel.is_cancelled() {
            outcome
                .failures
                .push(whole("run", "the run finishes", "interrupted"));
        }
    }
}

/// The scenario's temporary workspace, built, and a registry over it.
async fn prepare(scenario: &Scenario) -> Result<(TempDir, Registry), Failure> {
    let dir = tempfile::Builder::new()
        .prefix("harness-ws-")
        .tempdir()
        .map_err(|err| {
            whole(
                "workspace",
                "a temporary workspace",
                format!("cannot create one: {err}"),
            )
        })?;
    let plan = scenario.workspace.clone();
    let root = dir.path().to_path_buf();
    match tokio::task::spawn_blocking(move || workspace::build(&plan, &root)).await {
        Ok(Ok(())) => {}
        Ok(Err(err)) => return Err(whole("workspace", "the workspace is built", err)),
        Err(err) => {
            return Err(whole(
                "workspace",
                "the workspace is built",
                err.to_string(),
            ));
        }
    }
    let workspace = Workspace::local(dir.path())
        .map_err(|err| whole("workspace", "a usable workspace", err.to_string()))?
        .with_confine(scenario.confine);
    let registry = Registry::builder(workspace)
        .limits(scenario.limits.clone())
        .allow(scenario.tools.iter().cloned())
        .build()
        .map_err(|err| whole("tools", "a valid tool set", err.to_string()))?;
    Ok((dir, registry))
}

fn keep_or_remove(dir: TempDir, keep: bool, outcome: &mut ScenarioOutcome) {
    if keep {
        outcome.workspace = Some(dir.keep().display().to_string());
    }
}

/// Per-call figures, in the order the calls were sent.
fn call_stats(
    transcript: &Transcript,
    report: &FauxReport,
    tokens: &dyn TokenCounter,
) -> Vec<CallStat> {
    let retry_ids: BTreeSet<&str> = report
        .turns
        .iter()
        .flat_map(|t| t.calls.iter())
        .filter(|c| c.retry.is_some())
        .map(|c| c.id.as_str())
        .collect();
    transcript
        .calls
        .iter()
        .map(|record| call_stat(record, retry_ids.contains(record.call.id.as_str()), tokens))
        .collect()
}

fn call_stat(record: &CallRecord, retry: bool, tokens: &dyn TokenCounter) -> CallStat {
    let args_text = match &record.call.arguments {
        CallArguments::Json(v) => v.to_string(),
        CallArguments::Text(t) => t.clone(),
    };
    CallStat {
        id: record.call.id.clone(),
        tool: record.call.name.clone(),
        turn: record.turn as u64,
        retry,
        is_error: record.result.is_error,
        truncated: check::truncation(&record.result).is_some_and(|t| t.truncated),
        args_tokens: tokens.count(&format!("{}:{args_text}", record.call.name)),
        result_tokens: tokens.count(&priced_text(&record.result.content)),
        duration_ms: millis(record.duration),
    }
}

/// Per-request usage, in order.
fn turn_stats(report: &FauxReport) -> Vec<TurnStat> {
    report
        .turns
        .iter()
        .map(|t| TurnStat {
            input_tokens: t.usage.input,
            output_tokens: t.usage.output,
            cache_read_tokens: t.usage.cache_read,
            cache_write_tokens: t.usage.cache_write,
            scripted: t.scripted,
        })
        .collect()
}
