//! The raw system calls the sandbox makes, in one place.
//!
//! Everything here that runs in a forked child of this (multi-threaded)
//! process is a thin wrapper over one system call: no allocation, no lock,
//! no panic, nothing that could wait on a lock another thread held at the
//! fork (`fork(2)`, "async-signal-safe"). Data the child needs (paths,
//! buffers) is made before the fork.

use std::io;
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::os::fd::RawFd;

/// `struct clone_args` of `clone3(2)`: the same layout on every
/// architecture (all fields 64-bit).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}

/// What a fork-like `clone3` returned.
pub(super) enum Cloned {
    /// In the parent: the child's pid, and its pidfd when asked for.
    Parent(libc::pid_t, Option<OwnedFd>),
    /// In the child.
    Child,
}

/// A fork (`clone3` without a new stack, so the child goes on on a copy
/// of the caller's) with extra `flags` (new namespaces), and a pidfd when
/// `want_pidfd`. Unlike `fork(3)` it runs no `atfork` handlers, so it may
/// be called in a forked child too.
///
/// # Safety
///
/// The child may only make async-signal-safe calls and must end with
/// [`exit`] (or an `exec`), never by returning into code that assumes it
/// is the parent.
pub(super) unsafe fn clone(flags: u64, want_pidfd: bool) -> io::Result<Cloned> {
    let mut pidfd: libc::c_int = -1;
    let mut args = CloneArgs {
        flags,
        exit_signal: libc::SIGCHLD as u64,
        ..CloneArgs::default()
    };
    if want_pidfd {
        args.flags |= libc::CLONE_PIDFD as u64;
        args.pidfd = std::ptr::addr_of_mut!(pidfd) as u64;
    }
    // SAFETY: the arguments are a valid `clone_args` of the size given;
    // without CLONE_VM the child gets a copy of the address space.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::addr_of_mut!(args),
            std::mem::size_of::<CloneArgs>(),
        )
    };
    match ret {
        0 => Ok(Cloned::Child),
        pid if pid > 0 => {
            let pidfd = (pidfd >= 0).then(|| {
                // SAFETY: the kernel just made this descriptor for us.
                unsafe { OwnedFd::from_raw_fd(pidfd) }
            });
            Ok(Cloned::Parent(
                libc::pid_t::try_from(pid).unwrap_or(-1),
                pidfd,
            ))
        }
        _ => Err(io::Error::last_os_error()),
    }
}

/// `_exit(code)`: ends the process without running anything of Rust's.
pub(super) fn exit(code: i32) -> ! {
    // SAFETY: `_exit` is async-signal-safe and never returns.
    unsafe { libc::_exit(code) }
}

/// The calling thread's `errno`.
pub(super) fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `-1` as an error, anything else as success.
pub(super) fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `-1` as an error for the `long` that `syscall(2)` returns.
fn check_long(ret: libc::c_long) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `setns(fd, flags)`: joins the namespaces `flags` names of the process
/// whose pidfd is `fd`, all at once.
pub(super) fn setns(fd: RawFd, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call on a descriptor number.
    check(unsafe { libc::setns(fd, flags) }).map(drop)
}

/// `chdir(path)`.
pub(super) fn chdir(path: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: `path` is a valid C string.
    check(unsafe { libc::chdir(path.as_ptr()) }).map(drop)
}

/// Sets `no_new_privs` and enforces the Landlock ruleset `ruleset` on the
/// calling thread (and what it will execute).
pub(super) fn landlock_restrict(ruleset: RawFd) -> io::Result<()> {
    // SAFETY: plain system calls with integer arguments.
    check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
    // SAFETY: as above.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            libc::c_long::from(ruleset),
            0 as libc::c_long,
        )
    })
}

/// The Landlock ABI version of the running kernel: `Err` with the reason
/// when it has none (`ENOSYS`: not built in; `EOPNOTSUPP`: not enabled at
/// boot).
pub(super) fn landlock_abi() -> Result<u32, i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_long = 1;
    // SAFETY: the version query takes no ruleset attributes.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0 as libc::c_long,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if ret < 0 {
        Err(errno())
    } else {
        Ok(u32::try_from(ret).unwrap_or(0))
    }
}

