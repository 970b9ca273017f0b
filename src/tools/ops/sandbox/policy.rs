//! What a sandbox allows: the policy a caller asks for, before the kernel
//! is asked what it can enforce.

use std::path::PathBuf;

/// The network a sandboxed program may use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Network {
    /// None: no connection leaves the sandbox (loopback inside it works
    /// where a network namespace is used).
    None,
    /// Only these TCP ports of the machine's loopback interface (the
    /// harness's own endpoints: a served model, a `url:` MCP server).
    /// An empty list is [`Network::None`].
    Loopback(Vec<u16>),
    /// The machine's network, as without a sandbox.
    Full,
}

impl Network {
    /// The loopback ports let through (none for [`Network::None`] and
    /// [`Network::Full`]).
    pub fn ports(&self) -> &[u16] {
        match self {
            Network::Loopback(ports) => ports,
            Network::None | Network::Full => &[],
        }
    }

    /// Whether the network is cut at all (everything but [`Network::Full`]).
    pub fn is_cut(&self) -> bool {
        !matches!(self, Network::Full)
    }
}

/// What programs started in a sandbox may do. Reading and executing stay
/// as they are everywhere (toolchains keep working); writing is allowed
/// only below [`writable`](Self::writable), in the private temporary
/// directory, and on the few devices a shell needs
/// ([`DEVICES`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// Directories (or files) writable with everything below them: the
    /// workspace, and any others the caller adds. Each must be absolute
    /// and exist.
    pub writable: Vec<PathBuf>,
    /// The private temporary directory, given to programs as `TMPDIR`:
    /// `None` makes a new one in the system's temporary directory
    /// (`harness-sandbox-` and 16 hex digits, mode 0700), removed with the
    /// sandbox; a directory given here must exist, is the caller's, and is
    /// left in place.
    pub tmpdir: Option<PathBuf>,
    /// The network.
    pub network: Network,
    /// Contain processes: nothing a program starts outlives the sandbox,
    /// daemons that leave their process group (`setsid`, a double fork,
    /// `nohup … & disown`) included.
    pub contain_processes: bool,
}

impl SandboxPolicy {
    /// Writes in `workspace` and a private temporary directory only, no
    /// network, processes contained: what a scenario's commands get.
    pub fn workspace(workspace: impl Into<PathBuf>) -> Self {
        Self {
            writable: vec![workspace.into()],
            tmpdir: None,
            network: Network::None,
            contain_processes: true,
        }
    }

    /// The same policy with `network`.
    pub fn with_network(mut self, network: Network) -> Self {
        self.network = network;
        self
    }
}

/// The devices a sandboxed program may open for writing, where they exist:
/// the sinks and sources a shell redirects to (`/dev/null`, `/dev/zero`,
/// `/dev/full`), the controlling terminal (`/dev/tty`: a command has none,
/// so opening it fails as it would without a sandbox) and new
/// pseudo-terminals (`/dev/ptmx` and `/dev/pts`, for programs that run
/// others on a terminal of their own: `script`, `expect`, test runners;
/// this also lets a program write to a terminal of the same user that it
/// can name, such as the one the harness runs on).
/// Not `/dev/shm`: what is written there outlives the sandbox; a policy
/// that needs POSIX shared memory (Python's `multiprocessing` locks) adds
/// it to [`SandboxPolicy::writable`].
pub const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];
