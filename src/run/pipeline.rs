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
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::agent::AgentEvent;
use crate::agent::FauxProvider;
use crate::agent::FauxReport;
use crate::agent::LoopOptions;
use crate::agent::Presenter;
use crate::agent::Transcript;
use crate::agent::run_loop;
use crate::base::task::AbortOnDrop;
use crate::judge::Actual;
use crate::judge::CheckInput;
use crate::judge::CheckKind;
use crate::judge::Failure;
use crate::judge::Figures;
use crate::judge::deadline::Deadline;
use crate::judge::updates::UpdateLog;
use crate::scenario::Scenario;
use crate::scenario::faults::FaultFs;
use crate::scenario::faults::FaultPlan;
use crate::scenario::faults::FaultProcess;
use crate::scenario::workspace;
use crate::tools::AnyTool;
use crate::tools::PathError;
use crate::tools::Registry;
use crate::tools::Scratch;
use crate::tools::Workspace;
use crate::tools::ops::LocalProcess;

use super::config::RunConfig;
use super::outcome::ScenarioOutcome;
use super::outcome::Status;
use super::outcome::millis;
use super::replay::Drift;
use super::replay::ReplayResult;
use super::replay::Syncer;
use super::servers;
use super::servers::Servers;
use super::snapshots::SnapshotCache;
use super::tally::tally;
use super::transcript::Bounds;
use super::transcript::KeptTranscript;

/// The name under which the model sees a scenario's workspace: results
/// show it instead of the real path, `${workspace}` expands to it, and
/// arguments that name it execute in the real workspace.
pub const WORKSPACE_NAME: &str = "/workspace";

/// The name under which the model sees a scenario's scratch directory, the
/// private directory beside the workspace that holds bash's full-output
/// files during the run.
pub const SCRATCH_NAME: &str = "/scratch";

/// How long after a run's time is up its stalled operations end: past the
/// timeout, so that the timeout, not the stalled call, ends the run.
const STALL_GRACE: Duration = Duration::from_millis(50);

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
        let root = workspace.root().to_path_buf();
        let presenter = dirs.presenter(&root);
        let pool = &self.config.servers;
        let places = servers::Places {
            workspace: &root,
            harness: &self.config.harness,
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
                dirs.keep_or_remove(self.config, &mut outcome);
                return outcome;
            }
        };
        if self.config.audit_servers
            && let Some(failure) = servers.audit()
        {
            outcome.failures.push(failure);
            outcome.servers = servers.stop(pool, true).await;
            dirs.keep_or_remove(self.config, &mut outcome);
            return outcome;
        }
        let registry = match servers
            .tools(scenario)
            .and_then(|found| registry(workspace, scenario, found.tools, found.order))
        {
            Ok(registry) => registry,
            Err(failure) => {
                outcome.failures.push(*failure);
                outcome.servers = servers.stop(pool, true).await;
                dirs.keep_or_remove(self.config, &mut outcome);
                return outcome;
            }
        };
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
        let report = provider.into_report();
        let view = CheckView {
            root: &root,
            presenter: &presenter,
            updates: &seen.updates,
            deadline,
        };
        match finished {
            Ok(()) => {
                let active = servers.active();
                self.judge(&transcript, &report, view, &active, &mut outcome);
            }
            Err(_) => {
                options.cancel.cancel();
                outcome
                    .failures
                    .push(timed_out(budget, &seen.running, scenario));
            }
        }
        if self.config.transcripts {
            let kept = KeptTranscript::of(&transcript, &report, Bounds::default());
            outcome.transcript = Some(kept);
        }
        seen.finish(&mut outcome);
        // A timeout is one of the failures; so are a replay's disagreements.
        outcome.status = if outcome.failures.is_empty() {
            Status::Passed
        } else {
            Status::Failed
        };
        outcome.stats.duration_ms = millis(started.elapsed());
        // Tools are done; stop what they left running before the directory goes.
        drop(registry);
        outcome.servers = servers.stop(pool, outcome.status == Status::Failed).await;
        dirs.keep_or_remove(self.config, &mut outcome);
        outcome
    }

    /// A finished run judged: one pass for its figures, per-call
    /// statistics and (with --coverage, `servers` the MCP servers' active
    /// tools) behaviours, then the checks.
    fn judge(
        &self,
        transcript: &Transcript,
        report: &FauxReport,
        view: CheckView<'_>,
        servers: &[(String, Vec<String>)],
        outcome: &mut ScenarioOutcome,
    ) {
        let tally = tally(transcript, report, self.config.coverage.then_some(servers));
        self.check(transcript, report, &tally.figures, view, outcome);
        outcome.calls = tally.calls;
        outcome.turns = tally.turns;
        outcome.coverage = tally.coverage;
        outcome.stats.figures = tally.figures;
    }

    /// Runs the checks on a finished run and records what they found.
    fn check(
        &self,
        transcript: &Transcript,
        report: &FauxReport,
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
            report,
            figures,
            workspace: view.root,
            workspace_name: WORKSPACE_NAME,
            presenter: view.presenter,
            tokens: self.config.tokens.as_ref(),
            stored_snapshots: &stored,
            updates: view.updates,
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
/// timeout's message), the streamed updates (for the checks), and for an
/// imported session its reads to sync and the drift with what was
/// recorded.
struct Observers<'a> {
    running: RunningCalls,
    updates: UpdateLog,
    syncer: Option<Syncer<'a>>,
    drift: Option<Drift<'a>>,
}

