//! The conditions a scenario asks to run under, as data: the faults to
//! inject ([`FaultRule`]: an operation, optionally a glob of paths, and
//! what happens to it), bash's configuration and scripted cancellations
//! ([`Conditions`]). The loader checks them (`load/setup.rs`); the run
//! layer applies them (`run/env`: the fault wrappers of the tool layer's
//! I/O).

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use globset::GlobBuilder;
use globset::GlobMatcher;

use crate::tools::ops::WriteStep;

/// What a scenario runs under besides its workspace: injected faults
/// (`faults:`), bash's configuration (`bash:`), scripted cancellations
/// (`cancel_after_ms:`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Conditions {
    /// Injected faults, in order.
    pub faults: Vec<FaultRule>,
    /// How bash runs its commands.
    pub bash: crate::tools::BashConfig,
    /// The shell bash runs commands with, if not the default.
    pub shell: Option<PathBuf>,
    /// Scripted cancellations by call id.
    pub cancel_after: BTreeMap<String, Duration>,
}

/// The longest stall a rule may ask for: ten minutes.
pub(crate) const MAX_FAULT_DELAY: Duration = Duration::from_secs(600);

/// An operation a rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum FaultOp {
    /// Opening a file for reading, and reading it ([`FsOps::open`],
    /// [`FsOps::read`], [`FsOps::read_capped`]).
    Read,
    /// Writing the bytes of a file ([`FsOps::write`], write and edit): the
    /// new contents into the temporary file, or into the file itself where
    /// it is overwritten in place ([`WriteStep::Write`]).
    Write,
    /// Creating a directory or a new file ([`FsOps::create_dir_all`],
    /// [`FsOps::create_new`] and the temporary and numbered files made
    /// with it: bash's full-output log), and a write's temporary file
    /// ([`WriteStep::Create`], matched on the path of the file written).
    Create,
    /// The rename that ends a write ([`WriteStep::Rename`]: the new file
    /// over the old name); the file keeps its old contents.
    Rename,
    /// Removing a write's temporary file after a failed step
    /// ([`WriteStep::Remove`]); the temporary file stays, and the write's
    /// error says so.
    Remove,
    /// Listing a directory ([`FsOps::read_dir`]).
    List,
    /// Looking a path up ([`FsOps::metadata`],
    /// [`FsOps::symlink_metadata`], [`FsOps::canonicalize`],
    /// [`FsOps::read_link`]); path checks go through these too.
    Metadata,
    /// Running a command ([`ProcessOps::exec`]); has no path.
    Exec,
}

impl FaultOp {
    /// Every operation, in the order the names are listed.
    pub(crate) const ALL: [FaultOp; 8] = [
        FaultOp::Read,
        FaultOp::Write,
        FaultOp::Create,
        FaultOp::Rename,
        FaultOp::Remove,
        FaultOp::List,
        FaultOp::Metadata,
        FaultOp::Exec,
    ];

    /// The operation's name: `read`, `write`, `create`, `rename`,
    /// `remove`, `list`, `metadata`, `exec`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            FaultOp::Read => "read",
            FaultOp::Write => "write",
            FaultOp::Create => "create",
            FaultOp::Rename => "rename",
            FaultOp::Remove => "remove",
            FaultOp::List => "list",
            FaultOp::Metadata => "metadata",
            FaultOp::Exec => "exec",
        }
    }

    /// The operation named `name`.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether `after_bytes` means something for this operation: a stream
    /// that stops part of the way (reading, writing a created file, and
    /// the bytes of a write).
    pub(crate) fn streams(self) -> bool {
        matches!(self, FaultOp::Read | FaultOp::Create | FaultOp::Write)
    }

    /// The operation a step of a write meets.
    pub(crate) fn of_step(step: WriteStep) -> Self {
        match step {
            WriteStep::Create => FaultOp::Create,
            WriteStep::Write => FaultOp::Write,
            WriteStep::Rename => FaultOp::Rename,
            WriteStep::Remove => FaultOp::Remove,
        }
    }
}

