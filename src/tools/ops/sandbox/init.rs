//! The process that holds a sandbox's namespaces.
//!
//! One per sandbox, started when its first program is: a child of this
//! process made by `clone3` in a new user namespace (where this user is
//! itself: the same uid and gid, or every id for root, so files keep
//! their owners and nothing gains a privilege outside), and, as asked, a
//! new PID namespace with a mount namespace of its own (it is that
//! namespace's PID 1, with `/proc` mounted afresh so that a program sees
//! its own pids there) and a new network namespace (only a loopback
//! interface, brought up; a listening socket on 127.0.0.1 for each port
//! the harness lets through, handed back to the parent, which relays it).
//!
//! Every program of the sandbox then joins these namespaces (`setns`
//! through the init's pidfd). A daemon that leaves its process group is
//! re-parented to the init, which reaps it; when the init ends (the
//! sandbox is dropped, or this process dies and the init sees its control
//! socket close), the kernel kills every process of the PID namespace, so
//! nothing outlives the sandbox.
//!
//! The child runs only raw system calls between the `clone3` and its end
//! (this process has other threads; see sys.rs); what it needs is made
//! before.

use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::Duration;

use super::raw;
use super::sys;

/// The most loopback ports one sandbox lets through.
pub(super) const MAX_PORTS: usize = 16;

/// How long the parent waits for the init to report that it is ready.
const READY_WAIT: Duration = Duration::from_secs(5);

/// How long dropping an init waits for its namespace to empty.
const END_WAIT: Duration = Duration::from_secs(2);

/// The new namespaces of a sandbox (a user namespace always comes with
/// them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Spaces {
    /// A PID namespace (and a mount namespace for its `/proc`).
    pub pid: bool,
    /// A network namespace with only a loopback interface.
    pub net: bool,
}

impl Spaces {
    /// The `CLONE_NEW*` flags, which `setns` takes too.
    pub(super) fn flags(self) -> libc::c_int {
        let mut flags = libc::CLONE_NEWUSER;
        if self.pid {
            flags |= libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        }
        if self.net {
            flags |= libc::CLONE_NEWNET;
        }
        flags
    }
}

/// The steps of the init's start, as it reports a failure.
const STEPS: [&str; 7] = [
    "ready",
    "setting up its signals",
    "making the mounts its own",
    "mounting /proc",
    "bringing up the loopback interface",
    "opening a loopback port",
    "reporting to the harness",
];
const STEP_SIGNALS: u32 = 1;
const STEP_SLAVE: u32 = 2;
const STEP_PROC: u32 = 3;
const STEP_LOOPBACK: u32 = 4;
const STEP_PORT: u32 = 5;

/// A started init.
#[derive(Debug)]
pub(super) struct Init {
    pid: libc::pid_t,
    /// Shared with the programs being started, so that it stays open until
    /// they have joined.
    pidfd: Arc<OwnedFd>,
    /// Our end of the control socket: when it closes, the init ends.
    control: Option<OwnedFd>,
    /// The listening sockets inside the namespace, by port.
    listeners: Vec<(u16, OwnedFd)>,
    /// The namespaces the init holds.
    spaces: Spaces,
    /// The init's own stack, when it shares this process's memory.
    stack: Option<sys::Stack>,
    ended: bool,
}

/// What the child needs, made before the clone.
struct Plan<'a> {
    sock: RawFd,
    spaces: Spaces,
    ports: &'a [u16],
    slash: &'a std::ffi::CStr,
    proc_dir: &'a std::ffi::CStr,
    proc_type: &'a std::ffi::CStr,
}