impl<'a> Observers<'a> {
    fn new(job: Job<'a>, root: &Path, presenter: &'a Presenter) -> Self {
        let scenario = job.scenario;
        Self {
            running: RunningCalls::default(),
            updates: UpdateLog::for_scenario(scenario),
            syncer: scenario
                .replay
                .as_ref()
                .map(|plan| Syncer::new(plan, root, presenter)),
            drift: scenario.replay.as_ref().map(|plan| {
                Drift::new(
                    plan,
                    job.config.tokens.as_ref(),
                    WORKSPACE_NAME,
                    &scenario.call_labels,
                )
            }),
        }
    }

    fn see(&mut self, event: &AgentEvent) {
        self.running.see(event);
        self.updates.see(event);
        if let Some(syncer) = &mut self.syncer {
            syncer.see(event);
        }
        if let Some(drift) = &mut self.drift {
            drift.see(event);
        }
    }

    /// The replay drift of the calls answered (all of them, or those
    /// before a timeout), into the outcome.
    fn finish(self, outcome: &mut ScenarioOutcome) {
        if let Some(drift) = self.drift {
            let synced = self.syncer.map_or(0, |s| s.synced);
            add_replay(outcome, drift.finish(synced));
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

/// Makes stalled operations end when the run is cancelled and just after
/// its time is up (the plan's deadline: a stall can hold the loop's own
/// thread, which then sees neither the timeout nor this task). The caller
/// interrupts the plan when the run is over, so no tool waits out a stall
/// nobody waits for.
fn end_stalls(plan: &Arc<FaultPlan>, budget: Duration, cancel: &CancellationToken) -> AbortOnDrop {
    if let Some(deadline) = Instant::now().checked_add(budget + STALL_GRACE) {
        plan.set_deadline(deadline);
    }
    let plan = Arc::clone(plan);
    let cancel = cancel.clone();
    let task = tokio::spawn(async move {
        cancel.cancelled().await;
        plan.interrupt();
    });
    AbortOnDrop::from(&task)
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
    /// The partial results calls streamed.
    updates: &'a UpdateLog,
    /// When the scenario's time budget ends.
    deadline: Deadline,
}

/// A scenario's temporary directories.
struct Dirs {
    /// The workspace.
    workspace: TempDir,
    /// Beside it, the scratch directory for bash's full-output logs.
    scratch: TempDir,
    /// The bytes the builder wrote into the workspace.
    bytes: u64,
}

impl Dirs {
    /// The presenter of a run in these directories; `root` is the
    /// workspace root as the registry resolved it (its real path), which
    /// is also the spelling calls execute with.
    fn presenter(&self, root: &Path) -> Presenter {
        let (workspace, scratch) = (self.workspace.path(), self.scratch.path());
        let canonical = |dir: &Path| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Presenter::default()
            .with_root(WORKSPACE_NAME, [root, workspace])
            .with_root(SCRATCH_NAME, [&canonical(scratch), scratch])
    }

    /// Removes both directories (by the end of the run), or keeps
    /// them (`--keep-workspaces`) and records where the workspace is.
    fn keep_or_remove(self, config: &RunConfig, outcome: &mut ScenarioOutcome) {
        if config.keep_workspaces {
            let _ = self.scratch.keep();
            outcome.workspace = Some(self.workspace.keep().display().to_string());
        } else {
            let bytes = self.bytes;
            config.cleanup.remove((self.workspace, self.scratch), bytes);
        }
    }
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

/// The scenario's conditions applied to its workspace: its bash
/// configuration and shell, and its faults (whose plan is returned, to
/// end stalls when the run ends).
fn with_conditions(
    workspace: Workspace,
    scenario: &Scenario,
) -> (Workspace, Option<Arc<FaultPlan>>) {
    let conditions = &scenario.conditions;
    let mut workspace = workspace.with_bash(conditions.bash.clone());
    if let Some(shell) = &conditions.shell {
        workspace = workspace.with_process(Arc::new(LocalProcess::with_shell(shell)));
    }
    if conditions.faults.is_empty() {
        return (workspace, None);
    }
    let plan = FaultPlan::new(workspace.root(), conditions.faults.clone());
    let workspace = workspace.with_wrapped_ops(
        |fs| Arc::new(FaultFs::new(fs, Arc::clone(&plan))),
        |process| Arc::new(FaultProcess::new(process, Arc::clone(&plan))),
    );
    (workspace, Some(plan))
}

/// The registry of a scenario: its limits, the built-in tools and the
/// servers' `tools`, active in `order`.
fn registry(
    workspace: Workspace,
    scenario: &Scenario,
    tools: Vec<Arc<dyn AnyTool>>,
    order: Vec<String>,
) -> Result<Registry, Box<Failure>> {
    let mut builder = Registry::builder(workspace).limits(scenario.limits.clone());
    for tool in tools {
        builder = builder.tool(tool);
    }
    builder
        .allow(order)
        .build()
        .map_err(|err| Box::new(whole("tools", "a valid tool set", err.to_string())))
}

/// The scenario's temporary workspace, built, its logs directory, the
/// workspace over them, and the plan of its injected faults.
async fn prepare(
    scenario: &Scenario,
    fixtures: &Arc<workspace::FixtureCache>,
) -> Result<(Dirs, Workspace, Option<Arc<FaultPlan>>), Failure> {
    let cannot_create = |what: &str, err: std::io::Error| {
        whole(
            "workspace",
            &format!("a temporary {what}"),
            format!("cannot create one: {err}"),
        )
    };
    let dir = tempfile::Builder::new()
        .prefix("harness-ws-")
        .tempdir()
        .map_err(|err| cannot_create("workspace", err))?;
    // Exactly `{workspace}-logs` next to it, created new (never one that
    // already exists), private like the workspace.
    let (Some(parent), Some(name)) = (dir.path().parent(), dir.path().file_name()) else {
        return Err(whole(
            "workspace",
            "a temporary workspace with a parent directory",
            dir.path().display().to_string(),
        ));
    };
    let logs = tempfile::Builder::new()
        .prefix(&format!("{}-logs", name.to_string_lossy()))
        .rand_bytes(0)
        .tempdir_in(parent)
        .map_err(|err| cannot_create("logs directory", err))?;
    let scratch =
        Scratch::private_dir(logs.path()).map_err(|err| cannot_create("logs directory", err))?;
    let plan = scenario.workspace.clone();
    let root = dir.path().to_path_buf();
    let fixtures = Arc::clone(fixtures);
    let built =
        tokio::task::spawn_blocking(move || workspace::build(&plan, &root, Some(&fixtures)));
    let bytes = match built.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(err)) => return Err(whole("workspace", "the workspace is built", err)),
        Err(err) => {
            return Err(whole(
                "workspace",
                "the workspace is built",
                err.to_string(),
            ));
        }
    };
    let workspace = Workspace::local(dir.path())
        .map_err(|err| whole("workspace", "a usable workspace", err.to_string()))?
        .with_confine(scenario.confine)
        .with_scratch(scratch);
    // bash's directory came from the scenario: one that leads outside the
    // workspace is the author's to fix, before any call (and before the
    // faults, which could fail the look-up).
    if let Err(err) = workspace
        .clone()
        .with_bash(scenario.conditions.bash.clone())
        .bash_cwd()
    {
        let actual = match err {
            PathError::Outside { raw, via, .. } => {
                format!("`{raw}` leads outside the workspace{via}; no call ran")
            }
            PathError::Unresolvable { message, .. } => format!("{message} No call ran."),
        };
        return Err(whole(
            "bash.cwd",
            "a directory inside the workspace",
            actual,
        ));
    }
    let (workspace, faults) = with_conditions(workspace, scenario);
    Ok((
        Dirs {
            workspace: dir,
            scratch: logs,
            bytes,
        },
        workspace,
        faults,
    ))
}
