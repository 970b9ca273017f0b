//! Operations: the only way a tool reaches the world.
//!
//! Tool code never calls `std::fs` or spawns processes itself. It goes
//! through [`FsOps`] (read, write, stat, list, walk) and [`ProcessOps`] (run
//! a shell command), bundled with the workspace root and the path policy in
//! a [`Workspace`]. [`LocalFs`] works on the real file system; [`MemoryFs`]
//! is an in-memory tree for tests and for embedders that want a sandbox
//! without a disk. A remote backend (SSH, a container) implements the same
//! two traits.
//!
//! The file-system trait is synchronous: tools call it from blocking tasks
//! where the work can be large (grep, long reads). Process execution is
//! asynchronous because it streams.

mod local;
mod memory;
pub(crate) mod process;

use std::ffi::OsString;
use std::fmt;
use std::future::Future;
use std::io;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use local::LocalFs;
pub use memory::MemoryFs;
pub use process::LocalProcess;

use super::path::PathPolicy;

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

/// What a walk should include.
#[derive(Clone, Debug)]
pub struct WalkOptions {
    /// Apply `.gitignore`, `.ignore` and `.git/info/exclude` (D7).
    pub respect_ignore_files: bool,
    /// Report directories as well as files.
    pub include_dirs: bool,
    /// Stop descending below this depth (the root is depth 0).
    pub max_depth: Option<usize>,
    /// An ancestor of the root (the workspace root) whose ignore files, and
    /// those of every directory down to the root, apply too. Ignore files
    /// above it are never read. `None`: only the root's own and below.
    pub ignore_base: Option<PathBuf>,
    /// Stops the walk early; the walk then fails with
    /// [`io::ErrorKind::Interrupted`].
    pub cancel: Option<CancellationToken>,
}

impl Default for WalkOptions {
    fn default() -> Self {
        Self {
            respect_ignore_files: true,
            include_dirs: false,
            max_depth: None,
            ignore_base: None,
            cancel: None,
        }
    }
}

/// One entry found by a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkEntry {
    /// The entry's path (the walk root joined with the relative path).
    pub path: PathBuf,
    /// The entry's own kind (symlinks are not followed).
    pub kind: FileKind,
}

/// The result of a walk: entries sorted by path, and the entries that could
/// not be read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walk {
    /// Every entry, sorted by path bytes.
    pub entries: Vec<WalkEntry>,
    /// Paths the walk could not enter or read, with the reason.
    pub errors: Vec<(PathBuf, String)>,
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
    /// Opens a file for streaming reads.
    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>>;
    /// Reads a whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.open(path)?.read_to_end(&mut buf)?;
        Ok(buf)
    }
    /// Creates or replaces a file's contents. A symlink's target is written.
    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()>;
    /// Creates a directory and its missing parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Lists a directory (without `.` and `..`), in no particular order.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;
    /// Walks a tree: hidden entries included, `.git/` never entered,
    /// symlinks not followed, ignore files applied as
    /// [`walk`](crate::tools::walk::walk) documents, entries sorted by path
    /// (D7, D9).
    fn walk(&self, root: &Path, options: &WalkOptions) -> io::Result<Walk>;
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
}

/// The world a tool call runs in: a root directory, the path policy, and
/// the operations that reach it.
#[derive(Clone, Debug)]
pub struct Workspace {
    fs: Arc<dyn FsOps>,
    process: Arc<dyn ProcessOps>,
    policy: PathPolicy,
}

impl Workspace {
    /// A workspace on the local disk, rooted at `root` (which must exist),
    /// confined by default (D1).
    pub fn local(root: impl AsRef<Path>) -> io::Result<Self> {
        let fs: Arc<dyn FsOps> = Arc::new(LocalFs);
        let policy = PathPolicy::new(fs.as_ref(), root.as_ref(), true)?;
        Ok(Self {
            fs,
            process: Arc::new(LocalProcess::default()),
            policy,
        })
    }

    /// A workspace over any operations.
    pub fn new(
        fs: Arc<dyn FsOps>,
        process: Arc<dyn ProcessOps>,
        root: impl AsRef<Path>,
        confine: bool,
    ) -> io::Result<Self> {
        let policy = PathPolicy::new(fs.as_ref(), root.as_ref(), confine)?;
        Ok(Self {
            fs,
            process,
            policy,
        })
    }

    /// Turns confinement on or off (`confine: false` restores pi's
    /// behaviour).
    pub fn with_confine(mut self, confine: bool) -> Self {
        self.policy.set_confine(confine);
        self
    }

    /// The file-system operations.
    pub fn fs(&self) -> &Arc<dyn FsOps> {
        &self.fs
    }

    /// The process operations.
    pub fn process(&self) -> &Arc<dyn ProcessOps> {
        &self.process
    }

    /// The path policy (root, confinement, display).
    pub fn paths(&self) -> &PathPolicy {
        &self.policy
    }

    /// The workspace root (its real path).
    pub fn root(&self) -> &Path {
        self.policy.root()
    }
}
