//! The output directory of an import, written without following links:
//! the directory is opened once as a handle, and every file and folder
//! below it is reached through that handle (`cap-std`: `openat2` with
//! `RESOLVE_BENEATH` on Linux, a walk with `O_NOFOLLOW` elsewhere), so no
//! link planted in it leads a write outside. A folder the import makes
//! (`<stem>.recorded/`, `fixtures/<stem>/…`) that exists as a symlink is
//! refused; a file is written as a new file renamed over the old name,
//! which replaces a link there instead of writing through it, as the
//! report writer does.
//!
//! [`write_new_tree`] writes a set of new files (`harness init`'s suites)
//! whole or not at all: staged in a folder beside them, checked, then
//! moved into place.

use std::io;
use std::io::Write;
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

/// A folder the import would make or write in that is a symlink.
#[derive(Debug)]
struct IsLink(PathBuf);

impl std::fmt::Display for IsLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is a symlink; the importer does not write through links (remove it, or choose \
             another -o)",
            self.0.display()
        )
    }
}

impl std::error::Error for IsLink {}

/// The error of a folder the import would make that is a symlink.
fn link_refused(path: &Path) -> io::Error {
    io::Error::other(IsLink(path.to_path_buf()))
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
        self.subdir_noting(rel, &mut Vec::new())
    }

    /// [`OutDir::subdir`], noting in `made` each folder it made (relative
    /// to this one, parents first).
    fn subdir_noting(&self, rel: impl AsRef<Path>, made: &mut Vec<PathBuf>) -> io::Result<OutDir> {
        self.walk(rel.as_ref(), Some(made))?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    /// The folder `rel` below this one if it exists (`None` when a
    /// component is missing), never made; a component that is a symlink or
    /// not a folder is refused, as [`OutDir::subdir`] refuses it.
    pub(crate) fn existing_subdir(&self, rel: impl AsRef<Path>) -> io::Result<Option<OutDir>> {
        self.walk(rel.as_ref(), None)
    }

    /// The folder `rel` below this one, component by component: with
    /// `made`, each missing folder is made (and noted there); without it, a
    /// missing one is `None`. A component that is not a plain name, a
    /// symlink or not a folder is refused.
    fn walk(&self, rel: &Path, mut made: Option<&mut Vec<PathBuf>>) -> io::Result<Option<OutDir>> {
        let mut dir = self.dir.try_clone()?;
        let mut path = self.path.clone();
        let mut below = PathBuf::new();
        for part in rel.components() {
            let std::path::Component::Normal(part) = part else {
                return Err(io::Error::other(format!(
                    "{}: not a plain name",
                    rel.display()
                )));
            };
            path.push(part);
            below.push(part);
            if let Some(made) = made.as_deref_mut() {
                match dir.create_dir(part) {
                    Ok(()) => made.push(below.clone()),
                    Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(err) => return Err(err),
                }
            }
            let meta = match dir.symlink_metadata(part) {
                Ok(meta) => meta,
                Err(err) if made.is_none() && err.kind() == io::ErrorKind::NotFound => {
                    return Ok(None);
                }
                Err(err) => return Err(err),
            };
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
        Ok(Some(OutDir { dir, path }))
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
        self.write_with_mode(name, mode, |out| out.write_all(bytes))
    }

    /// [`OutDir::write`] of what `write` writes, as it writes it.
    pub(crate) fn write_with(
        &self,
        name: impl AsRef<Path>,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        self.write_with_mode(name, 0o644, write)
    }

    fn write_with_mode(
        &self,
        name: impl AsRef<Path>,
        mode: u32,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
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
        crate::tools::ops::write_new_over_with(&DirReplace(&self.dir), name, mode, write)
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

    /// A new file in this directory that has no name (made under an unused
    /// name, which is removed at once): the system removes it when it is
    /// closed.
    pub(crate) fn unnamed_file(&self) -> io::Result<std::fs::File> {
        let mut options = write_new();
        options.read(true).mode(0o600);
        for _ in 0..100 {
            let name = format!(".harness-import-{:016x}", random()?);
            match self.dir.open_with(&name, &options) {
                Ok(file) => {
                    self.dir.remove_file(&name)?;
                    return Ok(file.into_std());
                }
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
                Err(err) => return Err(err),
            }
        }
        Err(io::Error::other("no free name for a temporary file"))
    }
}

/// Why [`write_new_tree`] wrote nothing.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NewTreeError {
    /// These files exist already (their paths below the directory given).
    Exist(Vec<PathBuf>),
    /// A folder on the way is a symlink (its path).
    Link(PathBuf),
    /// Something could not be written, or the files did not pass the
    /// check: what, in words.
    Failed(String),
}

/// Writes `files` (paths relative to `dir` with `/`, and texts), none of
/// which may exist yet, whole or not at all. `dir` is made if missing (it
/// is the user's choice, so a link there is followed); below it, no
/// folder that is a symlink is written through. The files are first
/// written into a new hidden folder in `dir`, which `check` is given and
/// may refuse (with why); then each top folder that does not exist yet is
/// renamed into place at once, and the files of one that exists are
/// added to it. When anything fails, every file and folder written is
/// removed again, so that nothing is left that would make a second try
/// refuse.
pub(crate) fn write_new_tree(
    dir: &Path,
    files: &[(String, String)],
    check: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), NewTreeError> {
    let root = OutDir::open(dir)
        .map_err(|err| NewTreeError::Failed(format!("cannot make {}: {err}", dir.display())))?;
    let mut existing = Vec::new();
    for (rel, _) in files {
        let (parent, name) = split(rel)?;
        match root.existing_subdir(parent) {
            Ok(Some(folder)) if folder.exists(name) => existing.push(root.show(rel)),
            Ok(_) => {}
            Err(err) => return Err(tree_error(&root, parent, &err)),
        }
    }
    if !existing.is_empty() {
        return Err(NewTreeError::Exist(existing));
    }
    let stage_name = (0..100)
        .map(|_| random().map(|n| format!(".harness-new-{n:016x}")))
        .find(|name| name.as_ref().map_or(true, |name| !root.exists(name)))
        .unwrap_or_else(|| Err(io::Error::other("no free name for a folder")))
        .map_err(|err| NewTreeError::Failed(format!("cannot stage the files: {err}")))?;
    let staged = (|| {
        let stage = root
            .subdir(&stage_name)
            .map_err(|err| NewTreeError::Failed(format!("cannot stage the files: {err}")))?;
        for (rel, text) in files {
            let (parent, name) = split(rel)?;
            let written = stage
                .subdir(parent)
                .and_then(|folder| folder.write_new(name, text.as_bytes()));
            match written {
                Ok(true) => {}
                Ok(false) => {
                    return Err(NewTreeError::Failed(format!(
                        "{} is given twice",
                        root.show(rel).display()
                    )));
                }
                Err(err) => {
                    return Err(NewTreeError::Failed(format!(
                        "cannot write {}: {err}",
                        root.show(rel).display()
                    )));
                }
            }
        }
        check(&root.show(&stage_name)).map_err(NewTreeError::Failed)?;
        move_in(&root, &stage, files)
    })();
    let _ = root.remove(&stage_name);
    staged
}

/// `rel` as its folder and its file name.
fn split(rel: &str) -> Result<(&Path, &Path), NewTreeError> {
    let path = Path::new(rel);
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, Path::new(name))),
        _ => Err(NewTreeError::Failed(format!("{rel}: not a file name"))),
    }
}

