//! Model-facing wording of the errors of files and commands, in one place:
//! what failed, on which workspace-relative path, in plain words, and what
//! to do next (D6). Never the raw OS text (`(os error 28)`) nor an
//! absolute path of the workspace.
//!
//! Every error is put in an [`ErrorClass`] first: by the refusals of the
//! operations layer itself (outside the workspace, not a regular file, a
//! hard-linked file that cannot be replaced), then by its OS error number
//! (every number the fault layer can inject, and the others the real OS
//! gives for files and processes), then by its `io::ErrorKind` (backends
//! that build errors from a kind), and else as `other`, whose text is the
//! error's own message. The class names the error in `details`
//! (`error_class`, with `errno` when there is a number), so a check or a
//! coverage report can tell a full disk from a locked file without
//! matching the wording.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use serde::Serialize;

use super::error::ToolError;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::ops::ExecSetup;
use super::ops::ExecSetupError;
use super::ops::Refusal;
use super::ops::TempLeftBehind;
use super::ops::is_outside_workspace;

impl ErrorClass {
    /// The class's usual reason, in words that follow `Cannot read x: `.
    fn reason(self) -> &'static str {
        match self {
            ErrorClass::PermissionDenied => "permission denied",
            ErrorClass::NotFound => "it does not exist",
            ErrorClass::IsADirectory => "it is a directory",
            ErrorClass::NotADirectory => "a part of the path that should be a directory is a file",
            ErrorClass::DiskFull => "no space left on the device",
            ErrorClass::ReadOnly => "the file system is read-only",
            ErrorClass::IoError => "the device reported an input/output error",
            ErrorClass::Busy => "it is busy (in use by the system or another process)",
            ErrorClass::AlreadyExists => "something already exists at that path",
            ErrorClass::TooManyOpenFiles => "too many files are open",
            ErrorClass::NameTooLong => "the path or one of its names is too long",
            ErrorClass::InvalidName => "the file name is not valid on this system",
            ErrorClass::TemporarilyUnavailable => "the resource is temporarily unavailable",
            ErrorClass::Interrupted => "the operation was interrupted",
            ErrorClass::CrossDevice => {
                "the operation would cross from one file system to another (a mount point)"
            }
            ErrorClass::SymlinkLoop => "there are too many levels of symlinks (a symlink loop?)",
            ErrorClass::TooLarge => "it is larger than the system allows",
            ErrorClass::OutOfMemory => "the system is out of memory",
            ErrorClass::StaleHandle => {
                "the file handle went stale (the network file system changed under it)"
            }
            ErrorClass::NoDevice => "the device behind it is not there",
            ErrorClass::Invalid => "the system refused the request as invalid",
            ErrorClass::NotExecutable => "it is not a program this system can run",
            ErrorClass::TimedOut => "the operation timed out",
            ErrorClass::Connection => "the connection to the file system was lost",
            ErrorClass::NotRegular => "it is not a regular file (a pipe, socket or device)",
            ErrorClass::OutsideWorkspace => "the path leads outside the workspace",
            ErrorClass::HardLinked => {
                "it has other hard links, and its directory does not allow a new file"
            }
            ErrorClass::Other => "the system reported an error",
        }
    }

    /// What to do next, for a file (`noun` says `file` or `directory`).
    fn next_step(self, noun: &str) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            ErrorClass::PermissionDenied => {
                return Cow::Owned(format!(
                    "Check its permissions with bash (ls -l) or use another {noun}."
                ));
            }
            ErrorClass::NotFound => "Use ls or find to locate it.",
            ErrorClass::IsADirectory => "Give the path of a file inside it.",
            ErrorClass::NotADirectory | ErrorClass::NameTooLong => {
                "Check the path with ls, and shorten or correct it."
            }
            ErrorClass::DiskFull => {
                "Free some space (bash: df -h shows which file system is full) or tell the user, \
                 then try again."
            }
            ErrorClass::ReadOnly => {
                "Nothing can be changed there: write somewhere else, or tell the user."
            }
            ErrorClass::IoError => {
                "Try once more; if it fails again, the disk or file system has a fault: tell the \
                 user."
            }
            ErrorClass::Busy => "Try again in a moment, or stop what is using it.",
            ErrorClass::AlreadyExists => "Check with ls what is there, then use another path.",
            ErrorClass::TooManyOpenFiles => {
                "Try again when other calls have finished; if it keeps failing, tell the user."
            }
            ErrorClass::InvalidName => "Use another name.",
            ErrorClass::TemporarilyUnavailable | ErrorClass::Interrupted => {
                "Try again in a moment."
            }
            ErrorClass::CrossDevice => {
                "Use a path on the same file system, or copy it with bash (cp)."
            }
            ErrorClass::SymlinkLoop => "Check the symlinks on the path with bash (ls -l).",
            ErrorClass::TooLarge => "Work on it in smaller parts, or with bash.",
            ErrorClass::OutOfMemory => "Try again later, or do less at once.",
            ErrorClass::NoDevice | ErrorClass::NotExecutable => {
                "Check what it is with bash (ls -l, file)."
            }
            ErrorClass::Invalid => "Check the path, or do it another way (with bash).",
            ErrorClass::NotRegular => "Use a regular file.",
            ErrorClass::OutsideWorkspace => "Use a path relative to the workspace root.",
            ErrorClass::HardLinked => {
                "Make the directory writable (bash: chmod u+w), or write to a new file."
            }
            ErrorClass::StaleHandle
            | ErrorClass::TimedOut
            | ErrorClass::Connection
            | ErrorClass::Other => "Try again; if it fails the same way, tell the user.",
        })
    }
}

