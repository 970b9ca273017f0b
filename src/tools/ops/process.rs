//! Local process execution for `bash` (§bash.3, D20).
//!
//! The command runs as `/bin/bash -c COMMAND` (falling back to `bash` on
//! `PATH`, then `sh`) in the request's working directory, in a session of
//! its own (`setsid`: a new process group, and no controlling terminal, so
//! a command that opens `/dev/tty` gets an error at once instead of being
//! stopped by `SIGTTIN` when the harness runs on a terminal; without a
//! terminal, a process group of its own, which lets it start by
//! `posix_spawn` rather than a `fork` of the whole harness), with stdin on
//! `/dev/null` (a read gets end-of-file at once). stdout and stderr are the
//! write ends of **one** pipe, so the bytes arrive in the order the command
//! wrote them (D20).
//!
//! Ending a command:
//!
//! - A timeout or a cancellation kills the whole tree with `SIGKILL`: the
//!   process group, and every descendant of the shell found in `/proc`
//!   (which also catches processes that moved to a group of their own with
//!   `setsid` or `set -m`). The shell is reaped, and on Linux the future only
//!   resolves once no killed process is still running (zombies waiting for
//!   their new parent count as dead), so a caller that sees
//!   [`ExecEnd::TimedOut`] or [`ExecEnd::Cancelled`] can rely on nothing of
//!   the command running any more.
//! - Dropping the future before it resolves (the caller gave up) kills the
//!   tree the same way, without waiting.
//! - After the shell exits by itself, output is read until the pipe closes,
//!   or until [`OUTPUT_GRACE`] passes without a new chunk (re-armed on every
//!   chunk): a background child that keeps the pipe open but stays silent
//!   does not hold the call, and one that keeps writing is still read. Such
//!   background processes keep running; their groups are killed when the
//!   [`LocalProcess`] is dropped, so an evaluation run leaves nothing behind.
//!
//! In a [`Sandbox`] (`with_sandbox`), the shell starts through the
//! sandbox (sandbox/spawn.rs: in its namespaces, under its Landlock rules,
//! with its `TMPDIR`, without copying this process), and is otherwise
//! followed, stopped and killed the same way.
//!
//! Known limit: a process that both leaves the group and is orphaned before
//! the kill (a daemon's double fork) cannot be found by the call and
//! survives it: in a sandbox with a PID namespace, until the sandbox ends;
//! without one, for good, as it would in a terminal.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::BoxFuture;
use super::DataSink;
use super::ExecEnd;
use super::ExecRequest;
use super::ExecSetup;
use super::ExecSetupError;
use super::ProcessOps;
use super::sandbox::Program;
use super::sandbox::Sandbox;
use super::sandbox::SandboxChild;
use super::sandbox::SpawnError;

/// How long to keep reading after the shell exited, re-armed on every chunk.
pub(crate) const OUTPUT_GRACE: Duration = Duration::from_millis(100);

/// The size of one read from the output pipe.
const READ_CHUNK: usize = 64 * 1024;

/// How long to wait for killed processes to die before giving up (a process
/// stuck in uninterruptible I/O dies only when the I/O ends).
const KILL_WAIT: Duration = Duration::from_secs(2);

/// Runs commands on this machine, in a [`Sandbox`] when given one.
#[derive(Debug, Default)]
pub struct LocalProcess {
    shell: Option<PathBuf>,
    groups: Groups,
    sandbox: Option<Arc<Sandbox>>,
}

/// The process groups started and possibly still alive.
type Groups = Arc<Mutex<BTreeSet<i32>>>;

impl LocalProcess {
    /// Uses `shell` instead of looking one up.
    pub fn with_shell(shell: impl Into<PathBuf>) -> Self {
        Self {
            shell: Some(shell.into()),
            groups: Arc::default(),
            sandbox: None,
        }
    }

    /// Runs every command in `sandbox` (shared with whatever else runs in
    /// it, an MCP server of the same scenario for one): its writes, network
    /// and processes confined as its report says. The sandbox lives at
    /// least as long as this; what a command leaves running in it is
    /// killed when the last owner drops it.
    pub fn with_sandbox(mut self, sandbox: Arc<Sandbox>) -> Self {
        self.sandbox = Some(sandbox);
        self
    }

