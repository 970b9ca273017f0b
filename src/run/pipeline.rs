//! One scenario end to end: a fresh temporary workspace, its own registry
//! and faux provider, the real agent loop and the checks within a time
//! budget, and the figures. Next to the workspace (`harness-ws-…`) is its scratch
//! directory (`harness-ws-…-logs`), where bash's full-output logs go (D18),
//! outside the workspace so no tool sees it. Both are removed by the end
//! of the run (`cleanup.rs`), on failure too, unless kept on request.
//!
//! The model sees the workspace as [`WORKSPACE_NAME`] and the scratch
//! directory as [`SCRATCH_NAME`], whatever their real paths: `${workspace}`
//! is bound to the stable name, the loop's [`Presenter`] maps results to
//! the stable names and arguments back to real paths, and the checks read
//! files through the same presenter. So nothing the model reads, and no
//! figure priced from it, depends on `TMPDIR` or on the random part of a
//! temp dir's name (docs/scenarios.md, "What the model sees").

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use tokio_util::sync::CancellationToken;

use crate::agent::AgentEvent;
use crate::agent::FauxProvider;
use crate::agent::LoopOptions;
use crate::agent::Presenter;
use crate::agent::Transcript;
use crate::agent::run_loop;
use crate::judge::Actual;
use crate::judge::CheckInput;
use crate::judge::CheckKind;
use crate::judge::Failure;
use crate::judge::Figures;
use crate::judge::deadline::Deadline;
use crate::scenario::Scenario;
use crate::tools::Registry;
use crate::tools::Workspace;

use super::config::RunConfig;
use super::env::prepare::SCRATCH_NAME;
use super::env::prepare::WORKSPACE_NAME;
use super::env::prepare::end_stalls;
use super::env::prepare::prepare;
use super::outcome::ScenarioOutcome;
use super::outcome::Status;
use super::outcome::millis;
use super::replay::Syncer;
use super::servers;
use super::servers::Servers;
use super::snapshots::SnapshotCache;
use super::stats::ScenarioDefinitions;
use super::transcript::Bounds;
use super::transcript::KeptTranscript;
use crate::judge::drift::ReplayResult;
use crate::judge::drift::drift;
use crate::judge::tally::tally;

/// A failure of the scenario as a whole (no step).
fn whole(check: &str, expected: &str, actual: impl Into<Actual>) -> Failure {
    Failure::new(None, check, expected, actual)
}