impl Init {
    /// Starts an init holding `spaces`, with a listening socket on
    /// 127.0.0.1 inside the network namespace for each of `ports`.
    /// Blocks until it is ready (about a millisecond).
    pub(super) fn start(spaces: Spaces, ports: &[u16]) -> io::Result<Self> {
        if ports.len() > MAX_PORTS {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("at most {MAX_PORTS} loopback ports can be let through"),
            ));
        }
        let (ours, theirs) = seqpacket_pair().map_err(|err| failed("a control socket", err))?;
        let plan = Plan {
            sock: theirs.as_raw_fd(),
            spaces,
            ports,
            slash: c"/",
            proc_dir: c"/proc",
            proc_type: c"proc",
        };
        let (pid, pidfd, stack) = clone_init(&plan)?;
        drop(theirs);
        let mut init = Init {
            pid,
            pidfd: Arc::new(pidfd),
            control: Some(ours),
            listeners: Vec::new(),
            spaces,
            stack,
            ended: false,
        };
        write_id_maps(pid).map_err(|err| failed("its user and group id maps", err))?;
        init.handshake(ports)?;
        Ok(init)
    }

    /// Tells the init to go on, and reads its report.
    fn handshake(&mut self, ports: &[u16]) -> io::Result<()> {
        let control = self.control.as_ref().map(AsRawFd::as_raw_fd).unwrap_or(-1);
        // SAFETY: one byte from a valid buffer.
        let sent = unsafe { libc::write(control, [1u8].as_ptr().cast(), 1) };
        if sent != 1 {
            return Err(failed("the go-ahead", io::Error::last_os_error()));
        }
        let mut poll = libc::pollfd {
            fd: control,
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(READY_WAIT.as_millis()).unwrap_or(5000);
        // SAFETY: one valid pollfd.
        let ready = loop {
            let ret = unsafe { libc::poll(&mut poll, 1, millis) };
            if ret >= 0 || sys::errno() != libc::EINTR {
                break ret;
            }
        };
        if ready <= 0 {
            return Err(failed(
                "its report",
                io::Error::new(io::ErrorKind::TimedOut, "no answer within 5 s"),
            ));
        }
        let (step, errno, fds) = receive_report(control)?;
        if step != 0 {
            let what = STEPS.get(step as usize).copied().unwrap_or("its start");
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the namespaces could not be set up: {what}: {}",
                    io::Error::from_raw_os_error(errno)
                ),
            ));
        }
        if fds.len() != ports.len() {
            return Err(failed(
                "its loopback ports",
                io::Error::from_raw_os_error(libc::EPROTO),
            ));
        }
        self.listeners = ports.iter().copied().zip(fds).collect();
        Ok(())
    }

    /// The init's pidfd, which programs join the namespaces through.
    pub(super) fn pidfd(&self) -> Arc<OwnedFd> {
        Arc::clone(&self.pidfd)
    }

    /// The namespaces it holds.
    pub(super) fn spaces(&self) -> Spaces {
        self.spaces
    }

    /// Takes the listening sockets (127.0.0.1 inside the namespace), by
    /// port.
    pub(super) fn take_listeners(&mut self) -> Vec<(u16, OwnedFd)> {
        std::mem::take(&mut self.listeners)
    }

    /// Ends the init (and with it every process of its PID namespace) and
    /// waits, at most two seconds, until it has ended; a straggler is left
    /// to a thread that reaps it.
    pub(super) fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.control = None;
        let _ = sys::pidfd_kill(self.pidfd.as_raw_fd(), libc::SIGKILL);
        let mut poll = libc::pollfd {
            fd: self.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let millis = libc::c_int::try_from(END_WAIT.as_millis()).unwrap_or(2000);
        // SAFETY: one valid pollfd; a pidfd is readable once the process
        // has ended, which for a PID namespace's init is after every
        // other process of it has.
        unsafe { libc::poll(&mut poll, 1, millis) };
        let mut status = 0;
        // SAFETY: reaps our own child if it has ended.
        let reaped = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if reaped == self.pid {
            self.stack = None;
            return;
        }
        // Still ending: a thread waits for it, and only then lets go of
        // the stack it may still run on (without a thread, the stack
        // stays mapped rather than pulled from under a running process).
        let pid = self.pid;
        let stack = std::mem::ManuallyDrop::new(self.stack.take());
        let _ = std::thread::Builder::new()
            .name("sandbox-reaper".to_owned())
            .spawn(move || {
                let _ = sys::wait_for(pid);
                drop(std::mem::ManuallyDrop::into_inner(stack));
            });
    }
}

