//! [`MemoryFs`]: an in-memory file system for tests and sandboxes.
//!
//! It models what the tools care about: files with bytes and a mode,
//! directories, symlinks (followed when resolving, like the OS), and
//! permission failures on demand.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::io::Read;
use std::io::Write;
use std::path::Component;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;

use super::DirEntry;
use super::FileKind;
use super::FsOps;
use super::Metadata;

#[derive(Clone, Debug)]
enum Node {
    File { data: Vec<u8>, mode: u32 },
    Dir,
    Symlink(PathBuf),
}

/// An in-memory file system. Cloning shares the tree.
///
/// A workspace over it keeps the tools off the disk (bash still runs
/// processes through the workspace's [`ProcessOps`](super::ProcessOps)):
///
/// ```
/// use std::sync::Arc;
/// use harness::tools::{CancellationToken, LocalProcess, MemoryFs, Registry, ToolCall};
/// use harness::tools::{UpdateSink, Workspace};
/// use serde_json::json;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let fs = MemoryFs::new();
/// fs.add_dir("/ws/src").add_file("/ws/src/main.rs", "fn main() {}\n");
/// let workspace = Workspace::new(Arc::new(fs.clone()), Arc::new(LocalProcess::default()), "/ws", true)?;
/// let registry = Registry::builder(workspace).build()?;
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// let run = |call: ToolCall| {
///     runtime.block_on(registry.dispatch(&call, CancellationToken::new(), UpdateSink::discard()))
/// };
/// let found = run(ToolCall::new("1", "find", json!({"pattern": "*.rs"})));
/// assert_eq!(found.text(), "src/main.rs");
/// run(ToolCall::new("2", "write", json!({"path": "notes.txt", "content": "kept in memory"})));
/// assert_eq!(fs.contents("/ws/notes.txt").as_deref(), Some(&b"kept in memory"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemoryFs {
    nodes: Arc<Mutex<BTreeMap<PathBuf, Node>>>,
}

const MAX_SYMLINK_HOPS: usize = 40;

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "No such file or directory")
}

impl MemoryFs {
    /// An empty file system holding only `/`.
    pub fn new() -> Self {
        let fs = Self::default();
        fs.lock().insert(PathBuf::from("/"), Node::Dir);
        fs
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<PathBuf, Node>> {
        // A panic while holding the lock cannot leave the map half-updated
        // (every update is one insert), so a poisoned lock is still usable.
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a directory and its parents.
    pub fn add_dir(&self, path: impl AsRef<Path>) -> &Self {
        let mut nodes = self.lock();
        for ancestor in path.as_ref().ancestors() {
            if ancestor.as_os_str().is_empty() {
                continue;
            }
            nodes.entry(ancestor.to_path_buf()).or_insert(Node::Dir);
        }
        self
    }

    /// Adds a file (mode 0644) and its parent directories.
    pub fn add_file(&self, path: impl AsRef<Path>, data: impl Into<Vec<u8>>) -> &Self {
        self.add_file_with_mode(path, data, 0o644)
    }

    /// Adds a file with a mode; a mode without the owner-read bit makes
    /// reads fail with "permission denied", without owner-write makes
    /// writes fail.
    pub fn add_file_with_mode(
        &self,
        path: impl AsRef<Path>,
        data: impl Into<Vec<u8>>,
        mode: u32,
    ) -> &Self {
        let path = path.as_ref();
        if let Some(parent) = path.parent() {
            self.add_dir(parent);
        }
        self.lock().insert(
            path.to_path_buf(),
            Node::File {
                data: data.into(),
                mode,
            },
        );
        self
    }

    /// Adds a symlink at `path` pointing to `target` (relative targets are
    /// relative to the link's directory).
    pub fn add_symlink(&self, path: impl AsRef<Path>, target: impl AsRef<Path>) -> &Self {
        let path = path.as_ref();
        if let Some(parent) = path.parent() {
            self.add_dir(parent);
        }
        self.lock().insert(
            path.to_path_buf(),
            Node::Symlink(target.as_ref().to_path_buf()),
        );
        self
    }

    /// The bytes of a file (following symlinks), if it exists.
    pub fn contents(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let nodes = self.lock();
        let real = resolve(&nodes, path.as_ref(), true).ok()?;
        match nodes.get(&real) {
            Some(Node::File { data, .. }) => Some(data.clone()),
            _ => None,
        }
    }
}

/// Resolves `path` component by component, following symlinks in every
/// directory part, and in the last part when `follow_last`.
fn resolve(nodes: &BTreeMap<PathBuf, Node>, path: &Path, follow_last: bool) -> io::Result<PathBuf> {
    fn parts(path: &Path) -> impl Iterator<Item = OsString> + '_ {
        path.components().filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
    }
    let mut hops = 0;
    let mut remaining: VecDeque<OsString> = parts(path).collect();
    let mut current = PathBuf::from("/");
    while let Some(part) = remaining.pop_front() {
        if part == ".." {
            current.pop();
            continue;
        }
        let candidate = current.join(&part);
        let is_last = remaining.is_empty();
        match nodes.get(&candidate) {
            Some(Node::Symlink(target)) if follow_last || !is_last => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                if target.is_absolute() {
                    current = PathBuf::from("/");
                }
                // Walk the target, then whatever followed the link.
                for part in parts(target).collect::<Vec<_>>().into_iter().rev() {
                    remaining.push_front(part);
                }
            }
            Some(Node::File { .. }) if !is_last => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    "Not a directory",
                ));
            }
            _ => current = candidate,
        }
    }
    Ok(current)
}

