//! Starting a program in a sandbox without copying this process.
//!
//! `Command::spawn` with a `pre_exec` step forks: the child gets a copy of
//! this whole process's page tables, and joining a PID namespace takes a
//! second fork (enter.rs). For bash's commands, which start by the
//! thousand, that copying was most of the sandbox's cost. Here, as
//! `posix_spawn` does, nothing is copied:
//!
//! 1. This thread blocks every signal and starts a helper with
//!    `clone(CLONE_VM | CLONE_VFORK)` on a stack of its own: the helper
//!    shares this process's memory, and this thread waits until the
//!    helper has ended.
//! 2. The helper resets the signal handlers it inherited, puts the
//!    program's standard streams in place, joins the sandbox's namespaces
//!    (`setns` through the init's pidfd), enters the working directory,
//!    and enforces the Landlock ruleset.
//! 3. It starts the program's process the same way, with `CLONE_PARENT`
//!    added (so the program is *this* process's child, in the sandbox's
//!    PID namespace); that process makes its own session
//!    or process group, unblocks signals and executes the program. Its
//!    `exec` lets the helper go on, and the helper ends, which lets this
//!    thread go on.
//!
//! The helper and the program's process run only raw system calls on
//! data made before step 1 (they share this process's memory and its
//! thread's `errno`; this thread is stopped meanwhile, as for
//! `posix_spawn`). An error of any step is left in the shared [`Plan`]
//! and returned here.
//!
//! [`SandboxChild`] is the started program: its pid, a pidfd opened for it once
//! the helper has ended (it cannot be reused before this process reaps
//! it), its exit awaited on that pidfd, and `SIGKILL` through it;
//! dropping it unwaited kills it.

use std::ffi::CString;
use std::ffi::OsStr;
use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use tokio::io::unix::AsyncFd;

use super::sys;

/// What to start: made by the caller, checked and laid out by [`spawn`].
#[derive(Debug)]
pub(crate) struct Program<'a> {
    /// The program's path (absolute, or relative to `cwd`).
    pub path: &'a OsStr,
    /// Its arguments, `argv[0]` included.
    pub args: &'a [&'a OsStr],
    /// Its whole environment.
    pub env: &'a [(&'a OsStr, &'a OsStr)],
    /// Its working directory.
    pub cwd: &'a OsStr,
    /// Its standard input, output and error (descriptors of the caller,
    /// open during the call).
    pub stdio: [RawFd; 3],
    /// A session of its own (`setsid`), else a process group of its own.
    pub new_session: bool,
}

/// Why [`spawn`] failed.
#[derive(Debug)]
pub(crate) enum SpawnError {
    /// The program could not be executed (the OS's error).
    Exec(io::Error),
    /// The sandbox could not be entered, or the process made.
    Setup(io::Error),
}

impl From<io::Error> for SpawnError {
    fn from(err: io::Error) -> Self {
        Self::Setup(err)
    }
}

/// Where the sandbox is, for [`spawn`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Where {
    /// The init's pidfd and the namespaces to join, if any.
    pub join: Option<(RawFd, libc::c_int)>,
    /// The Landlock ruleset, if any.
    pub landlock: Option<RawFd>,
}

/// The steps the helper and the program's process take, as an error
/// names them.
const STEP_NAMES: [&str; 8] = [
    "starting it",
    "putting its standard streams in place",
    "joining the sandbox's namespaces",
    "entering the working directory",
    "enforcing the Landlock ruleset",
    "starting its process",
    "making its session or process group",
    "executing it",
];
const STEP_STDIO: libc::c_int = 1;
const STEP_JOIN: libc::c_int = 2;
const STEP_CWD: libc::c_int = 3;
const STEP_LANDLOCK: libc::c_int = 4;
const STEP_CLONE: libc::c_int = 5;
const STEP_SESSION: libc::c_int = 6;
const STEP_EXEC: libc::c_int = 7;

/// Everything the helper and the program's process read and write, in
/// this process's memory (they share it).
#[repr(C)]
struct Plan {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    stdio: [libc::c_int; 3],
    join_fd: libc::c_int,
    join_flags: libc::c_int,
    landlock: libc::c_int,
    new_session: bool,
    program_stack: *mut libc::c_void,
    // Results.
    program_pid: libc::c_int,
    failed_step: libc::c_int,
    errno: libc::c_int,
}

fn c_string(text: &OsStr, what: &str) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the program's {what} holds a NUL byte"),
        )
    })
}