impl Drop for Init {
    fn drop(&mut self) {
        self.end();
    }
}

/// An error of a step of the start.
fn failed(what: &str, err: io::Error) -> io::Error {
    io::Error::new(
        err.kind(),
        format!("the sandbox could not make {what}: {err}"),
    )
}

/// A connected pair of `SOCK_SEQPACKET` Unix sockets (close-on-exec).
fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [-1; 2];
    // SAFETY: `fds` has room for the two descriptors.
    sys::check(unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    })?;
    // SAFETY: the kernel just made both descriptors for us.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Maps this user into the init's user namespace: for root, every id onto
/// itself (root may; files keep their owners and root its reach); for
/// anyone else, their own uid and gid onto themselves, after refusing
/// `setgroups` as the kernel requires.
fn write_id_maps(pid: libc::pid_t) -> io::Result<()> {
    // SAFETY: no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let proc = format!("/proc/{pid}");
    if uid == 0 {
        std::fs::write(format!("{proc}/uid_map"), "0 0 4294967295\n")?;
        std::fs::write(format!("{proc}/gid_map"), "0 0 4294967295\n")?;
    } else {
        std::fs::write(format!("{proc}/uid_map"), format!("{uid} {uid} 1\n"))?;
        std::fs::write(format!("{proc}/setgroups"), "deny\n")?;
        std::fs::write(format!("{proc}/gid_map"), format!("{gid} {gid} 1\n"))?;
    }
    Ok(())
}

/// The report's fixed part: the failed step (0: ready) and its errno.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Report {
    step: u32,
    errno: i32,
}

/// Room for the control message of [`MAX_PORTS`] descriptors.
const CMSG_WORDS: usize = 32;

/// Reads the init's report and the descriptors that came with it.
fn receive_report(control: RawFd) -> io::Result<(u32, i32, Vec<OwnedFd>)> {
    let mut report = Report::default();
    let mut iov = libc::iovec {
        iov_base: std::ptr::addr_of_mut!(report).cast(),
        iov_len: std::mem::size_of::<Report>(),
    };
    let mut space = [0u64; CMSG_WORDS];
    // SAFETY: a zeroed msghdr is valid; the pointers set below are to
    // live buffers of the sizes given.
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    message.msg_control = space.as_mut_ptr().cast();
    message.msg_controllen = std::mem::size_of_val(&space) as _;
    // SAFETY: as above.
    let got = unsafe { libc::recvmsg(control, &mut message, libc::MSG_CMSG_CLOEXEC) };
    if got < 0 {
        return Err(failed("its report", io::Error::last_os_error()));
    }
    if usize::try_from(got).ok() != Some(std::mem::size_of::<Report>()) {
        return Err(failed(
            "its report",
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the init ended before it reported",
            ),
        ));
    }
    let mut fds = Vec::new();
    // SAFETY: the control buffer was filled by the kernel; the CMSG
    // macros walk it within `msg_controllen`.
    unsafe {
        let mut header = libc::CMSG_FIRSTHDR(&message);
        while !header.is_null() {
            if (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(header).cast::<libc::c_int>();
                let len = (*header).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for index in 0..len / std::mem::size_of::<libc::c_int>() {
                    fds.push(OwnedFd::from_raw_fd(std::ptr::read_unaligned(
                        data.add(index),
                    )));
                }
            }
            header = libc::CMSG_NXTHDR(&message, header);
        }
    }
    Ok((report.step, report.errno, fds))
}