    fn shell(&self) -> io::Result<PathBuf> {
        match &self.shell {
            Some(shell) if shell.exists() => Ok(shell.clone()),
            Some(shell) => Err(ExecSetupError::to_io(
                ExecSetup::ShellMissing(shell.clone()),
                io::Error::from_raw_os_error(libc::ENOENT),
            )),
            None => Ok(find_shell()),
        }
    }
}

/// `/bin/bash`, else `bash` on `PATH`, else `sh`.
fn find_shell() -> PathBuf {
    let bash = Path::new("/bin/bash");
    if bash.exists() {
        return bash.to_path_buf();
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join("bash");
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    PathBuf::from("sh")
}

impl Drop for LocalProcess {
    fn drop(&mut self) {
        if let Ok(groups) = self.groups.lock() {
            for &pgid in groups.iter() {
                signal_group(pgid, libc::SIGKILL);
            }
        }
    }
}

impl ProcessOps for LocalProcess {
    fn exec(
        &self,
        request: ExecRequest,
        on_data: DataSink,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, io::Result<ExecEnd>> {
        let shell = self.shell();
        let groups = Arc::clone(&self.groups);
        let sandbox = self.sandbox.clone();
        Box::pin(async move { run(shell?, groups, sandbox, request, on_data, cancel).await })
    }

    fn sandbox(&self) -> Option<&Arc<Sandbox>> {
        self.sandbox.as_ref()
    }
}

/// Why the command was stopped from outside.
enum Stop {
    TimedOut,
    Cancelled,
}

impl From<Stop> for ExecEnd {
    fn from(stop: Stop) -> Self {
        match stop {
            Stop::TimedOut => Self::TimedOut,
            Stop::Cancelled => Self::Cancelled,
        }
    }
}

async fn run(
    shell: PathBuf,
    groups: Groups,
    sandbox: Option<Arc<Sandbox>>,
    request: ExecRequest,
    mut on_data: DataSink,
    cancel: CancellationToken,
) -> io::Result<ExecEnd> {
    if cancel.is_cancelled() {
        return Ok(ExecEnd::Cancelled);
    }
    check_cwd(&request.cwd)?;
    prune_dead_groups(&groups);

    let pipe_error = |err| ExecSetupError::to_io(ExecSetup::Pipe, err);
    let (reader, writer) = io::pipe().map_err(pipe_error)?;
    let mut child = match &sandbox {
        Some(sandbox) => Shell::Sandboxed(spawn_sandboxed(sandbox, &shell, &request, writer)?),
        None => Shell::Plain(spawn_plain(&shell, &request, writer)?),
    };
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .ok_or_else(|| io::Error::other("The shell exited before it got a process id"))?;
    // From here on, an early return or a dropped future kills the group.
    let guard = GroupGuard::new(pgid, Arc::clone(&groups));
    let mut pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())?;
    let mut buf = vec![0u8; READ_CHUNK];
    let deadline = request
        .timeout
        .and_then(|timeout| Instant::now().checked_add(timeout));
    follow(
        &mut child,
        guard,
        &mut pipe,
        &mut buf,
        &mut on_data,
        &cancel,
        deadline,
    )
    .await
}

/// The shell's process: started by Tokio's `Command`, or in a sandbox
/// (without copying this process, see sandbox/spawn.rs).
enum Shell {
    Plain(tokio::process::Child),
    Sandboxed(SandboxChild),
}

impl Shell {
    fn id(&self) -> Option<u32> {
        match self {
            Shell::Plain(child) => child.id(),
            Shell::Sandboxed(child) => Some(child.id()),
        }
    }

    async fn wait(&mut self) -> io::Result<std::process::ExitStatus> {
        match self {
            Shell::Plain(child) => child.wait().await,
            Shell::Sandboxed(child) => child.wait().await,
        }
    }

    fn start_kill(&mut self) -> io::Result<()> {
        match self {
            Shell::Plain(child) => child.start_kill(),
            Shell::Sandboxed(child) => child.start_kill(),
        }
    }
}

/// Starts the shell in `sandbox`: the inherited environment, then the
/// request's, `PWD` and the sandbox's `TMPDIR`.
fn spawn_sandboxed(
    sandbox: &Sandbox,
    shell: &Path,
    request: &ExecRequest,
    writer: io::PipeWriter,
) -> io::Result<SandboxChild> {
    use std::os::fd::AsRawFd;
    let null = std::fs::File::open("/dev/null")
        .map_err(|err| ExecSetupError::to_io(ExecSetup::Pipe, err))?;
    let mut env: std::collections::BTreeMap<std::ffi::OsString, std::ffi::OsString> =
        std::env::vars_os().collect();
    env.insert("PWD".into(), request.cwd.clone().into_os_string());
    for (key, value) in &request.env {
        env.insert(key.clone(), value.clone());
    }
    let tmpdir = sandbox
        .tmpdir()
        .map_err(|err| ExecSetupError::to_io(ExecSetup::Sandbox, err))?;
    env.insert("TMPDIR".into(), tmpdir.as_os_str().to_owned());
    let env: Vec<(&std::ffi::OsStr, &std::ffi::OsStr)> = env
        .iter()
        .map(|(key, value)| (key.as_os_str(), value.as_os_str()))
        .collect();
    let path = program_path(shell);
    let args = [
        shell.as_os_str(),
        std::ffi::OsStr::new("-c"),
        std::ffi::OsStr::new(&request.command),
    ];
    let program = Program {
        path: path.as_os_str(),
        args: &args,
        env: &env,
        cwd: request.cwd.as_os_str(),
        stdio: [null.as_raw_fd(), writer.as_raw_fd(), writer.as_raw_fd()],
        new_session: has_controlling_terminal(),
    };
    sandbox.spawn(&program).map_err(|err| match err {
        SpawnError::Exec(cause) => {
            ExecSetupError::to_io(ExecSetup::Spawn(shell.to_path_buf()), cause)
        }
        SpawnError::Setup(cause) => ExecSetupError::to_io(ExecSetup::Sandbox, cause),
    })
    // `writer` and `null` close here: the shell holds its own copies.
}

/// The file `execve` needs for `shell`: a name without `/` looked up on
/// `PATH` (as `Command` does), a relative path made absolute against this
/// process's directory (the shell starts in another).
fn program_path(shell: &Path) -> PathBuf {
    if shell.components().count() == 1 && !shell.as_os_str().is_empty() && !shell.is_absolute() {
        if let Some(paths) = std::env::var_os("PATH") {
            for dir in std::env::split_paths(&paths) {
                let candidate = dir.join(shell);
                if candidate.is_file() {
                    return candidate;
                }
            }
        }
        return shell.to_path_buf();
    }
    match std::env::current_dir() {
        Ok(dir) if shell.is_relative() => dir.join(shell),
        _ => shell.to_path_buf(),
    }
}

/// Starts the shell with Tokio's `Command` (no sandbox).
fn spawn_plain(
    shell: &Path,
    request: &ExecRequest,
    writer: io::PipeWriter,
) -> io::Result<tokio::process::Child> {
    let pipe_error = |err| ExecSetupError::to_io(ExecSetup::Pipe, err);
    let writer_err = writer.try_clone().map_err(pipe_error)?;
    let mut command = tokio::process::Command::new(shell);
    command
        .arg("-c")
        .arg(&request.command)
        .current_dir(&request.cwd)
        .env("PWD", &request.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::from(writer_err))
        .kill_on_drop(true);
    if has_controlling_terminal() {
        // SAFETY: the closure runs in the forked child before exec and only
        // calls `setsid`, which is async-signal-safe, and reads `errno`.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
    } else {
        // Without a terminal to lose, a process group of its own is all a
        // new session would give, and it lets the standard library spawn
        // with posix_spawn (a vfork) instead of copying this whole process
        // with fork, which costs in proportion to its memory (tens of MB
        // in a long run): a large share of a run's time when every
        // scenario runs a command.
        command.process_group(0);
    }
    for (key, value) in &request.env {
        command.env(key, value);
    }
    let spawned = command.spawn();
    // The command holds our copies of the write ends; they must go, or the
    // pipe never reports end-of-file.
    drop(command);
    spawned.map_err(|err| ExecSetupError::to_io(ExecSetup::Spawn(shell.to_path_buf()), err))
}

/// Reads the command's output until it ends, is stopped, or times out.
async fn follow(
    child: &mut Shell,
    guard: GroupGuard,
    pipe: &mut tokio::net::unix::pipe::Receiver,
    buf: &mut [u8],
    on_data: &mut DataSink,
    cancel: &CancellationToken,
    deadline: Option<Instant>,
) -> io::Result<ExecEnd> {
    let mut pipe_open = true;
    let waited = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => break Err(Stop::Cancelled),
            () = sleep_until(deadline) => break Err(Stop::TimedOut),
            read = pipe.read(buf), if pipe_open => match read {
                Ok(0) => pipe_open = false,
                Ok(n) => on_data(&buf[..n]),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => pipe_open = false,
            },
            status = child.wait() => break Ok(status?),
        }
    };
    let status = match waited {
        Ok(status) => status,
        Err(stop) => {
            guard.kill_and_wait(child).await;
            drain_buffered(pipe, buf, on_data);
            return Ok(stop.into());
        }
    };

    // The shell is gone; read what its children still write, until the
    // pipe closes or stays silent for the grace period.
    while pipe_open {
        let stop = tokio::select! {
            biased;
            () = cancel.cancelled() => Some(Stop::Cancelled),
            () = sleep_until(deadline) => Some(Stop::TimedOut),
            read = tokio::time::timeout(OUTPUT_GRACE, pipe.read(buf)) => {
                match read {
                    Ok(Ok(n)) if n > 0 => on_data(&buf[..n]),
                    Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                    _ => pipe_open = false,
                }
                None
            }
        };
        if let Some(stop) = stop {
            guard.kill_and_wait(child).await;
            drain_buffered(pipe, buf, on_data);
            return Ok(stop.into());
        }
    }
    guard.release();

    use std::os::unix::process::ExitStatusExt;
    Ok(ExecEnd::Exited {
        code: status.code(),
        signal: status.signal(),
    })
}

