//! Building a scenario's temporary workspace: the fixture copied in, the
//! inline files written (text, bytes, repeats, symlinks, directories, BOMs,
//! modes), a repository checked out and `git init` when asked (through
//! [`super::git`], which keeps git on the workspace); and the run's cache
//! of small fixtures, each read once.
//!
//! Everything is created through a [`ConfinedFs`] on the workspace, the
//! same kernel-enforced handle the tools use (D1): a file declared below a
//! declared symlink that leads outside, or a path with `..` or an absolute
//! one, is refused instead of being written where the link points. Modes
//! keep only the permission bits (`0o777`): never setuid, setgid or sticky.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::ops::LocalFs;

use crate::scenario::load::FileContent;
use crate::scenario::load::WorkspacePlan;

use super::git::check_git_dir;
use super::git::git_checkout;
use super::git::git_init;

/// The mode bits a workspace entry may get: read, write and execute for
/// owner, group and others.
const PERMISSION_BITS: u32 = 0o777;

/// Fills `dir` (an empty directory) as `plan` says, and returns the bytes
/// of the files it wrote (a git checkout's are not counted).
/// With `fixtures`, the fixture is taken from there (read into it by the
/// first workspace that uses it) when it is small enough to be kept.
pub(crate) fn build(
    plan: &WorkspacePlan,
    dir: &Path,
    fixtures: Option<&FixtureCache>,
) -> Result<u64, String> {
    let fs = ConfinedFs::new(dir)
        .map_err(|err| format!("cannot open the workspace {}: {err}", dir.display()))?;
    if let Some(checkout) = &plan.git_checkout {
        git_checkout(checkout, dir)?;
    }
    let mut written = 0;
    if let Some(fixture) = &plan.fixture {
        let kept = fixtures.and_then(|cache| cache.get(fixture));
        written += match kept {
            Some(tree) => write_tree(&fs, &tree, fs.root()),
            None => copy_tree(&fs, fixture, fs.root()),
        }
        .map_err(|err| format!("cannot copy fixture {}: {err}", fixture.display()))?;
    }
    for (rel, content) in &plan.files {
        written += write_entry(&fs, rel, content)
            .map_err(|err| format!("cannot create workspace file `{rel}`: {err}"))?;
    }
    if plan.git {
        check_git_dir(&fs, "`git: true`")?;
        git_init(dir)?;
    }
    Ok(written)
}

/// Writes one declared entry; returns the bytes of the file written (0
/// for a symlink or a directory).
fn write_entry(fs: &ConfinedFs, rel: &str, content: &FileContent) -> io::Result<u64> {
    let path = fs.root().join(rel);
    if let Some(parent) = path.parent() {
        fs.create_dir_all(parent)?;
    }
    let is_symlink = || {
        fs.symlink_metadata(&path)
            .is_ok_and(|m| m.kind == FileKind::Symlink)
    };
    match content {
        FileContent::Bytes { mode, .. } | FileContent::Generated { mode, .. } => {
            // Replace whatever the fixture had at this path; a symlink is
            // replaced, not written through.
            if is_symlink() {
                fs.remove_file(&path)?;
            }
            let bytes = content.bytes().unwrap_or_default();
            fs.write(&path, &bytes)?;
            if let Some(mode) = mode {
                fs.set_mode(&path, mode & PERMISSION_BITS)?;
            }
            return Ok(bytes.len() as u64);
        }
        FileContent::Symlink(target) => {
            if fs.symlink_metadata(&path).is_ok() {
                fs.remove_file(&path)?;
            }
            fs.symlink(Path::new(target), &path)?;
        }
        FileContent::Dir(mode) => {
            fs.create_dir_all(&path)?;
            if let Some(mode) = mode {
                fs.set_mode(&path, mode & PERMISSION_BITS)?;
            }
        }
    }
    Ok(0)
}