/// Every OS error number worded here: its C name, class and reason.
const ERRNOS: &[(i32, &str, ErrorClass, &str)] = &[
    (
        libc::EACCES,
        "EACCES",
        ErrorClass::PermissionDenied,
        "permission denied",
    ),
    (
        libc::EPERM,
        "EPERM",
        ErrorClass::PermissionDenied,
        "the operation is not permitted",
    ),
    (
        libc::ENOENT,
        "ENOENT",
        ErrorClass::NotFound,
        "it does not exist",
    ),
    (
        libc::ENOSPC,
        "ENOSPC",
        ErrorClass::DiskFull,
        "no space left on the device",
    ),
    (
        libc::EDQUOT,
        "EDQUOT",
        ErrorClass::DiskFull,
        "the disk quota is used up",
    ),
    (
        libc::EIO,
        "EIO",
        ErrorClass::IoError,
        "the device reported an input/output error",
    ),
    (
        libc::EROFS,
        "EROFS",
        ErrorClass::ReadOnly,
        "the file system is read-only",
    ),
    (
        libc::EISDIR,
        "EISDIR",
        ErrorClass::IsADirectory,
        "it is a directory",
    ),
    (
        libc::ENOTDIR,
        "ENOTDIR",
        ErrorClass::NotADirectory,
        "a part of the path that should be a directory is a file",
    ),
    (
        libc::EEXIST,
        "EEXIST",
        ErrorClass::AlreadyExists,
        "something already exists at that path",
    ),
    (
        libc::EBUSY,
        "EBUSY",
        ErrorClass::Busy,
        "it is busy (in use by the system or another process)",
    ),
    (
        libc::ETXTBSY,
        "ETXTBSY",
        ErrorClass::Busy,
        "it is a program that is running, or being written",
    ),
    (
        libc::EMFILE,
        "EMFILE",
        ErrorClass::TooManyOpenFiles,
        "too many files are open",
    ),
    (
        libc::ENFILE,
        "ENFILE",
        ErrorClass::TooManyOpenFiles,
        "too many files are open on the system",
    ),
    (
        libc::ENAMETOOLONG,
        "ENAMETOOLONG",
        ErrorClass::NameTooLong,
        "the path or one of its names is too long",
    ),
    (
        libc::EILSEQ,
        "EILSEQ",
        ErrorClass::InvalidName,
        "the file name is not valid on this system",
    ),
    (
        libc::EAGAIN,
        "EAGAIN",
        ErrorClass::TemporarilyUnavailable,
        "the resource is temporarily unavailable",
    ),
    (
        libc::EINTR,
        "EINTR",
        ErrorClass::Interrupted,
        "the operation was interrupted",
    ),
    (
        libc::EXDEV,
        "EXDEV",
        ErrorClass::CrossDevice,
        "the operation would cross from one file system to another (a mount point)",
    ),
    (
        libc::ELOOP,
        "ELOOP",
        ErrorClass::SymlinkLoop,
        "there are too many levels of symlinks (a symlink loop?)",
    ),
    (
        libc::EFBIG,
        "EFBIG",
        ErrorClass::TooLarge,
        "the file would be larger than the system allows",
    ),
    (
        libc::E2BIG,
        "E2BIG",
        ErrorClass::TooLarge,
        "the command and its environment are too long",
    ),
    (
        libc::ENOMEM,
        "ENOMEM",
        ErrorClass::OutOfMemory,
        "the system is out of memory",
    ),
    (
        libc::ESTALE,
        "ESTALE",
        ErrorClass::StaleHandle,
        "the file handle went stale (the network file system changed under it)",
    ),
    (
        libc::ENXIO,
        "ENXIO",
        ErrorClass::NoDevice,
        "the device behind it is not there",
    ),
    (
        libc::ENODEV,
        "ENODEV",
        ErrorClass::NoDevice,
        "the device behind it is not there",
    ),
    (
        libc::EINVAL,
        "EINVAL",
        ErrorClass::Invalid,
        "the system refused the request as invalid",
    ),
    (
        libc::ENOEXEC,
        "ENOEXEC",
        ErrorClass::NotExecutable,
        "it is not a program this system can run",
    ),
    (
        libc::ETIMEDOUT,
        "ETIMEDOUT",
        ErrorClass::TimedOut,
        "the operation timed out",
    ),
    (
        libc::ECONNRESET,
        "ECONNRESET",
        ErrorClass::Connection,
        "the connection to the file system was lost",
    ),
    (
        libc::ENOTCONN,
        "ENOTCONN",
        ErrorClass::Connection,
        "the connection to the file system was lost",
    ),
];

