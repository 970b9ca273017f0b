//! [`ConfinedFs`]: the local disk below one directory, enforced by the
//! kernel (D1).
//!
//! The root is opened once as a directory handle, and every operation opens
//! its path relative to that handle in the same system call that resolves
//! it: on Linux `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`,
//! elsewhere (or on kernels without `openat2`) a walk component by
//! component with `O_NOFOLLOW`, both done by the `cap-std` crate. A symlink
//! that leads out of the root (an absolute one, or one with too many `..`)
//! is refused by the kernel at the moment of use, so a path checked a
//! moment earlier cannot be swapped for one that leaves: there is no window
//! between checking and opening. Symlinks that stay inside are followed as
//! usual.
//!
//! Paths given to [`FsOps`] are absolute, as everywhere in this module; a
//! path not under the root is refused without a system call. Refusals are
//! errors for which [`is_outside_workspace`](super::is_outside_workspace)
//! holds.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt;
use cap_std::fs::PermissionsExt;

use super::DirEntry;
use super::DirHandle;
use super::FileKind;
use super::FsOps;
use super::Listing;
use super::Metadata;
use super::NoSteps;
use super::Refusal;
use super::TempLeftBehind;
use super::WriteSteps;
use super::local::exact_mode;
use super::local::regular;
use super::outside_workspace;
use super::replace::OPEN_FLAGS;
use super::replace::Replace;
use super::replace::write_replacing;

/// The local disk below `root`, confined by the kernel (see the module
/// documentation). Cloning shares the handle.
#[derive(Clone, Debug)]
pub struct ConfinedFs {
    root: PathBuf,
    dir: Arc<Dir>,
    /// Test builds only: the child directories whose open by name fails
    /// as if the process were out of descriptors (`EMFILE`), to exercise
    /// the fallback of [`FsOps::open_child_dir`].
    #[cfg(test)]
    child_dir_fault: Option<fn(&OsStr) -> bool>,
}

/// cap-std's refusal of a path that leads out of its directory: a
/// permission error that did not come from the OS, nor from this module's
/// own refusals and wrapped causes.
fn is_escape(err: &io::Error) -> bool {
    let ours = err
        .get_ref()
        .is_some_and(|inner| inner.is::<Refusal>() || inner.is::<TempLeftBehind>());
    err.kind() == io::ErrorKind::PermissionDenied && err.raw_os_error().is_none() && !ours
}

/// Rewords cap-std's refusal as this module's outside-the-workspace error.
fn confined<T>(result: io::Result<T>) -> io::Result<T> {
    result.map_err(|err| {
        if is_escape(&err) && !super::is_outside_workspace(&err) {
            outside_workspace()
        } else {
            err
        }
    })
}

fn convert(meta: &cap_std::fs::Metadata) -> Metadata {
    let t = meta.file_type();
    Metadata {
        kind: FileKind::of(t.is_symlink(), t.is_dir(), t.is_file()),
        len: meta.len(),
        mode: meta.permissions().mode() & 0o7777,
    }
}

impl ConfinedFs {
    /// Opens a handle on the directory `root` (symlinks in `root` itself
    /// are resolved once, here).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = std::fs::canonicalize(root.as_ref())?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority())?;
        Ok(Self {
            root,
            dir: Arc::new(dir),
            #[cfg(test)]
            child_dir_fault: None,
        })
    }

    /// Test builds only: this file system, on which opening a child
    /// directory whose name `fault` selects fails with `EMFILE` (after
    /// the real open, whose descriptor is closed).
    #[cfg(test)]
    pub(crate) fn with_child_dir_fault(self, fault: fn(&OsStr) -> bool) -> Self {
        Self {
            child_dir_fault: Some(fault),
            ..self
        }
    }

    /// The root (its real path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` relative to the root; a path not under it is refused.
    fn rel<'a>(&self, path: &'a Path) -> io::Result<&'a Path> {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => Ok(Path::new(".")),
            Ok(rel) => Ok(rel),
            Err(_) => Err(outside_workspace()),
        }
    }

    fn handle(&self) -> Handle<'_> {
        Handle(&self.dir)
    }

    /// Creates a symlink at `link` whose contents are `target`, as given
    /// (it may point anywhere: following it is what is confined).
    pub fn symlink(&self, target: &Path, link: &Path) -> io::Result<()> {
        confined(self.dir.symlink_contents(target, self.rel(link)?))
    }

    /// Removes a file or a symlink (not what it points to).
    pub fn remove_file(&self, path: &Path) -> io::Result<()> {
        confined(self.dir.remove_file(self.rel(path)?))
    }

    /// Sets the permission bits of `path` (symlinks followed inside the
    /// root only).
    pub fn set_mode(&self, path: &Path, mode: u32) -> io::Result<()> {
        confined(
            self.dir
                .set_permissions(self.rel(path)?, cap_std::fs::Permissions::from_mode(mode)),
        )
    }
}