/// `close_range(first, last, 0)`; errors are ignored (a kernel without it
/// leaves the descriptors open, which only delays an end-of-file).
pub(super) fn close_range(first: u32, last: u32) {
    // SAFETY: closing descriptors has no memory-safety preconditions; the
    // caller owns what it closes.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_long::from(first),
            libc::c_long::from(last),
            0 as libc::c_long,
        );
    }
}

/// Sets the disposition of every catchable signal to `handler` (`SIG_DFL`
/// or `SIG_IGN`), except `default`'s, which gets `SIG_DFL`.
pub(super) fn set_all_signals(handler: libc::sighandler_t, default: libc::c_int) {
    // SAFETY: a zeroed sigaction with a plain handler value and an empty
    // mask is valid; sigaction is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        libc::sigemptyset(&mut action.sa_mask);
        // 1 to 64: every signal number Linux has (glibc refuses the two it
        // keeps for itself, which is harmless).
        for signal in 1..=64 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                action.sa_sigaction = if signal == default {
                    libc::SIG_DFL
                } else {
                    handler
                };
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
}

/// Waits for the child `pid` to end; its wait status.
pub(super) fn wait_for(pid: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status: libc::c_int = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer.
        let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
        if ret == pid {
            return Ok(status);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Ends this process the way a child ended (wait status `status`): with
/// its exit code, or killed by the same signal (without a core dump).
pub(super) fn end_like(status: libc::c_int) -> ! {
    if libc::WIFEXITED(status) {
        exit(libc::WEXITSTATUS(status));
    }
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        // SAFETY: async-signal-safe calls with valid arguments: no core
        // file of this copy of the parent, the signal's default action,
        // unblocked, then sent to ourselves.
        unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &action, std::ptr::null_mut());
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, signal);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), signal);
        }
        exit(128 + signal);
    }
    exit(127)
}

/// Sends `signal` to the process of `pidfd`.
pub(super) fn pidfd_kill(pidfd: RawFd, signal: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call; a pidfd of an ended process yields ESRCH.
    check_long(unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            libc::c_long::from(pidfd),
            libc::c_long::from(signal),
            std::ptr::null::<libc::siginfo_t>(),
            0 as libc::c_long,
        )
    })
}

/// A pidfd for `pid` (close-on-exec).
pub(super) fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: plain system call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_pidfd_open,
            libc::c_long::from(pid),
            0 as libc::c_long,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))?;
    // SAFETY: the kernel just made this descriptor for us.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Marks every descriptor from `first` on close-on-exec
/// (`close_range(first, ~0, CLOSE_RANGE_CLOEXEC)`, Linux 5.11); errors are
/// ignored.
pub(super) fn cloexec_from(first: u32) {
    const CLOSE_RANGE_CLOEXEC: libc::c_long = 1 << 2;
    // SAFETY: only descriptor flags change.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_long::from(first),
            libc::c_long::from(u32::MAX),
            CLOSE_RANGE_CLOEXEC,
        );
    }
}

/// The stack of a clone that shares this process's memory (spawn.rs's
/// helper and program, the init): raw system calls only, a few hundred
/// bytes deep.
const STACK_BYTES: usize = 64 * 1024;

/// A stack mapped for a clone, unmapped when dropped.
#[derive(Debug)]
pub(super) struct Stack {
    base: *mut libc::c_void,
}

impl Stack {
    pub(super) fn new() -> io::Result<Self> {
        // SAFETY: an anonymous private mapping; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                STACK_BYTES,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { base })
    }

    /// The top (stacks grow down on the architectures Linux runs on here).
    pub(super) fn top(&self) -> *mut libc::c_void {
        // SAFETY: one past the end of the mapping, which is page-aligned.
        unsafe { self.base.cast::<u8>().add(STACK_BYTES).cast() }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: our own mapping, no longer used (the clones have ended
        // or executed).
        unsafe {
            libc::munmap(self.base, STACK_BYTES);
        }
    }
}

// SAFETY: the mapping belongs to whoever holds the Stack; moving that to
// another thread (the init's reaper) moves the ownership.
unsafe impl Send for Stack {}

/// Every signal blocked on this thread while it lives (so that no handler
/// of this process runs on a clone's stack before it resets them).
pub(super) struct SignalsBlocked {
    old: libc::sigset_t,
}

impl SignalsBlocked {
    pub(super) fn new() -> Self {
        // SAFETY: zeroed sigsets are valid for sigfillset and as
        // out-parameters.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            Self { old }
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}