/// The class of an error by its kind, for errors without a number.
fn class_of_kind(kind: io::ErrorKind) -> ErrorClass {
    use io::ErrorKind as K;
    match kind {
        K::PermissionDenied => ErrorClass::PermissionDenied,
        K::NotFound => ErrorClass::NotFound,
        K::IsADirectory => ErrorClass::IsADirectory,
        K::NotADirectory => ErrorClass::NotADirectory,
        K::StorageFull | K::QuotaExceeded => ErrorClass::DiskFull,
        K::ReadOnlyFilesystem => ErrorClass::ReadOnly,
        K::ResourceBusy | K::ExecutableFileBusy => ErrorClass::Busy,
        K::AlreadyExists => ErrorClass::AlreadyExists,
        K::InvalidFilename => ErrorClass::InvalidName,
        K::WouldBlock => ErrorClass::TemporarilyUnavailable,
        K::Interrupted => ErrorClass::Interrupted,
        K::CrossesDevices => ErrorClass::CrossDevice,
        K::FileTooLarge | K::ArgumentListTooLong => ErrorClass::TooLarge,
        K::OutOfMemory => ErrorClass::OutOfMemory,
        K::StaleNetworkFileHandle => ErrorClass::StaleHandle,
        K::InvalidInput => ErrorClass::Invalid,
        K::TimedOut => ErrorClass::TimedOut,
        K::ConnectionReset
        | K::ConnectionAborted
        | K::NotConnected
        | K::BrokenPipe
        | K::HostUnreachable
        | K::NetworkUnreachable
        | K::NetworkDown => ErrorClass::Connection,
        _ => ErrorClass::Other,
    }
}

