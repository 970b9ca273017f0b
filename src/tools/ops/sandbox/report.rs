//! What a sandbox enforces, by what, or why not: for the console, for a
//! run's report (with `cli`, the types have a JSON Schema for run.json's),
//! and for callers that must refuse to run unsandboxed.

use std::fmt;

use serde::Deserialize;
use serde::Serialize;

/// How writes are confined.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(schemars::JsonSchema))]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum FsGuard {
    /// By Landlock, at this ABI version of the kernel.
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: u32,
    },
    /// Not confined.
    #[serde(rename = "none")]
    Unenforced {
        /// Why not.
        reason: String,
    },
}

/// How the network is cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(schemars::JsonSchema))]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum NetGuard {
    /// A network namespace with only a loopback interface; these ports of
    /// the machine's 127.0.0.1 are relayed into it.
    Namespace {
        /// The ports let through.
        ports: Vec<u16>,
    },
    /// Landlock's TCP rules: no `bind`, and `connect` only to these ports
    /// (of any address; UDP is not covered).
    Landlock {
        /// The kernel's Landlock ABI version.
        abi: u32,
        /// The ports `connect` may reach.
        ports: Vec<u16>,
    },
    /// The policy allows the network.
    Open,
    /// The policy cuts the network, but it is not cut.
    #[serde(rename = "none")]
    Unenforced {
        /// Why not.
        reason: String,
    },
}

/// How processes are contained.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(schemars::JsonSchema))]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum ProcessGuard {
    /// A PID namespace: when the sandbox ends, the kernel kills every
    /// process in it.
    PidNamespace,
    /// The policy does not ask for it.
    Off,
    /// Not contained beyond what the caller does (killing process groups
    /// and the descendants it can find).
    #[serde(rename = "none")]
    Unenforced {
        /// Why not.
        reason: String,
    },
}

/// What a sandbox enforces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(schemars::JsonSchema))]
pub struct SandboxReport {
    /// Writes.
    pub fs: FsGuard,
    /// The network.
    pub network: NetGuard,
    /// Processes.
    pub processes: ProcessGuard,
}

impl SandboxReport {
    /// What the policy asked for and the kernel could not enforce, one
    /// sentence each; empty when everything is.
    pub fn shortfalls(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let FsGuard::Unenforced { reason } = &self.fs {
            out.push(format!("writes are not confined: {reason}"));
        }
        if let NetGuard::Unenforced { reason } = &self.network {
            out.push(format!("the network is not cut: {reason}"));
        }
        if let ProcessGuard::Unenforced { reason } = &self.processes {
            out.push(format!(
                "processes are not contained (only their process groups are killed): {reason}"
            ));
        }
        out
    }

    /// Whether anything at all is enforced.
    pub fn enforces_anything(&self) -> bool {
        matches!(self.fs, FsGuard::Landlock { .. })
            || matches!(
                self.network,
                NetGuard::Namespace { .. } | NetGuard::Landlock { .. }
            )
            || matches!(self.processes, ProcessGuard::PidNamespace)
    }
}

/// `8080, 9000`, or `none`.
fn port_list(ports: &[u16]) -> String {
    if ports.is_empty() {
        return "none".to_owned();
    }
    ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for FsGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FsGuard::Landlock { abi } => write!(f, "Landlock (ABI {abi})"),
            FsGuard::Unenforced { reason } => write!(f, "not confined ({reason})"),
        }
    }
}

impl fmt::Display for NetGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NetGuard::Namespace { ports } => write!(
                f,
                "cut by a network namespace (loopback ports let through: {})",
                port_list(ports)
            ),
            NetGuard::Landlock { abi, ports } => write!(
                f,
                "TCP cut by Landlock (ABI {abi}; ports let through: {})",
                port_list(ports)
            ),
            NetGuard::Open => f.write_str("open"),
            NetGuard::Unenforced { reason } => write!(f, "not cut ({reason})"),
        }
    }
}

impl fmt::Display for ProcessGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessGuard::PidNamespace => f.write_str("contained by a PID namespace"),
            ProcessGuard::Off => f.write_str("not contained (not asked)"),
            ProcessGuard::Unenforced { reason } => {
                write!(f, "process groups only ({reason})")
            }
        }
    }
}

impl fmt::Display for SandboxReport {
    /// `writes: Landlock (ABI 7); network: …; processes: …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "writes: {}; network: {}; processes: {}",
            self.fs, self.network, self.processes
        )
    }
}