/// One scenario's run and what it needs.
#[derive(Clone, Copy)]
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
    /// Runs the scenario end to end: its workspace built, the agent loop
    /// over the faux provider within the time budget, then the checks (or
    /// the timeout), and the workspace removed or kept.
    pub(super) async fn run(self) -> ScenarioOutcome {
        let scenario = self.scenario;
        if let Some(reason) = &scenario.skip {
            return ScenarioOutcome::skipped(scenario, reason.clone());
        }
        if scenario.agent.is_some() {
            return super::agent::execute::AgentJob {
                scenario,
                config: self.config,
                cancel: self.cancel,
                snapshots: self.snapshots,
            }
            .run()
            .await;
        }
        let started = Instant::now();
        let mut outcome = ScenarioOutcome::of(scenario, Status::Failed);
        outcome.snapshot_file = Some(scenario.snapshot_file.clone());
        let (dirs, workspace, faults) = match prepare(scenario, &self.config.fixtures).await {
            Ok(prepared) => prepared,
            Err(failure) => {
                outcome.failures.push(failure);
                return outcome;
            }
        };
        outcome.sandbox = Some(dirs.sandbox_outcome().clone());
        let root = workspace.root().to_path_buf();
        let presenter = dirs.presenter(&root);
        let pool = &self.config.servers;
        let places = servers::Places {
            workspace: &root,
            harness: &self.config.harness,
            sandbox: dirs.sandbox(),
        };
        let mut servers = match Servers::start(scenario, &places, pool).await {
            Ok(servers) => servers,
            Err((failure, mut servers)) => {
                // What a server said names the workspace as the model knows it.
                let failure = failure.map_actual(|text| presenter.text(text));
                for server in &mut servers {
                    server.stderr_tail = server.stderr_tail.as_deref().map(|t| presenter.text(t));
                }
                outcome.failures.push(failure);
                outcome.servers = servers;
                outcome.workspace =
                    dirs.keep_or_remove(self.config.keep_workspaces, &self.config.cleanup);
                return outcome;
            }
        };
        if self.config.audit_servers
            && let Some(failure) = servers.audit()
        {
            outcome.failures.push(failure);
            outcome.servers = servers.stop(pool, true).await;
            outcome.workspace =
                dirs.keep_or_remove(self.config.keep_workspaces, &self.config.cleanup);
            return outcome;
        }
        let registry = match servers
            .tools(scenario)
            .and_then(|found| registry(workspace, scenario, found))
        {
            Ok(registry) => registry,
            Err(failure) => {
                outcome.failures.push(*failure);
                outcome.servers = servers.stop(pool, true).await;
                outcome.workspace =
                    dirs.keep_or_remove(self.config.keep_workspaces, &self.config.cleanup);
                return outcome;
            }
        };
        let definitions =
            ScenarioDefinitions::of(registry.specs(), &servers.active(), &*self.config.tokens);
        let vars = BTreeMap::from([("workspace".to_owned(), WORKSPACE_NAME.to_owned())]);
        let tokens = Arc::clone(&self.config.tokens);
        let mut provider = FauxProvider::new(scenario.script.clone(), tokens, vars);
        let options = LoopOptions {
            system_prompt: scenario.system.clone(),
            cancel: self.cancel.child_token(),
            cancel_after: scenario.conditions.cancel_after.clone(),
            presenter: presenter.clone(),
            // A scripted model ends with its script: no turn limit unless
            // the scenario sets one (docs/scenarios.md, `max_turns`).
            max_turns: scenario.max_turns.unwrap_or(usize::MAX),
            tokens: Arc::clone(&self.config.tokens),
            keep_update_texts: scenario
                .call_checks
                .iter()
                .filter(|(_, check)| check.keeps_update_texts)
                .map(|(id, _)| id.clone())
                .collect(),
            ..LoopOptions::default()
        };
        let budget = self.config.timeout.unwrap_or(scenario.timeout);
        let _stalls = faults
            .as_ref()
            .map(|plan| end_stalls(plan, budget, &options.cancel));
        let mut seen = Observers::new(self, &root, &presenter);
        // Filled as the loop goes: a timeout keeps the partial run.
        let mut transcript = Transcript::default();
        // The budget covers the loop and the checks after it.
        let deadline = Deadline::after(Instant::now(), budget);
        let finished = {
            let mut on_event = |event: AgentEvent| seen.see(&event);
            let run = run_loop(
                &mut provider,
                &registry,
                &options,
                &mut transcript,
                &mut on_event,
            );
            tokio::time::timeout(budget, run).await
        };
        if let Some(plan) = &faults {
            plan.interrupt();
        }
        transcript.model = provider.into_report();
        // The faux model's replies to the servers' sampling requests are
        // its output too.
        let sampled = servers.sampled();
        super::client_side::price_sampling(&mut transcript.model, &sampled, &*self.config.tokens);
        let view = CheckView {
            root: &root,
            presenter: &presenter,
            deadline,
        };
        match finished {
            Ok(()) => {
                let active = servers.active();
                self.judge(&transcript, view, &active, &mut outcome);
                if let Some(coverage) = &mut outcome.coverage {
                    crate::judge::coverage::mark_active(coverage, &registry.active_names());
                }
            }
            Err(_) => {
                options.cancel.cancel();
                outcome
                    .failures
                    .push(timed_out(budget, &seen.running, scenario));
            }
        }
        if self.config.transcripts {
            let kept = KeptTranscript::of(&transcript, Bounds::default());
            outcome.transcript = Some(kept);
        }
        if let Some(plan) = &scenario.replay {
            let synced = seen.syncer.map_or(0, |s| s.synced);
            let tokens = (self.config.tokens.as_ref(), WORKSPACE_NAME);
            let compared = drift(
                plan,
                &scenario.call_labels,
                &transcript.calls,
                tokens,
                synced,
            );
            add_replay(&mut outcome, compared);
        }
        // A timeout is one of the failures; so are a replay's disagreements.
        outcome.status = if outcome.failures.is_empty() {
            Status::Passed
        } else {
            Status::Failed
        };
        outcome.stats.duration_ms = millis(started.elapsed());
        // Tools are done; stop what they left running before the directory goes.
        drop(registry);
        let sent = servers.calls_by_server(&transcript.calls);
        let refused = match dirs.sandbox() {
            Some(sandbox) => {
                let tmpdir = sandbox.tmpdir().ok();
                let mut writable: Vec<&Path> = sandbox
                    .policy()
                    .writable
                    .iter()
                    .map(PathBuf::as_path)
                    .collect();
                writable.extend(tmpdir);
                writable.extend([WORKSPACE_NAME, SCRATCH_NAME, "/dev"].map(Path::new));
                servers.refused_writes(&sent, &writable)
            }
            None => Vec::new(),
        };
        outcome.servers = servers.stop(pool, outcome.status == Status::Failed).await;
        for (server, paths) in outcome.servers.iter_mut().zip(refused) {
            server.refused_writes = paths;
        }
        for (server, calls) in outcome.servers.iter_mut().zip(&sent) {
            super::servers::count_calls(server, calls);
        }
        definitions.record(&mut outcome);
        outcome.workspace = dirs.keep_or_remove(self.config.keep_workspaces, &self.config.cleanup);
        outcome
    }

    /// A finished run judged: one pass for its figures, per-call
    /// statistics and (with --coverage, `servers` the MCP servers' active
    /// tools) behaviours, then the checks.
    fn judge(
        &self,
        transcript: &Transcript,
        view: CheckView<'_>,
        servers: &[(String, Vec<String>)],
        outcome: &mut ScenarioOutcome,
    ) {
        let tally = tally(transcript, self.config.coverage.then_some(servers));
        self.check(transcript, &tally.figures, view, outcome);
        outcome.calls = tally.calls;
        outcome.turns = tally.turns;
        outcome.coverage = tally.coverage;
        outcome.stats.figures = tally.figures;
    }

    /// Runs the checks on a finished run and records what they found.
    fn check(
        &self,
        transcript: &Transcript,
        figures: &Figures,
        view: CheckView<'_>,
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
        let checked = crate::judge::check(&CheckInput {
            scenario: self.scenario,
            transcript,
            figures,
            workspace: view.root,
            workspace_name: WORKSPACE_NAME,
            presenter: view.presenter,
            tokens: self.config.tokens.as_ref(),
            stored_snapshots: &stored,
            deadline: view.deadline,
        });
        outcome.failures.extend(checked.failures);
        outcome.snapshots = checked.snapshots;
        if self.config.update_snapshots {
            // Accepted snapshots are not failures.
            outcome.failures.retain(|f| f.check != CheckKind::Snapshot);
        }
        if self.cancel.is_cancelled() {
            outcome
                .failures
                .push(whole("run", "the run finishes", "interrupted"));
        }
    }
}