/// What an error is, for wording: its class, its number's C name, and
/// its reason in plain words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cause {
    /// The class.
    pub class: ErrorClass,
    /// The error number's C name (`ENOSPC`), when it has a number.
    pub errno: Option<&'static str>,
    /// The reason, in words that follow `Cannot read x: `.
    pub reason: String,
}

/// The class, number and reason of `err` (the cause itself, for the
/// errors that wrap one).
pub(crate) fn cause(err: &io::Error) -> Cause {
    if is_outside_workspace(err) {
        return of_class(ErrorClass::OutsideWorkspace);
    }
    if let Some(inner) = err.get_ref() {
        if let Some(left) = inner.downcast_ref::<TempLeftBehind>() {
            return cause(&left.cause);
        }
        if let Some(setup) = inner.downcast_ref::<ExecSetupError>() {
            return cause(&setup.cause);
        }
    }
    match Refusal::of(err) {
        Some(Refusal::NotRegular) => return of_class(ErrorClass::NotRegular),
        Some(Refusal::HardLinkedInPlace) => return of_class(ErrorClass::HardLinked),
        None => {}
    }
    if let Some(code) = err.raw_os_error() {
        if let Some((_, name, class, reason)) = ERRNOS.iter().find(|(n, ..)| *n == code) {
            return Cause {
                class: *class,
                errno: Some(name),
                reason: (*reason).to_owned(),
            };
        }
        // A number not in the table: the system's own words, without the
        // number.
        return Cause {
            class: class_of_kind(err.kind()),
            errno: None,
            reason: os_words(err),
        };
    }
    match class_of_kind(err.kind()) {
        ErrorClass::Other => Cause {
            class: ErrorClass::Other,
            errno: None,
            reason: message_words(&err.to_string()),
        },
        class => of_class(class),
    }
}

fn of_class(class: ErrorClass) -> Cause {
    Cause {
        class,
        errno: None,
        reason: class.reason().to_owned(),
    }
}

/// The text of an OS error without ` (os error N)`, lower-cased first.
fn os_words(err: &io::Error) -> String {
    let text = err.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) => &text[..at],
        None => text.as_str(),
    };
    message_words(text)
}

/// A message as a clause: trimmed, no final period, the first letter
/// lower-cased unless the second is a capital too (`EIO`, `NFS`).
fn message_words(text: &str) -> String {
    let text = text.trim().trim_end_matches('.');
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(first), Some(second)) if first.is_uppercase() && !second.is_uppercase() => {
            let mut out: String = first.to_lowercase().collect();
            out.push_str(&text[first.len_utf8()..]);
            out
        }
        _ => text.to_owned(),
    }
}

/// The reason of `err` alone, in plain words (`no space left on the
/// device`), for notes inside other messages.
pub(crate) fn plain_reason(err: &io::Error) -> String {
    cause(err).reason
}

/// How messages name a path: the workspace root by name, else as shown.
pub(crate) fn shown(display: &str) -> Cow<'_, str> {
    if display == "." {
        Cow::Borrowed("the workspace root")
    } else {
        Cow::Borrowed(display)
    }
}

/// Whether `action` is done to a directory (`list`, `search`, `create
/// the directory`).
fn noun_of(action: &str) -> &'static str {
    if action == "list" || action == "search" || action.contains("directory") {
        "directory"
    } else {
        "file"
    }
}

