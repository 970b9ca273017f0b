//! Operations: the only way a tool reaches the world.
//!
//! Tool code never calls `std::fs` or spawns processes itself. It goes
//! through [`FsOps`] (read, write, stat, list, create) and [`ProcessOps`]
//! (run a shell command), which a [`Workspace`](super::Workspace) bundles
//! with the workspace root and the path policy. This module knows nothing
//! of paths as a model writes them, nor of walking trees: the search tools
//! walk with the directory handles of [`FsOps::open_dir`]. [`ConfinedFs`] works on the real file
//! system below one directory, with the kernel refusing any path that
//! leads out of it (D1); [`LocalFs`] works on the real file system with the
//! process's own reach (`confine: false`); [`MemoryFs`] is an in-memory
//! tree for tests and for embedders that want a sandbox without a disk. A
//! remote backend (SSH, a container) implements the same two traits.
//! A wrapper around any of them (the harness's fault injection is one)
//! sees each step of a replacing write through [`WriteSteps`].
//!
//! The file-system trait is synchronous: tools call it from blocking tasks
//! where the work can be large (grep, long reads). Process execution is
//! asynchronous because it streams.

mod confined;
mod dir;
mod local;
mod memory;
pub(crate) mod process;
mod replace;
pub mod sandbox;

use std::ffi::OsStr;
use std::ffi::OsString;
use std::fmt;
use std::future::Future;
use std::io;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use confined::ConfinedFs;
#[cfg(feature = "cli")]
pub(crate) use confined::Handle as DirReplace;
pub use dir::DirHandle;
pub use dir::Listing;
pub use local::LocalFs;
pub use memory::MemoryFs;
pub use process::LocalProcess;
#[cfg(feature = "cli")]
pub(crate) use replace::write_new_over;
#[cfg(feature = "cli")]
pub(crate) use replace::write_new_over_with;

/// Random names tried ([`FsOps::create_temp`], the temporary file of a
/// replacing write) before giving up.
const TEMP_NAME_ATTEMPTS: usize = 16;

/// Names tried by [`FsOps::create_numbered`] before it gives up.
const NUMBERED_NAME_ATTEMPTS: usize = 1000;

/// Why [`outside_workspace`] errors: a path led out of a confined root.
#[derive(Debug)]
struct OutsideWorkspace;

impl fmt::Display for OutsideWorkspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the path leads outside the workspace")
    }
}

impl std::error::Error for OutsideWorkspace {}

/// The error of an operation refused because its path leads out of a
/// confined root ([`ConfinedFs`]): a path not under the root, or a symlink
/// on the way that leaves it. Its kind is
/// [`PermissionDenied`](io::ErrorKind::PermissionDenied);
/// [`is_outside_workspace`] tells it apart from the OS's own refusals.
pub fn outside_workspace() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, OutsideWorkspace)
}

/// Whether `err` is an [`outside_workspace`] refusal.
pub fn is_outside_workspace(err: &io::Error) -> bool {
    err.get_ref()
        .is_some_and(|inner| inner.is::<OutsideWorkspace>())
}

/// Why this module refused an operation itself (the OS did not): carried
/// inside an `io::Error` so that the tool layer can word it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A pipe, socket or device where a regular file is needed; it is not
    /// opened in a way that could block.
    NotRegular,
    /// A write would have to overwrite a file in place (its directory does
    /// not let a new file be created), but the file has other hard links,
    /// which would change too: one of them may be outside the workspace.
    HardLinkedInPlace,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Refusal::NotRegular => "not a regular file (a pipe, socket or device)",
            Refusal::HardLinkedInPlace => {
                "the directory does not allow a new file, and the file has other hard links \
                 that an overwrite in place would change too"
            }
        })
    }
}

impl std::error::Error for Refusal {}

impl Refusal {
    /// The refusal as an `io::Error` of a fitting kind.
    pub(crate) fn to_io(self) -> io::Error {
        let kind = match self {
            Refusal::NotRegular => io::ErrorKind::Other,
            Refusal::HardLinkedInPlace => io::ErrorKind::PermissionDenied,
        };
        io::Error::new(kind, self)
    }

    /// The refusal `err` carries, if it is one.
    pub(crate) fn of(err: &io::Error) -> Option<Self> {
        err.get_ref()?.downcast_ref::<Refusal>().copied()
    }
}

/// A write failed, and the temporary file it had made could not be
/// removed afterwards: `cause` is the failure, `name` the file left in the
/// written file's directory.
#[derive(Debug)]
pub(crate) struct TempLeftBehind {
    /// The temporary file's name (no directory).
    pub name: OsString,
    /// Why the write failed.
    pub cause: io::Error,
}

