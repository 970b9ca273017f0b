//! [`LocalFs`]: file-system operations on the real disk.

use std::io;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;

use super::DirEntry;
use super::FileKind;
use super::FsOps;
use super::Metadata;
use super::Walk;
use super::WalkEntry;
use super::WalkOptions;

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
    use std::os::unix::fs::PermissionsExt;
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

    fn walk(&self, root: &Path, options: &WalkOptions) -> io::Result<Walk> {
        // Fail early and clearly when the root itself is missing.
        std::fs::metadata(root)?;
        let mut builder = ignore::WalkBuilder::new(root);
        builder
            .hidden(false)
            .follow_links(false)
            .parents(true)
            .ignore(options.respect_ignore_files)
            .git_ignore(options.respect_ignore_files)
            .git_exclude(options.respect_ignore_files)
            .git_global(false)
            .require_git(false)
            .max_depth(options.max_depth)
            .filter_entry(|entry| entry.file_name() != ".git");
        let found = Mutex::new(Walk::default());
        builder.build_parallel().run(|| {
            let found = &found;
            let include_dirs = options.include_dirs;
            Box::new(move |result| {
                let mut local = Vec::new();
                let mut errors = Vec::new();
                match result {
                    Ok(entry) if entry.depth() == 0 => {}
                    Ok(entry) => {
                        let kind = entry.file_type().map(kind_of).unwrap_or(FileKind::Other);
                        if kind != FileKind::Dir || include_dirs {
                            local.push(WalkEntry {
                                path: entry.into_path(),
                                kind,
                            });
                        }
                    }
                    Err(err) => errors.push(walk_error(err)),
                }
                if let Ok(mut found) = found.lock() {
                    found.entries.extend(local);
                    found.errors.extend(errors);
                }
                ignore::WalkState::Continue
            })
        });
        let mut walk = found
            .into_inner()
            .map_err(|_| io::Error::other("a walker thread panicked"))?;
        // Component-wise order keeps a directory's contents together.
        walk.entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        walk.errors.sort();
        Ok(walk)
    }
}

fn walk_error(err: ignore::Error) -> (PathBuf, String) {
    fn path_of(err: &ignore::Error) -> Option<PathBuf> {
        match err {
            ignore::Error::WithPath { path, .. } => Some(path.clone()),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                path_of(err)
            }
            ignore::Error::Partial(errs) => errs.first().and_then(path_of),
            _ => None,
        }
    }
    (path_of(&err).unwrap_or_default(), err.to_string())
}
