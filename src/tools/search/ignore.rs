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
#[derive(Debug)]
pub(super) struct Level {
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
    while let Some(current) = level {
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

/// Reads one ignore file into a matcher rooted at `dir`. A missing file is
/// `None`; an unreadable one is recorded in `errors`. Lines that are not
/// valid globs are skipped, as git skips them.
fn load_rules(
    fs: &dyn FsOps,
    dir: &Path,
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
    let mut builder = GitignoreBuilder::new(dir);
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
        .then(|| load_rules(fs, dir, &dir.join(".ignore"), errors))
        .flatten();
    let gitignore = (gitignore_kind == Some(FileKind::File))
        .then(|| load_rules(fs, dir, &dir.join(".gitignore"), errors))
        .flatten();
    let exclude = git_kind
        .and_then(|kind| exclude_file(fs, dir, kind))
        .and_then(|file| load_rules(fs, dir, &file, errors));
    Some(Arc::new(Level {
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
