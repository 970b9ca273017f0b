//! A server's process: started from its command, watched, and stopped so
//! that nothing it started outlives it.
//!
//! - **Start**: the program is looked up on the `PATH` the server gets (a
//!   name with a `/` is taken as a path), run in the given working
//!   directory, in a process group of its own, with a minimal environment
//!   (`PATH`, `HOME`, `LANG`, `TERM` where the harness has them, plus the
//!   server's own `env`), stdin and stdout piped for the protocol and
//!   stderr drained by a task of its own into a bounded [`StderrTail`] (an
//!   undrained pipe would stall a chatty server).
//! - **Exit**: a task waits for the process; when it ends, by itself or
//!   killed, what is left of its group (a child it forked) is sent
//!   `SIGKILL`, which also closes the pipes those children held, and the
//!   status is published.
//! - **Stop** ([`ServerProcess::stop`], after the caller closed stdin): a
//!   grace to exit by itself, then `SIGTERM` to the whole group, a second
//!   grace, then `SIGKILL`. Dropping a [`ServerProcess`] kills the group at
//!   once.
//!
//! - **Sandbox** ([`spawn`]): the caller's [`Sandbox`] is applied before
//!   the spawn (writes, network, a PID namespace), and the process holds
//!   it: what the server left in the sandbox's PID namespace dies when the
//!   last holder drops it.
//!
//! Known limit without a sandbox's PID namespace, as for bash's commands:
//! a process that leaves the group (`setsid`) and is orphaned before the
//! kill survives.

use std::collections::VecDeque;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;
use tokio::process::ChildStdin;
use tokio::process::ChildStdout;
use tokio::sync::watch;

use super::visible::visible_text;
use crate::tools::Sandbox;

/// The variables a server inherits from the harness (when set); all the
/// others come from its `env`.
pub const INHERITED_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// How many bytes of a server's stderr are kept (its last ones).
const STDERR_KEEP_BYTES: usize = 16 * 1024;

/// How many of the last stderr lines a message names.
const STDERR_TAIL_LINES: usize = 10;

/// How long, at most, to wait for a process sent `SIGKILL` to be reaped.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// What to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The program: a name looked up on `PATH`, or a path.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to the minimal environment (they win over it).
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub cwd: PathBuf,
}

/// Why a process could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum SpawnError {
    /// No such program on `PATH`.
    #[error("program `{program}` not found on PATH ({path})")]
    NotFound {
        /// The program as given.
        program: String,
        /// The `PATH` searched.
        path: String,
    },
    /// The operating system refused to start it.
    #[error("cannot start `{program}`: {message}")]
    Os {
        /// The program as given (or as found).
        program: String,
        /// The system's error.
        message: String,
    },
    /// Its sandbox could not be set up.
    #[error("cannot start `{program}` in its sandbox: {message}")]
    Sandbox {
        /// The program as found.
        program: String,
        /// What failed.
        message: String,
    },
}

/// The bounded end of a server's stderr, and how much there was.
#[derive(Debug, Default)]
pub(super) struct StderrTail {
    state: Mutex<TailState>,
}

