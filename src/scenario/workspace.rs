//! Building a scenario's temporary workspace: the fixture copied in, the
//! inline files written (text, bytes, repeats, symlinks, directories, BOMs,
//! modes), and `git init` when asked.
//!
//! Everything is created through a [`ConfinedFs`] on the workspace, the
//! same kernel-enforced handle the tools use (D1): a file declared below a
//! declared symlink that leads outside, or a path with `..` or an absolute
//! one, is refused instead of being written where the link points. Modes
//! keep only the permission bits (`0o777`): never setuid, setgid or sticky.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::tools::ops::ConfinedFs;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::ops::LocalFs;

use super::load::FileContent;
use super::load::GitCheckout;
use super::load::WorkspacePlan;

/// The mode bits a workspace entry may get: read, write and execute for
/// owner, group and others.
const PERMISSION_BITS: u32 = 0o777;

/// Fills `dir` (an empty directory) as `plan` says.
pub fn build(plan: &WorkspacePlan, dir: &Path) -> Result<(), String> {
    let fs = ConfinedFs::new(dir)
        .map_err(|err| format!("cannot open the workspace {}: {err}", dir.display()))?;
    if let Some(checkout) = &plan.git_checkout {
        git_checkout(checkout, dir)?;
    }
    if let Some(fixture) = &plan.fixture {
        copy_tree(&fs, fixture, fs.root())
            .map_err(|err| format!("cannot copy fixture {}: {err}", fixture.display()))?;
    }
    for (rel, content) in &plan.files {
        write_entry(&fs, rel, content)
            .map_err(|err| format!("cannot create workspace file `{rel}`: {err}"))?;
    }
    if plan.git {
        git_init(dir)?;
    }
    Ok(())
}

fn write_entry(fs: &ConfinedFs, rel: &str, content: &FileContent) -> io::Result<()> {
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
            fs.write(&path, &content.bytes().unwrap_or_default())?;
            if let Some(mode) = mode {
                fs.set_mode(&path, mode & PERMISSION_BITS)?;
            }
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
    Ok(())
}

/// Copies the directory tree `from` (read with the process's own reach)
/// into `to` (created through `fs`), keeping symlinks as symlinks and the
/// permission bits of files and directories. Anything but files,
/// directories and symlinks (a FIFO, a socket, a device) is an error.
fn copy_tree(fs: &ConfinedFs, from: &Path, to: &Path) -> io::Result<()> {
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
            copy_tree(fs, &source, &target)?;
            let mode = std::fs::metadata(&source)?.permissions().mode();
            fs.set_mode(&target, mode & PERMISSION_BITS)?;
        } else {
            // Opened without blocking, regular files only.
            let mut reader = LocalFs.open(&source).map_err(|err| {
                io::Error::new(err.kind(), format!("{}: {err}", source.display()))
            })?;
            let mode = std::fs::metadata(&source)?.permissions().mode();
            let mut writer = fs.create_new(&target, mode & PERMISSION_BITS)?;
            io::copy(&mut reader, &mut writer)?;
        }
    }
    Ok(())
}

/// A shared clone of the repository (its objects are borrowed, nothing is
/// copied) with the revision checked out, detached, in `dir`.
fn git_checkout(checkout: &GitCheckout, dir: &Path) -> Result<(), String> {
    let git = |args: &[&std::ffi::OsStr], what: &str| -> Result<(), String> {
        let output = Command::new("git")
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .map_err(|err| {
                format!("`git_checkout` needs git on PATH, but running it failed: {err}")
            })?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    };
    git(
        &[
            "clone".as_ref(),
            "--quiet".as_ref(),
            "--shared".as_ref(),
            "--no-checkout".as_ref(),
            "--".as_ref(),
            checkout.repo.as_os_str(),
            dir.as_os_str(),
        ],
        &format!("cloning {}", checkout.repo.display()),
    )?;
    git(
        &[
            "-C".as_ref(),
            dir.as_os_str(),
            "-c".as_ref(),
            "advice.detachedHead=false".as_ref(),
            "checkout".as_ref(),
            "--quiet".as_ref(),
            "--detach".as_ref(),
            checkout.rev.as_ref(),
            "--".as_ref(),
        ],
        &format!("checking out {}", checkout.rev),
    )
}

fn git_init(dir: &Path) -> Result<(), String> {
    let output = Command::new("git")
        .args(["init", "--quiet"])
        .current_dir(dir)
        .output()
        .map_err(|err| format!("`git: true` needs git on PATH, but running it failed: {err}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git init failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        build(&plan, dir.path()).unwrap();
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
            .map(|plan| build(plan, &ws).unwrap_err())
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
            assert_eq!(build(&plan, &ws).unwrap_err(), outside_error(rel));
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
        build(&plan, dir.path()).unwrap();
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
        build(&plan, dst.path()).unwrap();
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

    #[test]
    fn checks_out_a_repository_at_a_revision_and_writes_files_over_it() {
        let repo = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(repo.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
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
        build(&plan, dir.path()).unwrap();
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
        let err = build(&missing, other.path()).unwrap_err();
        assert!(
            err.starts_with("checking out no-such-rev failed: "),
            "{err}"
        );
    }
}
