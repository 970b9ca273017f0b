//! The typed facts of a result: what a call did, for the code that reads
//! results (coverage, checks), so that nothing downstream probes `details`
//! keys or the words of a message.
//!
//! A built-in tool makes its `details` from a typed struct (its
//! `*Details`, in the tool's own module) and keeps that struct in the
//! result's [`Facts`] beside it: `details` is the JSON of the very struct
//! the facts hold. An error result also carries its [`ErrorKind`]: the
//! class of a file-system or process error ([`ErrorClass`], which
//! `details.error_class` names where the tool puts it there), or the rule
//! the call broke (a bad pattern, an offset past the end, an edit that did
//! not match …), including the errors whose `details` say nothing.
//!
//! A result read back from JSON has no facts attached; its facts are read
//! from its `details` in one place, [`facts_of`](super::builtin::facts_of).

use std::any::Any;
use std::fmt::Debug;
use std::sync::Arc;

use super::truncate::Truncation;

/// What kind of failure an error is, as `details.error_class` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorClass {
    /// EACCES, EPERM.
    PermissionDenied,
    /// ENOENT.
    NotFound,
    /// EISDIR.
    IsADirectory,
    /// ENOTDIR.
    NotADirectory,
    /// ENOSPC, EDQUOT.
    DiskFull,
    /// EROFS.
    ReadOnly,
    /// EIO.
    IoError,
    /// EBUSY, ETXTBSY.
    Busy,
    /// EEXIST.
    AlreadyExists,
    /// EMFILE, ENFILE.
    TooManyOpenFiles,
    /// ENAMETOOLONG.
    NameTooLong,
    /// A name the file system does not accept (EILSEQ).
    InvalidName,
    /// EAGAIN.
    TemporarilyUnavailable,
    /// EINTR.
    Interrupted,
    /// EXDEV.
    CrossDevice,
    /// ELOOP.
    SymlinkLoop,
    /// EFBIG, E2BIG.
    TooLarge,
    /// ENOMEM.
    OutOfMemory,
    /// ESTALE.
    StaleHandle,
    /// ENXIO, ENODEV.
    NoDevice,
    /// EINVAL.
    Invalid,
    /// ENOEXEC.
    NotExecutable,
    /// ETIMEDOUT.
    TimedOut,
    /// A lost connection (a network file system, a remote backend).
    Connection,
    /// A pipe, socket or device where a regular file is needed.
    NotRegular,
    /// A path that leads out of the workspace, refused by the kernel (D1).
    OutsideWorkspace,
    /// A hard-linked file that would have had to be overwritten in place.
    HardLinked,
    /// Anything else: a message of its own, or an unusual error number.
    Other,
}

impl ErrorClass {
    /// Every class, in the order of `details.error_class`'s list in docs/tools.md.
    pub const ALL: [ErrorClass; 28] = [
        ErrorClass::PermissionDenied,
        ErrorClass::NotFound,
        ErrorClass::IsADirectory,
        ErrorClass::NotADirectory,
        ErrorClass::DiskFull,
        ErrorClass::ReadOnly,
        ErrorClass::IoError,
        ErrorClass::Busy,
        ErrorClass::AlreadyExists,
        ErrorClass::TooManyOpenFiles,
        ErrorClass::NameTooLong,
        ErrorClass::InvalidName,
        ErrorClass::TemporarilyUnavailable,
        ErrorClass::Interrupted,
        ErrorClass::CrossDevice,
        ErrorClass::SymlinkLoop,
        ErrorClass::TooLarge,
        ErrorClass::OutOfMemory,
        ErrorClass::StaleHandle,
        ErrorClass::NoDevice,
        ErrorClass::Invalid,
        ErrorClass::NotExecutable,
        ErrorClass::TimedOut,
        ErrorClass::Connection,
        ErrorClass::NotRegular,
        ErrorClass::OutsideWorkspace,
        ErrorClass::HardLinked,
        ErrorClass::Other,
    ];

    /// The class's name in `details` (`disk_full`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::PermissionDenied => "permission_denied",
            ErrorClass::NotFound => "not_found",
            ErrorClass::IsADirectory => "is_a_directory",
            ErrorClass::NotADirectory => "not_a_directory",
            ErrorClass::DiskFull => "disk_full",
            ErrorClass::ReadOnly => "read_only",
            ErrorClass::IoError => "io_error",
            ErrorClass::Busy => "busy",
            ErrorClass::AlreadyExists => "already_exists",
            ErrorClass::TooManyOpenFiles => "too_many_open_files",
            ErrorClass::NameTooLong => "name_too_long",
            ErrorClass::InvalidName => "invalid_name",
            ErrorClass::TemporarilyUnavailable => "temporarily_unavailable",
            ErrorClass::Interrupted => "interrupted",
            ErrorClass::CrossDevice => "cross_device",
            ErrorClass::SymlinkLoop => "symlink_loop",
            ErrorClass::TooLarge => "too_large",
            ErrorClass::OutOfMemory => "out_of_memory",
            ErrorClass::StaleHandle => "stale_handle",
            ErrorClass::NoDevice => "no_device",
            ErrorClass::Invalid => "invalid",
            ErrorClass::NotExecutable => "not_executable",
            ErrorClass::TimedOut => "timed_out",
            ErrorClass::Connection => "connection",
            ErrorClass::NotRegular => "not_regular",
            ErrorClass::OutsideWorkspace => "outside_workspace",
            ErrorClass::HardLinked => "hard_linked",
            ErrorClass::Other => "other",
        }
    }

    /// The class `details.error_class` names.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|class| class.name() == name)
    }
}