fn meta_of(node: &Node) -> Metadata {
    match node {
        Node::File { data, mode } => Metadata {
            kind: FileKind::File,
            len: data.len() as u64,
            mode: *mode,
        },
        Node::Dir => Metadata {
            kind: FileKind::Dir,
            len: 0,
            mode: 0o755,
        },
        Node::Symlink(target) => Metadata {
            kind: FileKind::Symlink,
            len: target.as_os_str().len() as u64,
            mode: 0o777,
        },
    }
}

impl FsOps for MemoryFs {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        let nodes = self.lock();
        let real = resolve(&nodes, path, true)?;
        nodes.get(&real).map(meta_of).ok_or_else(not_found)
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        let nodes = self.lock();
        let real = resolve(&nodes, path, false)?;
        nodes.get(&real).map(meta_of).ok_or_else(not_found)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let nodes = self.lock();
        let real = resolve(&nodes, path, true)?;
        if nodes.contains_key(&real) {
            Ok(real)
        } else {
            Err(not_found())
        }
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        let nodes = self.lock();
        let real = resolve(&nodes, path, false)?;
        match nodes.get(&real) {
            Some(Node::Symlink(target)) => Ok(target.clone()),
            Some(_) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a symbolic link",
            )),
            None => Err(not_found()),
        }
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        let data = self.read(path)?;
        Ok(Box::new(io::Cursor::new(data)))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let nodes = self.lock();
        let real = resolve(&nodes, path, true)?;
        match nodes.get(&real) {
            Some(Node::File { mode, .. }) if mode & 0o400 == 0 => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "Permission denied",
            )),
            Some(Node::File { data, .. }) => Ok(data.clone()),
            Some(Node::Dir) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "Is a directory",
            )),
            _ => Err(not_found()),
        }
    }

    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        let mut nodes = self.lock();
        let real = resolve(&nodes, path, true)?;
        let parent_is_dir = real
            .parent()
            .is_some_and(|p| matches!(nodes.get(p), Some(Node::Dir)));
        match nodes.get_mut(&real) {
            Some(Node::File { mode, .. }) if *mode & 0o200 == 0 => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "Permission denied",
            )),
            Some(Node::File { data: old, .. }) => {
                *old = data.to_vec();
                Ok(())
            }
            Some(Node::Dir) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "Is a directory",
            )),
            _ if !parent_is_dir => Err(not_found()),
            _ => {
                nodes.insert(
                    real,
                    Node::File {
                        data: data.to_vec(),
                        mode: 0o644,
                    },
                );
                Ok(())
            }
        }
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let real = {
            let nodes = self.lock();
            resolve(&nodes, path, true)?
        };
        {
            let nodes = self.lock();
            for ancestor in real.ancestors() {
                if let Some(Node::File { .. }) = nodes.get(ancestor) {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        "Not a directory",
                    ));
                }
            }
        }
        self.add_dir(real);
        Ok(())
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let nodes = self.lock();
        let real = resolve(&nodes, path, true)?;
        match nodes.get(&real) {
            Some(Node::Dir) => {}
            Some(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    "Not a directory",
                ));
            }
            None => return Err(not_found()),
        }
        Ok(nodes
            .iter()
            .filter(|(p, _)| p.parent() == Some(real.as_path()))
            .filter_map(|(p, node)| {
                Some(DirEntry {
                    name: p.file_name()?.to_os_string(),
                    kind: meta_of(node).kind,
                })
            })
            .collect())
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn Write + Send>> {
        let mut nodes = self.lock();
        let real = resolve(&nodes, path, false)?;
        if nodes.contains_key(&real) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "File exists"));
        }
        if !real
            .parent()
            .is_some_and(|p| matches!(nodes.get(p), Some(Node::Dir)))
        {
            return Err(not_found());
        }
        nodes.insert(
            real.clone(),
            Node::File {
                data: Vec::new(),
                mode,
            },
        );
        Ok(Box::new(Appender {
            fs: self.clone(),
            path: real,
        }))
    }
}

