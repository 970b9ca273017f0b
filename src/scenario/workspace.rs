//! Building a scenario's temporary workspace: the fixture copied in, the
//! inline files written (text, bytes, repeats, symlinks, directories, BOMs,
//! modes), and `git init` when asked.

use std::path::Path;
use std::process::Command;

use super::load::FileContent;
use super::load::WorkspacePlan;

/// Fills `dir` (an empty directory) as `plan` says.
pub fn build(plan: &WorkspacePlan, dir: &Path) -> Result<(), String> {
    if let Some(fixture) = &plan.fixture {
        copy_tree(fixture, dir)
            .map_err(|err| format!("cannot copy fixture {}: {err}", fixture.display()))?;
    }
    for (rel, content) in &plan.files {
        write_entry(dir, rel, content)
            .map_err(|err| format!("cannot create workspace file `{rel}`: {err}"))?;
    }
    if plan.git {
        git_init(dir)?;
    }
    Ok(())
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

fn write_entry(dir: &Path, rel: &str, content: &FileContent) -> std::io::Result<()> {
    let path = dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match content {
        FileContent::Bytes { data, mode } => {
            // Replace whatever the fixture had at this path.
            if path.symlink_metadata().is_ok_and(|m| m.is_symlink()) {
                std::fs::remove_file(&path)?;
            }
            std::fs::write(&path, data)?;
            if let Some(mode) = mode {
                set_mode(&path, *mode)?;
            }
        }
        FileContent::Symlink(target) => {
            if path.symlink_metadata().is_ok() {
                std::fs::remove_file(&path)?;
            }
            std::os::unix::fs::symlink(target, &path)?;
        }
        FileContent::Dir(mode) => {
            std::fs::create_dir_all(&path)?;
            if let Some(mode) = mode {
                set_mode(&path, *mode)?;
            }
        }
    }
    Ok(())
}

/// Copies a directory tree, keeping symlinks as symlinks and modes as they
/// are.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            copy_tree(&source, &target)?;
            std::fs::set_permissions(&target, std::fs::metadata(&source)?.permissions())?;
        } else {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
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
        use std::os::unix::fs::PermissionsExt;
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

    #[test]
    fn copies_fixtures_with_symlinks() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join("src")).unwrap();
        std::fs::write(src.path().join("src/main.rs"), "fn main() {}").unwrap();
        std::os::unix::fs::symlink("src/main.rs", src.path().join("entry")).unwrap();
        let dst = tempfile::tempdir().unwrap();
        let plan = WorkspacePlan {
            fixture: Some(src.path().to_path_buf()),
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
}