/// The [`Replace`] primitives on paths relative to a directory handle.
pub(crate) struct Handle<'a>(pub(crate) &'a Dir);

impl Replace for Handle<'_> {
    fn lstat(&self, path: &Path) -> io::Result<Metadata> {
        self.0.symlink_metadata(path).map(|m| convert(&m))
    }

    fn real(&self, path: &Path) -> io::Result<PathBuf> {
        self.0.canonicalize(path)
    }

    fn open_write(&self, path: &Path, create: bool) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options.write(true).create(create).custom_flags(OPEN_FLAGS);
        self.0.open_with(path, &options).map(|f| f.into_std())
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<File> {
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(OPEN_FLAGS);
        self.0.open_with(path, &options).map(|f| f.into_std())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.rename(from, self.0, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.remove_file(path)
    }
}

impl FsOps for ConfinedFs {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        confined(self.dir.metadata(self.rel(path)?).map(|m| convert(&m)))
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        confined(self.handle().lstat(self.rel(path)?))
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let real = confined(self.handle().real(self.rel(path)?))?;
        if real.as_os_str().is_empty() || real == Path::new(".") {
            Ok(self.root.clone())
        } else {
            Ok(self.root.join(real))
        }
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        confined(self.dir.read_link_contents(self.rel(path)?))
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(OPEN_FLAGS);
        let file = confined(self.dir.open_with(self.rel(path)?, &options))?;
        Ok(Box::new(regular(file.into_std())?))
    }

    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.write_in_steps(path, data, &NoSteps)
    }

    fn write_in_steps(&self, path: &Path, data: &[u8], steps: &dyn WriteSteps) -> io::Result<()> {
        confined(write_replacing(
            &self.handle(),
            self.rel(path)?,
            data,
            steps,
        ))
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let rel = self.rel(path)?;
        match self.dir.create_dir_all(rel) {
            // Something is there but is no directory reached inside: say
            // so when it is a symlink that leads outside.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                match confined(self.dir.metadata(rel)) {
                    Err(outside) if super::is_outside_workspace(&outside) => Err(outside),
                    _ => Err(err),
                }
            }
            result => confined(result),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut entries = Vec::new();
        for entry in confined(self.dir.read_dir(self.rel(path)?))? {
            let entry = entry?;
            let kind = entry.file_type().map_or(FileKind::Other, |t| {
                FileKind::of(t.is_symlink(), t.is_dir(), t.is_file())
            });
            entries.push(DirEntry {
                name: entry.file_name(),
                kind,
            });
        }
        Ok(entries)
    }

    fn open_dir(&self, path: &Path) -> io::Result<DirHandle> {
        let dir = confined(self.dir.open_dir(self.rel(path)?))?;
        // cap-std may hold a directory as an `O_PATH` descriptor, which
        // cannot be listed: reopen it (`.` of itself) for reading.
        use rustix::fs::OFlags;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir.into_std_file(), ".", flags, rustix::fs::Mode::empty())?;
        Ok(DirHandle::with_fd(path.to_path_buf(), fd))
    }

    fn open_child_dir(&self, parent: &DirHandle, name: &OsStr) -> io::Result<DirHandle> {
        let path = parent.path().join(one_name(name)?);
        let Some(fd) = parent.fd() else {
            return self.open_dir(&path);
        };
        use rustix::fs::OFlags;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let opened = rustix::fs::openat(fd, name, flags, rustix::fs::Mode::empty());
        #[cfg(test)]
        let opened = match self.child_dir_fault {
            Some(fault) if fault(name) => opened.and(Err(rustix::io::Errno::MFILE)),
            _ => opened,
        };
        match opened {
            Ok(fd) => Ok(DirHandle::with_fd(path, fd)),
            // Out of descriptors: this directory is reached by its path
            // from the root handle instead, one operation at a time.
            Err(rustix::io::Errno::MFILE | rustix::io::Errno::NFILE) => {
                Ok(DirHandle::by_path(path))
            }
            Err(err) => Err(err.into()),
        }
    }

    fn list_dir(&self, dir: &DirHandle, out: &mut Listing) -> io::Result<()> {
        let Some(fd) = dir.fd() else {
            let entries = self.read_dir(dir.path())?;
            out.clear();
            for entry in entries {
                use std::os::unix::ffi::OsStrExt;
                out.push(entry.name.as_bytes(), entry.kind);
            }
            return Ok(());
        };
        if dir.mark_listed() {
            rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(0))?;
        }
        list_fd(fd, out)
    }

    fn open_child_file(&self, dir: &DirHandle, name: &OsStr) -> io::Result<Box<dyn Read + Send>> {
        let Some(fd) = dir.fd() else {
            return self.open(&dir.path().join(one_name(name)?));
        };
        use rustix::fs::OFlags;
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let file = rustix::fs::openat(fd, one_name(name)?, flags, rustix::fs::Mode::empty())?;
        Ok(Box::new(File::from(file)))
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn Write + Send>> {
        let file = confined(self.handle().create_new(self.rel(path)?, mode))?;
        // The umask can only take bits away, but be exact (D18).
        exact_mode(&file, mode)?;
        Ok(Box::new(file))
    }
}

