//! Writing a file by replacing it: the new contents go to a temporary file
//! in the same directory, which is then renamed over the old one. A reader
//! never sees half a file, and a write that fails leaves the old contents.
//!
//! [`write_replacing`] is the one algorithm behind [`super::LocalFs`] and
//! [`super::ConfinedFs`]; each gives it its primitives through [`Replace`],
//! with paths in its own terms (absolute for the local disk, relative to the
//! root handle for the confined one).

use std::fs::File;
use std::io;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;

use super::FileKind;
use super::Metadata;

/// Names tried for the temporary file before giving up.
const TEMP_ATTEMPTS: usize = 16;

/// Flags of every open of a file: never block on a FIFO, never become a
/// controlling terminal.
pub(super) const OPEN_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOCTTY;

/// The primitives a backend gives [`write_replacing`].
pub(super) trait Replace {
    /// Metadata of the entry itself (a symlink is a symlink).
    fn lstat(&self, path: &Path) -> io::Result<Metadata>;
    /// The real path of an existing `path`, in the same terms as `path`.
    fn real(&self, path: &Path) -> io::Result<PathBuf>;
    /// Opens for writing with [`OPEN_FLAGS`], without truncating;
    /// `create` creates a missing file with mode `0o666` (less the umask).
    fn open_write(&self, path: &Path, create: bool) -> io::Result<File>;
    /// Creates a file that does not exist, never following a symlink.
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<File>;
    /// Renames `from` over `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
}

fn not_regular() -> io::Error {
    io::Error::other("not a regular file (a pipe, socket or device)")
}

/// Creates or replaces the file at `path` with `data`.
///
/// - A symlink is followed: its target is replaced, the link stays. A
///   dangling symlink is written through, so the file it names is created
///   (where the backend lets the kernel resolve it).
/// - An existing file keeps its permission bits (`0o777`) and, where the
///   process may set them, its owner and group. It must be writable:
///   replacing a read-only file fails as writing it would.
/// - When the directory does not let a new file be created but the file is
///   writable, the file is overwritten in place instead.
/// - Anything but a regular file or a missing one is refused without being
///   opened in a way that could block.
pub(super) fn write_replacing(ops: &impl Replace, path: &Path, data: &[u8]) -> io::Result<()> {
    match lstat_or_none(ops, path)? {
        Some(meta) if meta.kind == FileKind::Symlink => match ops.real(path) {
            Ok(target) => {
                let meta = lstat_or_none(ops, &target)?;
                replace(ops, &target, data, meta)
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => overwrite(ops, path, data),
            Err(err) => Err(err),
        },
        meta => replace(ops, path, data, meta),
    }
}

fn lstat_or_none(ops: &impl Replace, path: &Path) -> io::Result<Option<Metadata>> {
    match ops.lstat(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err),
    }
}

/// Writes through `path` in place (truncating), creating what it names.
fn overwrite(ops: &impl Replace, path: &Path, data: &[u8]) -> io::Result<()> {
    let file = ops.open_write(path, true)?;
    overwrite_open(file, data)
}

fn overwrite_open(mut file: File, data: &[u8]) -> io::Result<()> {
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    file.set_len(0)?;
    file.write_all(data)
}

fn replace(ops: &impl Replace, path: &Path, data: &[u8], meta: Option<Metadata>) -> io::Result<()> {
    let existing = match meta.map(|m| m.kind) {
        None => None,
        Some(FileKind::Dir) => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        Some(FileKind::Other) => return Err(not_regular()),
        // A file, or a symlink swapped in since: the rename replaces the
        // name itself, which stays where it is.
        Some(FileKind::File | FileKind::Symlink) => match ops.open_write(path, false) {
            Ok(file) => {
                let meta = file.metadata()?;
                if !meta.is_file() {
                    return Err(not_regular());
                }
                Some((file, meta))
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(err),
        },
    };
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mode = existing.as_ref().map(|(_, meta)| meta.mode() & 0o777);
    let (temp, mut file) = match create_temp(ops, dir, mode.unwrap_or(0o666)) {
        Ok(created) => created,
        // A read-only directory holding a writable file: write in place.
        Err(err) if err.raw_os_error() == Some(libc::EACCES) && existing.is_some() => {
            return match existing {
                Some((file, _)) => overwrite_open(file, data),
                None => Err(err),
            };
        }
        Err(err) => return Err(err),
    };
    let written = (|| {
        file.write_all(data)?;
        if let (Some((_, old)), Some(mode)) = (&existing, mode) {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            let new = file.metadata()?;
            if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
                // Only a privileged process may give a file away; others
                // keep the file as theirs, as any editor would.
                let _ = std::os::unix::fs::fchown(&file, Some(old.uid()), Some(old.gid()));
            }
        }
        drop(file);
        ops.rename(&temp, path)
    })();
    if written.is_err() {
        let _ = ops.remove_file(&temp);
    }
    written
}

/// A new, unused file `dir/.harness-{16 hex}.tmp`.
fn create_temp(ops: &impl Replace, dir: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    let mut last_err = None;
    for _ in 0..TEMP_ATTEMPTS {
        let random = getrandom::u64().map_err(io::Error::other)?;
        let temp = dir.join(format!(".harness-{random:016x}.tmp"));
        match ops.create_new(&temp, mode) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last_err = Some(err),
            Err(err) => return Err(err),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("no free temporary file name")))
}
