//! One scenario served to a real agent, end to end: the workspace built
//! as for harness's own loop, the script served on 127.0.0.1, the agent
//! started in the workspace with a throwaway home and temporary
//! directory (beside the workspace, removed with it), standard input
//! `/dev/null`, a process group of its own, in a kernel sandbox where
//! the machine allows one (writes: the workspace, the home, the
//! temporary directory; network: the served model's port only), and
//! stopped with everything it started at the end or at the time budget.
//! Then what it sent is read into a transcript and judged with the
//! scenario's checks.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use tokio::io::AsyncRead;
use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

use crate::agent::Chars4;
use crate::agent::Presenter;
use crate::agent::mcp_config::LaunchParts;
use crate::agent::mcp_config::register;
use crate::agent::profiles::Placeholders;
use crate::agent::serve::ModelServer;
use crate::agent::serve::ScriptResponder;
use crate::agent::serve::ServeConfig;
use crate::judge::CheckInput;
use crate::judge::CheckKind;
use crate::judge::Failure;
use crate::judge::deadline::Deadline;
use crate::judge::tally::tally;
use crate::mcp::client::signal_group;
use crate::scenario::Scenario;
use crate::tools::Sandbox;
use crate::tools::SandboxPolicy;

use super::super::agent_outcome::AgentOutcome;
use super::super::config::RunConfig;
use super::super::env::prepare::WORKSPACE_NAME;
use super::super::env::prepare::prepare;
use super::super::outcome::ScenarioOutcome;
use super::super::outcome::Status;
use super::super::outcome::millis;
use super::super::snapshots::SnapshotCache;
use super::super::transcript::Bounds;
use super::super::transcript::KeptTranscript;
use super::launch::Resolved;
use super::launch::resolve;
use super::transcript::Served;
use super::transcript::build;

/// How the agent's home is shown in what is checked and priced.
pub(crate) const HOME_NAME: &str = "/agent-home";

/// How its temporary directory is shown.
pub(crate) const TMP_NAME: &str = "/agent-tmp";

/// The most bytes of an agent's standard output and error kept (their
/// ends).
const KEEP_BYTES: usize = 64 * 1024;

/// The most bytes of each run.json keeps.
const REPORT_BYTES: usize = 4 * 1024;

/// How long the agent's pipes may stay open after it ended (something
/// it started holding them).
const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Whether the console was told that agents run unsandboxed (once per
/// run).
static TOLD: AtomicBool = AtomicBool::new(false);

/// What one scenario served to an agent needs.
pub(in crate::run) struct AgentJob<'a> {
    /// The scenario (its `agent` set).
    pub scenario: &'a Scenario,
    /// The run's configuration.
    pub config: &'a RunConfig,
    /// Cancelled on Ctrl-C.
    pub cancel: &'a CancellationToken,
    /// The stored snapshots of the run.
    pub snapshots: &'a SnapshotCache,
}

/// Where Claude Code keeps a project's memory under `home`: the
/// project's path with every character but a letter or digit made `-`
/// (`/tmp/x/ws` is `-tmp-x-ws`). Its system prompt names it, so it is
/// presented as the workspace is, else the figures would move with the
/// length of the temporary directory's path.
fn projects_dir(home: &Path, project: &Path) -> std::path::PathBuf {
    let mangled: String = path_text(project)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude").join("projects").join(mangled)
}

/// A failure of the scenario as a whole.
fn whole(check: &str, expected: &str, actual: impl Into<crate::judge::Actual>) -> Failure {
    Failure::new(None, check, expected, actual)
}