/// Whether this process has a controlling terminal (asked once): only
/// then must a command start a session of its own, so that reading the
/// terminal fails at once instead of stopping it with `SIGTTIN`.
fn has_controlling_terminal() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    use std::os::unix::fs::OpenOptionsExt as _;
    *ANSWER.get_or_init(|| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOCTTY)
            .open("/dev/tty")
            .is_ok()
    })
}

fn check_cwd(cwd: &Path) -> io::Result<()> {
    let cause = match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => io::Error::from_raw_os_error(libc::ENOTDIR),
        Err(err) => err,
    };
    Err(ExecSetupError::to_io(
        ExecSetup::WorkingDir(cwd.to_path_buf()),
        cause,
    ))
}

/// After a kill, hands over what the command wrote before it died and is
/// still in the pipe. Never waits: a process that escaped the kill and
/// still holds the pipe cannot keep the call alive.
fn drain_buffered(pipe: &tokio::net::unix::pipe::Receiver, buf: &mut [u8], on_data: &mut DataSink) {
    use std::io::Read;
    use std::os::fd::AsFd;
    // A plain read of a duplicate of the (non-blocking) descriptor: the
    // runtime's cached readiness may not know yet about the last bytes.
    let Ok(fd) = pipe.as_fd().try_clone_to_owned() else {
        return;
    };
    let mut file = std::fs::File::from(fd);
    // A pipe buffers at most 1 MB on Linux unless resized by its owner.
    for _ in 0..(1024 * 1024 / READ_CHUNK) {
        match file.read(buf) {
            Ok(n) if n > 0 => on_data(&buf[..n]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            _ => return,
        }
    }
}

/// Sleeps until `deadline`, or forever without one.
pub(crate) async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending::<()>().await,
    }
}