/// Why a call failed: what an error result's `is_error` stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A file-system or process error of this class. `details.error_class`
    /// names it where the error came from the operating system; a missing
    /// path, a directory, something that is not a directory or not a
    /// regular file, found by the tool itself, have the class without it.
    Io(ErrorClass),
    /// The arguments did not validate (`details.validation_errors`).
    InvalidArguments,
    /// No active tool has the name called (`details.available_tools`).
    UnknownTool,
    /// The argument text is not JSON, most likely a call cut off
    /// (`details.raw_arguments`).
    ArgumentsCutOff,
    /// read: the offset is past the end of the file.
    OffsetBeyondEnd,
    /// read: a binary file (`details.binary`).
    Binary,
    /// grep: the pattern is not a valid regular expression.
    InvalidRegex,
    /// grep: the pattern holds a line break.
    MultiLinePattern,
    /// grep: the compiled pattern is over its size limit.
    PatternTooLarge,
    /// find's pattern or grep's `glob` is not a valid glob.
    InvalidGlob,
    /// grep: the search ran out of its time (`details.timed_out`).
    SearchTimedOut,
    /// edit: the call has no edits.
    NoEdits,
    /// edit: the file is text in another encoding than UTF-8
    /// (`details.invalid_utf8_at`).
    NotUtf8,
    /// edit: the file is binary or UTF-16 (`details.invalid_utf8_at`).
    NotText,
    /// edit: a replacement could not be applied (`details.error`).
    Edit(EditRule),
    /// bash: the command ran and did not succeed: a non-zero exit code, a
    /// signal or a timeout (bash's details say which).
    Command,
    /// The call was cancelled before it finished.
    Cancelled,
    /// The tool layer itself broke (the result's `internal_error`).
    Internal,
}

/// The rule a failed edit broke, as `details.error` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EditRule {
    /// `empty_old_text`: an `oldText` is empty.
    EmptyOldText,
    /// `not_found`: an `oldText` occurs nowhere.
    NotFound,
    /// `duplicate`: an `oldText` occurs more than once.
    Duplicate,
    /// `whitespace_only_old_text`: an `oldText` is only whitespace.
    WhitespaceOnlyOldText,
    /// `overlap`: two edits claim overlapping text.
    Overlap,
    /// `no_change`: the edits leave the file as it was.
    NoChange,
}

impl EditRule {
    /// Every rule, in the order the docs list them.
    pub const ALL: [EditRule; 6] = [
        EditRule::EmptyOldText,
        EditRule::NotFound,
        EditRule::Duplicate,
        EditRule::WhitespaceOnlyOldText,
        EditRule::Overlap,
        EditRule::NoChange,
    ];

    /// The rule's name in `details.error`.
    pub fn name(self) -> &'static str {
        match self {
            EditRule::EmptyOldText => "empty_old_text",
            EditRule::NotFound => "not_found",
            EditRule::Duplicate => "duplicate",
            EditRule::WhitespaceOnlyOldText => "whitespace_only_old_text",
            EditRule::Overlap => "overlap",
            EditRule::NoChange => "no_change",
        }
    }

    /// The rule `details.error` names.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|rule| rule.name() == name)
    }
}

/// A tool's typed details: the struct whose JSON is the result's
/// `details`.
pub trait ToolDetails: Any + Debug + Send + Sync {
    /// The truncation facts, when the output was cut.
    fn truncation(&self) -> Option<&Truncation> {
        None
    }

    /// Whether `other` is the same details (of the same type).
    fn same(&self, other: &dyn ToolDetails) -> bool;
}

/// [`ToolDetails::same`] for a type with `PartialEq`.
pub(crate) fn same_details<T: ToolDetails + PartialEq>(this: &T, other: &dyn ToolDetails) -> bool {
    let other: &dyn Any = other;
    other.downcast_ref::<T>() == Some(this)
}

/// The typed facts of one result.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// For an error result, the kind of failure; `None` for a success.
    pub error: Option<ErrorKind>,
    /// The registry coerced or left out arguments on the way in (D17):
    /// `details.coerced_fields` or `details.ignored_fields`.
    pub normalised: bool,
    /// The tool's details struct.
    details: Option<Arc<dyn ToolDetails>>,
}

impl Facts {
    /// The facts of an error of `kind`.
    pub fn error(kind: ErrorKind) -> Self {
        Self {
            error: Some(kind),
            ..Self::default()
        }
    }

    /// The facts holding `details`.
    pub fn of(details: impl ToolDetails) -> Self {
        Self::default().with_details(details)
    }

    /// Sets whether the arguments were normalised.
    pub fn with_normalised(mut self, normalised: bool) -> Self {
        self.normalised = normalised;
        self
    }

    /// Sets the tool's details struct.
    pub fn with_details(mut self, details: impl ToolDetails) -> Self {
        self.details = Some(Arc::new(details));
        self
    }

    /// The tool's details, if they are a `T` (`ReadDetails`,
    /// `BashDetails` …).
    pub fn details<T: ToolDetails>(&self) -> Option<&T> {
        let details: &dyn Any = self.details.as_deref()?;
        details.downcast_ref::<T>()
    }

    /// The truncation facts of the tool's details, when its output was cut.
    pub fn truncation(&self) -> Option<&Truncation> {
        self.details.as_deref()?.truncation()
    }
}

impl PartialEq for Facts {
    fn eq(&self, other: &Self) -> bool {
        self.error == other.error
            && self.normalised == other.normalised
            && match (&self.details, &other.details) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same(b.as_ref()),
                _ => false,
            }
    }
}