/// `name` when it is one plain name (no `/`, not `.` or `..`): a child is
/// opened by one name, so it cannot climb out of its parent.
fn one_name(name: &OsStr) -> io::Result<&OsStr> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a single name",
        ));
    }
    Ok(name)
}

/// Initial size of the buffer for raw directory records (it grows when one
/// record does not fit).
const DIRENT_BUFFER: usize = 32 << 10;

/// Lists the directory open as `fd` with raw `getdents` into the listing's
/// scratch buffer. An entry whose type the file system does not report is
/// looked at with `fstatat` (no symlink followed).
fn list_fd(fd: &std::os::fd::OwnedFd, out: &mut Listing) -> io::Result<()> {
    use rustix::fs::FileType;
    out.clear();
    let mut scratch = std::mem::take(&mut out.scratch);
    if scratch.capacity() < DIRENT_BUFFER {
        scratch.reserve(DIRENT_BUFFER);
    }
    let result = loop {
        let mut dir = rustix::fs::RawDir::new(fd, scratch.spare_capacity_mut());
        let mut grow = false;
        let mut failed = None;
        while let Some(entry) = dir.next() {
            let entry = match entry {
                Ok(entry) => entry,
                // A record larger than the buffer: grow it and go on.
                Err(rustix::io::Errno::INVAL) if out.is_empty() => {
                    grow = true;
                    break;
                }
                Err(err) => {
                    failed = Some(err);
                    break;
                }
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let file_type = match entry.file_type() {
                FileType::Unknown => {
                    rustix::fs::statat(fd, entry.file_name(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                        .map_or(FileType::Unknown, |stat| {
                            FileType::from_raw_mode(stat.st_mode)
                        })
                }
                known => known,
            };
            let kind = match file_type {
                FileType::RegularFile => FileKind::File,
                FileType::Directory => FileKind::Dir,
                FileType::Symlink => FileKind::Symlink,
                _ => FileKind::Other,
            };
            out.push(name, kind);
        }
        match failed {
            Some(err) => break Err(err.into()),
            None if grow => {
                let more = scratch.capacity() * 2;
                scratch.reserve(more);
            }
            None => break Ok(()),
        }
    };
    out.scratch = scratch;
    result
}

#[cfg(test)]
#[path = "confined_tests.rs"]
mod tests;