/// The error of reaching the folder `rel` of `root`: a symlink on the way,
/// or another failure.
fn tree_error(root: &OutDir, rel: &Path, err: &io::Error) -> NewTreeError {
    match err.get_ref().and_then(|e| e.downcast_ref::<IsLink>()) {
        Some(IsLink(path)) => NewTreeError::Link(path.clone()),
        None => NewTreeError::Failed(format!(
            "cannot write into {}: {err}",
            root.show(rel).display()
        )),
    }
}

/// Moves the staged `files` from `stage` into `root`: a top folder that
/// does not exist there is renamed in whole, the files of one that does
/// are written into it as new files. On a failure, what was moved or
/// written is removed again.
fn move_in(root: &OutDir, stage: &OutDir, files: &[(String, String)]) -> Result<(), NewTreeError> {
    // What was put into `root`, in order: (path, is a folder made here).
    let mut placed: Vec<(PathBuf, bool)> = Vec::new();
    let result = (|| {
        let mut tops: Vec<&std::ffi::OsStr> = Vec::new();
        for (rel, _) in files {
            if let Some(top) = Path::new(rel).iter().next()
                && !tops.contains(&top)
            {
                tops.push(top);
            }
        }
        for top in tops {
            let inside: Vec<&(String, String)> = files
                .iter()
                .filter(|(rel, _)| Path::new(rel).iter().next() == Some(top))
                .collect();
            // A folder that is not there yet is moved in at once (a rename
            // does not replace a folder that holds anything, nor a file).
            let folder = inside
                .iter()
                .any(|(rel, _)| Path::new(rel).iter().count() > 1);
            if folder && !root.exists(top) && stage.dir.rename(top, &root.dir, top).is_ok() {
                placed.push((PathBuf::from(top), false));
                continue;
            }
            for (rel, text) in inside {
                let (parent, name) = split(rel)?;
                let mut made = Vec::new();
                let folder = root
                    .subdir_noting(parent, &mut made)
                    .map_err(|err| tree_error(root, parent, &err));
                placed.extend(made.into_iter().map(|m| (m, true)));
                match folder?.write_new(name, text.as_bytes()) {
                    Ok(true) => placed.push((PathBuf::from(rel), false)),
                    Ok(false) => return Err(NewTreeError::Exist(vec![root.show(rel)])),
                    Err(err) => {
                        return Err(NewTreeError::Failed(format!(
                            "cannot write {}: {err}",
                            root.show(rel).display()
                        )));
                    }
                }
            }
        }
        Ok(())
    })();
    if result.is_err() {
        for (path, folder) in placed.iter().rev() {
            let _ = if *folder {
                root.dir.remove_dir(path)
            } else {
                root.remove(path)
            };
        }
    }
    result
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

    /// Every path under `dir`, relative, sorted (folders with a `/`).
    fn tree(dir: &Path) -> Vec<String> {
        let mut found = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(next) = stack.pop() {
            for entry in std::fs::read_dir(&next).unwrap() {
                let path = entry.unwrap().path();
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                if path.is_symlink() {
                    found.push(format!("{rel} ->"));
                } else if path.is_dir() {
                    found.push(format!("{rel}/"));
                    stack.push(path);
                } else {
                    found.push(rel);
                }
            }
        }
        found.sort();
        found
    }

    fn files(names: &[&str]) -> Vec<(String, String)> {
        names
            .iter()
            .map(|n| ((*n).to_owned(), format!("text of {n}")))
            .collect()
    }

    /// Issue 42 item 5: a file name too long for the file system failed
    /// `harness init --mcp` after six files were written, and the next try
    /// refused to overwrite them. A failure leaves nothing; a second try
    /// writes the files.
    #[test]
    fn a_tree_is_written_whole_or_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("proj");
        let long = format!("s/{}.yaml", "x".repeat(300));
        let bad = files(&["s/a.yaml", "s/b.yaml", "s/f/c.txt", &long, "s/z.yaml"]);
        let err = write_new_tree(&dir, &bad, |_| Ok(())).unwrap_err();
        assert_eq!(
            err,
            NewTreeError::Failed(format!(
                "cannot write {}: File name too long (os error 36)",
                dir.join(&long).display()
            ))
        );
        assert_eq!(tree(&dir), Vec::<String>::new());
        // Refused by the check: nothing either, and the check saw them all.
        let good = files(&["s/a.yaml", "s/b.yaml", "s/f/c.txt", "s/z.yaml", "top.txt"]);
        let mut seen = Vec::new();
        let err = write_new_tree(&dir, &good, |staged| {
            seen = tree(staged);
            Err("no".to_owned())
        })
        .unwrap_err();
        assert_eq!(err, NewTreeError::Failed("no".to_owned()));
        assert_eq!(
            seen,
            [
                "s/",
                "s/a.yaml",
                "s/b.yaml",
                "s/f/",
                "s/f/c.txt",
                "s/z.yaml",
                "top.txt"
            ]
        );
        assert_eq!(tree(&dir), Vec::<String>::new());
        write_new_tree(&dir, &good, |_| Ok(())).unwrap();
        assert_eq!(tree(&dir), seen);
        assert_eq!(
            std::fs::read_to_string(dir.join("s/f/c.txt")).unwrap(),
            "text of s/f/c.txt"
        );
        // A second time, every file exists: nothing is written.
        let err = write_new_tree(&dir, &good, |_| Ok(())).unwrap_err();
        assert_eq!(
            err,
            NewTreeError::Exist(good.iter().map(|(rel, _)| dir.join(rel)).collect())
        );
        assert_eq!(tree(&dir), seen);
    }

    /// Into a folder that exists, the files are added beside what is there;
    /// one that appears while they are added takes back the ones added.
    #[test]
    fn files_join_a_folder_that_exists_or_are_taken_back() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::create_dir_all(dir.join("s/old")).unwrap();
        std::fs::write(dir.join("s/old/mine.txt"), "mine").unwrap();
        write_new_tree(dir, &files(&["s/a.yaml", "s/old/b.txt"]), |_| Ok(())).unwrap();
        assert_eq!(
            tree(dir),
            ["s/", "s/a.yaml", "s/old/", "s/old/b.txt", "s/old/mine.txt"]
        );
        // `s/new/y.txt` appears after the check.
        let err = write_new_tree(
            dir,
            &files(&["s/c.yaml", "s/new/x.txt", "s/new/y.txt"]),
            |_| {
                std::fs::create_dir_all(dir.join("s/new")).unwrap();
                std::fs::write(dir.join("s/new/y.txt"), "theirs").unwrap();
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(err, NewTreeError::Exist(vec![dir.join("s/new/y.txt")]));
        assert_eq!(
            tree(dir),
            [
                "s/",
                "s/a.yaml",
                "s/new/",
                "s/new/y.txt",
                "s/old/",
                "s/old/b.txt",
                "s/old/mine.txt"
            ]
        );
    }

    /// Issue 42 item 10: a folder on the way that is a symlink is refused
    /// before anything is written, never followed.
    #[test]
    fn a_tree_is_never_written_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("proj");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(outside.join("f")).unwrap();
        std::os::unix::fs::symlink("../outside", dir.join("s")).unwrap();
        let err = write_new_tree(&dir, &files(&["s/a.yaml"]), |_| Ok(())).unwrap_err();
        assert_eq!(err, NewTreeError::Link(dir.join("s")));
        std::fs::remove_file(dir.join("s")).unwrap();
        std::fs::create_dir_all(dir.join("s")).unwrap();
        std::os::unix::fs::symlink("../../outside/f", dir.join("s/f")).unwrap();
        let err = write_new_tree(&dir, &files(&["s/a.yaml", "s/f/b.txt"]), |_| Ok(())).unwrap_err();
        assert_eq!(err, NewTreeError::Link(dir.join("s/f")));
        assert_eq!(tree(&outside), ["f/"]);
        assert_eq!(tree(&dir), ["s/", "s/f ->"]);
    }
}