/// Kills a command's process tree unless released: dropping the exec future
/// early must not leave the command running.
struct GroupGuard {
    pgid: i32,
    groups: Groups,
    armed: bool,
}

impl GroupGuard {
    fn new(pgid: i32, groups: Groups) -> Self {
        if let Ok(mut set) = groups.lock() {
            set.insert(pgid);
        }
        Self {
            pgid,
            groups,
            armed: true,
        }
    }

    /// Kills the tree, reaps the shell and waits until every killed process
    /// is dead.
    async fn kill_and_wait(mut self, child: &mut Shell) {
        self.armed = false;
        let killed = kill_tree(self.pgid);
        // In case the shell itself left its group; an already reaped child
        // is not signalled.
        let _ = child.start_kill();
        let _ = child.wait().await;
        wait_until_dead(self.pgid, &killed).await;
        self.forget();
    }

    /// The shell exited by itself: background processes may live on, and
    /// are killed with the [`LocalProcess`].
    fn release(mut self) {
        self.armed = false;
        if !group_alive(self.pgid) {
            self.forget();
        }
    }

    fn forget(&self) {
        if let Ok(mut set) = self.groups.lock() {
            set.remove(&self.pgid);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_tree(self.pgid);
            self.forget();
        }
    }
}

/// Sends `SIGKILL` to the descendants of the shell `pgid` (found before the
/// group dies, while they are still its descendants) and to its group.
/// Returns the descendants that were signalled.
fn kill_tree(pgid: i32) -> Vec<i32> {
    let descendants = proc::descendants(pgid);
    signal_group(pgid, libc::SIGKILL);
    for &pid in &descendants {
        signal_pid(pid, libc::SIGKILL);
    }
    descendants
}