/// Appends what is written to one file of a [`MemoryFs`].
#[derive(Debug)]
struct Appender {
    fs: MemoryFs,
    path: PathBuf,
}

impl Write for Appender {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.fs.lock().get_mut(&self.path) {
            Some(Node::File { data, .. }) => {
                data.extend_from_slice(buf);
                Ok(buf.len())
            }
            _ => Err(not_found()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_symlinks_in_directories_and_files() {
        let fs = MemoryFs::new();
        fs.add_file("/ws/real/a.txt", "hello");
        fs.add_symlink("/ws/link", "real");
        fs.add_symlink("/ws/file-link", "/ws/real/a.txt");
        assert_eq!(fs.read(Path::new("/ws/link/a.txt")).unwrap(), b"hello");
        assert_eq!(
            fs.canonicalize(Path::new("/ws/file-link")).unwrap(),
            PathBuf::from("/ws/real/a.txt")
        );
        assert_eq!(
            fs.symlink_metadata(Path::new("/ws/file-link"))
                .unwrap()
                .kind,
            FileKind::Symlink
        );
        assert_eq!(
            fs.metadata(Path::new("/ws/file-link")).unwrap().kind,
            FileKind::File
        );
    }

    #[test]
    fn symlink_with_parent_components_resolves_like_the_os() {
        let fs = MemoryFs::new();
        fs.add_file("/etc/passwd", "root");
        fs.add_symlink("/ws/outside", "../etc");
        assert_eq!(
            fs.canonicalize(Path::new("/ws/outside/passwd")).unwrap(),
            PathBuf::from("/etc/passwd")
        );
    }

    #[test]
    fn permission_bits_are_enforced() {
        let fs = MemoryFs::new();
        fs.add_file_with_mode("/ws/secret", "x", 0o200);
        fs.add_file_with_mode("/ws/ro", "x", 0o444);
        let err = fs.read(Path::new("/ws/secret")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        let err = fs.write(Path::new("/ws/ro"), b"y").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    }

    #[test]
    fn create_new_never_replaces_and_keeps_the_mode() {
        let fs = MemoryFs::new();
        fs.add_file("/tmp/taken.log", "old");
        let err = fs
            .create_new(Path::new("/tmp/taken.log"), 0o600)
            .err()
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        let mut file = fs.create_new(Path::new("/tmp/new.log"), 0o600).unwrap();
        file.write_all(b"one ").unwrap();
        file.write_all(b"two").unwrap();
        assert_eq!(fs.contents("/tmp/new.log").unwrap(), b"one two");
        assert_eq!(fs.metadata(Path::new("/tmp/new.log")).unwrap().mode, 0o600);
        let (path, mut file) = fs.create_temp(Path::new("/tmp"), "p", ".log").unwrap();
        file.write_all(b"x").unwrap();
        assert_eq!(fs.contents(&path).unwrap(), b"x");
        let name = path.file_name().unwrap().to_str().unwrap();
        let hex = name
            .strip_prefix("p-")
            .unwrap()
            .strip_suffix(".log")
            .unwrap();
        assert_eq!(hex.len(), 16);
        assert!(
            hex.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }

    #[test]
    fn write_needs_an_existing_parent() {
        let fs = MemoryFs::new();
        fs.add_dir("/ws");
        assert_eq!(
            fs.write(Path::new("/ws/a/b.txt"), b"x").unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        fs.create_dir_all(Path::new("/ws/a")).unwrap();
        fs.write(Path::new("/ws/a/b.txt"), b"x").unwrap();
        assert_eq!(fs.contents("/ws/a/b.txt").unwrap(), b"x");
    }
}