/// Starts the init: sharing this process's memory on a stack of its own
/// where the architecture allows (nothing is copied, and nothing is torn
/// down when it ends), else as a copy of this process. Its pid, its pidfd
/// and its stack.
fn clone_init(plan: &Plan<'_>) -> io::Result<(libc::pid_t, OwnedFd, Option<sys::Stack>)> {
    let what = "a process in new namespaces";
    if raw::SHARES_MEMORY {
        let stack = sys::Stack::new().map_err(|err| failed(what, err))?;
        let mut pidfd: libc::c_int = -1;
        let pid = {
            // No handler of this process may run in the init before it
            // resets them.
            let _blocked = sys::SignalsBlocked::new();
            // SAFETY: the init runs `init_main` on its own stack with a
            // pointer to `plan`, which it reads only until it reports
            // (while `start` waits for that report); it makes only the
            // raw system calls of raw.rs, which leave this thread's errno
            // alone, and ends with exit_group. CLONE_PIDFD writes the
            // pidfd into `pidfd`.
            unsafe {
                libc::clone(
                    init_main,
                    stack.top(),
                    libc::CLONE_VM | libc::CLONE_PIDFD | spaces_flags(plan) | libc::SIGCHLD,
                    std::ptr::from_ref(plan).cast_mut().cast(),
                    std::ptr::addr_of_mut!(pidfd),
                )
            }
        };
        if pid == -1 {
            return Err(failed(what, io::Error::last_os_error()));
        }
        // SAFETY: the kernel made this descriptor for us (CLONE_PIDFD).
        let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
        return Ok((pid, pidfd, Some(stack)));
    }
    // SAFETY: the child runs `child_main`, which only makes raw system
    // calls on its copy of the data made above, and ends with exit_group.
    match unsafe { sys::clone(spaces_flags(plan) as u64, true) }.map_err(|err| failed(what, err))? {
        sys::Cloned::Child => child_main(plan),
        sys::Cloned::Parent(pid, Some(pidfd)) => Ok((pid, pidfd, None)),
        sys::Cloned::Parent(pid, None) => {
            // Not reached: the kernel returns a pidfd when asked.
            let _ = sys::wait_for(pid);
            Err(failed(what, io::Error::from_raw_os_error(libc::EINVAL)))
        }
    }
}

fn spaces_flags(plan: &Plan<'_>) -> libc::c_int {
    plan.spaces.flags()
}

/// The init's entry when it shares this process's memory.
extern "C" fn init_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the plan `start` made, alive until the init reports.
    let plan = unsafe { &*arg.cast_const().cast::<Plan<'_>>() };
    child_main(plan)
}

/// A system call of the init: raw.rs's, without errno.
fn call(nr: libc::c_long, args: [usize; 6]) -> Result<usize, i32> {
    // SAFETY: each caller below passes arguments valid for `nr`.
    unsafe { raw::call(nr, args) }
}

/// The descriptor the init keeps its control socket on.
const CONTROL: RawFd = 3;

