//! [`Sandbox`]: a policy made into what the kernel enforces, applied to
//! each program before it is started.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use super::enter::Enter;
use super::init::Init;
use super::init::MAX_PORTS;
use super::init::Spaces;
use super::landlock::Rules;
use super::policy::Network;
use super::policy::SandboxPolicy;
use super::relay::Relay;
use super::report::FsGuard;
use super::report::NetGuard;
use super::report::ProcessGuard;
use super::report::SandboxReport;
use super::spawn::Program;
use super::spawn::SandboxChild;
use super::spawn::SpawnError;
use super::spawn::Where;
use super::support::support;

/// The Landlock ABI that brought TCP rules.
const LANDLOCK_TCP_ABI: u32 = 4;

/// The Landlock ABI that brought scoped abstract Unix sockets.
const LANDLOCK_SCOPE_ABI: u32 = 6;

/// A sandbox for the programs a caller starts: writes confined to the
/// policy's paths, the network cut (or not), and every process contained
/// so that nothing outlives the sandbox, as far as the kernel allows
/// ([`SandboxReport`] says how far).
///
/// One sandbox serves any number of programs ([`Sandbox::prepare`] each
/// before it is spawned); they share its temporary directory, its network
/// namespace and its PID namespace (a server one starts is reachable by
/// the next, and a background process of one can be stopped by the next).
/// Dropping it (or [`Sandbox::end`]) kills every process still in its PID
/// namespace and removes the temporary directory it made.
#[derive(Debug)]
pub struct Sandbox {
    policy: SandboxPolicy,
    report: SandboxReport,
    spaces: Option<Spaces>,
    /// The temporary directory and the ruleset, made with the first
    /// program (a sandbox that never starts one costs nothing more).
    made: OnceLock<Result<Made, String>>,
    state: Mutex<State>,
    told: AtomicBool,
}

/// What the first program needs made.
#[derive(Debug)]
struct Made {
    tmpdir: PathBuf,
    /// The directory was made here, and goes with the sandbox.
    own_tmpdir: bool,
    ruleset: Option<Arc<OwnedFd>>,
}

/// The namespaces' holder, started with the first program.
#[derive(Debug)]
enum State {
    Idle,
    Running { init: Init, _relay: Option<Relay> },
    Failed(String),
    Ended,
}

impl Sandbox {
    /// Makes the policy into a sandbox: checks its paths (absolute and
    /// existing) and ports, and probes the kernel ([`support`], once per
    /// process) for what it can enforce. Nothing is made or started
    /// until the first program is: then the private temporary directory
    /// (unless the policy names one), the Landlock ruleset and the
    /// namespaces.
    ///
    /// # Errors
    ///
    /// A path that is relative or does not exist, more than 16 ports or
    /// port 0.
    pub fn new(mut policy: SandboxPolicy) -> io::Result<Self> {
        policy.writable = policy
            .writable
            .iter()
            .map(|path| checked_path(path, "writable path"))
            .collect::<io::Result<Vec<_>>>()?;
        if let Some(dir) = &policy.tmpdir {
            policy.tmpdir = Some(checked_path(dir, "temporary directory")?);
        }
        check_ports(policy.network.ports())?;
        if let Network::Loopback(ports) = &mut policy.network {
            ports.sort_unstable();
            ports.dedup();
        }
        let report = plan(&policy);
        Ok(Self {
            spaces: spaces_of(&report),
            report,
            policy,
            made: OnceLock::new(),
            state: Mutex::new(State::Idle),
            told: AtomicBool::new(false),
        })
    }

    /// The temporary directory and the ruleset, made on the first call.
    fn made(&self) -> io::Result<&Made> {
        let made = self
            .made
            .get_or_init(|| self.make().map_err(|err| err.to_string()));
        made.as_ref()
            .map_err(|message| io::Error::other(message.clone()))
    }

