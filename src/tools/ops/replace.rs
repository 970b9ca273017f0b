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
use super::Refusal;
use super::StepFault;
use super::TempLeftBehind;
use super::WriteStep;
use super::WriteSteps;

/// Flags of every open of a file: never block on a FIFO, never become a
/// controlling terminal.
pub(super) const OPEN_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOCTTY;

/// The primitives a backend gives [`write_replacing`].
pub(crate) trait Replace {
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
    Refusal::NotRegular.to_io()
}

/// Asks `steps` about `step`: an error now, or the number of bytes the
/// step may write before `error`.
fn ask(steps: &dyn WriteSteps, step: WriteStep) -> io::Result<Option<(u64, io::Error)>> {
    match steps.before(step) {
        None => Ok(None),
        Some(StepFault::Fail(err)) => Err(err),
        Some(StepFault::Cut(bytes, err)) => Ok(Some((bytes, err))),
    }
}

/// Writes `data` into `file`, the write step first asked; `cut` is a cut
/// asked for already (at the create step).
fn write_data(
    file: &mut File,
    data: &[u8],
    steps: &dyn WriteSteps,
    cut: Option<(u64, io::Error)>,
) -> io::Result<()> {
    let cut = match ask(steps, WriteStep::Write)? {
        Some(later) => Some(later),
        None => cut,
    };
    match cut {
        Some((bytes, err)) if bytes < data.len() as u64 => {
            // `bytes` is below a usize here.
            file.write_all(&data[..usize::try_from(bytes).unwrap_or(0)])?;
            Err(err)
        }
        _ => file.write_all(data),
    }
}

/// Whether a file that cannot be replaced (its directory does not let a
/// new file be created) may be overwritten in place: only when this name
/// is its only link. A file with other hard links would change under
/// those names too, and one of them may be outside the workspace (D1).
pub(super) fn may_overwrite_in_place(meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.nlink() > 1 {
        return Err(Refusal::HardLinkedInPlace.to_io());
    }
    Ok(())
}