/// What watches a run's events as they come: the calls running (for a
/// timeout's message), and for an imported session its reads to sync
/// before they run. (Everything else is read from the finished
/// transcript.)
struct Observers<'a> {
    running: RunningCalls,
    syncer: Option<Syncer<'a>>,
}

impl<'a> Observers<'a> {
    fn new(job: Job<'a>, root: &Path, presenter: &'a Presenter) -> Self {
        Self {
            running: RunningCalls::default(),
            syncer: job
                .scenario
                .replay
                .as_ref()
                .map(|plan| Syncer::new(plan, root, presenter)),
        }
    }

    fn see(&mut self, event: &AgentEvent) {
        self.running.see(event);
        if let Some(syncer) = &mut self.syncer {
            syncer.see(event);
        }
    }
}

/// The failure of a run past its time budget, naming what was running.
fn timed_out(budget: Duration, running: &RunningCalls, scenario: &Scenario) -> Failure {
    let secs = budget.as_secs_f64();
    whole(
        "timeout",
        &format!("the scenario finishes within {secs:.1} s"),
        format!(
            "it timed out after {secs:.1} s {}; its tools were stopped",
            running.describe(scenario)
        ),
    )
}

/// An imported scenario's drift added to its outcome: the scenario's
/// `replay` section, each compared call's figures, and the disagreements
/// its `require` fails on.
fn add_replay(outcome: &mut ScenarioOutcome, compared: ReplayResult) {
    for call in &mut outcome.calls {
        if let Some(c) = compared.calls.get(&call.id) {
            call.recorded_tokens = Some(c.recorded_tokens);
            call.recorded_is_error = Some(c.recorded_is_error);
            call.agreement = Some(c.agreement);
        }
    }
    outcome.failures.extend(compared.failures);
    outcome.replay = Some(compared.stats);
}

/// Where the checks find the workspace, and how they present what they read.
#[derive(Clone, Copy)]
struct CheckView<'a> {
    /// The workspace root (real path).
    root: &'a Path,
    /// The run's presenter.
    presenter: &'a Presenter,
    /// When the scenario's time budget ends.
    deadline: Deadline,
}

/// The calls running at any moment of a run, to say what a timeout
/// interrupted.
#[derive(Debug, Default)]
struct RunningCalls {
    /// Ids of calls started and not yet ended, in start order.
    ids: Vec<String>,
}

impl RunningCalls {
    fn see(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolExecutionStart { call_id, .. } => self.ids.push(call_id.clone()),
            AgentEvent::ToolExecutionEnd { call_id, .. } => self.ids.retain(|id| id != call_id),
            _ => {}
        }
    }

    /// `during step 3 (bash)`, or `while no tool was running`.
    fn describe(&self, scenario: &Scenario) -> String {
        if self.ids.is_empty() {
            return "while no tool was running".to_owned();
        }
        let labels: Vec<String> = self
            .ids
            .iter()
            .map(|id| {
                scenario
                    .call_labels
                    .get(id)
                    .cloned()
                    .unwrap_or_else(|| format!("call {id}"))
            })
            .collect();
        format!("during {}", labels.join(" and "))
    }
}

/// The registry of a scenario: its limits, the built-in tools and the
/// servers' `tools`, active in `order`.
fn registry(
    workspace: Workspace,
    scenario: &Scenario,
    found: servers::ServerTools,
) -> Result<Registry, Box<Failure>> {
    let mut builder = Registry::builder(workspace)
        .limits(scenario.limits.clone())
        .route_unknown(found.router);
    for tool in found.tools {
        builder = builder.tool(tool);
    }
    builder
        .allow(found.order)
        .build()
        .map_err(|err| Box::new(whole("tools", "a valid tool set", err.to_string())))
}