    fn make(&self) -> io::Result<Made> {
        let (tmpdir, own_tmpdir) = match &self.policy.tmpdir {
            Some(dir) => (dir.clone(), false),
            None => (make_private_tmpdir()?, true),
        };
        let mut made = Made {
            tmpdir,
            own_tmpdir,
            ruleset: None,
        };
        if let FsGuard::Landlock { abi } = self.report.fs {
            let mut paths = self.policy.writable.clone();
            paths.push(made.tmpdir.clone());
            let tcp = match &self.report.network {
                NetGuard::Landlock { ports, .. } => Some(ports.clone()),
                _ => None,
            };
            let rules = Rules {
                writable: paths,
                scope_abstract_sockets: tcp.is_some() && abi >= LANDLOCK_SCOPE_ABI,
                tcp,
            };
            match super::landlock::ruleset(&rules) {
                Ok(ruleset) => made.ruleset = Some(Arc::new(ruleset)),
                Err(err) => {
                    remove_own(&made);
                    return Err(err);
                }
            }
        }
        Ok(made)
    }

    /// What the sandbox enforces, by what, or why not.
    pub fn report(&self) -> &SandboxReport {
        &self.report
    }

    /// The policy it was made from.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The private temporary directory (`TMPDIR` of every program), made
    /// now if no program has started yet.
    ///
    /// # Errors
    ///
    /// When it (or the ruleset) cannot be made.
    pub fn tmpdir(&self) -> io::Result<&Path> {
        Ok(&self.made()?.tmpdir)
    }