impl fmt::Display for TempLeftBehind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}; the temporary file {} could not be removed",
            self.cause,
            self.name.to_string_lossy()
        )
    }
}

impl std::error::Error for TempLeftBehind {}

/// The step of starting a command that failed ([`ExecSetupError`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExecSetup {
    /// The configured shell does not exist.
    ShellMissing(PathBuf),
    /// The pipe for the command's output could not be made.
    Pipe,
    /// The shell could not be started.
    Spawn(PathBuf),
    /// The working directory cannot be used: it does not exist, is not a
    /// directory, or cannot be entered.
    WorkingDir(PathBuf),
    /// The command's sandbox could not be set up.
    Sandbox,
}

/// A command that could not be started by [`LocalProcess`]: which step
/// failed, and the OS's error.
#[derive(Debug)]
pub(crate) struct ExecSetupError {
    /// The step.
    pub step: ExecSetup,
    /// The OS's error.
    pub cause: io::Error,
}

impl ExecSetupError {
    /// The failure as an `io::Error` of the cause's kind.
    pub(crate) fn to_io(step: ExecSetup, cause: io::Error) -> io::Error {
        io::Error::new(cause.kind(), ExecSetupError { step, cause })
    }
}

impl fmt::Display for ExecSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.step {
            ExecSetup::ShellMissing(shell) => {
                write!(f, "Custom shell path not found: {}", shell.display())
            }
            ExecSetup::Pipe => write!(f, "Could not create a pipe: {}", self.cause),
            ExecSetup::Sandbox => write!(
                f,
                "Could not start the command in its sandbox: {}",
                self.cause
            ),
            ExecSetup::Spawn(shell) => {
                write!(
                    f,
                    "Could not start the shell {}: {}",
                    shell.display(),
                    self.cause
                )
            }
            ExecSetup::WorkingDir(dir) => match self.cause.kind() {
                io::ErrorKind::NotFound => write!(
                    f,
                    "Working directory does not exist: {}\nCannot execute bash commands.",
                    dir.display()
                ),
                io::ErrorKind::NotADirectory => write!(
                    f,
                    "Working directory is not a directory: {}\nCannot execute bash commands.",
                    dir.display()
                ),
                _ => write!(
                    f,
                    "Working directory cannot be used ({}): {}\nCannot execute bash commands.",
                    self.cause,
                    dir.display()
                ),
            },
        }
    }
}

impl std::error::Error for ExecSetupError {}

/// A step of a replacing write ([`FsOps::write_in_steps`]), in the order
/// they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteStep {
    /// Creating the new file: the temporary file beside the old one (or,
    /// through a dangling symlink, the file the link names).
    Create,
    /// Writing the bytes into the new file (or into the old one, where it
    /// is overwritten in place).
    Write,
    /// Renaming the new file over the old name.
    Rename,
    /// Removing the temporary file after a step failed.
    Remove,
}

/// What [`WriteSteps::before`] makes of a step.
#[derive(Debug)]
pub enum StepFault {
    /// The step fails with this error, having done nothing.
    Fail(io::Error),
    /// [`WriteStep::Create`] and [`WriteStep::Write`]: the first `bytes`
    /// bytes of the contents are written, then the error. Contents of at
    /// most `bytes` bytes are written whole, without an error.
    Cut(u64, io::Error),
}

/// Told of each step of one write before it happens, and able to make it
/// fail (a fault-injecting wrapper uses this to hit the real steps).
pub trait WriteSteps: Send + Sync {
    /// `None` lets `step` happen as usual.
    fn before(&self, step: WriteStep) -> Option<StepFault>;
}

/// The steps of a write that nothing watches.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSteps;

impl WriteSteps for NoSteps {
    fn before(&self, _: WriteStep) -> Option<StepFault> {
        None
    }
}

/// What a directory entry is, without following a symlink unless said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only from `symlink_metadata` and walks).
    Symlink,
    /// Anything else: a socket, a device, a FIFO.
    Other,
}

impl FileKind {
    /// The kind of an entry from what its file type says it is (std's
    /// and cap-std's file types alike).
    pub(crate) fn of(symlink: bool, dir: bool, file: bool) -> Self {
        if symlink {
            Self::Symlink
        } else if dir {
            Self::Dir
        } else if file {
            Self::File
        } else {
            Self::Other
        }
    }
}

/// The facts about a path that tools need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metadata {
    /// The kind of the entry.
    pub kind: FileKind,
    /// Size in bytes.
    pub len: u64,
    /// Unix permission bits (`0o644`), 0 where unknown.
    pub mode: u32,
}

impl Metadata {
    /// Whether this is a directory.
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Dir
    }

    /// Whether this is a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's name (not a path).
    pub name: OsString,
    /// The entry's own kind (a symlink is reported as a symlink).
    pub kind: FileKind,
}

