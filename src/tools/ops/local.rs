//! [`LocalFs`]: file-system operations on the real disk, with the process's
//! own reach (no confinement; see [`super::ConfinedFs`] for that).

use std::fs::File;
use std::io;
use std::io::Read;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;

use super::DirEntry;
use super::FileKind;
use super::FsOps;
use super::Metadata;
use super::NoSteps;
use super::Refusal;
use super::WriteSteps;
use super::replace::OPEN_FLAGS;
use super::replace::Replace;
use super::replace::write_replacing;

/// The local file system, reached with the process's own permissions:
/// absolute paths and symlinks lead wherever they lead. This is what
/// `confine: false` uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFs;

pub(super) fn kind_of(t: std::fs::FileType) -> FileKind {
    FileKind::of(t.is_symlink(), t.is_dir(), t.is_file())
}

pub(super) fn convert(meta: &std::fs::Metadata) -> Metadata {
    Metadata {
        kind: kind_of(meta.file_type()),
        len: meta.len(),
        mode: meta.permissions().mode() & 0o7777,
    }
}

/// Checks that an opened file is a regular file: a directory or anything
/// else (opened without blocking) is refused.
pub(super) fn regular(file: File) -> io::Result<File> {
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    if !meta.is_file() {
        return Err(Refusal::NotRegular.to_io());
    }
    Ok(file)
}

/// Applies exactly `mode` to a new file (the umask only takes bits away).
pub(super) fn exact_mode(file: &File, mode: u32) -> io::Result<()> {
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

impl Replace for LocalFs {
    fn lstat(&self, path: &Path) -> io::Result<Metadata> {
        self.symlink_metadata(path)
    }

    fn real(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn open_write(&self, path: &Path, create: bool) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create(create)
            .custom_flags(OPEN_FLAGS)
            .open(path)
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(OPEN_FLAGS)
            .open(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
}

impl FsOps for LocalFs {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        std::fs::metadata(path).map(|m| convert(&m))
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        std::fs::symlink_metadata(path).map(|m| convert(&m))
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        std::fs::read_link(path)
    }

    fn open(&self, path: &Path) -> io::Result<Box<dyn Read + Send>> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OPEN_FLAGS)
            .open(path)?;
        Ok(Box::new(regular(file)?))
    }

    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        write_replacing(self, path, data, &NoSteps)
    }

    fn write_in_steps(&self, path: &Path, data: &[u8], steps: &dyn WriteSteps) -> io::Result<()> {
        write_replacing(self, path, data, steps)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(path)? {
            let entry = entry?;
            let kind = entry.file_type().map(kind_of).unwrap_or(FileKind::Other);
            entries.push(DirEntry {
                name: entry.file_name(),
                kind,
            });
        }
        Ok(entries)
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn Write + Send>> {
        let file = Replace::create_new(self, path, mode)?;
        // The umask can only take bits away, but be exact (D18).
        exact_mode(&file, mode)?;
        Ok(Box::new(file))
    }
}
