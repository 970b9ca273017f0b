//! What the running kernel offers a sandbox, found out once per process.

use std::io;
use std::sync::OnceLock;

use super::init::Init;
use super::init::Spaces;
use super::sys;

/// What the kernel offers, as [`support`] found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxSupport {
    /// Landlock's ABI version, or why there is no Landlock.
    pub landlock: Result<u32, String>,
    /// Whether a process can make user, PID, mount and network namespaces
    /// and another join them (the whole way a sandbox uses them), or why
    /// not.
    pub namespaces: Result<(), String>,
}

/// What the kernel offers, probed on the first call (about 2 ms: a
/// process is started in new namespaces, and another joins them) and
/// remembered.
pub fn support() -> &'static SandboxSupport {
    static PROBED: OnceLock<SandboxSupport> = OnceLock::new();
    PROBED.get_or_init(|| SandboxSupport {
        landlock: landlock(),
        namespaces: namespaces(),
    })
}

fn landlock() -> Result<u32, String> {
    match sys::landlock_abi() {
        Ok(abi) if abi > 0 => Ok(abi),
        Ok(_) => Err("the kernel reports no Landlock ABI".to_owned()),
        Err(libc::ENOSYS) => Err(
            "the kernel has no Landlock (Linux 5.13 or later built with \
                                  CONFIG_SECURITY_LANDLOCK is needed)"
                .to_owned(),
        ),
        Err(libc::EOPNOTSUPP) => Err(
            "Landlock is not enabled at boot (add landlock to the kernel's lsm= list)".to_owned(),
        ),
        Err(errno) => Err(format!(
            "Landlock cannot be used: {}",
            io::Error::from_raw_os_error(errno)
        )),
    }
}

fn namespaces() -> Result<(), String> {
    let reason = |err: io::Error| format!("user namespaces cannot be used: {err}");
    let mut init = Init::start(
        Spaces {
            pid: true,
            net: true,
        },
        &[],
    )
    .map_err(reason)?;
    let pidfd = init.pidfd();
    let flags = init.spaces().flags();
    // A child joins the namespaces and forks into the PID namespace, as
    // every program of a sandbox will; it exits with the errno of a
    // failed step.
    // SAFETY: the child makes raw system calls only and ends with _exit.
    let cloned = unsafe { sys::clone(0, false) }.map_err(reason)?;
    let pid = match cloned {
        sys::Cloned::Child => {
            use std::os::fd::AsRawFd;
            if let Err(err) = sys::setns(pidfd.as_raw_fd(), flags) {
                sys::exit(err.raw_os_error().unwrap_or(libc::EIO));
            }
            // SAFETY: as above.
            match unsafe { sys::clone(0, false) } {
                Ok(sys::Cloned::Child) => sys::exit(0),
                Ok(sys::Cloned::Parent(pid, _)) => match sys::wait_for(pid) {
                    Ok(0) => sys::exit(0),
                    _ => sys::exit(libc::ECHILD),
                },
                Err(err) => sys::exit(err.raw_os_error().unwrap_or(libc::EIO)),
            }
        }
        sys::Cloned::Parent(pid, _) => pid,
    };
    let status = sys::wait_for(pid).map_err(reason)?;
    init.end();
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    let errno = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        libc::EINTR
    };
    Err(format!(
        "user namespaces cannot be joined: {}",
        io::Error::from_raw_os_error(errno)
    ))
}
