//! Putting one program into a sandbox, in the forked child just before
//! it executes (`pre_exec`): only raw system calls there (sys.rs).
//!
//! 1. Join the sandbox's namespaces through its init's pidfd (user, then
//!    PID and mount, network), all in one `setns`; after joining a mount
//!    namespace the working directory is entered again.
//! 2. With a PID namespace, fork: joining one only places the children
//!    of the caller in it. The child goes on to execute the program; this
//!    process, the one the caller started and waits for, closes every
//!    descriptor (so the program's pipes end when the program's do),
//!    ignores the signals a caller sends a command's group (the program
//!    gets them too, and decides), waits for the program, and ends the
//!    way it ended (its exit code, or the same signal). The caller's view
//!    does not change: the pid it has ends when the program does, with
//!    its status, and the program is in its process group.
//! 3. Enforce the Landlock ruleset (with `no_new_privs`), and mark every
//!    descriptor but the standard streams close-on-exec.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use super::sys;

/// What to do in the child; made before the fork.
#[derive(Debug)]
pub(super) struct Enter {
    /// The init's pidfd and the namespaces to join, if any (held, so that
    /// the descriptor is open until the program has joined).
    pub join: Option<(Arc<OwnedFd>, libc::c_int)>,
    /// Fork after joining (a PID namespace).
    pub fork: bool,
    /// The working directory to enter again after joining a mount
    /// namespace.
    pub cwd: Option<CString>,
    /// The Landlock ruleset to enforce, if any.
    pub landlock: Option<Arc<OwnedFd>>,
}

impl Enter {
    /// Runs the steps.
    ///
    /// # Safety
    ///
    /// Only in a forked child before `exec` (`CommandExt::pre_exec`).
    pub(super) unsafe fn run(&self) -> io::Result<()> {
        if let Some((pidfd, flags)) = &self.join {
            sys::setns(pidfd.as_raw_fd(), *flags)?;
            if let Some(cwd) = &self.cwd {
                sys::chdir(cwd)?;
            }
        }
        if self.fork {
            // SAFETY: the child returns to the standard library's code
            // between pre_exec and exec, which is what a forked child of
            // `Command::spawn` runs anyway; this process ends in
            // `supervise` without returning.
            match unsafe { sys::clone(0, false) }? {
                sys::Cloned::Child => {}
                sys::Cloned::Parent(pid, _) => supervise(pid),
            }
        }
        if let Some(ruleset) = &self.landlock {
            sys::landlock_restrict(ruleset.as_raw_fd())?;
        }
        // Only the standard streams reach the program (and the standard
        // library's own report pipe, close-on-exec already): an inherited
        // descriptor would carry access Landlock never checks again.
        sys::cloexec_from(3);
        Ok(())
    }
}

/// The process the caller started, once the program runs in its child:
/// see the module's documentation.
fn supervise(pid: libc::pid_t) -> ! {
    sys::close_range(0, u32::MAX);
    sys::set_all_signals(libc::SIG_IGN, libc::SIGCHLD);
    match sys::wait_for(pid) {
        Ok(status) => sys::end_like(status),
        Err(_) => sys::exit(127),
    }
}