    /// Applies the sandbox to `command`, which must be spawned next (its
    /// working directory set already): `TMPDIR` is set, and the program
    /// joins the sandbox's namespaces (started with the first program) and
    /// is put under its Landlock ruleset between fork and exec.
    ///
    /// With a PID namespace, the process `command` starts stays in this
    /// PID namespace and only relays: the program runs in its child, in
    /// its process group, and it ends as the program ends, with its
    /// status (a caller that waits, signals the group or kills the pid
    /// sees no difference); it ignores signals other than `SIGKILL`, which
    /// the program gets through the group.
    ///
    /// # Errors
    ///
    /// When the namespaces could not be started (the report promised
    /// them, so this is not silently skipped), or the sandbox has ended.
    pub fn prepare(&self, command: &mut std::process::Command) -> io::Result<()> {
        let made = self.made()?;
        command.env("TMPDIR", &made.tmpdir);
        let join = match self.spaces {
            Some(spaces) => Some((self.started()?, spaces.flags())),
            None => None,
        };
        let fork = self.spaces.is_some_and(|spaces| spaces.pid);
        let cwd = if fork {
            let dir = match command.get_current_dir() {
                Some(dir) => dir.to_path_buf(),
                None => std::env::current_dir()?,
            };
            Some(CString::new(dir.as_os_str().as_bytes()).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the working directory's path holds a NUL byte",
                )
            })?)
        } else {
            None
        };
        let enter = Enter {
            join,
            fork,
            cwd,
            landlock: made.ruleset.clone(),
        };
        if enter.join.is_none() && enter.landlock.is_none() {
            return Ok(());
        }
        // SAFETY: `Enter::run` makes only raw system calls on data made
        // here (see enter.rs), as a pre_exec closure must in a child of a
        // multi-threaded process.
        unsafe {
            command.pre_exec(move || enter.run());
        }
        Ok(())
    }

    /// Starts `program` in the sandbox without copying this process
    /// (spawn.rs): what [`LocalProcess`](super::super::LocalProcess) does
    /// for bash's commands. `program.env` is the whole environment (with
    /// `TMPDIR` set to [`Sandbox::tmpdir`] by the caller). Must be called
    /// inside a Tokio runtime.
    pub(crate) fn spawn(&self, program: &Program<'_>) -> Result<SandboxChild, SpawnError> {
        let made = self.made()?;
        let join = match self.spaces {
            Some(spaces) => Some((self.started()?, spaces.flags())),
            None => None,
        };
        let place = Where {
            join: join
                .as_ref()
                .map(|(pidfd, flags)| (pidfd.as_raw_fd(), *flags)),
            landlock: made.ruleset.as_ref().map(|fd| fd.as_raw_fd()),
        };
        // `join` holds the pidfd open until the program has joined.
        super::spawn::spawn(program, place)
    }

    /// The init's pidfd, starting it if it is not running yet.
    fn started(&self) -> io::Result<Arc<OwnedFd>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match &*state {
            State::Running { init, .. } => return Ok(init.pidfd()),
            State::Failed(message) => return Err(io::Error::other(message.clone())),
            State::Ended => {
                return Err(io::Error::other(
                    "the sandbox has ended: no program can start in it any more",
                ));
            }
            State::Idle => {}
        }
        let Some(spaces) = self.spaces else {
            return Err(io::Error::other("the sandbox has no namespaces"));
        };
        let ports = if spaces.net {
            self.policy.network.ports()
        } else {
            &[]
        };
        let runtime = if ports.is_empty() {
            None
        } else {
            Some(tokio::runtime::Handle::try_current().map_err(|_| {
                io::Error::other(
                    "a sandbox that lets loopback ports through must start its first program \
                     inside a Tokio runtime (the ports are relayed on it)",
                )
            })?)
        };
        let started = Init::start(spaces, ports).and_then(|mut init| {
            let relay = match &runtime {
                Some(handle) => Some(super::relay::start(init.take_listeners(), handle)?),
                None => None,
            };
            Ok((init, relay))
        });
        match started {
            Ok((init, relay)) => {
                let pidfd = init.pidfd();
                *state = State::Running {
                    init,
                    _relay: relay,
                };
                Ok(pidfd)
            }
            Err(err) => {
                *state = State::Failed(err.to_string());
                Err(err)
            }
        }
    }

    /// Ends the sandbox now: every process still in its PID namespace is
    /// killed (waiting at most 2 s for them to be gone), the loopback relay
    /// stops, and no program can start in it any more. Without a PID
    /// namespace, the processes are the caller's to stop.
    pub fn end(&self) {
        let previous = std::mem::replace(
            &mut *self.state.lock().unwrap_or_else(PoisonError::into_inner),
            State::Ended,
        );
        if let State::Running { mut init, _relay } = previous {
            init.end();
        }
    }

    /// Whether this is the first time this is asked: a tool says once
    /// per sandbox that its commands run sandboxed (D21).
    pub fn first_notice(&self) -> bool {
        !self.told.swap(true, Ordering::Relaxed)
    }

    /// What a model should know of the sandbox, in one bracketed sentence
    /// (where it may write, its network), with paths inside `workspace`
    /// shown relative to it; `None` when nothing is enforced.
    pub fn describe(&self, workspace: &Path) -> Option<String> {
        let mut parts = Vec::new();
        if matches!(self.report.fs, FsGuard::Landlock { .. }) {
            let mut places: Vec<String> = self
                .policy
                .writable
                .iter()
                .map(|path| match path.strip_prefix(workspace) {
                    Ok(rel) if rel.as_os_str().is_empty() => "the workspace".to_owned(),
                    Ok(rel) => rel.display().to_string(),
                    Err(_) => path.display().to_string(),
                })
                .collect();
            places.push("$TMPDIR".to_owned());
            parts.push(format!(
                "commands may write only in {}; a write anywhere else fails with \"Permission \
                 denied\"",
                and_list(&places)
            ));
        }
        match &self.report.network {
            NetGuard::Namespace { ports } | NetGuard::Landlock { ports, .. }
                if ports.is_empty() =>
            {
                parts.push("they have no network".to_owned());
            }
            NetGuard::Namespace { ports } | NetGuard::Landlock { ports, .. } => {
                let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
                parts.push(format!(
                    "their only network is 127.0.0.1 port{} {}",
                    if ports.len() == 1 { "" } else { "s" },
                    and_list(&ports)
                ));
            }
            NetGuard::Open | NetGuard::Unenforced { .. } => {}
        }
        if parts.is_empty() {
            return None;
        }
        Some(format!("[Sandboxed: {}.]", parts.join("; ")))
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        self.end();
        if let Some(Ok(made)) = self.made.get() {
            remove_own(made);
        }
    }
}