/// One sentence (or two) for an I/O error while trying to `action` the
/// path shown as `display`: what happened and what to do next.
pub fn describe_io_error(action: &str, display: &str, err: &io::Error) -> String {
    let found = cause(err);
    let path = shown(display);
    let noun = if display == "." {
        "directory"
    } else {
        noun_of(action)
    };
    let mut message = match found.class {
        // The kernel refused a path that led out of the workspace root at
        // the moment of use (D1), e.g. a directory swapped for a symlink.
        ErrorClass::OutsideWorkspace => format!(
            "Path \"{display}\" is outside the workspace: a symlink on the way leads out of the \
             workspace root, and tools may only touch files under it. Use a path relative to the \
             workspace root."
        ),
        ErrorClass::PermissionDenied => format!(
            "Permission denied: cannot {action} {path}. {}",
            found.class.next_step(noun)
        ),
        ErrorClass::HardLinked => format!(
            "Cannot {action} {path}: its directory does not allow a new file to be created, so \
             the file would have to be overwritten in place, and it has other hard links that \
             would change with it (one may be outside the workspace). Nothing was written. {}",
            found.class.next_step(noun)
        ),
        class => format!(
            "Cannot {action} {path}: {}. {}",
            found.reason,
            class.next_step(noun)
        ),
    };
    if let Some(left) = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<TempLeftBehind>())
    {
        let name = left.name.to_string_lossy();
        let temp = match Path::new(display).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => format!("{}/{name}", dir.display()),
            _ => name.into_owned(),
        };
        message.push_str(&format!(
            " Its temporary file {temp} could not be removed; remove it with bash (rm)."
        ));
    }
    message
}

/// `details` of a failure worded here.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorDetails {
    /// The class ([`ErrorClass::name`]).
    pub(crate) error_class: &'static str,
    /// The OS error's C name, when it had a number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) errno: Option<&'static str>,
}

/// The failure of `action` on `display`: the message of
/// [`describe_io_error`], with the class and number in `details`.
pub(crate) fn io_failure(action: &str, display: &str, err: &io::Error) -> ToolError {
    failure(describe_io_error(action, display, err), err)
}

fn failure(message: String, err: &io::Error) -> ToolError {
    let found = cause(err);
    classed_failure(message, found.class, found.errno)
}

/// A failure with `message`, its class and number in `details`.
pub(crate) fn classed_failure(
    message: String,
    class: ErrorClass,
    errno: Option<&'static str>,
) -> ToolError {
    ToolError::failure_with(
        ErrorKind::Io(class),
        message,
        &ErrorDetails {
            error_class: class.name(),
            errno,
        },
    )
}

