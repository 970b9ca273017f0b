//! The ignore-rule hierarchy of a walk (D7): which `.ignore`,
//! `.gitignore` and `.git/info/exclude` rules apply to a path, read through
//! [`FsOps`] so every backend follows the same rules.
//!
//! Rules are hierarchical: a rule in `a/.gitignore` matches paths below
//! `a/` only, a deeper file wins over a shallower one, and `!pattern`
//! re-includes. Between kinds, `.ignore` wins over `.gitignore`, which wins
//! over `.git/info/exclude` (the order ripgrep and fd use). `.gitignore`
//! and `exclude` rules stop at a nested repository's root (a directory
//! holding `.git`), as git's do. Ignore files are read only when they are
//! regular files. On a confined workspace, an ignore file the workspace's
//! handle refuses (the `exclude` of a worktree whose `.git` file points
//! outside the workspace) is not read, as if it did not exist.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use ignore::gitignore::Gitignore;
use ignore::gitignore::GitignoreBuilder;

use crate::tools::fs_error::plain_reason;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::ops::is_outside_workspace;

/// The rules in force in one directory: its own and its ancestors'.
pub(super) type Rules = Option<Arc<Level>>;

/// The rules read in one directory, linked to its parent directory's.
///
/// The matchers are rooted at `.` and given paths relative to `root`,
/// cut off here as the `ignore` crate would cut them (a byte prefix, then
/// one `/`): rooted at the directory itself, every match compared the
/// matcher's root with `.` component by component first.
#[derive(Debug)]
pub(super) struct Level {
    /// The directory's path, as the walk's paths start with it.
    root: Box<[u8]>,
    /// `.ignore` of this directory.
    ignore: Option<Gitignore>,
    /// `.gitignore` of this directory.
    gitignore: Option<Gitignore>,
    /// `.git/info/exclude` when this directory is a repository root.
    exclude: Option<Gitignore>,
    /// Whether this directory holds `.git`: git rules from above stop here.
    repo_root: bool,
    parent: Option<Arc<Level>>,
}

/// Whether `path` is ignored by the rules in `rules` and its ancestors.
pub(super) fn is_ignored(rules: Option<&Arc<Level>>, path: &Path, is_dir: bool) -> bool {
    use ignore::Match;
    let mut by_ignore = Match::None;
    let mut by_gitignore = Match::None;
    let mut by_exclude = Match::None;
    let mut git_rules_apply = true;
    let mut level = rules.map(Arc::as_ref);
    let bytes = path.as_os_str().as_bytes();
    while let Some(current) = level {
        let path = relative_to(bytes, &current.root);
        if by_ignore.is_none()
            && let Some(rules) = &current.ignore
        {
            by_ignore = rules.matched(path, is_dir);
        }
        if git_rules_apply {
            if by_gitignore.is_none()
                && let Some(rules) = &current.gitignore
            {
                by_gitignore = rules.matched(path, is_dir);
            }
            if by_exclude.is_none()
                && let Some(rules) = &current.exclude
            {
                by_exclude = rules.matched(path, is_dir);
            }
        }
        git_rules_apply &= !current.repo_root;
        level = current.parent.as_deref();
    }
    let decided = if !by_ignore.is_none() {
        by_ignore
    } else if !by_gitignore.is_none() {
        by_gitignore
    } else {
        by_exclude
    };
    decided.is_ignore()
}

/// `path` relative to `root` as the `ignore` crate makes it for a matcher
/// rooted at `root`: a leading `./` dropped; then, when it holds a `/` and
/// starts with `root`'s bytes, those and one `/` after them, unless
/// nothing would be left.
fn relative_to<'p>(path: &'p [u8], root: &[u8]) -> &'p Path {
    let path = path.strip_prefix(b"./").unwrap_or(path);
    let cut = if path.contains(&b'/') {
        path.strip_prefix(root)
            .map(|rest| rest.strip_prefix(b"/").unwrap_or(rest))
            .filter(|rest| !rest.is_empty())
    } else {
        None
    };
    Path::new(OsStr::from_bytes(cut.unwrap_or(path)))
}

/// Reads one ignore file into a matcher for paths relative to `dir`. A missing file is
/// `None`; an unreadable one is recorded in `errors`. Lines that are not
/// valid globs are skipped, as git skips them.
fn load_rules(
    fs: &dyn FsOps,
    file: &Path,
    errors: &mut Vec<(PathBuf, String)>,
) -> Option<Gitignore> {
    let bytes = match fs.read(file) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == io::ErrorKind::NotFound || is_outside_workspace(&err) => {
            return None;
        }
        Err(err) => {
            errors.push((file.to_path_buf(), plain_reason(&err)));
            return None;
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut builder = GitignoreBuilder::new(".");
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // An invalid glob only loses its own line.
        let _ = builder.add_line(Some(file.to_path_buf()), line);
    }
    match builder.build() {
        Ok(rules) if rules.is_empty() => None,
        Ok(rules) => Some(rules),
        Err(err) => {
            errors.push((
                file.to_path_buf(),
                format!("it is not a valid ignore file: {err}"),
            ));
            None
        }
    }
}

