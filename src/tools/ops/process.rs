//! Local process execution for `bash` (§bash.3, D20).
//!
//! The command runs as `/bin/bash -c COMMAND` (falling back to `bash` on
//! `PATH`, then `sh`) in its own process group, with stdin closed. stdout and
//! stderr are the write ends of **one** pipe, so the bytes arrive in the
//! order the command wrote them (D20). A timeout or a cancellation kills the
//! whole group with `SIGKILL`, so no child or grandchild survives.
//!
//! After the shell exits, output is read until the pipe closes or until
//! [`OUTPUT_GRACE`] passes without a new chunk (a background child that
//! keeps the pipe open but stays silent does not hold the call). Groups that
//! are still alive when the [`LocalProcess`] is dropped are killed, so an
//! evaluation run leaves nothing behind.

use std::collections::BTreeSet;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

use super::BoxFuture;
use super::DataSink;
use super::ExecEnd;
use super::ExecRequest;
use super::ProcessOps;

/// How long to keep reading after the shell exited, re-armed on every chunk.
pub const OUTPUT_GRACE: Duration = Duration::from_millis(100);

/// Runs commands on this machine.
#[derive(Debug, Default)]
pub struct LocalProcess {
    shell: Option<PathBuf>,
    groups: Arc<Mutex<BTreeSet<i32>>>,
}

impl LocalProcess {
    /// Uses `shell` instead of looking one up.
    pub fn with_shell(shell: impl Into<PathBuf>) -> Self {
        Self {
            shell: Some(shell.into()),
            groups: Arc::default(),
        }
    }

    fn shell(&self) -> io::Result<PathBuf> {
        if let Some(shell) = &self.shell {
            if shell.exists() {
                return Ok(shell.clone());
            }
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("custom shell path not found: {}", shell.display()),
            ));
        }
        Ok(find_shell())
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

/// Sends `SIGKILL` to a whole process group.
fn kill_group(pgid: i32) {
    // SAFETY: `kill` has no memory-safety preconditions; a negative pid
    // addresses the process group, and a stale group only yields ESRCH.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

impl Drop for LocalProcess {
    fn drop(&mut self) {
        if let Ok(groups) = self.groups.lock() {
            for &pgid in groups.iter() {
                kill_group(pgid);
            }
        }
    }
}

impl ProcessOps for LocalProcess {
    fn exec(
        &self,
        request: ExecRequest,
        mut on_data: DataSink,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, io::Result<ExecEnd>> {
        let shell = self.shell();
        let groups = Arc::clone(&self.groups);
        Box::pin(async move {
            let shell = shell?;
            if cancel.is_cancelled() {
                return Ok(ExecEnd::Cancelled);
            }
            let (reader, writer) = io::pipe()?;
            let writer_err = writer.try_clone()?;
            let mut command = tokio::process::Command::new(&shell);
            command
                .arg("-c")
                .arg(&request.command)
                .current_dir(&request.cwd)
                .stdin(Stdio::null())
                .stdout(Stdio::from(writer))
                .stderr(Stdio::from(writer_err))
                .process_group(0)
                .kill_on_drop(true);
            for (key, value) in &request.env {
                command.env(key, value);
            }
            let mut child = command.spawn()?;
            // Our copies of the write ends must go, or the pipe never closes.
            drop(command);
            let pgid = child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .ok_or_else(|| io::Error::other("the shell exited before it got a process id"))?;
            if let Ok(mut set) = groups.lock() {
                set.insert(pgid);
            }
            let mut pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(reader.into())?;
            let mut buf = vec![0u8; 64 * 1024];
            let deadline = request.timeout.map(|t| tokio::time::Instant::now() + t);
            let sleep_until = |deadline: Option<tokio::time::Instant>| async move {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending::<()>().await,
                }
            };

            let mut pipe_open = true;
            let status = loop {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => {
                        kill_group(pgid);
                        let _ = child.wait().await;
                        forget_group(&groups, pgid);
                        return Ok(ExecEnd::Cancelled);
                    }
                    () = sleep_until(deadline) => {
                        kill_group(pgid);
                        let _ = child.wait().await;
                        forget_group(&groups, pgid);
                        return Ok(ExecEnd::TimedOut);
                    }
                    read = pipe.read(&mut buf), if pipe_open => {
                        match read {
                            Ok(0) | Err(_) => pipe_open = false,
                            Ok(n) => on_data(&buf[..n]),
                        }
                    }
                    status = child.wait() => break status?,
                }
            };

            // The shell is gone; drain what its children still write, until
            // the pipe closes or stays silent for the grace period.
            while pipe_open {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => break,
                    read = tokio::time::timeout(OUTPUT_GRACE, pipe.read(&mut buf)) => {
                        match read {
                            Ok(Ok(n)) if n > 0 => on_data(&buf[..n]),
                            _ => pipe_open = false,
                        }
                    }
                }
            }
            if !group_alive(pgid) {
                forget_group(&groups, pgid);
            }

            use std::os::unix::process::ExitStatusExt;
            Ok(ExecEnd::Exited {
                code: status.code(),
                signal: status.signal(),
            })
        })
    }
}

fn forget_group(groups: &Mutex<BTreeSet<i32>>, pgid: i32) {
    if let Ok(mut set) = groups.lock() {
        set.remove(&pgid);
    }
}

/// Whether any process of the group is still alive.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    unsafe { libc::kill(-pgid, 0) == 0 }
}