/// Creates or replaces the file at `path` with `data`, `steps` told of
/// each step first (see [`WriteStep`]).
///
/// - A symlink is followed: its target is replaced, the link stays. A
///   dangling symlink is written through, so the file it names is created
///   (where the backend lets the kernel resolve it).
/// - An existing file keeps its permission bits (`0o777`) and, where the
///   process may set them, its owner and group. It must be writable:
///   replacing a read-only file fails as writing it would.
/// - When the directory does not let a new file be created (`EACCES`) but
///   the file is writable, the file is overwritten in place instead, unless
///   it has other hard links ([`may_overwrite_in_place`]).
/// - Anything but a regular file or a missing one is refused without being
///   opened in a way that could block.
/// - When a step after the temporary file's creation fails, the temporary
///   file is removed; if even that fails, the error says so
///   ([`TempLeftBehind`]).
pub(super) fn write_replacing(
    ops: &impl Replace,
    path: &Path,
    data: &[u8],
    steps: &dyn WriteSteps,
) -> io::Result<()> {
    match lstat_or_none(ops, path)? {
        Some(meta) if meta.kind == FileKind::Symlink => match ops.real(path) {
            Ok(target) => {
                let meta = lstat_or_none(ops, &target)?;
                replace(ops, &target, data, meta, steps)
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => overwrite(ops, path, data, steps),
            Err(err) => Err(err),
        },
        meta => replace(ops, path, data, meta, steps),
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
fn overwrite(
    ops: &impl Replace,
    path: &Path,
    data: &[u8],
    steps: &dyn WriteSteps,
) -> io::Result<()> {
    let cut = ask(steps, WriteStep::Create)?;
    let file = ops.open_write(path, true)?;
    overwrite_open(file, data, steps, cut)
}

fn overwrite_open(
    mut file: File,
    data: &[u8],
    steps: &dyn WriteSteps,
    cut: Option<(u64, io::Error)>,
) -> io::Result<()> {
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    file.set_len(0)?;
    write_data(&mut file, data, steps, cut)
}

fn replace(
    ops: &impl Replace,
    path: &Path,
    data: &[u8],
    meta: Option<Metadata>,
    steps: &dyn WriteSteps,
) -> io::Result<()> {
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
    let created = ask(steps, WriteStep::Create)
        .and_then(|cut| create_temp(ops, dir, mode.unwrap_or(0o666)).map(|made| (made, cut)));
    let ((temp, file), cut) = match created {
        Ok(created) => created,
        // A read-only directory holding a writable file: write in place,
        // when no other name would change with it.
        Err(err) if err.raw_os_error() == Some(libc::EACCES) => {
            return match existing {
                Some((file, meta)) => {
                    may_overwrite_in_place(&meta)?;
                    overwrite_open(file, data, steps, None)
                }
                None => Err(err),
            };
        }
        Err(err) => return Err(err),
    };
    into_place(ops, &temp, file, path, steps, |file| {
        write_data(file, data, steps, cut)?;
        if let (Some((_, old)), Some(mode)) = (&existing, mode) {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
            let new = file.metadata()?;
            if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
                // Only a privileged process may give a file away; others
                // keep the file as theirs, as any editor would.
                let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
            }
        }
        Ok(())
    })
}

/// The one end of every write by renaming: `fill` writes the temporary
/// file `temp` (open as `file`), which is then renamed over `path`; when a
/// step fails, the temporary file is removed, and if even that fails the
/// error says so ([`TempLeftBehind`]).
fn into_place(
    ops: &impl Replace,
    temp: &Path,
    mut file: File,
    path: &Path,
    steps: &dyn WriteSteps,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> io::Result<()> {
    let written = (|| {
        fill(&mut file)?;
        drop(file);
        ask(steps, WriteStep::Rename)?;
        ops.rename(temp, path)
    })();
    match written {
        Ok(()) => Ok(()),
        Err(cause) => {
            let removed = ask(steps, WriteStep::Remove).and_then(|_| ops.remove_file(temp));
            match removed {
                Ok(()) => Err(cause),
                Err(_) => Err(io::Error::new(
                    cause.kind(),
                    TempLeftBehind {
                        name: temp.file_name().map(ToOwned::to_owned).unwrap_or_default(),
                        cause,
                    },
                )),
            }
        }
    }
}

/// Writes `data` as a new file with exactly the permission bits `mode`,
/// renamed over `path`: whatever has that name (a file, a link, dangling
/// or not) is replaced, never written through, and a reader never sees
/// half of it. How the harness writes its own files: reports, snapshot
/// files, an import's scenarios.
#[cfg(feature = "cli")]
pub(crate) fn write_new_over(
    ops: &impl Replace,
    path: &Path,
    data: &[u8],
    mode: u32,
) -> io::Result<()> {
    write_new_over_with(ops, path, mode, |out| out.write_all(data))
}

#[cfg(feature = "cli")]
/// [`write_new_over`] of what `write` writes, as it writes it (buffered),
/// so a large file is never held whole in memory.
pub(crate) fn write_new_over_with(
    ops: &impl Replace,
    path: &Path,
    mode: u32,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    if ops.lstat(path).is_ok_and(|meta| meta.kind == FileKind::Dir) {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let (temp, file) = create_temp(ops, dir, mode)?;
    into_place(ops, &temp, file, path, &super::NoSteps, |file| {
        let mut buffered = io::BufWriter::with_capacity(1 << 16, &mut *file);
        write(&mut buffered)?;
        buffered.flush()?;
        drop(buffered);
        // The umask only takes bits away.
        file.set_permissions(std::fs::Permissions::from_mode(mode))
    })
}

/// A new, unused file `dir/.harness-{16 hex}.tmp`.
fn create_temp(ops: &impl Replace, dir: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    super::first_free(super::random_names(dir, ".harness", ".tmp"), |temp| {
        ops.create_new(temp, mode)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_with_other_hard_links_is_never_overwritten_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").unwrap();
        let alone = std::fs::metadata(&file).unwrap();
        assert!(may_overwrite_in_place(&alone).is_ok());
        std::fs::hard_link(&file, dir.path().join("b.txt")).unwrap();
        let linked = std::fs::metadata(&file).unwrap();
        let err = may_overwrite_in_place(&linked).unwrap_err();
        assert_eq!(
            (err.kind(), Refusal::of(&err)),
            (
                io::ErrorKind::PermissionDenied,
                Some(Refusal::HardLinkedInPlace)
            )
        );
    }
}