/// The `info/exclude` file of the repository whose `.git` entry is `dot_git`
/// (a directory, or a `gitdir:` file for worktrees and submodules).
fn exclude_file(fs: &dyn FsOps, dir: &Path, dot_git_kind: FileKind) -> Option<PathBuf> {
    let dot_git = dir.join(".git");
    if dot_git_kind == FileKind::Dir {
        return Some(dot_git.join("info").join("exclude"));
    }
    let text = String::from_utf8(fs.read(&dot_git).ok()?).ok()?;
    let git_dir = dir.join(text.trim().strip_prefix("gitdir:")?.trim());
    // A linked worktree keeps shared files in the common directory.
    let common = match fs.read(&git_dir.join("commondir")) {
        Ok(bytes) => git_dir.join(String::from_utf8_lossy(&bytes).trim()),
        Err(_) => git_dir,
    };
    Some(common.join("info").join("exclude"))
}

/// The rules of `dir`, given the kinds of its `.ignore`, `.gitignore` and
/// `.git` entries (when present), on top of `parent`.
pub(super) fn level_for(
    fs: &dyn FsOps,
    dir: &Path,
    kinds: [Option<FileKind>; 3],
    parent: Option<Arc<Level>>,
    errors: &mut Vec<(PathBuf, String)>,
) -> Option<Arc<Level>> {
    let [ignore_kind, gitignore_kind, git_kind] = kinds;
    if ignore_kind.is_none() && gitignore_kind.is_none() && git_kind.is_none() {
        return parent;
    }
    // Ignore files are read only when they are regular files: a symlinked
    // one could point anywhere, and git refuses them too.
    let ignore = (ignore_kind == Some(FileKind::File))
        .then(|| load_rules(fs, &dir.join(".ignore"), errors))
        .flatten();
    let gitignore = (gitignore_kind == Some(FileKind::File))
        .then(|| load_rules(fs, &dir.join(".gitignore"), errors))
        .flatten();
    let exclude = git_kind
        .and_then(|kind| exclude_file(fs, dir, kind))
        .and_then(|file| load_rules(fs, &file, errors));
    let root = dir.as_os_str().as_bytes();
    Some(Arc::new(Level {
        root: root.strip_prefix(b"./").unwrap_or(root).into(),
        ignore,
        gitignore,
        exclude,
        repo_root: git_kind.is_some(),
        parent,
    }))
}

/// The rules of the directories from `base` down to `root`'s parent.
pub(super) fn ancestor_rules(
    fs: &dyn FsOps,
    root: &Path,
    base: Option<&Path>,
    errors: &mut Vec<(PathBuf, String)>,
) -> Option<Arc<Level>> {
    let base = base?;
    let rel = root.strip_prefix(base).ok()?;
    let mut dirs = vec![base.to_path_buf()];
    let mut current = base.to_path_buf();
    let parts: Vec<&OsStr> = rel.iter().collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        current.push(part);
        dirs.push(current.clone());
    }
    if parts.is_empty() {
        return None;
    }
    let mut rules = None;
    for dir in dirs {
        let kind = |name: &str| fs.symlink_metadata(&dir.join(name)).ok().map(|m| m.kind);
        let kinds = [kind(".ignore"), kind(".gitignore"), kind(".git")];
        rules = level_for(fs, &dir, kinds, rules, errors);
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(root: &str, lines: &[&str]) -> Gitignore {
        let mut builder = GitignoreBuilder::new(root);
        for line in lines {
            builder.add_line(None, line).unwrap();
        }
        builder.build().unwrap()
    }

    #[test]
    fn a_path_is_cut_as_the_ignore_crate_cuts_it() {
        let cut = |path: &str, root: &str| {
            relative_to(path.as_bytes(), root.as_bytes())
                .to_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(cut("/ws/a/b.rs", "/ws"), "a/b.rs");
        assert_eq!(cut("/ws/a/b.rs", "/ws/"), "a/b.rs");
        assert_eq!(cut("/ws/a/b.rs", "/ws/a"), "b.rs");
        // A byte prefix, as the crate compares it, not a component.
        assert_eq!(cut("/wsx/b.rs", "/ws"), "x/b.rs");
        // Not under the root, or nothing left: the whole path.
        assert_eq!(cut("/other/b.rs", "/ws"), "/other/b.rs");
        assert_eq!(cut("/ws", "/ws"), "/ws");
        assert_eq!(cut("./ws/b.rs", "ws"), "b.rs");
        assert_eq!(cut("b.rs", "b"), "b.rs");
    }

    /// A matcher rooted at `.` given [`relative_to`]'s path answers as the
    /// matcher rooted at the directory given the whole path.
    #[test]
    fn rooted_at_dot_with_cut_paths_matches_as_rooted_at_the_directory() {
        let lines = [
            "target",
            "/anchored",
            "sub/",
            "*.log",
            "!keep.log",
            "deep/**/x",
            "a/b",
            "**/test.*",
            "!e2e/**/test.*",
        ];
        let paths = [
            "/ws/target",
            "/ws/x/target",
            "/ws/anchored",
            "/ws/x/anchored",
            "/ws/sub",
            "/ws/q/sub",
            "/ws/a.log",
            "/ws/keep.log",
            "/ws/deep/1/2/x",
            "/ws/a/b",
            "/ws/c/a/b",
            "/ws/t/test.rs",
            "/ws/e2e/t/test.rs",
            "/ws",
            "/elsewhere/target",
        ];
        for root in ["/ws", "/ws/"] {
            let whole = rules(root, &lines);
            let dot = rules(".", &lines);
            for path in paths {
                for is_dir in [false, true] {
                    let expected = whole.matched(path, is_dir);
                    let got = dot.matched(relative_to(path.as_bytes(), root.as_bytes()), is_dir);
                    assert_eq!(
                        (got.is_ignore(), got.is_whitelist()),
                        (expected.is_ignore(), expected.is_whitelist()),
                        "{root} {path} {is_dir}"
                    );
                }
            }
        }
    }
}
