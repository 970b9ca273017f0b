//! The output directory of an import, written without following links:
//! the directory is opened once as a handle, and every file and folder
//! below it is reached through that handle (`cap-std`: `openat2` with
//! `RESOLVE_BENEATH` on Linux, a walk with `O_NOFOLLOW` elsewhere), so no
//! link planted in it leads a write outside. A folder the import makes
//! (`<stem>.recorded/`, `fixtures/<stem>/…`) that exists as a symlink is
//! refused; a file is written as a new file renamed over the old name,
//! which replaces a link there instead of writing through it, as the
//! report writer does.

use std::io;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use cap_std::fs::OpenOptions;
use cap_std::fs::OpenOptionsExt as _;

use crate::tools::ops::DirReplace;

/// A directory of the output, by handle.
#[derive(Debug)]
pub(crate) struct OutDir {
    dir: Dir,
    /// Its path, for messages.
    path: PathBuf,
}

/// The error of a folder the import would make that is a symlink.
fn link_refused(path: &Path) -> io::Error {
    io::Error::other(format!(
        "{} is a symlink; the importer does not write through links (remove it, or choose \
         another -o)",
        path.display()
    ))
}

impl OutDir {
    /// The output directory `path`, made if missing (it is the user's own
    /// choice, so a link there is followed).
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(path)?;
        Ok(Self {
            dir: Dir::open_ambient_dir(path, ambient_authority())?,
            path: path.to_path_buf(),
        })
    }

    /// The path of `name` in this directory, for messages.
    pub(crate) fn show(&self, name: impl AsRef<Path>) -> PathBuf {
        self.path.join(name)
    }

    /// The folder `rel` (`a/b`) below this one, made where missing; a
    /// component that is a symlink or not a folder is refused, and so is
    /// one that is not a plain name (`..`, `/`).
    pub(crate) fn subdir(&self, rel: impl AsRef<Path>) -> io::Result<OutDir> {
        let mut dir = self.dir.try_clone()?;
        let mut path = self.path.clone();
        for part in rel.as_ref().components() {
            let std::path::Component::Normal(part) = part else {
                return Err(io::Error::other(format!(
                    "{}: not a plain name",
                    rel.as_ref().display()
                )));
            };
            path.push(part);
            match dir.create_dir(part) {
                Ok(()) => {}
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
            let meta = dir.symlink_metadata(part)?;
            if meta.file_type().is_symlink() {
                return Err(link_refused(&path));
            }
            if !meta.is_dir() {
                return Err(io::Error::other(format!(
                    "{} is not a directory",
                    path.display()
                )));
            }
            dir = dir.open_dir(part)?;
        }
        Ok(OutDir { dir, path })
    }

    /// Writes `bytes` as the file `name` of this directory: a new file
    /// (mode 0644) renamed over the old name, so that a link there is
    /// replaced, never written through, and a reader never sees half of it.
    pub(crate) fn write(&self, name: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
        self.write_mode(name, bytes, 0o644)
    }

    /// [`OutDir::write`] with the permission bits `mode`.
    pub(crate) fn write_mode(
        &self,
        name: impl AsRef<Path>,
        bytes: &[u8],
        mode: u32,
    ) -> io::Result<()> {
        let name = name.as_ref();
        if self
            .dir
            .symlink_metadata(name)
            .is_ok_and(|meta| meta.is_dir())
        {
            return Err(io::Error::other(format!(
                "{} is a directory",
                self.show(name).display()
            )));
        }
        crate::tools::ops::write_new_over(&DirReplace(&self.dir), name, bytes, mode)
    }

    /// Writes `bytes` as the file `name` only if nothing (not even a
    /// dangling link) has that name; `false` when something has.
    pub(crate) fn write_new(&self, name: impl AsRef<Path>, bytes: &[u8]) -> io::Result<bool> {
        let name = name.as_ref();
        match self.dir.open_with(name, &write_new()) {
            Ok(mut file) => {
                file.write_all(bytes)?;
                Ok(true)
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Makes `name` a symlink to `target` (as stored, not followed),
    /// replacing a file or link of that name.
    pub(crate) fn symlink(&self, target: &Path, name: impl AsRef<Path>) -> io::Result<()> {
        let name = name.as_ref();
        if let Ok(meta) = self.dir.symlink_metadata(name) {
            if meta.is_dir() {
                return Err(io::Error::other(format!(
                    "{} is a directory",
                    self.show(name).display()
                )));
            }
            self.dir.remove_file(name)?;
        }
        self.dir.symlink(target, name)
    }

    /// Whether something (a file, a folder, a link, dangling or not) has
    /// the name `name` (`a/b`) below this directory.
    pub(crate) fn exists(&self, name: impl AsRef<Path>) -> bool {
        self.dir.symlink_metadata(name).is_ok()
    }

    /// Removes `name`: a file or a link (never what it leads to), or a
    /// folder with everything in it. Nothing of that name is not an error.
    pub(crate) fn remove(&self, name: impl AsRef<Path>) -> io::Result<()> {
        let name = name.as_ref();
        match self.dir.symlink_metadata(name) {
            Ok(meta) if meta.is_dir() => self.dir.remove_dir_all(name),
            Ok(_) => self.dir.remove_file(name),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(err),
        }
    }

    /// Renames `name` to an unused hidden name in this directory, which it
    /// returns (to put it back with [`OutDir::rename`] or remove it).
    pub(crate) fn set_aside(&self, name: impl AsRef<Path>) -> io::Result<String> {
        for _ in 0..100 {
            let aside = format!(".harness-import-old-{:016x}", random()?);
            if self.exists(&aside) {
                continue;
            }
            self.dir.rename(name.as_ref(), &self.dir, &aside)?;
            return Ok(aside);
        }
        Err(io::Error::other("no free name to set a folder aside"))
    }

    /// Renames `from` to `to`, both in this directory.
    pub(crate) fn rename(&self, from: impl AsRef<Path>, to: impl AsRef<Path>) -> io::Result<()> {
        self.dir.rename(from, &self.dir, to)
    }
}

/// 64 random bits, for names nothing else uses.
fn random() -> io::Result<u64> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|err| io::Error::other(err.to_string()))?;
    Ok(u64::from_le_bytes(bytes))
}

/// Open options that create a file that does not exist yet (never
/// following a link), for writing, with mode 0644.
fn write_new() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o644);
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 21 item 6: a link planted in the output directory made the
    /// importer write outside it.
    #[test]
    fn links_in_the_output_are_replaced_or_refused_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("out");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(outside.join("s.yaml"), out.join("s.yaml")).unwrap();
        std::os::unix::fs::symlink(&outside, out.join("s.recorded")).unwrap();
        std::os::unix::fs::symlink(outside.join("h.yaml"), out.join("harness.yaml")).unwrap();
        let dir = OutDir::open(&out).unwrap();
        dir.write("s.yaml", b"scenario").unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("s.yaml")).unwrap(),
            "scenario"
        );
        assert!(!out.join("s.yaml").is_symlink());
        let err = dir.subdir("s.recorded").unwrap_err().to_string();
        assert!(err.ends_with("s.recorded is a symlink; the importer does not write through links (remove it, or choose another -o)"), "{err}");
        assert!(!dir.write_new("harness.yaml", b"x").unwrap());
        let sub = dir.subdir("fixtures/s/src").unwrap();
        sub.write("a.txt", b"a").unwrap();
        sub.symlink(Path::new("../../../outside"), "up").unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("fixtures/s/src/a.txt")).unwrap(),
            "a"
        );
        // Nothing was written outside, and no temporary file is left.
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".harness-"))
            .collect();
        assert_eq!(names, Vec::<String>::new());
    }
}