/// Waits, bounded by [`KILL_WAIT`], until no process of the group and none
/// of `pids` is running, signalling stragglers again.
async fn wait_until_dead(pgid: i32, pids: &[i32]) {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let running = proc::running(pgid, pids);
        if running.is_empty() || started.elapsed() >= KILL_WAIT {
            return;
        }
        signal_group(pgid, libc::SIGKILL);
        for pid in running {
            signal_pid(pid, libc::SIGKILL);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn prune_dead_groups(groups: &Groups) {
    if let Ok(mut set) = groups.lock() {
        set.retain(|&pgid| group_alive(pgid));
    }
}

/// Sends `signal` to every process of a group.
fn signal_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        signal_pid(-pgid, signal);
    }
}

fn signal_pid(pid: i32, signal: i32) {
    // SAFETY: `kill` has no memory-safety preconditions; a stale pid or
    // group only yields ESRCH.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Whether any process of the group (a zombie included) still exists.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let rc = unsafe { libc::kill(-pgid, 0) };
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Reading the process table from `/proc` (Linux); elsewhere nothing is
/// found and only the group is killed.
mod proc {
    /// One process as `/proc/<pid>/stat` describes it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) struct Entry {
        pub pid: i32,
        pub ppid: i32,
        pub pgrp: i32,
        pub state: u8,
    }

    impl Entry {
        /// Not a zombie waiting to be reaped, nor dead.
        pub(super) fn is_running(&self) -> bool {
            !matches!(self.state, b'Z' | b'X' | b'x')
        }
    }

    /// Parses `pid (comm) state ppid pgrp …`; `comm` may hold spaces and
    /// parentheses, so the fields start after the last `)`.
    pub(super) fn parse_stat(text: &str) -> Option<Entry> {
        let open = text.find(" (")?;
        let close = text.rfind(')')?;
        let pid = text[..open].trim().parse().ok()?;
        let mut fields = text.get(close + 1..)?.split_ascii_whitespace();
        let state = *fields.next()?.as_bytes().first()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgrp = fields.next()?.parse().ok()?;
        Some(Entry {
            pid,
            ppid,
            pgrp,
            state,
        })
    }

    /// Every process, as far as it can be read.
    pub(super) fn entries() -> Vec<Entry> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_str()
                    .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
            })
            .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
            .filter_map(|text| parse_stat(&text))
            .collect()
    }

    /// The pids of every running descendant of `root`.
    pub(super) fn descendants(root: i32) -> Vec<i32> {
        let all = entries();
        let mut found = vec![root];
        let mut index = 0;
        while index < found.len() {
            let parent = found[index];
            found.extend(
                all.iter()
                    .filter(|e| e.ppid == parent && e.is_running() && !found.contains(&e.pid))
                    .map(|e| e.pid)
                    .collect::<Vec<_>>(),
            );
            index += 1;
        }
        found.remove(0);
        found
    }

    /// The pids of running processes that are in group `pgid` or among
    /// `pids`.
    pub(super) fn running(pgid: i32, pids: &[i32]) -> Vec<i32> {
        entries()
            .into_iter()
            .filter(|e| e.is_running() && (e.pgrp == pgid || pids.contains(&e.pid)))
            .map(|e| e.pid)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::proc::Entry;
    use super::proc::parse_stat;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        assert_eq!(
            parse_stat("42 (a b) c)) S 7 42 42 0 -1 4194304"),
            Some(Entry {
                pid: 42,
                ppid: 7,
                pgrp: 42,
                state: b'S'
            })
        );
        assert_eq!(
            parse_stat("9 (sleep) Z 1 5 5"),
            Some(Entry {
                pid: 9,
                ppid: 1,
                pgrp: 5,
                state: b'Z'
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }
}