impl AgentJob<'_> {
    /// Runs the scenario with its agent; an agent that is not installed
    /// skips it, with the reason.
    pub(in crate::run) async fn run(self) -> ScenarioOutcome {
        let scenario = self.scenario;
        let Some(name) = scenario.agent.as_deref() else {
            return ScenarioOutcome::skipped(scenario, "no agent to serve it to");
        };
        let path = std::env::var("PATH").unwrap_or_default();
        let resolved = match resolve(name, &scenario.agents, &path) {
            Ok(resolved) => resolved,
            Err(why) => return ScenarioOutcome::skipped(scenario, why.to_string()),
        };
        if !scenario.servers.is_empty()
            && let Some(why) = super::mcp::unsupported(&resolved)
        {
            return ScenarioOutcome::skipped(scenario, why);
        }
        let started = Instant::now();
        let mut outcome = ScenarioOutcome::of(scenario, Status::Failed);
        outcome.snapshot_file = Some(scenario.snapshot_file.clone());
        let (dirs, workspace, _faults) = match prepare(scenario, &self.config.fixtures).await {
            Ok(prepared) => prepared,
            Err(failure) => {
                outcome.failures.push(failure);
                return outcome;
            }
        };
        let root = workspace.root().to_path_buf();
        let home = dirs.scratch().join("home");
        let tmp = dirs.scratch().join("tmp");
        let made = std::fs::create_dir_all(&home).and_then(|()| std::fs::create_dir_all(&tmp));
        let canonical = |dir: &Path| dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let (home, tmp) = (canonical(&home), canonical(&tmp));
        let presenter = dirs
            .presenter(&root)
            .with_root(HOME_NAME, [&home])
            .with_root(TMP_NAME, [&tmp])
            .with_root(
                path_text(&projects_dir(
                    Path::new(HOME_NAME),
                    Path::new(WORKSPACE_NAME),
                )),
                [projects_dir(&home, &root)],
            );
        if let Err(err) = made {
            outcome.failures.push(whole(
                "agent",
                "a home directory for the agent",
                format!("it could not be made: {err}"),
            ));
            outcome.workspace =
                dirs.keep_or_remove(self.config.keep_workspaces, &self.config.cleanup);
            return outcome;
        }
        let budget = self.config.timeout.unwrap_or(scenario.timeout);
        let deadline = Deadline::after(Instant::now(), budget);
        let ran = self
            .serve_and_run(&resolved, &root, &home, &tmp, budget, &presenter)
            .await;
        let mut record = ran.record;
        record.output = tail_text(&presenter.text(&ran.stdout), REPORT_BYTES);
        record.stderr = tail_text(&presenter.text(&ran.stderr), REPORT_BYTES);
        let vars = BTreeMap::from([("workspace".to_owned(), path_text(&root))]);
        let built = build(&Served {
            exchanges: &ran.exchanges,
            script: &scenario.script,
            vars: &vars,
            errors: resolved.errors,
            presenter: &presenter,
            tokens: self.config.tokens.as_ref(),
            prompt: scenario.task(),
        });
        record.requests = built.requests;
        record.side_calls = built.side_calls;
        record.finished = built.finished;
        let mut transcript = built.transcript;
        let words = last_words(&record);
        if let Some(failure) = ran.failure {
            outcome.failures.push(failure);
        } else if !built.finished {
            transcript.error = Some(format!(
                "the agent `{name}` ended ({}) before the script's final answer; {words}",
                record.exit
            ));
        } else if record.exit_code != Some(0) {
            transcript.error = Some(format!(
                "the agent `{name}` ended with {} after the script's final answer; {words}",
                record.exit
            ));
        }
        let tally = tally(
            &transcript,
            self.config
                .coverage
                .then_some(&[] as &[(String, Vec<String>)]),
        );
        let stored = match self.snapshots.get(&scenario.snapshot_file) {
            Ok(stored) => stored,
            Err(err) => {
                outcome
                    .failures
                    .push(whole("snapshot", "a readable snapshot file", err));
                BTreeMap::new()
            }
        };
        let checked = crate::judge::check(&CheckInput {
            scenario,
            transcript: &transcript,
            figures: &tally.figures,
            workspace: &root,
            workspace_name: WORKSPACE_NAME,
            presenter: &presenter,
            tokens: self.config.tokens.as_ref(),
            stored_snapshots: &stored,
            deadline,
        });
        // A step the agent never answered fails with its own words.
        outcome
            .failures
            .extend(checked.failures.into_iter().map(|f| {
                if f.check == CheckKind::Sent {
                    f.map_actual(|_| {
                        format!("the agent `{name}` never returned a result for it; {words}")
                    })
                } else {
                    f
                }
            }));
        outcome.snapshots = checked.snapshots;
        if self.config.update_snapshots {
            outcome.failures.retain(|f| f.check != CheckKind::Snapshot);
        }
        if self.cancel.is_cancelled() {
            outcome
                .failures
                .push(whole("run", "the run finishes", "interrupted"));
        }
        outcome.calls = tally.calls;
        outcome.turns = tally.turns;
        outcome.coverage = tally.coverage;
        outcome.stats.figures = tally.figures;
        if self.config.transcripts {
            outcome.transcript = Some(KeptTranscript::of(&transcript, Bounds::default()));
        }
        outcome.agent = Some(record);
        outcome.status = if outcome.failures.is_empty() {
            Status::Passed
        } else {
            Status::Failed
        };
        outcome.stats.duration_ms = millis(started.elapsed());
        outcome.workspace = dirs.keep_or_remove(self.config.keep_workspaces, &self.config.cleanup);
        outcome
    }

    /// Serves the script and runs the agent against it until it ends, the
    /// budget is spent or the run is cancelled; everything it started is
    /// stopped before this returns.
    async fn serve_and_run(
        &self,
        resolved: &Resolved,
        root: &Path,
        home: &Path,
        tmp: &Path,
        budget: Duration,
        presenter: &Presenter,
    ) -> Ran {
        let scenario = self.scenario;
        let mut record = AgentOutcome {
            name: resolved.name.clone(),
            api: resolved.api.name().to_owned(),
            ..AgentOutcome::default()
        };
        let mut ran = Ran::default();
        let vars = BTreeMap::from([("workspace".to_owned(), path_text(root))]);
        // The usage an answer reports to the agent is an estimate (as
        // serve-model's); the figures are priced with the run's tokenizer.
        let responder = ScriptResponder::new(
            scenario.script.clone(),
            vars,
            Arc::new(Chars4),
            resolved.errors,
        );
        let server =
            match ModelServer::start(ServeConfig::default(), Arc::new(responder), None).await {
                Ok(server) => server,
                Err(err) => {
                    ran.failure = Some(whole(
                        "agent",
                        "the scripted model served on 127.0.0.1",
                        format!("it could not listen: {err}"),
                    ));
                    ran.record = record;
                    return ran;
                }
            };
        let mut expanded = resolved.expand(&Placeholders {
            model_url: server.url(),
            workspace: path_text(root),
            home: path_text(home),
            prompt: scenario.task().to_owned(),
        });
        // The scenario's MCP servers, in the agent's own configuration.
        if let Some(format) = resolved.mcp {
            let servers = super::mcp::agent_servers(
                &scenario.servers,
                root,
                &crate::run::servers::harness_binary(),
            );
            let parts = LaunchParts {
                args: &mut expanded.args,
                env: &mut expanded.env,
                files: &mut expanded.files,
            };
            let registered = servers.and_then(|servers| {
                register(format, &servers, &path_text(home), parts).map_err(|err| err.to_string())
            });
            if let Err(err) = registered {
                ran.failure = Some(whole(
                    "agent",
                    "the scenario's MCP servers registered with the agent",
                    err,
                ));
                ran.record = record;
                ran.exchanges = server.stop().await;
                return ran;
            }
        }
        for (file, contents) in &expanded.files {
            let file = Path::new(file);
            let written = match file.parent() {
                Some(dir) if file.starts_with(home) => std::fs::create_dir_all(dir)
                    .and_then(|()| std::fs::write(file, contents.as_bytes())),
                _ => Err(std::io::Error::other("it is not inside the agent's home")),
            };
            if let Err(err) = written {
                ran.failure = Some(whole(
                    "agent",
                    "the agent's config files written",
                    format!("{}: {err}", presenter.text(&file.display().to_string())),
                ));
                ran.record = record;
                ran.exchanges = server.stop().await;
                return ran;
            }
        }
        // The scenario's own `sandbox:` (off, outside network, more
        // writable paths), with the agent's home writable and the served
        // model's port let through.
        let policy = crate::run::env::sandbox::policy(
            &scenario.sandbox,
            Some(root),
            Some(tmp.to_path_buf()),
            &std::iter::once(server.addr().port())
                .chain(super::mcp::loopback_ports(&scenario.servers))
                .collect::<Vec<u16>>(),
        )
        .map(|mut policy: SandboxPolicy| {
            policy.writable.push(home.to_path_buf());
            policy
        });
        let sandbox = match policy.map(Sandbox::new) {
            Some(Ok(sandbox)) => {
                record.warnings = sandbox.report().shortfalls();
                Some(sandbox)
            }
            Some(Err(err)) => {
                record.warnings = vec![format!("no sandbox: {err}")];
                None
            }
            None => None,
        };
        record.isolation = if sandbox
            .as_ref()
            .is_some_and(|s| s.report().enforces_anything())
        {
            "sandbox".to_owned()
        } else {
            "process group".to_owned()
        };
        if !record.warnings.is_empty() && !TOLD.swap(true, Ordering::Relaxed) {
            eprintln!(
                "warning: agents run without part of their sandbox here: {}",
                record.warnings.join("; ")
            );
        }
        let mut command = tokio::process::Command::new(&resolved.program);
        command
            .args(&expanded.args)
            .current_dir(root)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", tmp)
            .envs(expanded.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(sandbox) = &sandbox
            && let Err(err) = sandbox.prepare(command.as_std_mut())
        {
            record
                .warnings
                .push(format!("the sandbox could not start: {err}"));
            ran.failure = Some(whole(
                "agent",
                &format!("the agent `{}` started in its sandbox", resolved.name),
                format!("the sandbox could not start: {err}"),
            ));
            ran.record = record;
            ran.exchanges = server.stop().await;
            return ran;
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(err) => {
                ran.failure = Some(whole(
                    "agent",
                    &format!("the agent `{}` starts", resolved.name),
                    format!("{}: {err}", resolved.program.display()),
                ));
                ran.record = record;
                ran.exchanges = server.stop().await;
                return ran;
            }
        };
        let pgid = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .unwrap_or(0);
        let stdout = Arc::new(Mutex::new(Tail::default()));
        let stderr = Arc::new(Mutex::new(Tail::default()));
        let readers = [
            child
                .stdout
                .take()
                .map(|pipe| tokio::spawn(drain(pipe, Arc::clone(&stdout)))),
            child
                .stderr
                .take()
                .map(|pipe| tokio::spawn(drain(pipe, Arc::clone(&stderr)))),
        ];
        let status = tokio::select! {
            status = child.wait() => Some(status),
            () = tokio::time::sleep(budget) => None,
            () = self.cancel.cancelled() => None,
        };
        // Whatever it left running in its group goes with it.
        signal_group(pgid, libc::SIGKILL);
        let status = match status {
            Some(status) => status.ok(),
            None => {
                let _ = tokio::time::timeout(DRAIN_WAIT, child.wait()).await;
                if !self.cancel.is_cancelled() {
                    let secs = budget.as_secs_f64();
                    ran.failure = Some(whole(
                        "timeout",
                        &format!("the scenario finishes within {secs:.1} s"),
                        format!(
                            "the agent `{}` was still running after {secs:.1} s; it was stopped \
                             with everything it started",
                            resolved.name
                        ),
                    ));
                }
                record.exit = "stopped at the time budget".to_owned();
                None
            }
        };
        if let Some(status) = status {
            use std::os::unix::process::ExitStatusExt as _;
            record.exit_code = status.code();
            record.exit = match (status.code(), status.signal()) {
                (Some(code), _) => format!("exit status {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "ended".to_owned(),
            };
        }
        if let Some(sandbox) = &sandbox {
            sandbox.end();
        }
        for reader in readers.into_iter().flatten() {
            if tokio::time::timeout(DRAIN_WAIT, reader).await.is_err() {
                // Something outside its group holds the pipe: give up on
                // the rest of its words.
            }
        }
        ran.stdout = lock(&stdout).text();
        ran.stderr = lock(&stderr).text();
        ran.exchanges = server.stop().await;
        ran.record = record;
        ran
    }
}

/// What running the agent gave.
#[derive(Default)]
struct Ran {
    record: AgentOutcome,
    exchanges: Vec<crate::agent::serve::Exchange>,
    stdout: String,
    stderr: String,
    /// Why the run is a failure apart from its checks (it could not
    /// start, or ran out of time).
    failure: Option<Failure>,
}

/// The last bytes of a stream.
#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
}