/// Starts `program` in the sandbox `place` (see the module
/// documentation). Must be called inside a Tokio runtime (its exit is
/// awaited on the runtime's reactor).
pub(super) fn spawn(program: &Program<'_>, place: Where) -> Result<SandboxChild, SpawnError> {
    let path = c_string(program.path, "path")?;
    let cwd = c_string(program.cwd, "working directory")?;
    let args = program
        .args
        .iter()
        .map(|arg| c_string(arg, "argument"))
        .collect::<io::Result<Vec<_>>>()?;
    let env = program
        .env
        .iter()
        .map(|(key, value)| {
            let mut pair = key.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            c_string(OsStr::from_bytes(&pair), "environment")
        })
        .collect::<io::Result<Vec<_>>>()?;
    let argv: Vec<*const libc::c_char> = args
        .iter()
        .map(|arg| arg.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    let envp: Vec<*const libc::c_char> = env
        .iter()
        .map(|pair| pair.as_ptr())
        .chain([std::ptr::null()])
        .collect();
    // Standard streams numbered 0 to 2 in this process would be replaced
    // before they are used: use copies above them.
    let mut copies = Vec::new();
    let mut stdio = program.stdio;
    for fd in &mut stdio {
        if *fd <= 2 {
            // SAFETY: duplicating a descriptor the caller holds open.
            let copy = sys::check(unsafe { libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 3) })?;
            // SAFETY: the kernel just made it.
            copies.push(unsafe { OwnedFd::from_raw_fd(copy) });
            *fd = copy;
        }
    }
    let helper_stack = sys::Stack::new()?;
    let program_stack = sys::Stack::new()?;
    let (join_fd, join_flags) = place.join.unwrap_or((-1, 0));
    let mut plan = Plan {
        path: path.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: cwd.as_ptr(),
        stdio,
        join_fd,
        join_flags,
        landlock: place.landlock.unwrap_or(-1),
        new_session: program.new_session,
        program_stack: program_stack.top(),
        program_pid: -1,
        failed_step: 0,
        errno: 0,
    };
    let helper = {
        let _blocked = sys::SignalsBlocked::new();
        // SAFETY: the helper runs `helper_main` on its own stack with a
        // pointer to `plan`, which outlives it (CLONE_VFORK: this call
        // returns once the helper has ended); see the module
        // documentation for what it does.
        unsafe {
            libc::clone(
                helper_main,
                helper_stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                std::ptr::addr_of_mut!(plan).cast(),
            )
        }
    };
    if helper == -1 {
        return Err(SpawnError::Setup(io::Error::last_os_error()));
    }
    // The helper has ended: reap it.
    let _ = sys::wait_for(helper);
    if plan.failed_step != 0 {
        if plan.program_pid > 0 {
            // The program's process ended without executing it.
            let _ = sys::wait_for(plan.program_pid);
        }
        let cause = io::Error::from_raw_os_error(plan.errno);
        if plan.failed_step == STEP_EXEC {
            return Err(SpawnError::Exec(cause));
        }
        let step = STEP_NAMES
            .get(usize::try_from(plan.failed_step).unwrap_or(0))
            .copied()
            .unwrap_or("starting it");
        return Err(SpawnError::Setup(io::Error::new(
            cause.kind(),
            format!("{step}: {cause}"),
        )));
    }
    // The program's process is this process's child (CLONE_PARENT), so
    // its pid stays its own until it is reaped here.
    let pidfd = match sys::pidfd_open(plan.program_pid) {
        Ok(pidfd) => pidfd,
        Err(err) => {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(plan.program_pid, libc::SIGKILL) };
            let _ = sys::wait_for(plan.program_pid);
            return Err(SpawnError::Setup(err));
        }
    };
    Ok(SandboxChild {
        pid: plan.program_pid,
        pidfd: watch(pidfd)?,
        status: None,
    })
}

/// The pidfd registered with the runtime's reactor, to await the
/// program's end on.
fn watch(pidfd: OwnedFd) -> Result<AsyncFd<OwnedFd>, SpawnError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(SpawnError::Setup(io::Error::other(
            "a sandboxed command must be started inside a Tokio runtime",
        )));
    }
    // SAFETY: the AsyncFd owns the descriptor for its whole life, and an
    // OwnedFd always gives the same one.
    unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }
        .map_err(|err| SpawnError::Setup(err.into_parts().1))
}

