//! [`LocalFs`]: file-system operations on the real disk.

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

/// The local file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalFs;

fn kind_of(file_type: std::fs::FileType) -> FileKind {
    if file_type.is_symlink() {
        FileKind::Symlink
    } else if file_type.is_dir() {
        FileKind::Dir
    } else if file_type.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    }
}

fn convert(meta: &std::fs::Metadata) -> Metadata {
    Metadata {
        kind: kind_of(meta.file_type()),
        len: meta.len(),
        mode: meta.permissions().mode() & 0o7777,
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
        let file = std::fs::File::open(path)?;
        if file.metadata()?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        Ok(Box::new(file))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        if std::fs::metadata(path)?.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        std::fs::read(path)
    }

    fn write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        std::fs::write(path, data)
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
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(path)?;
        // The umask can only take bits away, but be exact (D18).
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(Box::new(file))
    }
}
