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
        // SAFETY: the child runs `child_main`, which only makes raw system
        // calls on data made above, and ends with `_exit`.
        let cloned = unsafe { sys::clone(spaces.flags() as u64, true) }
            .map_err(|err| failed("a process in new namespaces (clone3)", err))?;
        let (pid, pidfd) = match cloned {
            sys::Cloned::Child => child_main(&plan),
            sys::Cloned::Parent(pid, Some(pidfd)) => (pid, pidfd),
            sys::Cloned::Parent(pid, None) => {
                // Not reached: the kernel returns a pidfd when asked.
                let _ = sys::wait_for(pid);
                return Err(failed(
                    "a pidfd",
                    io::Error::from_raw_os_error(libc::EINVAL),
                ));
            }
        };
        drop(theirs);
        let mut init = Init {
            pid,
            pidfd: Arc::new(pidfd),
            control: Some(ours),
            listeners: Vec::new(),
            spaces,
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
        if reaped != self.pid {
            let pid = self.pid;
            let _ = std::thread::Builder::new()
                .name("sandbox-reaper".to_owned())
                .spawn(move || sys::wait_for(pid));
        }
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

/// The init itself, in the child: never returns.
fn child_main(plan: &Plan<'_>) -> ! {
    // Keep only the control socket, as descriptor 3: nothing of the
    // parent's (its standard streams, other sandboxes' control sockets)
    // stays open here.
    const CONTROL: RawFd = 3;
    // SAFETY: raw system calls on descriptor numbers.
    unsafe {
        if plan.sock != CONTROL && libc::dup3(plan.sock, CONTROL, libc::O_CLOEXEC) == -1 {
            sys::exit(1);
        }
    }
    sys::close_range(0, 2);
    sys::close_range(4, u32::MAX);
    sys::set_all_signals(libc::SIG_DFL, 0);
    let signals = match child_signalfd() {
        Ok(fd) => fd,
        Err(errno) => child_fail(CONTROL, STEP_SIGNALS, errno),
    };
    // Wait for the parent to write the id maps.
    let mut byte = 0u8;
    // SAFETY: one byte into a valid buffer.
    if unsafe { libc::read(CONTROL, std::ptr::addr_of_mut!(byte).cast(), 1) } != 1 {
        sys::exit(0);
    }
    if plan.spaces.pid {
        // SAFETY: valid C strings; mount(2) is a plain system call.
        unsafe {
            let none = std::ptr::null::<libc::c_char>();
            if libc::mount(
                none,
                plan.slash.as_ptr(),
                none,
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ) != 0
            {
                child_fail(CONTROL, STEP_SLAVE, sys::errno());
            }
            if libc::mount(
                plan.proc_type.as_ptr(),
                plan.proc_dir.as_ptr(),
                plan.proc_type.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            ) != 0
            {
                child_fail(CONTROL, STEP_PROC, sys::errno());
            }
        }
    }
    let mut listeners = [-1; MAX_PORTS];
    if plan.spaces.net {
        if let Err(errno) = loopback_up() {
            child_fail(CONTROL, STEP_LOOPBACK, errno);
        }
        for (slot, &port) in listeners.iter_mut().zip(plan.ports) {
            match listen_loopback(port) {
                Ok(fd) => *slot = fd,
                Err(errno) => child_fail(CONTROL, STEP_PORT, errno),
            }
        }
    }
    let count = plan.ports.len().min(MAX_PORTS);
    if send_report(CONTROL, Report::default(), &listeners[..count]).is_err() {
        sys::exit(1);
    }
    for fd in &listeners[..count] {
        // SAFETY: our own descriptors, sent already.
        unsafe { libc::close(*fd) };
    }
    child_loop(CONTROL, signals)
}

/// Blocks `SIGCHLD` and returns a signalfd for it.
fn child_signalfd() -> Result<RawFd, i32> {
    // SAFETY: a zeroed sigset is valid for sigemptyset; plain calls.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(sys::errno());
        }
        let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
        if fd < 0 {
            return Err(sys::errno());
        }
        Ok(fd)
    }
}

/// Brings `lo` up in the new network namespace.
fn loopback_up() -> Result<(), i32> {
    // SAFETY: a zeroed ifreq is valid; the name is copied in bounds; the
    // ioctls read and write that ifreq.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(sys::errno());
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        let mut result = Ok(());
        if libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut request) != 0 {
            result = Err(sys::errno());
        } else {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            if libc::ioctl(sock, libc::SIOCSIFFLAGS, &mut request) != 0 {
                result = Err(sys::errno());
            }
        }
        libc::close(sock);
        result
    }
}

/// A TCP socket listening on 127.0.0.1:`port`.
fn listen_loopback(port: u16) -> Result<RawFd, i32> {
    // SAFETY: a zeroed sockaddr_in is valid; plain socket calls.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(sys::errno());
        }
        let one: libc::c_int = 1;
        libc::setsockopt(
            sock,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            std::ptr::addr_of!(one).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = port.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        if libc::bind(
            sock,
            std::ptr::addr_of!(address).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) != 0
            || libc::listen(sock, 128) != 0
        {
            let errno = sys::errno();
            libc::close(sock);
            return Err(errno);
        }
        Ok(sock)
    }
}

/// Reports a failed step to the parent and ends.
fn child_fail(control: RawFd, step: u32, errno: i32) -> ! {
    let _ = send_report(control, Report { step, errno }, &[]);
    sys::exit(1)
}

/// Sends the report, with `fds` attached.
fn send_report(control: RawFd, mut report: Report, fds: &[RawFd]) -> Result<(), i32> {
    let mut iov = libc::iovec {
        iov_base: std::ptr::addr_of_mut!(report).cast(),
        iov_len: std::mem::size_of::<Report>(),
    };
    let mut space = [0u64; CMSG_WORDS];
    // SAFETY: a zeroed msghdr is valid; the control buffer has room for
    // MAX_PORTS descriptors and `fds` is at most that long; the CMSG
    // macros stay within it.
    unsafe {
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
        if libc::sendmsg(control, &message, libc::MSG_NOSIGNAL) < 0 {
            return Err(sys::errno());
        }
    }
    Ok(())
}

/// Reaps whatever is re-parented to the init, until the control socket
/// closes (the sandbox was dropped, or the harness died).
fn child_loop(control: RawFd, signals: RawFd) -> ! {
    let mut polls = [
        libc::pollfd {
            fd: control,
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
    loop {
        // SAFETY: valid pollfds and buffers; plain system calls.
        unsafe {
            if libc::poll(polls.as_mut_ptr(), 2, -1) < 0 {
                continue;
            }
            if polls[0].revents != 0 {
                let got = libc::read(control, buf.as_mut_ptr().cast(), buf.len());
                if got <= 0 {
                    sys::exit(0);
                }
            }
            if polls[1].revents != 0 {
                libc::read(signals, buf.as_mut_ptr().cast(), buf.len());
                while libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG | libc::__WALL) > 0 {}
            }
        }
    }
}