impl Tail {
    fn push(&mut self, more: &[u8]) {
        self.bytes.extend_from_slice(more);
        if self.bytes.len() > 2 * KEEP_BYTES {
            let cut = self.bytes.len() - KEEP_BYTES;
            self.bytes.drain(..cut);
        }
    }

    fn text(&self) -> String {
        let start = self.bytes.len().saturating_sub(KEEP_BYTES);
        String::from_utf8_lossy(&self.bytes[start..]).into_owned()
    }
}

fn lock(tail: &Mutex<Tail>) -> std::sync::MutexGuard<'_, Tail> {
    tail.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn drain(mut pipe: impl AsyncRead + Unpin, tail: Arc<Mutex<Tail>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => lock(&tail).push(&buf[..n]),
        }
    }
}

/// The last `max` bytes of `text` (at a character boundary), control
/// characters but newlines and tabs dropped.
fn tail_text(text: &str, max: usize) -> String {
    let text = text.trim_end();
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..]
        .chars()
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\t'))
        .collect()
}

/// What the agent last said: the last lines of its standard error, else
/// of its standard output.
fn last_words(record: &AgentOutcome) -> String {
    let last = |text: &str| {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let from = lines.len().saturating_sub(3);
        tail_text(&lines[from..].join(" | "), 600)
    };
    let stderr = last(&record.stderr);
    if !stderr.is_empty() {
        return format!("its last words (stderr): {stderr}");
    }
    let stdout = last(&record.output);
    if !stdout.is_empty() {
        return format!("its last output: {stdout}");
    }
    "it wrote nothing".to_owned()
}

/// A path as the text the agent and the script name it by.
fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn claude_codes_project_directory_is_presented_as_the_workspaces() {
        let home = Path::new("/tmp/.tmpA1/scratch/home");
        let root = Path::new("/tmp/.tmpA1/work_space");
        assert_eq!(
            projects_dir(home, root),
            Path::new("/tmp/.tmpA1/scratch/home/.claude/projects/-tmp--tmpA1-work-space")
        );
        let presenter = Presenter::default()
            .with_root(WORKSPACE_NAME, [root])
            .with_root(HOME_NAME, [home])
            .with_root(
                path_text(&projects_dir(
                    Path::new(HOME_NAME),
                    Path::new(WORKSPACE_NAME),
                )),
                [projects_dir(home, root)],
            );
        assert_eq!(
            presenter.text(
                "memory at `/tmp/.tmpA1/scratch/home/.claude/projects/-tmp--tmpA1-work-space/memory/`, \
                 files in /tmp/.tmpA1/work_space/a.txt"
            ),
            "memory at `/agent-home/.claude/projects/-workspace/memory/`, files in /workspace/a.txt"
        );
    }
}
