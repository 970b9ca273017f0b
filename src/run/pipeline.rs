//! One scenario end to end: a fresh temporary workspace and scratch
//! directory, its own registry and faux provider, the real agent loop
//! within a time budget, the checks and the figures. The directories are
//! removed when the scenario ends, on failure too, unless kept on request.
//!
//! The model sees the workspace as [`WORKSPACE_NAME`] and the scratch
//! directory as [`SCRATCH_NAME`], whatever their real paths: `${workspace}`
//! is bound to the stable name, the loop's [`Presenter`] maps results to
//! the stable names and arguments back to real paths, and the checks read
//! files through the same presenter. So nothing the model reads, and no
//! figure priced from it, depends on `TMPDIR` or on the random part of a
//! temp dir's name (docs/scenarios.md, "What the model sees").

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

use crate::agent::AgentEvent;
use crate::agent::CallRecord;
use crate::agent::FauxProvider;
use crate::agent::FauxReport;
use crate::agent::LoopOptions;
use crate::agent::Presenter;
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
use crate::tools::ops::DirEntry;
use crate::tools::ops::FsOps;
use crate::tools::ops::Metadata;

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

/// The name under which the model sees a scenario's workspace: results
/// show it instead of the real path, `${workspace}` expands to it, and
/// arguments that name it execute in the real workspace.
pub const WORKSPACE_NAME: &str = "/workspace";

/// The name under which the model sees a scenario's scratch directory, the
/// private directory beside the workspace that holds bash's full-output
/// files during the run.
pub const SCRATCH_NAME: &str = "/scratch";

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
        let (dirs, registry) = match prepare(scenario).await {
            Ok(prepared) => prepared,
            Err(failure) => {
                outcome.failures.push(failure);
                return outcome;
            }
        };
        let root = registry.workspace().root().to_path_buf();
        let presenter = dirs.presenter(&root);
        let vars = BTreeMap::from([("workspace".to_owned(), WORKSPACE_NAME.to_owned())]);
        let tokens = Arc::clone(&self.config.tokens);
        let mut provider = FauxProvider::new(scenario.script.clone(), tokens, vars);
        let options = LoopOptions {
            system_prompt: scenario.system.clone(),
            cancel: self.cancel.child_token(),
            presenter: presenter.clone(),
            ..LoopOptions::default()
        };
        let budget = self.config.timeout.unwrap_or(scenario.timeout);
        let mut running = RunningCalls::default();
        let finished = {
            let mut on_event = |event: AgentEvent| running.see(&event);
            let run = run_loop(&mut provider, &registry, &options, &mut on_event);
            tokio::time::timeout(budget, run).await
        };
        let Ok(transcript) = finished else {
            options.cancel.cancel();
            outcome.failures.push(whole(
                "timeout",
                &format!("the scenario finishes within {:.1} s", budget.as_secs_f64()),
                format!(
                    "it timed out after {:.1} s {}; its tools were stopped",
                    budget.as_secs_f64(),
                    running.describe(scenario)
                ),
            ));
            outcome.stats.duration_ms = millis(started.elapsed());
            drop(registry);
            dirs.keep_or_remove(self.config.keep_workspaces, &mut outcome);
            return outcome;
        };
        let report = provider.into_report();
        let figures = Figures::of(&transcript, &report, self.config.tokens.as_ref());
        let places = Places {
            root: &root,
            presenter: &presenter,
        };
        self.check(&transcript, &report, &figures, places, &mut outcome);
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
        dirs.keep_or_remove(self.config.keep_workspaces, &mut outcome);
        outcome
    }

    /// Runs the checks on a finished run and records what they found.
    fn check(
        &self,
        transcript: &Transcript,
        report: &FauxReport,
        figures: &Figures,
        places: Places<'_>,
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
            workspace: places.root,
            workspace_name: WORKSPACE_NAME,
            presenter: places.presenter,
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

/// Where the checks find the workspace, and how they present what they read.
#[derive(Clone, Copy)]
struct Places<'a> {
    /// The workspace root (real path).
    root: &'a Path,
    /// The run's presenter.
    presenter: &'a Presenter,
}

/// A scenario's temporary directories.
struct Dirs {
    /// The workspace.
    workspace: TempDir,
    /// Beside it, the scratch directory for bash's full-output files.
    scratch: TempDir,
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

    /// Removes both directories, or keeps them (`--keep-workspaces`; the
    /// scratch directory only when it holds a file) and records where the
    /// workspace is.
    fn keep_or_remove(self, keep: bool, outcome: &mut ScenarioOutcome) {
        if keep {
            outcome.workspace = Some(self.workspace.keep().display().to_string());
            let used = std::fs::read_dir(self.scratch.path())
                .is_ok_and(|mut entries| entries.next().is_some());
            if used {
                // Bash's full-output files stay beside the kept workspace.
                let _ = self.scratch.keep();
            }
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

/// The scenario's temporary directories, built, and a registry over the
/// workspace.
async fn prepare(scenario: &Scenario) -> Result<(Dirs, Registry), Failure> {
    let temp = |prefix: &str| tempfile::Builder::new().prefix(prefix).tempdir();
    let (dir, scratch) = temp("harness-ws-")
        .and_then(|dir| Ok((dir, temp("harness-scratch-")?)))
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
    let local = Workspace::local(dir.path())
        .map_err(|err| whole("workspace", "a usable workspace", err.to_string()))?;
    let fs: Arc<dyn FsOps> = Arc::new(ScratchFs::new(
        Arc::clone(local.fs()),
        scratch.path().to_path_buf(),
    ));
    let workspace = Workspace::new(
        fs,
        Arc::clone(local.process()),
        dir.path(),
        scenario.confine,
    )
    .map_err(|err| whole("workspace", "a usable workspace", err.to_string()))?;
    let registry = Registry::builder(workspace)
        .limits(scenario.limits.clone())
        .allow(scenario.tools.iter().cloned())
        .build()
        .map_err(|err| whole("tools", "a valid tool set", err.to_string()))?;
    Ok((
        Dirs {
            workspace: dir,
            scratch,
        },
        registry,
    ))
}

/// The file operations of a run: the workspace's own, except that the
/// private files the tools create (bash's full-output files) go to the
/// scenario's scratch directory, numbered in the order they are created
/// (`harness-bash-1.log`, …), instead of the system temp dir under a random
/// name. bash is a sequential tool, so the numbering is the same on every
/// run, and the names the model reads are too.
#[derive(Debug)]
struct ScratchFs {
    inner: Arc<dyn FsOps>,
    dir: PathBuf,
    next: AtomicU64,
}

impl ScratchFs {
    fn new(inner: Arc<dyn FsOps>, dir: PathBuf) -> Self {
        Self {
            inner,
            dir,
            next: AtomicU64::new(1),
        }
    }
}

impl FsOps for ScratchFs {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.symlink_metadata(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.read_link(path)
    }
    fn open(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>> {
        self.inner.open(path)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.inner.write(path, data)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.inner.read_dir(path)
    }
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn Write + Send>> {
        self.inner.create_new(path, mode)
    }
    fn create_temp(
        &self,
        _dir: &Path,
        prefix: &str,
        suffix: &str,
    ) -> io::Result<(PathBuf, Box<dyn Write + Send>)> {
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let path = self.dir.join(format!("{prefix}-{n}{suffix}"));
            match self.inner.create_new(&path, 0o600) {
                Ok(file) => return Ok((path, file)),
                // Only a file the scenario made itself can be in the way.
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && n < 10_000 => {}
                Err(err) => return Err(err),
            }
        }
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