/// Records a failed step and the `errno`.
///
/// # Safety
///
/// `plan` points at the live plan.
unsafe fn fail(plan: *mut Plan, step: libc::c_int) -> libc::c_int {
    // SAFETY: the caller's guarantee.
    unsafe {
        (*plan).failed_step = step;
        (*plan).errno = sys::errno();
    }
    1
}

/// The helper (step 2 and 3 of the module documentation).
extern "C" fn helper_main(arg: *mut libc::c_void) -> libc::c_int {
    let plan = arg.cast::<Plan>();
    // SAFETY: `arg` is the plan of `spawn`, alive until this returns; only
    // raw system calls follow.
    unsafe {
        // The handlers are this process's (Rust code, Tokio's): back to
        // the default, except for ignored signals.
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for signal in 1..=64 {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_IGN
                && old.sa_sigaction != libc::SIG_DFL
            {
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
        // SIGPIPE is ignored by Rust programs; the program gets the
        // default, as `Command` gives it.
        libc::sigaction(libc::SIGPIPE, &default, std::ptr::null_mut());
        for (target, &fd) in (0..).zip(&(*plan).stdio) {
            if libc::dup2(fd, target) == -1 {
                return fail(plan, STEP_STDIO);
            }
        }
        if (*plan).join_fd >= 0 && libc::setns((*plan).join_fd, (*plan).join_flags) == -1 {
            return fail(plan, STEP_JOIN);
        }
        if libc::chdir((*plan).cwd) == -1 {
            return fail(plan, STEP_CWD);
        }
        if (*plan).landlock >= 0 && sys::landlock_restrict((*plan).landlock).is_err() {
            return fail(plan, STEP_LANDLOCK);
        }
        let pid = libc::clone(
            program_main,
            (*plan).program_stack,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT | libc::SIGCHLD,
            arg,
        );
        if pid == -1 {
            return fail(plan, STEP_CLONE);
        }
        (*plan).program_pid = pid;
    }
    0
}

/// The program's process: its session or group, signals unblocked, exec.
extern "C" fn program_main(arg: *mut libc::c_void) -> libc::c_int {
    let plan = arg.cast::<Plan>();
    // SAFETY: as in `helper_main`.
    unsafe {
        let grouped = if (*plan).new_session {
            libc::setsid()
        } else {
            libc::setpgid(0, 0)
        };
        if grouped == -1 {
            fail(plan, STEP_SESSION);
            sys::exit(127);
        }
        // Nothing but the standard streams reaches the program: a
        // descriptor this process inherited without close-on-exec (a file
        // opened for writing outside the sandbox, say) would carry access
        // Landlock never checks again.
        sys::cloexec_from(3);
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve((*plan).path, (*plan).argv, (*plan).envp);
        fail(plan, STEP_EXEC);
    }
    sys::exit(127)
}

/// A program started by [`spawn`]: this process's child.
#[derive(Debug)]
pub(crate) struct SandboxChild {
    pid: libc::pid_t,
    pidfd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
}

impl SandboxChild {
    /// Its pid (in this process's PID namespace).
    pub(crate) fn id(&self) -> u32 {
        u32::try_from(self.pid).unwrap_or(0)
    }

    /// Waits for it to end and reaps it; its status.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.status {
                return Ok(status);
            }
            if let Some(status) = self.try_reap()? {
                self.status = Some(status);
                continue;
            }
            let mut ready = self.pidfd.readable().await?;
            ready.clear_ready();
        }
    }

    /// Reaps it if it has ended.
    fn try_reap(&self) -> io::Result<Option<ExitStatus>> {
        let mut status = 0;
        // SAFETY: reaps our own child; `status` is a valid out-pointer.
        let ret = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        match ret {
            0 => Ok(None),
            pid if pid == self.pid => Ok(Some(ExitStatus::from_raw(status))),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Sends it `SIGKILL` (nothing happens once it is reaped).
    pub(crate) fn start_kill(&mut self) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        match sys::pidfd_kill(self.pidfd.get_ref().as_raw_fd(), libc::SIGKILL) {
            Err(err) if err.raw_os_error() == Some(libc::ESRCH) => Ok(()),
            other => other,
        }
    }
}

impl Drop for SandboxChild {
    /// Unwaited, it is killed, and reaped now or by a thread of its own.
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        let _ = self.start_kill();
        if matches!(self.try_reap(), Ok(Some(_))) {
            return;
        }
        let pid = self.pid;
        let _ = std::thread::Builder::new()
            .name("sandbox-reaper".to_owned())
            .spawn(move || sys::wait_for(pid));
    }
}