/// The fixtures of one run, each read once, by the first workspace that
/// uses it, and written from memory into every workspace after it: a run
/// of many scenarios on one fixture reads it once, and every scenario gets
/// the same fixture even if its files change while the run goes on. A
/// fixture of more than [`MAX_KEPT_FIXTURE_BYTES`] or
/// [`MAX_KEPT_FIXTURE_ENTRIES`], one that cannot be read, or one past
/// [`MAX_KEPT_BYTES`] of kept fixtures in all is copied from the disk by
/// each workspace.
#[derive(Debug, Default)]
pub(crate) struct FixtureCache {
    kept: std::sync::Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// By the fixture's path; `None`: not kept (too big, or unreadable).
    trees: std::collections::HashMap<std::path::PathBuf, Option<std::sync::Arc<Vec<Node>>>>,
    bytes: u64,
}

/// The most bytes of files one kept fixture holds.
pub(crate) const MAX_KEPT_FIXTURE_BYTES: u64 = 8 * 1024 * 1024;

/// The most entries (files, directories, symlinks) of one kept fixture.
pub(crate) const MAX_KEPT_FIXTURE_ENTRIES: usize = 4096;

/// The most bytes of files all kept fixtures of a run hold.
pub(crate) const MAX_KEPT_BYTES: u64 = 64 * 1024 * 1024;