#[derive(Debug, Default)]
struct TailState {
    kept: VecDeque<u8>,
    total: u64,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.total = state.total.saturating_add(chunk.len() as u64);
        let chunk = &chunk[chunk.len().saturating_sub(STDERR_KEEP_BYTES)..];
        let overflow = (state.kept.len() + chunk.len()).saturating_sub(STDERR_KEEP_BYTES);
        state.kept.drain(..overflow);
        state.kept.extend(chunk);
    }

    /// How many bytes the server wrote to stderr in all.
    pub(super) fn total_bytes(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    /// Its last lines (at most ten, from the last 16 KiB), control
    /// characters shown as control pictures; empty when it wrote nothing.
    pub(super) fn last_lines(&self) -> String {
        let bytes: Vec<u8> = {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.kept.iter().copied().collect()
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.trim_end_matches(['\n', '\r']).lines().collect();
        let start = lines.len().saturating_sub(STDERR_TAIL_LINES);
        lines[start..]
            .iter()
            .map(|line| visible_text(line.trim_end_matches('\r')))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A started server process.
pub(super) struct Spawned {
    /// The protocol's way in.
    pub stdin: ChildStdin,
    /// The protocol's way out.
    pub stdout: ChildStdout,
    /// The process itself.
    pub process: ServerProcess,
}

/// How a process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Exit {
    /// `exit status 3`, `killed by signal 9 (SIGKILL)`…
    pub status: String,
    /// The exit code, when it exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
}

impl Exit {
    fn of(status: ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => Self {
                status: format!("exit status {code}"),
                code: Some(code),
                signal: None,
            },
            (None, Some(signal)) => Self {
                status: format!("killed by signal {signal} ({})", signal_name(signal)),
                code: None,
                signal: Some(signal),
            },
            (None, None) => Self {
                status: "ended".to_owned(),
                code: None,
                signal: None,
            },
        }
    }

    fn unknown(message: &str) -> Self {
        Self {
            status: format!("ended (its status is unknown: {message})"),
            code: None,
            signal: None,
        }
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// How a stop ended a server's process.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// It had ended already (by itself, or it crashed).
    AlreadyEnded,
    /// It exited after its input was closed.
    InputClosed,
    /// It exited after `SIGTERM`.
    Terminated,
    /// It was sent `SIGKILL`.
    Killed,
}

/// A running (or ended) server process and its group.
pub(super) struct ServerProcess {
    pgid: i32,
    exit: watch::Receiver<Option<Exit>>,
    stderr: Arc<StderrTail>,
    stderr_done: watch::Receiver<bool>,
    /// The sandbox it runs in, if any: dropped after the group is killed,
    /// it kills what is left in its PID namespace.
    _sandbox: Option<Arc<Sandbox>>,
}

impl std::fmt::Debug for ServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerProcess")
            .field("pgid", &self.pgid)
            .finish_non_exhaustive()
    }
}

/// The `PATH` a server gets: the harness's own, or the system's default.
pub(super) fn server_path(env: &[(String, String)]) -> String {
    env.iter()
        .rev()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".to_owned())
}

/// The program's file: `program` itself when it holds a `/` (relative to
/// `cwd`), else the first executable of that name on `path`.
pub(super) fn find_program(program: &str, path: &str, cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |candidate: &Path| {
        std::fs::metadata(candidate)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let candidate = cwd.join(program);
        return executable(&candidate).then_some(candidate);
    }
    if program.is_empty() {
        return None;
    }
    path.split(':')
        .map(|dir| {
            if dir.is_empty() {
                Path::new(".")
            } else {
                Path::new(dir)
            }
        })
        .map(|dir| {
            if dir.is_absolute() {
                dir.join(program)
            } else {
                cwd.join(dir).join(program)
            }
        })
        .find(|candidate| executable(candidate))
}

/// Starts `command`, in `sandbox` when given one (see the module
/// documentation); the process holds the sandbox until it is dropped.
pub(super) fn spawn(
    command: &Command,
    sandbox: Option<Arc<Sandbox>>,
) -> Result<Spawned, SpawnError> {
    let path = server_path(&command.env);
    let Some(program) = find_program(&command.program, &path, &command.cwd) else {
        return Err(SpawnError::NotFound {
            program: command.program.clone(),
            path,
        });
    };
    let mut cmd = tokio::process::Command::new(&program);
    cmd.args(&command.args)
        .current_dir(&command.cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.env("PATH", &path);
    for (name, value) in &command.env {
        cmd.env(name, value);
    }
    if let Some(sandbox) = &sandbox {
        sandbox
            .prepare(cmd.as_std_mut())
            .map_err(|err| SpawnError::Sandbox {
                program: program.display().to_string(),
                message: err.to_string(),
            })?;
    }
    let mut child = cmd.spawn().map_err(|err| SpawnError::Os {
        program: program.display().to_string(),
        message: err.to_string(),
    })?;
    let pgid = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .unwrap_or(0);
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        signal_group(pgid, libc::SIGKILL);
        return Err(SpawnError::Os {
            program: program.display().to_string(),
            message: "its pipes could not be set up".to_owned(),
        });
    };
    let tail = Arc::new(StderrTail::default());
    let (stderr_sender, stderr_done) = watch::channel(false);
    tokio::spawn(drain(stderr, Arc::clone(&tail), stderr_sender));
    let (exit_sender, exit) = watch::channel(None);
    tokio::spawn(async move {
        let exit = match child.wait().await {
            Ok(status) => Exit::of(status),
            Err(err) => Exit::unknown(&err.to_string()),
        };
        // What it forked goes with it (and lets go of the pipes).
        signal_group(pgid, libc::SIGKILL);
        let _ = exit_sender.send(Some(exit));
    });
    Ok(Spawned {
        stdin,
        stdout,
        process: ServerProcess {
            pgid,
            exit,
            stderr: tail,
            stderr_done,
            _sandbox: sandbox,
        },
    })
}