/// The words for a command that could not be started (`ProcessOps::exec`
/// failed): what happened and what to do next.
pub fn describe_exec_error(err: &io::Error) -> String {
    let found = cause(err);
    let setup_error = err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<ExecSetupError>());
    let setup = setup_error.map(|s| &s.step);
    let cannot_run = "The shell or the working directory cannot be used: tell the user; commands \
                      cannot run until it is fixed.";
    let next: Cow<'static, str> = match found.class {
        ErrorClass::TemporarilyUnavailable | ErrorClass::Busy | ErrorClass::Interrupted => {
            "Try again in a moment.".into()
        }
        ErrorClass::TooManyOpenFiles => {
            "Try again when other commands have finished; if it keeps failing, tell the user."
                .into()
        }
        ErrorClass::OutOfMemory => "Try again later, or run something smaller.".into(),
        ErrorClass::TooLarge => "Run a shorter command, or put it in a script file.".into(),
        ErrorClass::DiskFull | ErrorClass::IoError => found.class.next_step("file"),
        ErrorClass::PermissionDenied
        | ErrorClass::NotFound
        | ErrorClass::IsADirectory
        | ErrorClass::NotADirectory
        | ErrorClass::NotExecutable
        | ErrorClass::ReadOnly => cannot_run.into(),
        _ => "Try again; if it fails the same way, tell the user.".into(),
    };
    let reason = found.reason;
    match setup {
        Some(ExecSetup::ShellMissing(shell)) => format!(
            "Custom shell path not found: {}\nCould not start the command: the shell configured \
             for bash does not exist. Tell the user; commands cannot run until it is fixed.",
            shell.display()
        ),
        Some(ExecSetup::Spawn(shell)) => format!(
            "Could not start the command: the shell {} could not be started: {reason}. {next}",
            shell.display()
        ),
        Some(ExecSetup::Pipe) => format!(
            "Could not start the command: its output pipe could not be made: {reason}. {next}"
        ),
        // The sandbox's own words say which step failed.
        Some(ExecSetup::Sandbox) => format!(
            "Could not start the command: its sandbox could not be set up ({}). Tell the user; \
             commands cannot run until the sandbox works or is turned off.",
            setup_error.map_or_else(|| reason.to_string(), |s| s.cause.to_string())
        ),
        // pi's words for a directory that is missing or is a file.
        Some(ExecSetup::WorkingDir(dir)) => match found.class {
            ErrorClass::NotFound => format!(
                "Working directory does not exist: {}\nCannot execute bash commands.",
                dir.display()
            ),
            ErrorClass::NotADirectory => format!(
                "Working directory is not a directory: {}\nCannot execute bash commands.",
                dir.display()
            ),
            _ => format!(
                "Working directory cannot be used ({reason}): {}\nCannot execute bash commands. \
                 {next}",
                dir.display()
            ),
        },
        // No step known (an injected fault, another backend): what the
        // number means when starting a process.
        None => {
            let reason = match found.class {
                ErrorClass::TemporarilyUnavailable => {
                    "the system cannot start another process right now (a process limit was \
                     reached)"
                        .to_owned()
                }
                ErrorClass::TooManyOpenFiles => {
                    format!("{reason} (no file handles are left for the command's output)")
                }
                ErrorClass::Busy => "the shell's program file is busy".to_owned(),
                ErrorClass::PermissionDenied => "permission denied (the shell cannot be run, or \
                                                 the working directory cannot be entered)"
                    .to_owned(),
                ErrorClass::NotFound => {
                    "the shell, or the working directory, does not exist".to_owned()
                }
                ErrorClass::IsADirectory => "the shell's path is a directory".to_owned(),
                ErrorClass::NotADirectory => {
                    "the working directory, or a part of the shell's path, is not a directory"
                        .to_owned()
                }
                ErrorClass::NotExecutable => {
                    "the shell is not a program this system can run".to_owned()
                }
                _ => reason,
            };
            format!("Could not start the command: {reason}. {next}")
        }
    }
}

/// The failure of a command that could not be started, with the class in
/// `details`.
pub(crate) fn exec_failure(err: &io::Error) -> ToolError {
    failure(describe_exec_error(err), err)
}

impl ToolError {
    /// The failure of trying to `action` the file shown as `path` (its
    /// workspace-relative name), worded as the built-in tools word an I/O
    /// error: what happened and what to do next, with the error's class
    /// (and OS error name) in `details` as `error_class` (and `errno`).
    ///
    /// `action` is a verb phrase that fits "cannot {action} {path}":
    /// `read`, `write`, `list`, `create the directory`.
    ///
    /// ```
    /// use harness::tools::ToolError;
    ///
    /// let err = std::io::Error::from(std::io::ErrorKind::NotFound);
    /// let failure = ToolError::io("read", "notes.txt", &err);
    /// assert!(failure.to_string().starts_with("Cannot read notes.txt: "));
    /// ```
    pub fn io(action: &str, path: &str, err: &std::io::Error) -> Self {
        io_failure(action, path, err)
    }

    /// The failure of a command that could not be started
    /// ([`ProcessOps::exec`](super::ops::ProcessOps::exec) failed), worded as
    /// bash words it, with the class in `details`.
    pub fn exec(err: &std::io::Error) -> Self {
        exec_failure(err)
    }
}

#[cfg(test)]
#[path = "fs_error_tests.rs"]
mod tests;