/// The init itself: never returns. Raw system calls only (raw.rs).
fn child_main(plan: &Plan<'_>) -> ! {
    use raw::int;
    use raw::ptr;
    // Keep only the control socket, as descriptor 3: nothing of the
    // parent's (its standard streams, other sandboxes' control sockets)
    // stays open here.
    if plan.sock != CONTROL
        && call(
            libc::SYS_dup3,
            [int(plan.sock), int(CONTROL), int(libc::O_CLOEXEC), 0, 0, 0],
        )
        .is_err()
    {
        raw::exit(1);
    }
    let _ = call(libc::SYS_close_range, [0, 2, 0, 0, 0, 0]);
    let _ = call(libc::SYS_close_range, [4, u32::MAX as usize, 0, 0, 0, 0]);
    // Every handler back to the default (a zeroed kernel sigaction is
    // SIG_DFL with no flags on every architecture), then only SIGCHLD
    // blocked, read from a signalfd.
    let default = [0u64; 4];
    for signal in 1..=64usize {
        let _ = call(
            libc::SYS_rt_sigaction,
            [signal, ptr(default.as_ptr()), 0, 8, 0, 0],
        );
    }
    let chld: u64 = 1 << (libc::SIGCHLD - 1);
    let signals = match call(
        libc::SYS_rt_sigprocmask,
        [int(libc::SIG_SETMASK), ptr(&chld), 0, 8, 0, 0],
    )
    .and_then(|_| {
        call(
            libc::SYS_signalfd4,
            [int(-1), ptr(&chld), 8, int(libc::SFD_CLOEXEC), 0, 0],
        )
    }) {
        Ok(fd) => int_of(fd),
        Err(errno) => child_fail(STEP_SIGNALS, errno),
    };
    // Wait for the parent to write the id maps.
    let mut byte = 0u8;
    if call(
        libc::SYS_read,
        [int(CONTROL), ptr(&raw mut byte), 1, 0, 0, 0],
    ) != Ok(1)
    {
        raw::exit(0);
    }
    if plan.spaces.pid {
        let flags = (libc::MS_REC | libc::MS_SLAVE) as usize;
        if let Err(errno) = call(
            libc::SYS_mount,
            [0, ptr(plan.slash.as_ptr()), 0, flags, 0, 0],
        ) {
            child_fail(STEP_SLAVE, errno);
        }
        let flags = (libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC) as usize;
        let proc_type = ptr(plan.proc_type.as_ptr());
        if let Err(errno) = call(
            libc::SYS_mount,
            [
                proc_type,
                ptr(plan.proc_dir.as_ptr()),
                proc_type,
                flags,
                0,
                0,
            ],
        ) {
            child_fail(STEP_PROC, errno);
        }
    }
    let mut listeners = [-1; MAX_PORTS];
    let count = plan.ports.len().min(MAX_PORTS);
    if plan.spaces.net {
        if let Err(errno) = loopback_up() {
            child_fail(STEP_LOOPBACK, errno);
        }
        for (slot, &port) in listeners.iter_mut().zip(plan.ports) {
            match listen_loopback(port) {
                Ok(fd) => *slot = fd,
                Err(errno) => child_fail(STEP_PORT, errno),
            }
        }
    }
    if send_report(Report::default(), &listeners[..count]).is_err() {
        raw::exit(1);
    }
    for &fd in &listeners[..count] {
        let _ = call(libc::SYS_close, [int(fd), 0, 0, 0, 0, 0]);
    }
    child_loop(signals)
}

/// A descriptor returned by a system call.
fn int_of(value: usize) -> RawFd {
    RawFd::try_from(value).unwrap_or(-1)
}

/// Brings `lo` up in the new network namespace.
fn loopback_up() -> Result<(), i32> {
    use raw::int;
    use raw::ptr;
    let sock = int_of(call(
        libc::SYS_socket,
        [
            int(libc::AF_INET),
            int(libc::SOCK_DGRAM | libc::SOCK_CLOEXEC),
            0,
            0,
            0,
            0,
        ],
    )?);
    // SAFETY: a zeroed ifreq is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    let result = call(
        libc::SYS_ioctl,
        [
            int(sock),
            libc::SIOCGIFFLAGS as usize,
            ptr(&raw mut request),
            0,
            0,
            0,
        ],
    )
    .and_then(|_| {
        // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
        unsafe { request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
        call(
            libc::SYS_ioctl,
            [
                int(sock),
                libc::SIOCSIFFLAGS as usize,
                ptr(&raw mut request),
                0,
                0,
                0,
            ],
        )
    });
    let _ = call(libc::SYS_close, [int(sock), 0, 0, 0, 0, 0]);
    result.map(drop)
}