/// File-system operations (§common.7). Paths are absolute.
pub trait FsOps: Send + Sync + fmt::Debug {
    /// Metadata, following symlinks.
    fn metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// Metadata of the entry itself (a symlink is a symlink).
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// The real path: every symlink resolved, the path must exist.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// The target of a symlink, as stored (it may be relative).
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;
    /// Opens a regular file for streaming reads. A directory is an
    /// [`IsADirectory`](io::ErrorKind::IsADirectory) error; a FIFO, socket
    /// or device is refused without an open that could block.
    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>>;
    /// Reads a whole regular file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.open(path)?.read_to_end(&mut buf)?;
        Ok(buf)
    }
    /// Reads a whole regular file of at most `max` bytes; a larger one is a
    /// [`FileTooLarge`](io::ErrorKind::FileTooLarge) error, and no more
    /// than `max + 1` bytes are read to find out.
    fn read_capped(&self, path: &Path, max: u64) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.open(path)?
            .take(max.saturating_add(1))
            .read_to_end(&mut buf)?;
        if buf.len() as u64 > max {
            return Err(io::Error::new(
                io::ErrorKind::FileTooLarge,
                format!("larger than {max} bytes"),
            ));
        }
        Ok(buf)
    }
    /// Creates or replaces a file's contents. A symlink's target is
    /// written, and a dangling symlink creates what it names. The disk
    /// backends replace the file whole (a new file renamed over the old
    /// one, with its permission bits), so a reader never sees half of it.
    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()>;
    /// [`FsOps::write`], with `steps` told of each step first
    /// ([`WriteStep`]), any of which it can make fail. The disk backends
    /// ([`LocalFs`], [`ConfinedFs`]) consult it at their real steps: create
    /// the temporary file, write its bytes, rename it over the old name,
    /// and remove it after a failure. A backend that does not write in
    /// steps (this default, [`MemoryFs`]) asks about create, write and
    /// rename before it writes, and a failing step fails the whole write
    /// with nothing written, as a replacing write would leave it.
    fn write_in_steps(&self, path: &Path, data: &[u8], steps: &dyn WriteSteps) -> io::Result<()> {
        for step in [WriteStep::Create, WriteStep::Write, WriteStep::Rename] {
            match steps.before(step) {
                None => {}
                Some(StepFault::Cut(bytes, _)) if bytes >= data.len() as u64 => {}
                Some(StepFault::Fail(err) | StepFault::Cut(_, err)) => return Err(err),
            }
        }
        self.write(path, data)
    }
    /// Creates a directory and its missing parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Lists a directory (without `.` and `..`), in no particular order.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;
    /// Opens the directory `path` for a walk: a handle that lists it and
    /// opens its children by name ([`FsOps::list_dir`],
    /// [`FsOps::open_child_dir`], [`FsOps::open_child_file`]). This
    /// default, and the defaults of those three, work on paths, through
    /// [`FsOps::read_dir`] and [`FsOps::open`]; it does not look at the
    /// disk (listing does).
    fn open_dir(&self, path: &Path) -> io::Result<DirHandle> {
        Ok(DirHandle::by_path(path.to_path_buf()))
    }
    /// Opens the subdirectory `name` (one name, as a listing gave it) of
    /// `parent`. A backend on descriptors opens it relative to `parent`'s
    /// and never follows a symlink in its place; the default only joins
    /// the path.
    fn open_child_dir(&self, parent: &DirHandle, name: &OsStr) -> io::Result<DirHandle> {
        Ok(DirHandle::by_path(parent.path().join(name)))
    }
    /// Lists `dir` into `out`, replacing what it held (without `.` and
    /// `..`, in no particular order), as [`FsOps::read_dir`] would.
    fn list_dir(&self, dir: &DirHandle, out: &mut Listing) -> io::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let entries = self.read_dir(dir.path())?;
        out.clear();
        for entry in entries {
            out.push(entry.name.as_bytes(), entry.kind);
        }
        Ok(())
    }
    /// Opens the file `name` of `dir` for streaming reads. It is meant for
    /// an entry that `dir`'s listing reported as a regular file: a backend
    /// on descriptors opens it relative to `dir`'s, never following a
    /// symlink in its place, without blocking (`O_NONBLOCK`), and does not
    /// check its type again; the default is [`FsOps::open`] of the joined
    /// path, which refuses anything but a regular file.
    fn open_child_file(&self, dir: &DirHandle, name: &OsStr) -> io::Result<Box<dyn Read + Send>> {
        self.open(&dir.path().join(name))
    }
    /// Creates a file that does not exist yet (never replacing or
    /// following anything at `path`) with exactly the permission bits
    /// `mode`, and opens it for writing.
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn Write + Send>>;
    /// Creates a private file (mode `0600`) named
    /// `{dir}/{prefix}-{16 hex digits}{suffix}` with an unpredictable,
    /// unused name, and opens it for writing. Returns its path.
    ///
    /// This is `tempfile`'s job done through the backend: `tempfile` can
    /// only create on the local disk by path, and the file must be made
    /// where the backend reaches (below the root handle of a confined
    /// workspace, in memory, on a remote machine), with `create_new`'s
    /// exclusive creation.
    fn create_temp(
        &self,
        dir: &Path,
        prefix: &str,
        suffix: &str,
    ) -> io::Result<(PathBuf, Box<dyn Write + Send>)> {
        first_free(random_names(dir, prefix, suffix), |path| {
            self.create_new(path, 0o600)
        })
    }
    /// Creates a private file (mode `0600`) named `{dir}/{stem}{suffix}`,
    /// or the first unused of `{stem}-2{suffix}`, `{stem}-3{suffix}` … (up
    /// to 1000), and opens it for writing. Returns its path. The names do
    /// not change from run to run, so `dir` should be a directory of one's
    /// own.
    fn create_numbered(
        &self,
        dir: &Path,
        stem: &str,
        suffix: &str,
    ) -> io::Result<(PathBuf, Box<dyn Write + Send>)> {
        let names = (1..=NUMBERED_NAME_ATTEMPTS).map(|n| {
            Ok(dir.join(if n == 1 {
                format!("{stem}{suffix}")
            } else {
                format!("{stem}-{n}{suffix}")
            }))
        });
        first_free(names, |path| self.create_new(path, 0o600))
    }
}