async fn drain(mut stderr: ChildStderr, tail: Arc<StderrTail>, done: watch::Sender<bool>) {
    let mut buf = vec![0u8; 8192];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => tail.push(&buf[..n]),
        }
    }
    let _ = done.send(true);
}

impl ServerProcess {
    /// How it ended, if it has.
    pub(super) fn exit(&self) -> Option<Exit> {
        self.exit.borrow().clone()
    }

    /// The process's stderr so far.
    pub(super) fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Waits, at most `limit`, for the process to end; its exit when it has.
    pub(super) async fn ended_within(&self, limit: Duration) -> Option<Exit> {
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await;
        self.exit()
    }

    /// Waits, at most `limit`, until stderr is read to its end (after the
    /// process ended, so the tail holds its last words).
    pub(super) async fn stderr_read_within(&self, limit: Duration) {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(limit, done.wait_for(|done| *done)).await;
    }

    /// Ends the process (its input closed already by the caller): `grace`
    /// to exit, then `SIGTERM` to the group, `grace` again, then `SIGKILL`.
    /// Returns how it ended and its exit.
    pub(super) async fn stop(&self, grace: Duration) -> (Stopped, Exit) {
        if let Some(exit) = self.exit() {
            return (Stopped::AlreadyEnded, exit);
        }
        if let Some(exit) = self.ended_within(grace).await {
            return (Stopped::InputClosed, exit);
        }
        signal_group(self.pgid, libc::SIGTERM);
        if let Some(exit) = self.ended_within(grace).await {
            return (Stopped::Terminated, exit);
        }
        signal_group(self.pgid, libc::SIGKILL);
        let exit = self
            .ended_within(KILL_WAIT)
            .await
            .unwrap_or_else(|| Exit::unknown("it was sent SIGKILL and had not ended 2 s later"));
        (Stopped::Killed, exit)
    }

    /// Kills the group at once and waits (bounded) for the process to end.
    pub(super) async fn kill(&self) {
        signal_group(self.pgid, libc::SIGKILL);
        let _ = self.ended_within(KILL_WAIT).await;
    }

    /// The process group's id (the server's pid).
    pub(super) fn pgid(&self) -> i32 {
        self.pgid
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        signal_group(self.pgid, libc::SIGKILL);
    }
}

/// Sends `signal` to every process of a group.
pub fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: `kill` has no memory-safety preconditions; a group that
        // is gone only yields ESRCH.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_tail_keeps_the_last_lines_and_counts_everything() {
        let tail = StderrTail::default();
        for n in 0..30 {
            tail.push(format!("line {n}\n").as_bytes());
        }
        tail.push(b"bell \x07 here\n");
        let expected = (21..30)
            .map(|n| format!("line {n}"))
            .chain(["bell \u{2407} here".to_owned()])
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(tail.last_lines(), expected);
        assert_eq!(tail.total_bytes(), 10 * 7 + 20 * 8 + 12);
    }

    #[test]
    fn the_tail_is_bounded() {
        let tail = StderrTail::default();
        let chunk = vec![b'x'; 10_000];
        for _ in 0..10 {
            tail.push(&chunk);
        }
        assert_eq!(tail.total_bytes(), 100_000);
        assert_eq!(tail.last_lines().len(), STDERR_KEEP_BYTES);
    }

    #[test]
    fn programs_are_found_on_the_path_or_by_their_path() {
        let cwd = Path::new("/");
        assert_eq!(
            find_program("sh", "/nonexistent:/bin:/usr/bin", cwd),
            Some(PathBuf::from("/bin/sh"))
        );
        assert_eq!(find_program("no-such-program-here", "/bin", cwd), None);
        assert_eq!(find_program("", "/bin", cwd), None);
        assert_eq!(
            find_program("bin/sh", "", cwd),
            Some(PathBuf::from("/bin/sh"))
        );
        // A directory is not a program.
        assert_eq!(find_program("bin", "/", cwd), None);
    }
}