/// Removes the temporary directory if it was made here.
fn remove_own(made: &Made) {
    if made.own_tmpdir {
        let _ = std::fs::remove_dir_all(&made.tmpdir);
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What the kernel can enforce of `policy`.
fn plan(policy: &SandboxPolicy) -> SandboxReport {
    let support = support();
    let fs = match &support.landlock {
        Ok(abi) => FsGuard::Landlock { abi: *abi },
        Err(reason) => FsGuard::Unenforced {
            reason: reason.clone(),
        },
    };
    let ports = policy.network.ports().to_vec();
    let network = match (&policy.network, &support.namespaces, &support.landlock) {
        (Network::Full, _, _) => NetGuard::Open,
        (_, Ok(()), _) => NetGuard::Namespace { ports },
        (_, Err(_), Ok(abi)) if *abi >= LANDLOCK_TCP_ABI => NetGuard::Landlock { abi: *abi, ports },
        (_, Err(no_namespaces), Ok(abi)) => NetGuard::Unenforced {
            reason: format!(
                "{no_namespaces}, and Landlock ABI {abi} has no TCP rules (ABI {LANDLOCK_TCP_ABI} \
                 has)"
            ),
        },
        (_, Err(no_namespaces), Err(no_landlock)) => NetGuard::Unenforced {
            reason: format!("{no_namespaces}; {no_landlock}"),
        },
    };
    let processes = match (&support.namespaces, policy.contain_processes) {
        (_, false) => ProcessGuard::Off,
        (Ok(()), true) => ProcessGuard::PidNamespace,
        (Err(reason), true) => ProcessGuard::Unenforced {
            reason: reason.clone(),
        },
    };
    SandboxReport {
        fs,
        network,
        processes,
    }
}

/// The namespaces the report relies on, if any.
fn spaces_of(report: &SandboxReport) -> Option<Spaces> {
    let spaces = Spaces {
        pid: matches!(report.processes, ProcessGuard::PidNamespace),
        net: matches!(report.network, NetGuard::Namespace { .. }),
    };
    (spaces.pid || spaces.net).then_some(spaces)
}

/// An absolute, existing path, as its real path.
fn checked_path(path: &Path, what: &str) -> io::Result<PathBuf> {
    if !path.is_absolute() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("the sandbox's {what} {} is not absolute", path.display()),
        ));
    }
    std::fs::canonicalize(path).map_err(|err| {
        io::Error::new(
            err.kind(),
            format!(
                "the sandbox's {what} {} cannot be used: {err}",
                path.display()
            ),
        )
    })
}

fn check_ports(ports: &[u16]) -> io::Result<()> {
    let invalid = |message: String| Err(io::Error::new(io::ErrorKind::InvalidInput, message));
    if ports.len() > MAX_PORTS {
        return invalid(format!(
            "a sandbox lets at most {MAX_PORTS} loopback ports through, not {}",
            ports.len()
        ));
    }
    if ports.contains(&0) {
        return invalid("port 0 cannot be let through a sandbox".to_owned());
    }
    Ok(())
}

/// A new directory `harness-sandbox-{16 hex digits}` (mode 0700) in the
/// system's temporary directory.
fn make_private_tmpdir() -> io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    let mut last = None;
    for _ in 0..16 {
        let n = getrandom::u64().map_err(io::Error::other)?;
        let dir = base.join(format!("harness-sandbox-{n:016x}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return std::fs::canonicalize(&dir),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = Some(err),
            Err(err) => {
                return Err(io::Error::new(
                    err.kind(),
                    format!(
                        "the sandbox's temporary directory cannot be made in {}: {err}",
                        base.display()
                    ),
                ));
            }
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free name for a temporary directory")))
}
