//! A scenario's environment made ready and taken down: its temporary
//! workspace and, beside it, its scratch directory (`harness-ws-…` and
//! `harness-ws-…-logs`, private, removed by the end of the run unless
//! kept), the workspace built from the scenario's plan, the tool layer's
//! [`Workspace`] over it with the scenario's bash settings, shell and
//! faults, and the presenter that shows the model both under stable names.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::agent::Presenter;
use crate::base::task::AbortOnDrop;
use crate::judge::Failure;
use crate::scenario::Scenario;
use crate::tools::PathError;
use crate::tools::Sandbox;
use crate::tools::Scratch;
use crate::tools::Workspace;
use crate::tools::ops::LocalProcess;

use super::cleanup::Cleanup;
use super::faults::FaultFs;
use super::faults::FaultPlan;
use super::faults::FaultProcess;
use super::sandbox::SandboxOutcome;
use super::workspace;

/// The name under which the model sees a scenario's workspace: results
/// show it instead of the real path, `${workspace}` expands to it, and
/// arguments that name it execute in the real workspace.
pub(crate) const WORKSPACE_NAME: &str = "/workspace";

/// The name under which the model sees a scenario's scratch directory, the
/// private directory beside the workspace that holds bash's full-output
/// files during the run.
pub(crate) const SCRATCH_NAME: &str = "/scratch";

/// How long after a run's time is up its stalled operations end: past the
/// timeout, so that the timeout, not the stalled call, ends the run.
const STALL_GRACE: Duration = Duration::from_millis(50);

/// A failure of the scenario as a whole (no step).
fn whole(check: &str, expected: &str, actual: impl Into<crate::judge::Actual>) -> Failure {
    Failure::new(None, check, expected, actual)
}

/// A scenario's temporary directories.
pub(crate) struct Dirs {
    /// The workspace.
    workspace: TempDir,
    /// Beside it, the scratch directory for bash's full-output logs.
    scratch: TempDir,
    /// The bytes the builder wrote into the workspace.
    bytes: u64,
    /// The sandbox of the scenario's programs (`None`: `sandbox: off`),
    /// ended before the directories go.
    sandbox: Option<Arc<Sandbox>>,
    /// What run.json says of it.
    sandbox_outcome: SandboxOutcome,
}

impl Dirs {
    /// The presenter of a run in these directories; `root` is the
    /// workspace root as the registry resolved it (its real path), which
    /// is also the spelling calls execute with.
    pub(crate) fn presenter(&self, root: &Path) -> Presenter {
        let (workspace, scratch) = (self.workspace.path(), self.scratch.path());
        let canonical = |dir: &Path| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Presenter::default()
            .with_root(WORKSPACE_NAME, [root, workspace])
            .with_root(SCRATCH_NAME, [&canonical(scratch), scratch])
    }

    /// The scratch directory beside the workspace (a real agent's home
    /// and temporary directory go there).
    pub(crate) fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// The sandbox of the scenario's programs (`None`: `sandbox: off`).
    pub(crate) fn sandbox(&self) -> Option<&Arc<Sandbox>> {
        self.sandbox.as_ref()
    }

    /// What run.json says of the sandbox.
    pub(crate) fn sandbox_outcome(&self) -> &SandboxOutcome {
        &self.sandbox_outcome
    }

    /// Removes both directories (by the end of the run, through
    /// `cleanup`), or keeps them (`--keep-workspaces`) and returns where
    /// the workspace is.
    pub(crate) fn keep_or_remove(self, keep: bool, cleanup: &Cleanup) -> Option<String> {
        // Nothing the scenario's programs started outlives it.
        if let Some(sandbox) = &self.sandbox {
            sandbox.end();
        }
        if keep {
            let _ = self.scratch.keep();
            Some(self.workspace.keep().display().to_string())
        } else {
            let bytes = self.bytes;
            cleanup.remove((self.workspace, self.scratch), bytes);
            None
        }
    }
}

/// The scenario's conditions applied to its workspace: its bash
/// configuration and shell, its sandbox, and its faults (whose plan is
/// returned, to end stalls when the run ends).
fn with_conditions(
    workspace: Workspace,
    scenario: &Scenario,
    sandbox: Option<&Arc<Sandbox>>,
) -> (Workspace, Option<Arc<FaultPlan>>) {
    let conditions = &scenario.conditions;
    let mut workspace = workspace.with_bash(conditions.bash.clone());
    let process = match &conditions.shell {
        Some(shell) => Some(LocalProcess::with_shell(shell)),
        None => sandbox.map(|_| LocalProcess::default()),
    };
    if let Some(process) = process {
        let process = match sandbox {
            Some(sandbox) => process.with_sandbox(Arc::clone(sandbox)),
            None => process,
        };
        workspace = workspace.with_process(Arc::new(process));
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

/// Makes stalled operations end when the run is cancelled and just after
/// its time is up (the plan's deadline: a stall can hold the loop's own
/// thread, which then sees neither the timeout nor this task). The caller
/// interrupts the plan when the run is over, so no tool waits out a stall
/// nobody waits for.
pub(crate) fn end_stalls(
    plan: &Arc<FaultPlan>,
    budget: Duration,
    cancel: &CancellationToken,
) -> AbortOnDrop {
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

/// The scenario's temporary workspace, built, its logs directory, the
/// workspace over them, and the plan of its injected faults.
pub(crate) async fn prepare(
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
    let tmpdir = logs.path().join(super::sandbox::TMPDIR_NAME);
    let (sandbox, sandbox_outcome) = super::sandbox::make(scenario, workspace.root(), &tmpdir)
        .map_err(|err| {
            whole(
                "workspace",
                "a sandbox for the scenario's programs",
                format!("{err}; `sandbox: off` runs them without one"),
            )
        })?;
    let (workspace, faults) = with_conditions(workspace, scenario, sandbox.as_ref());
    Ok((
        Dirs {
            workspace: dir,
            scratch: logs,
            bytes,
            sandbox,
            sandbox_outcome,
        },
        workspace,
        faults,
    ))
}