impl FixtureCache {
    /// The entries of the fixture at `path`, read now if no workspace read
    /// them yet; `None` when it is not kept.
    fn get(&self, path: &Path) -> Option<std::sync::Arc<Vec<Node>>> {
        let lock = || {
            self.kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(known) = lock().trees.get(path) {
            return known.clone();
        }
        // Read outside the lock; two workspaces starting at once may both
        // read it, and the first one kept wins.
        let mut budget = Budget {
            bytes: MAX_KEPT_FIXTURE_BYTES,
            entries: MAX_KEPT_FIXTURE_ENTRIES,
        };
        let read = read_tree(path, &mut budget).ok().flatten();
        let mut kept = lock();
        let size = MAX_KEPT_FIXTURE_BYTES - budget.bytes;
        let read = read.filter(|_| kept.bytes.saturating_add(size) <= MAX_KEPT_BYTES);
        let entry = kept
            .trees
            .entry(path.to_path_buf())
            .or_insert_with(|| read.map(std::sync::Arc::new));
        let found = entry.clone();
        if found.is_some() {
            kept.bytes = kept.bytes.saturating_add(size);
        }
        found
    }
}

/// One entry of a kept fixture.
#[derive(Debug)]
enum Node {
    File {
        name: std::ffi::OsString,
        mode: u32,
        data: Vec<u8>,
    },
    Dir {
        name: std::ffi::OsString,
        mode: u32,
        entries: Vec<Node>,
    },
    Symlink {
        name: std::ffi::OsString,
        target: std::path::PathBuf,
    },
}

/// What a fixture being read may still hold.
struct Budget {
    bytes: u64,
    entries: usize,
}

/// The entries of the directory `from`, sorted by name, as [`copy_tree`]
/// reads them; `Ok(None)` once past `budget`.
fn read_tree(from: &Path, budget: &mut Budget) -> io::Result<Option<Vec<Node>>> {
    use std::io::Read;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    let mut nodes = Vec::with_capacity(entries.len());
    for entry in entries {
        let Some(left) = budget.entries.checked_sub(1) else {
            return Ok(None);
        };
        budget.entries = left;
        let source = entry.path();
        let name = entry.file_name();
        let kind = entry.file_type()?;
        let node = if kind.is_symlink() {
            Node::Symlink {
                name,
                target: std::fs::read_link(&source)?,
            }
        } else if kind.is_dir() {
            let Some(inner) = read_tree(&source, budget)? else {
                return Ok(None);
            };
            Node::Dir {
                name,
                mode: std::fs::metadata(&source)?.permissions().mode(),
                entries: inner,
            }
        } else {
            // Opened without blocking, regular files only, as copy_tree.
            let reader = LocalFs.open(&source)?;
            let mode = std::fs::metadata(&source)?.permissions().mode();
            let mut data = Vec::new();
            // One byte more than the budget shows that it is past it.
            reader
                .take(budget.bytes.saturating_add(1))
                .read_to_end(&mut data)?;
            let Some(left) = budget.bytes.checked_sub(data.len() as u64) else {
                return Ok(None);
            };
            budget.bytes = left;
            Node::File { name, mode, data }
        };
        nodes.push(node);
    }
    Ok(Some(nodes))
}

/// Writes kept fixture entries into `to` (created through `fs`) as
/// [`copy_tree`] would copy them; returns the bytes of the files written.
fn write_tree(fs: &ConfinedFs, nodes: &[Node], to: &Path) -> io::Result<u64> {
    use std::io::Write;
    let mut written = 0;
    fs.create_dir_all(to)?;
    for node in nodes {
        match node {
            Node::Symlink { name, target } => fs.symlink(target, &to.join(name))?,
            Node::Dir {
                name,
                mode,
                entries,
            } => {
                let target = to.join(name);
                written += write_tree(fs, entries, &target)?;
                fs.set_mode(&target, mode & PERMISSION_BITS)?;
            }
            Node::File { name, mode, data } => {
                let mut writer = fs.create_new(&to.join(name), mode & PERMISSION_BITS)?;
                writer.write_all(data)?;
                written += data.len() as u64;
            }
        }
    }
    Ok(written)
}

/// Copies the directory tree `from` (read with the process's own reach)
/// into `to` (created through `fs`), keeping symlinks as symlinks and the
/// permission bits of files and directories. Anything but files,
/// directories and symlinks (a FIFO, a socket, a device) is an error.
/// Returns the bytes of the files copied.
fn copy_tree(fs: &ConfinedFs, from: &Path, to: &Path) -> io::Result<u64> {
    let mut copied = 0;
    fs.create_dir_all(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            fs.symlink(&std::fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            copied += copy_tree(fs, &source, &target)?;
            let mode = std::fs::metadata(&source)?.permissions().mode();
            fs.set_mode(&target, mode & PERMISSION_BITS)?;
        } else {
            // Opened without blocking, regular files only.
            let mut reader = LocalFs.open(&source).map_err(|err| {
                io::Error::new(err.kind(), format!("{}: {err}", source.display()))
            })?;
            let mode = std::fs::metadata(&source)?.permissions().mode();
            let mut writer = fs.create_new(&target, mode & PERMISSION_BITS)?;
            copied += io::copy(&mut reader, &mut writer)?;
        }
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    use super::super::git::resolve_rev;
    use crate::scenario::load::GitCheckout;

    #[test]
    fn builds_every_kind_of_entry() {
        let dir = tempfile::tempdir().unwrap();
        let plan = WorkspacePlan {
            fixture: None,
            git_checkout: None,
            files: vec![
                (
                    "a/b.txt".into(),
                    FileContent::Bytes {
                        data: b"hi".to_vec(),
                        mode: Some(0o600),
                    },
                ),
                (
                    "run.sh".into(),
                    FileContent::Bytes {
                        data: b"#!/bin/sh\n".to_vec(),
                        mode: Some(0o755),
                    },
                ),
                ("link".into(), FileContent::Symlink("a/b.txt".into())),
                ("empty".into(), FileContent::Dir(None)),
            ],
            git: true,
        };
        build(&plan, dir.path(), None).unwrap();
        let mode = |p: &str| {
            std::fs::metadata(dir.path().join(p))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(std::fs::read(dir.path().join("a/b.txt")).unwrap(), b"hi");
        assert_eq!(mode("a/b.txt"), 0o600);
        assert_eq!(mode("run.sh"), 0o755);
        assert_eq!(
            std::fs::read_link(dir.path().join("link")).unwrap(),
            Path::new("a/b.txt")
        );
        assert!(dir.path().join("empty").is_dir());
        assert!(dir.path().join(".git").is_dir());
    }

    fn mode_of(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    }

    /// Issue 10, item 3: `l: { symlink: <outside> }` then
    /// `l/existing.txt: { text: …, mode: "4755" }` overwrote and chmod'ed
    /// the outside file.
    #[test]
    fn files_below_a_symlink_that_leads_outside_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let (outside, ws) = (base.join("outside"), base.join("ws"));
        std::fs::create_dir(&outside).unwrap();
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(outside.join("existing.txt"), "original\n").unwrap();
        std::fs::set_permissions(
            outside.join("existing.txt"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let through_link = |rel: &str, content: FileContent| WorkspacePlan {
            fixture: None,
            git_checkout: None,
            files: vec![
                (
                    "l".into(),
                    FileContent::Symlink(outside.display().to_string()),
                ),
                (rel.into(), content),
            ],
            git: false,
        };
        let text = |mode| FileContent::Bytes {
            data: b"overwritten\n".to_vec(),
            mode,
        };
        let cases = [
            through_link("l/existing.txt", text(Some(0o4755))),
            through_link("l/new.txt", text(None)),
            through_link("l/sub/new.txt", text(None)),
            through_link("l/made", FileContent::Dir(Some(0o777))),
            through_link("l/link", FileContent::Symlink("x".into())),
        ];
        let errors: Vec<String> = cases
            .iter()
            .map(|plan| build(plan, &ws, None).unwrap_err())
            .collect();
        let outside_error = |rel: &str| {
            format!("cannot create workspace file `{rel}`: the path leads outside the workspace")
        };
        assert_eq!(
            errors,
            [
                outside_error("l/existing.txt"),
                outside_error("l/new.txt"),
                outside_error("l/sub/new.txt"),
                outside_error("l/made"),
                outside_error("l/link"),
            ]
        );
        let names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["existing.txt"]);
        assert_eq!(
            std::fs::read_to_string(outside.join("existing.txt")).unwrap(),
            "original\n"
        );
        assert_eq!(mode_of(&outside.join("existing.txt")), 0o644);
        // `..` and absolute paths are refused the same way.
        for rel in ["../escaped.txt", "/tmp/escaped.txt"] {
            let plan = WorkspacePlan {
                fixture: None,
                git_checkout: None,
                files: vec![(rel.into(), text(None))],
                git: false,
            };
            assert_eq!(build(&plan, &ws, None).unwrap_err(), outside_error(rel));
        }
        assert!(!base.join("escaped.txt").exists());
    }

    #[test]
    fn modes_keep_only_the_permission_bits() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir(src.path().join("shared")).unwrap();
        std::fs::write(src.path().join("suid"), "x").unwrap();
        std::fs::set_permissions(
            src.path().join("shared"),
            std::fs::Permissions::from_mode(0o3775),
        )
        .unwrap();
        std::fs::set_permissions(
            src.path().join("suid"),
            std::fs::Permissions::from_mode(0o4755),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let plan = WorkspacePlan {
            fixture: Some(src.path().to_path_buf()),
            git_checkout: None,
            files: vec![
                (
                    "run.sh".into(),
                    FileContent::Bytes {
                        data: b"#!/bin/sh\n".to_vec(),
                        mode: Some(0o6755),
                    },
                ),
                ("sticky".into(), FileContent::Dir(Some(0o1777))),
            ],
            git: false,
        };
        build(&plan, dir.path(), None).unwrap();
        let modes: Vec<u32> = ["run.sh", "sticky", "shared", "suid"]
            .iter()
            .map(|rel| mode_of(&dir.path().join(rel)))
            .collect();
        assert_eq!(modes, [0o755, 0o777, 0o775, 0o755]);
    }

    #[test]
    fn copies_fixtures_with_symlinks() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("src")).unwrap();
        std::fs::write(src.path().join("src/main.rs"), "fn main() {}").unwrap();
        std::os::unix::fs::symlink("src/main.rs", src.path().join("entry")).unwrap();
        let dst = tempfile::tempdir().unwrap();
        let plan = WorkspacePlan {
            fixture: Some(src.path().to_path_buf()),
            git_checkout: None,
            files: vec![],
            git: false,
        };
        build(&plan, dst.path(), None).unwrap();
        assert_eq!(
            std::fs::read_to_string(dst.path().join("src/main.rs")).unwrap(),
            "fn main() {}"
        );
        assert!(
            dst.path()
                .join("entry")
                .symlink_metadata()
                .unwrap()
                .is_symlink()
        );
    }

    /// Every entry under `root`: its path, kind, permission bits, and its
    /// bytes or link target.
    fn tree_of(root: &Path) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            let mut entries: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for path in entries {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let mode = meta.permissions().mode() & 0o7777;
                if meta.is_symlink() {
                    let target = std::fs::read_link(&path).unwrap();
                    out.push(format!("{rel} -> {}", target.display()));
                } else if meta.is_dir() {
                    out.push(format!("{rel}/ {mode:o}"));
                    walk(root, &path, out);
                } else {
                    let data = std::fs::read(&path).unwrap();
                    out.push(format!("{rel} {mode:o} {data:?}"));
                }
            }
        }
        let mut out = Vec::new();
        walk(root, root, &mut out);
        out
    }

    fn fixture_plan(fixture: &Path) -> WorkspacePlan {
        WorkspacePlan {
            fixture: Some(fixture.to_path_buf()),
            ..WorkspacePlan::default()
        }
    }

    #[test]
    fn a_kept_fixture_builds_what_a_copy_builds_and_stays_as_first_read() {
        let src = tempfile::tempdir().unwrap();
        let root = src.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("empty")).unwrap();
        std::fs::write(root.join("a/b/data.bin"), [0u8, 255, 10, 13]).unwrap();
        std::fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::write(root.join("secret"), "s").unwrap();
        std::os::unix::fs::symlink("a/b/data.bin", root.join("link")).unwrap();
        std::os::unix::fs::symlink("../nowhere", root.join("dangling")).unwrap();
        let chmod = |rel: &str, mode: u32| {
            std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode))
                .unwrap();
        };
        chmod("a", 0o755);
        chmod("a/b/data.bin", 0o644);
        chmod("run.sh", 0o755);
        chmod("secret", 0o600);
        chmod("a/b", 0o750);
        chmod("empty", 0o700);
        let plan = fixture_plan(root);
        let copied = tempfile::tempdir().unwrap();
        let copied_bytes = build(&plan, copied.path(), None).unwrap();
        let cache = FixtureCache::default();
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        assert_eq!(
            build(&plan, first.path(), Some(&cache)).unwrap(),
            copied_bytes
        );
        // The fixture changes after the first workspace read it.
        std::fs::write(root.join("secret"), "changed").unwrap();
        assert_eq!(
            build(&plan, second.path(), Some(&cache)).unwrap(),
            copied_bytes
        );
        let expected = [
            "a/ 755",
            "a/b/ 750",
            "a/b/data.bin 644 [0, 255, 10, 13]",
            "dangling -> ../nowhere",
            "empty/ 700",
            "link -> a/b/data.bin",
            "run.sh 755 [35, 33, 47, 98, 105, 110, 47, 115, 104, 10]",
            "secret 600 [115]",
        ];
        assert_eq!(tree_of(copied.path()), expected);
        assert_eq!(tree_of(first.path()), expected);
        assert_eq!(tree_of(second.path()), expected);
        assert_eq!(copied_bytes, 4 + 10 + 1);
    }

    #[test]
    fn a_fixture_past_a_bound_or_unreadable_is_copied_by_each_workspace() {
        // Past the bytes of one kept fixture.
        let big = tempfile::tempdir().unwrap();
        let size = usize::try_from(MAX_KEPT_FIXTURE_BYTES).unwrap() + 1;
        std::fs::write(big.path().join("big.bin"), vec![b'x'; size]).unwrap();
        // Past its entries.
        let many = tempfile::tempdir().unwrap();
        for index in 0..=MAX_KEPT_FIXTURE_ENTRIES {
            std::fs::write(many.path().join(format!("f{index}")), "").unwrap();
        }
        let cache = FixtureCache::default();
        for fixture in [big.path(), many.path()] {
            let ws = tempfile::tempdir().unwrap();
            build(&fixture_plan(fixture), ws.path(), Some(&cache)).unwrap();
            assert!(cache.get(fixture).is_none(), "{}", fixture.display());
        }
        assert_eq!(cache.kept.lock().unwrap().bytes, 0);
        // Not kept: a change shows in the next workspace.
        std::fs::write(big.path().join("big.bin"), "small now").unwrap();
        std::fs::set_permissions(
            big.path().join("big.bin"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let ws = tempfile::tempdir().unwrap();
        build(&fixture_plan(big.path()), ws.path(), Some(&cache)).unwrap();
        assert_eq!(
            tree_of(ws.path()),
            ["big.bin 644 [115, 109, 97, 108, 108, 32, 110, 111, 119]"]
        );
        // A FIFO fails every workspace with the copy's own words.
        let odd = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(
            odd.path()
                .join("pipe")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .unwrap();
        // SAFETY: a NUL-terminated path and a plain mode.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let copied = build(
            &fixture_plan(odd.path()),
            tempfile::tempdir().unwrap().path(),
            None,
        );
        for _ in 0..2 {
            let kept = build(
                &fixture_plan(odd.path()),
                tempfile::tempdir().unwrap().path(),
                Some(&cache),
            );
            assert_eq!(kept.unwrap_err(), copied.clone().unwrap_err());
        }
    }

    #[test]
    fn checks_out_a_repository_at_a_revision_and_writes_files_over_it() {
        let repo = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| git_in(repo.path(), args);
        git(&["init", "--quiet"]);
        std::fs::write(repo.path().join("a.txt"), "first\n").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "--quiet", "-m", "one"]);
        let first = git(&["rev-parse", "HEAD"]).trim().to_owned();
        std::fs::write(repo.path().join("a.txt"), "second\n").unwrap();
        git(&["commit", "--quiet", "-am", "two"]);
        let dir = tempfile::tempdir().unwrap();
        let plan = WorkspacePlan {
            git_checkout: Some(GitCheckout {
                repo: repo.path().to_path_buf(),
                rev: first,
            }),
            files: vec![(
                "b.txt".into(),
                FileContent::Bytes {
                    data: b"new".to_vec(),
                    mode: None,
                },
            )],
            ..WorkspacePlan::default()
        };
        build(&plan, dir.path(), None).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "first\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
            "new"
        );
        let missing = WorkspacePlan {
            git_checkout: Some(GitCheckout {
                repo: repo.path().to_path_buf(),
                rev: "no-such-rev".into(),
            }),
            ..WorkspacePlan::default()
        };
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            build(&missing, other.path(), None).unwrap_err(),
            format!(
                "`no-such-rev` names no commit in {0}; give a commit, tag or branch of that \
                 repository (`git -C {0} log --all --oneline` lists them)",
                repo.path().display()
            )
        );
    }

    /// Runs git in `dir` as a test user (no signing, `main` as the first
    /// branch): its output, trimmed; a failure fails the test.
    fn git_in(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// A repository with a commit on its default branch, a tag on it, and
    /// a second branch with another commit: (repo, default branch's
    /// commit, the other branch's commit).
    fn repo_with_branches() -> (tempfile::TempDir, String, String) {
        let repo = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| git_in(repo.path(), args);
        git(&["init", "--quiet"]);
        std::fs::write(repo.path().join("a.txt"), "on main\n").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "--quiet", "-m", "main"]);
        git(&["tag", "v1"]);
        let main = git(&["rev-parse", "HEAD"]);
        git(&["checkout", "--quiet", "-b", "feature"]);
        std::fs::write(repo.path().join("a.txt"), "on feature\n").unwrap();
        git(&["commit", "--quiet", "-am", "feature"]);
        let feature = git(&["rev-parse", "HEAD"]);
        git(&["checkout", "--quiet", "main"]);
        (repo, main, feature)
    }

    /// Issue 14 audit: `rev: feature` (a branch that is not the
    /// repository's default) failed with git's "'--detach' cannot be used
    /// with '-b/-B/--orphan'"; branches, tags and commits all check out.
    #[test]
    fn git_checkout_takes_a_branch_a_tag_or_a_commit() {
        let (repo, main, feature) = repo_with_branches();
        let checked_out = |rev: &str| {
            let dir = tempfile::tempdir().unwrap();
            let plan = WorkspacePlan {
                git_checkout: Some(GitCheckout {
                    repo: repo.path().to_path_buf(),
                    rev: rev.to_owned(),
                }),
                ..WorkspacePlan::default()
            };
            build(&plan, dir.path(), None).unwrap();
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap()
        };
        let revs = ["feature", "main", "v1", &feature, &main[..12], "feature~1"];
        let texts: Vec<String> = revs.iter().map(|rev| checked_out(rev)).collect();
        assert_eq!(
            texts,
            [
                "on feature\n",
                "on main\n",
                "on main\n",
                "on feature\n",
                "on main\n",
                "on main\n"
            ]
        );
        assert_eq!(resolve_rev(repo.path(), "feature"), Ok(feature));
    }

    #[test]
    fn a_directory_inside_a_repository_is_not_one() {
        let (repo, ..) = repo_with_branches();
        let inner = repo.path().join("inner");
        std::fs::create_dir(&inner).unwrap();
        let err = resolve_rev(&inner, "main").unwrap_err();
        let prefix = format!("{} is not a git repository (", inner.display());
        assert!(err.starts_with(&prefix), "{err}");
        assert!(err.ends_with("); give the path of a local clone"), "{err}");
    }

    /// Issue 10: `git: true` with a `.git` that is a symlink (declared in
    /// the files, or in the fixture), a `gitdir:` file, or a directory with
    /// a symlink inside made `git init` write outside the workspace.
    #[test]
    fn git_init_refuses_a_git_dir_that_leads_elsewhere() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let outside = base.join("outside");
        std::fs::create_dir(&outside).unwrap();
        let fixture = base.join("fixture");
        std::fs::create_dir(&fixture).unwrap();
        std::os::unix::fs::symlink(&outside, fixture.join(".git")).unwrap();
        let symlink = || FileContent::Symlink(outside.display().to_string());
        let text = |t: &str| FileContent::Bytes {
            data: t.as_bytes().to_vec(),
            mode: None,
        };
        let files = |files: Vec<(&str, FileContent)>| WorkspacePlan {
            files: files.into_iter().map(|(r, c)| (r.to_owned(), c)).collect(),
            git: true,
            ..WorkspacePlan::default()
        };
        let plans = [
            files(vec![(".git", symlink())]),
            WorkspacePlan {
                fixture: Some(fixture),
                git: true,
                ..WorkspacePlan::default()
            },
            files(vec![(
                ".git",
                text(&format!("gitdir: {}\n", outside.display())),
            )]),
            files(vec![(".git/objects", symlink())]),
        ];
        let errors: Vec<String> = plans
            .iter()
            .map(|plan| build(plan, tempfile::tempdir().unwrap().path(), None).unwrap_err())
            .collect();
        let not_a_dir = |what: &str| {
            format!(
                "the workspace's `.git` (from the fixture or the scenario's files) is {what}, not \
                 a directory: `git: true` would make git work where it points, outside the \
                 workspace; make `.git` a plain directory, or leave it out"
            )
        };
        assert_eq!(
            errors,
            [
                not_a_dir("a symlink"),
                not_a_dir("a symlink"),
                not_a_dir("a file (a `gitdir:` file points git elsewhere)"),
                "`.git/objects` (from the fixture or the scenario's files) is a symlink inside \
                 `.git`: `git: true` would make git follow it, maybe outside the workspace; \
                 remove it"
                    .to_owned(),
            ]
        );
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        // A plain `.git` directory with files in it is fine.
        let dir = tempfile::tempdir().unwrap();
        build(
            &files(vec![(".git/info/exclude", text("x/\n"))]),
            dir.path(),
            None,
        )
        .unwrap();
        assert!(dir.path().join(".git/HEAD").is_file());
    }
}
