//! The Landlock ruleset of a sandbox, made once and enforced on each of
//! its programs before they execute.
//!
//! The ruleset handles every file-system right of Landlock ABI 7 (the
//! kernel takes what it knows of them: on an older one, the rights it has
//! not learnt stay unrestricted): reading and executing are allowed
//! everywhere, everything else only below the writable paths and on
//! [`DEVICES`]. Where no network namespace cuts the network, it also
//! handles TCP `bind` and `connect` (ABI 4) and lets `connect` reach only
//! the given ports, and keeps abstract Unix sockets to the sandbox (ABI 6).

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::path::PathBuf;

use landlock::ABI;
use landlock::Access;
use landlock::AccessFs;
use landlock::AccessNet;
use landlock::BitFlags;
use landlock::NetPort;
use landlock::PathBeneath;
use landlock::PathFd;
use landlock::Ruleset;
use landlock::RulesetAttr;
use landlock::RulesetCreatedAttr;
use landlock::Scope;

use super::policy::DEVICES;

/// The Landlock ABI whose rights the ruleset asks for.
const ASKED: ABI = ABI::V7;

/// What the ruleset allows beyond reading and executing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Rules {
    /// Writable with everything below them (each exists).
    pub writable: Vec<PathBuf>,
    /// `Some(ports)`: TCP is handled, and only `connect` to these ports
    /// is allowed (no `bind`); `None`: TCP is left alone.
    pub tcp: Option<Vec<u16>>,
    /// Abstract Unix sockets made outside the sandbox are out of reach.
    pub scope_abstract_sockets: bool,
}

/// The rights on a device of [`DEVICES`]: what opening it for reading and
/// writing, truncating it (`> /dev/null`) and its ioctls need.
fn device_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev
}

/// Makes the ruleset; the descriptor to enforce with
/// `landlock_restrict_self`.
pub(super) fn ruleset(rules: &Rules) -> io::Result<OwnedFd> {
    let everything = AccessFs::from_all(ASKED);
    let mut ruleset = Ruleset::default()
        .handle_access(everything)
        .map_err(other)?;
    if rules.tcp.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(other)?;
    }
    if rules.scope_abstract_sockets {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket).map_err(other)?;
    }
    let mut created = ruleset
        .create()
        .map_err(other)?
        .add_rule(PathBeneath::new(
            path_fd(Path::new("/"))?,
            AccessFs::from_read(ASKED),
        ))
        .map_err(other)?;
    for path in &rules.writable {
        let rights = if path.is_dir() {
            everything
        } else {
            AccessFs::from_file(ASKED)
        };
        created = created
            .add_rule(PathBeneath::new(path_fd(path)?, rights))
            .map_err(other)?;
    }
    for device in DEVICES {
        let path = Path::new(device);
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let rights = if meta.is_dir() {
            device_rights() | AccessFs::ReadDir
        } else {
            device_rights()
        };
        created = created
            .add_rule(PathBeneath::new(path_fd(path)?, rights))
            .map_err(other)?;
    }
    for &port in rules.tcp.iter().flatten() {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(other)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| io::Error::other("the kernel made no Landlock ruleset"))
}

fn path_fd(path: &Path) -> io::Result<PathFd> {
    PathFd::new(path).map_err(|err| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{} cannot be opened for the sandbox: {err}", path.display()),
        )
    })
}

fn other(err: landlock::RulesetError) -> io::Error {
    io::Error::other(format!("the Landlock ruleset could not be made: {err}"))
}