impl fmt::Display for FaultOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error numbers a rule may name, by their C names.
const ERRNOS: [(&str, i32); 16] = [
    ("EACCES", libc::EACCES),
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("ENOSPC", libc::ENOSPC),
    ("EDQUOT", libc::EDQUOT),
    ("EIO", libc::EIO),
    ("EROFS", libc::EROFS),
    ("EISDIR", libc::EISDIR),
    ("ENOTDIR", libc::ENOTDIR),
    ("EEXIST", libc::EEXIST),
    ("EBUSY", libc::EBUSY),
    ("ETXTBSY", libc::ETXTBSY),
    ("EMFILE", libc::EMFILE),
    ("ENAMETOOLONG", libc::ENAMETOOLONG),
    ("EAGAIN", libc::EAGAIN),
    ("EXDEV", libc::EXDEV),
];

/// What a failing operation returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FaultError {
    /// The OS error with this number (`libc::ENOSPC`): the same
    /// `io::Error` kind and text as the real failure.
    Os(i32),
    /// An error of kind [`Other`](io::ErrorKind::Other) with this text.
    Message(String),
}

impl FaultError {
    /// The names accepted by [`FaultError::errno`], in a fixed order.
    pub(crate) fn errno_names() -> impl Iterator<Item = &'static str> {
        ERRNOS.iter().map(|(name, _)| *name)
    }

    /// The error number called `name` (`"ENOSPC"`), if it is one of
    /// [`FaultError::errno_names`].
    pub(crate) fn errno(name: &str) -> Option<Self> {
        ERRNOS
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, n)| FaultError::Os(*n))
    }

    /// The error, as the operation returns it.
    pub(crate) fn to_io(&self) -> io::Error {
        match self {
            FaultError::Os(n) => io::Error::from_raw_os_error(*n),
            FaultError::Message(text) => io::Error::other(text.clone()),
        }
    }
}

/// One rule: which operations, and what happens to them.
#[derive(Clone, Debug)]
pub(crate) struct FaultRule {
    op: FaultOp,
    glob: Option<(String, GlobMatcher)>,
    /// The error the operation fails with.
    pub(crate) error: Option<FaultError>,
    /// The stall before the operation.
    pub(crate) delay: Option<Duration>,
    /// Where a stream stops.
    pub(crate) after_bytes: Option<u64>,
    /// How many matching operations it applies to (`None`: all).
    pub(crate) times: Option<u64>,
}

impl FaultRule {
    /// A rule for every `op` that changes nothing until told what to do.
    pub(crate) fn new(op: FaultOp) -> Self {
        Self {
            op,
            glob: None,
            error: None,
            delay: None,
            after_bytes: None,
            times: None,
        }
    }

    /// Only paths matching `glob`, relative to the workspace root (`*`
    /// stays inside one directory, `**` crosses them, `.` is the root).
    /// Paths outside the workspace never match a rule with a glob.
    pub(crate) fn with_path(mut self, glob: &str) -> Result<Self, globset::Error> {
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()?
            .compile_matcher();
        self.glob = Some((glob.to_owned(), matcher));
        Ok(self)
    }

    /// The operation fails with `error` (after the stall, and after
    /// `after_bytes` for a stream).
    pub(crate) fn with_error(mut self, error: FaultError) -> Self {
        self.error = Some(error);
        self
    }

    /// The operation stalls this long first (at most
    /// [`MAX_FAULT_DELAY`]).
    pub(crate) fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = Some(delay.min(MAX_FAULT_DELAY));
        self
    }

    /// A read, a created file's writes or a write's bytes stop after this
    /// many bytes with the rule's error (EIO when none is given); ignored
    /// by the other operations.
    pub(crate) fn with_after_bytes(mut self, bytes: u64) -> Self {
        self.after_bytes = Some(bytes);
        self
    }

    /// The rule applies to the first `times` matching operations only.
    pub(crate) fn with_times(mut self, times: u64) -> Self {
        self.times = Some(times);
        self
    }

    /// The glob as written.
    pub(crate) fn path(&self) -> Option<&str> {
        self.glob.as_ref().map(|(text, _)| text.as_str())
    }

    pub(crate) fn matches(&self, op: FaultOp, rel: Option<&Path>) -> bool {
        if op != self.op {
            return false;
        }
        match (&self.glob, rel) {
            (None, _) => true,
            (Some((_, glob)), Some(rel)) => glob.is_match(rel),
            (Some(_), None) => false,
        }
    }
}

/// Two rules are equal when they say the same (the compiled glob aside).
impl PartialEq for FaultRule {
    fn eq(&self, other: &Self) -> bool {
        self.op == other.op
            && self.path() == other.path()
            && self.error == other.error
            && self.delay == other.delay
            && self.after_bytes == other.after_bytes
            && self.times == other.times
    }
}