/// A TCP socket listening on 127.0.0.1:`port`.
fn listen_loopback(port: u16) -> Result<RawFd, i32> {
    use raw::int;
    use raw::ptr;
    let sock = int_of(call(
        libc::SYS_socket,
        [
            int(libc::AF_INET),
            int(libc::SOCK_STREAM | libc::SOCK_CLOEXEC),
            0,
            0,
            0,
            0,
        ],
    )?);
    let one: libc::c_int = 1;
    let _ = call(
        libc::SYS_setsockopt,
        [
            int(sock),
            int(libc::SOL_SOCKET),
            int(libc::SO_REUSEADDR),
            ptr(&one),
            std::mem::size_of::<libc::c_int>(),
            0,
        ],
    );
    // SAFETY: a zeroed sockaddr_in is a valid value.
    let mut address: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    address.sin_family = libc::AF_INET as libc::sa_family_t;
    address.sin_port = port.to_be();
    address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
    let bound = call(
        libc::SYS_bind,
        [
            int(sock),
            ptr(&address),
            std::mem::size_of::<libc::sockaddr_in>(),
            0,
            0,
            0,
        ],
    )
    .and_then(|_| call(libc::SYS_listen, [int(sock), 128, 0, 0, 0, 0]));
    if let Err(errno) = bound {
        let _ = call(libc::SYS_close, [int(sock), 0, 0, 0, 0, 0]);
        return Err(errno);
    }
    Ok(sock)
}

/// Reports a failed step to the parent and ends.
fn child_fail(step: u32, errno: i32) -> ! {
    let _ = send_report(Report { step, errno }, &[]);
    raw::exit(1)
}

/// Sends the report, with `fds` attached.
fn send_report(mut report: Report, fds: &[RawFd]) -> Result<(), i32> {
    let mut iov = libc::iovec {
        iov_base: std::ptr::addr_of_mut!(report).cast(),
        iov_len: std::mem::size_of::<Report>(),
    };
    let mut space = [0u64; CMSG_WORDS];
    // SAFETY: a zeroed msghdr is valid; the control buffer has room for
    // MAX_PORTS descriptors and `fds` is at most that long; the CMSG
    // helpers only compute addresses within it.
    let message = unsafe {
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        if !fds.is_empty() {
            let bytes = std::mem::size_of_val(fds) as libc::c_uint;
            message.msg_control = space.as_mut_ptr().cast();
            message.msg_controllen = libc::CMSG_SPACE(bytes) as _;
            let header = libc::CMSG_FIRSTHDR(&message);
            (*header).cmsg_level = libc::SOL_SOCKET;
            (*header).cmsg_type = libc::SCM_RIGHTS;
            (*header).cmsg_len = libc::CMSG_LEN(bytes) as _;
            let data = libc::CMSG_DATA(header).cast::<libc::c_int>();
            for (index, &fd) in fds.iter().enumerate() {
                std::ptr::write_unaligned(data.add(index), fd);
            }
        }
        message
    };
    call(
        libc::SYS_sendmsg,
        [
            raw::int(CONTROL),
            raw::ptr(&message),
            raw::int(libc::MSG_NOSIGNAL),
            0,
            0,
            0,
        ],
    )
    .map(drop)
}

/// Reaps whatever is re-parented to the init, until the control socket
/// closes (the sandbox was dropped, or the harness died).
fn child_loop(signals: RawFd) -> ! {
    use raw::int;
    use raw::ptr;
    let mut polls = [
        libc::pollfd {
            fd: CONTROL,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: signals,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let mut buf = [0u8; 128];
    let reap = int(libc::WNOHANG | libc::__WALL);
    loop {
        if call(libc::SYS_ppoll, [ptr(polls.as_mut_ptr()), 2, 0, 0, 8, 0]).is_err() {
            continue;
        }
        if polls[0].revents != 0 {
            match call(
                libc::SYS_read,
                [int(CONTROL), ptr(buf.as_mut_ptr()), buf.len(), 0, 0, 0],
            ) {
                Ok(0) | Err(_) => raw::exit(0),
                Ok(_) => {}
            }
        }
        if polls[1].revents != 0 {
            let _ = call(
                libc::SYS_read,
                [int(signals), ptr(buf.as_mut_ptr()), buf.len(), 0, 0, 0],
            );
            while matches!(call(libc::SYS_wait4, [int(-1), 0, reap, 0, 0, 0]), Ok(pid) if pid > 0) {
            }
        }
    }
}