/// Unpredictable names `{dir}/{prefix}-{16 hex digits}{suffix}`, as many
/// as are worth trying.
pub(super) fn random_names<'a>(
    dir: &'a Path,
    prefix: &'a str,
    suffix: &'a str,
) -> impl Iterator<Item = io::Result<PathBuf>> + 'a {
    (0..TEMP_NAME_ATTEMPTS).map(move |_| {
        let n = getrandom::u64().map_err(io::Error::other)?;
        Ok(dir.join(format!("{prefix}-{n:016x}{suffix}")))
    })
}

/// Creates (with `create`, which must never replace anything) the first
/// of `names` that does not exist yet. A name that could not be made ends
/// the search with its error.
pub(super) fn first_free<T>(
    names: impl Iterator<Item = io::Result<PathBuf>>,
    mut create: impl FnMut(&Path) -> io::Result<T>,
) -> io::Result<(PathBuf, T)> {
    let mut last_err = None;
    for path in names {
        let path = path?;
        match create(&path) {
            Ok(file) => return Ok((path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last_err = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("no free file name")))
}

/// A boxed future, as returned by object-safe async trait methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Receives the raw bytes a process writes, in the order it wrote them.
pub type DataSink = Box<dyn FnMut(&[u8]) + Send>;

/// One shell command to run.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecRequest {
    /// The command text, given to `bash -c`.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// Kill the whole process group after this long.
    pub timeout: Option<Duration>,
    /// Extra environment variables, set on top of the inherited ones.
    pub env: Vec<(OsString, OsString)>,
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecEnd {
    /// The process exited by itself (`code` is `None` when a signal killed
    /// it; `signal` says which).
    Exited {
        /// The exit code.
        code: Option<i32>,
        /// The signal that ended the process, if any.
        signal: Option<i32>,
    },
    /// The timeout passed; the process group was killed.
    TimedOut,
    /// The cancellation token fired; the process group was killed.
    Cancelled,
}

/// Process operations (§common.7, `BashOperations`).
pub trait ProcessOps: Send + Sync + fmt::Debug {
    /// Runs `request.command` in a shell in its own process group, streams
    /// stdout and stderr (one pipe, so in write order) to `on_data`, and
    /// kills the whole group on timeout or cancellation.
    ///
    /// `Ok(TimedOut)` and `Ok(Cancelled)` mean the command's processes were
    /// killed; dropping the future before it resolves must kill them too.
    /// `on_data` is not called after the future resolves. `Err` means the
    /// command could not be started or followed (its group is killed); its
    /// text is shown to the model.
    fn exec(
        &self,
        request: ExecRequest,
        on_data: DataSink,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, io::Result<ExecEnd>>;

    /// The sandbox commands run in, if any (bash says once that its
    /// commands run sandboxed, D21). A wrapper forwards its inner
    /// operations' answer.
    fn sandbox(&self) -> Option<&std::sync::Arc<sandbox::Sandbox>> {
        None
    }
}
