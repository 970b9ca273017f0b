//! The one directory walker behind `grep` and `find` (D7, D9), and the glob
//! matchers both tools use.
//!
//! [`walk`] runs over any [`FsOps`] (it only lists directories and reads
//! ignore files), so the local disk and the in-memory file system share one
//! set of rules:
//!
//! - `.gitignore`, `.ignore` and `.git/info/exclude` apply inside **and**
//!   outside git repositories. Rules are hierarchical: a rule in
//!   `a/.gitignore` matches paths below `a/` only, a deeper file wins over a
//!   shallower one, and `!pattern` re-includes. Between kinds, `.ignore`
//!   wins over `.gitignore`, which wins over `.git/info/exclude` (the order
//!   ripgrep and fd use). `.gitignore` and `exclude` rules stop at a nested
//!   repository's root (a directory holding `.git`), as git's do.
//! - Rules come only from the walk's [`ignore_base`](WalkOptions::ignore_base)
//!   (the tools pass the workspace root) downwards. Ignore files above the
//!   workspace and the user's global git excludes (`core.excludesFile`) are
//!   **not** read, so a search gives the same answer on every machine.
//! - The root itself is never filtered: a directory named explicitly is
//!   searched even when a rule would ignore it (as ripgrep does).
//! - Hidden entries are included; `.git` (a directory, or the file of a
//!   worktree or submodule) is never entered or reported; symlinks are
//!   reported as symlinks and never followed, so a walk cannot leave the
//!   tree it started in.
//! - Directories are listed in parallel (scoped threads over a shared work
//!   stack); the result is sorted by path, component by component, so the
//!   output does not depend on scheduling.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::sync::PoisonError;

use globset::GlobBuilder;
use globset::GlobMatcher;
use ignore::gitignore::Gitignore;
use ignore::gitignore::GitignoreBuilder;

use super::ops::DirEntry;
use super::ops::FileKind;
use super::ops::FsOps;
use super::ops::Walk;
use super::ops::WalkEntry;
use super::ops::WalkOptions;
use super::ops::Workspace;

/// Most worker threads one walk uses.
const MAX_WALK_THREADS: usize = 8;

/// The rules read in one directory, linked to its parent directory's.
#[derive(Debug)]
struct Level {
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
fn is_ignored(rules: Option<&Arc<Level>>, path: &Path, is_dir: bool) -> bool {
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
        Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
        Err(err) => {
            errors.push((
                file.to_path_buf(),
                format!("cannot read ignore file: {err}"),
            ));
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
            errors.push((file.to_path_buf(), format!("invalid ignore file: {err}")));
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
fn level_for(
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
fn ancestor_rules(
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

/// One directory waiting to be listed.
struct Job {
    dir: PathBuf,
    depth: usize,
    rules: Option<Arc<Level>>,
}

/// The shared work stack.
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

struct QueueState {
    jobs: Vec<Job>,
    /// Jobs taken and not finished yet.
    running: usize,
    stop: bool,
}

/// What one worker found.
#[derive(Default)]
struct Found {
    entries: Vec<WalkEntry>,
    errors: Vec<(PathBuf, String)>,
}

/// Walks `root` (which must be a directory) with the rules described in the
/// module docs. Fails only when the root cannot be used or the walk was
/// cancelled (`ErrorKind::Interrupted`); unreadable directories below the
/// root end up in [`Walk::errors`].
pub fn walk(fs: &dyn FsOps, root: &Path, options: &WalkOptions) -> io::Result<Walk> {
    if !fs.metadata(root)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "Not a directory",
        ));
    }
    let mut errors = Vec::new();
    let rules = if options.respect_ignore_files {
        ancestor_rules(fs, root, options.ignore_base.as_deref(), &mut errors)
    } else {
        None
    };
    let queue = Queue {
        state: Mutex::new(QueueState {
            jobs: vec![Job {
                dir: root.to_path_buf(),
                depth: 0,
                rules,
            }],
            running: 0,
            stop: false,
        }),
        ready: Condvar::new(),
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_WALK_THREADS);
    let found: Vec<Found> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| work(fs, &queue, options)))
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().unwrap_or_default())
            .collect()
    });
    if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "walk cancelled"));
    }
    let mut walk = Walk {
        entries: Vec::new(),
        errors,
    };
    for part in found {
        walk.entries.extend(part.entries);
        walk.errors.extend(part.errors);
    }
    // Component-wise order keeps a directory's contents together.
    walk.entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    walk.errors.sort();
    Ok(walk)
}

/// One worker: takes directories from the stack until none is left and no
/// other worker can add more.
fn work(fs: &dyn FsOps, queue: &Queue, options: &WalkOptions) -> Found {
    let mut found = Found::default();
    loop {
        let job = {
            let mut state = queue.state.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if options.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                    state.stop = true;
                }
                if state.stop {
                    queue.ready.notify_all();
                    return found;
                }
                if let Some(job) = state.jobs.pop() {
                    state.running += 1;
                    break job;
                }
                if state.running == 0 {
                    state.stop = true;
                    continue;
                }
                state = queue
                    .ready
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
        };
        let dir = job.dir.clone();
        let listed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            list(fs, job, options, &mut found)
        }));
        // A panic must not leave the other workers waiting for this job.
        let more = listed.unwrap_or_else(|_| {
            found
                .errors
                .push((dir, "internal error while listing".to_owned()));
            Vec::new()
        });
        let mut state = queue.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.running -= 1;
        let added = !more.is_empty();
        state.jobs.extend(more);
        if added || state.running == 0 {
            queue.ready.notify_all();
        }
    }
}

/// Lists one directory: reports its entries and returns its subdirectories
/// to descend into.
fn list(fs: &dyn FsOps, job: Job, options: &WalkOptions, found: &mut Found) -> Vec<Job> {
    let entries = match fs.read_dir(&job.dir) {
        Ok(entries) => entries,
        Err(err) => {
            found.errors.push((job.dir, err.to_string()));
            return Vec::new();
        }
    };
    let rules = if options.respect_ignore_files {
        let kind_of = |name: &str| {
            entries
                .iter()
                .find(|e| e.name == OsStr::new(name))
                .map(|e: &DirEntry| e.kind)
        };
        let kinds = [kind_of(".ignore"), kind_of(".gitignore"), kind_of(".git")];
        level_for(fs, &job.dir, kinds, job.rules, &mut found.errors)
    } else {
        None
    };
    let depth = job.depth + 1;
    let descend = options.max_depth.is_none_or(|max| depth < max);
    let mut jobs = Vec::new();
    for entry in entries {
        if entry.name == OsStr::new(".git") {
            continue;
        }
        let path = job.dir.join(&entry.name);
        let is_dir = entry.kind == FileKind::Dir;
        if rules.is_some() && is_ignored(rules.as_ref(), &path, is_dir) {
            continue;
        }
        if is_dir && descend {
            jobs.push(Job {
                dir: path.clone(),
                depth,
                rules: rules.clone(),
            });
        }
        if !is_dir || options.include_dirs {
            found.entries.push(WalkEntry {
                path,
                kind: entry.kind,
            });
        }
    }
    jobs
}

/// The path of `path` relative to `root`, with `/` separators, as tools
/// show it.
pub fn relative_display(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.to_string_lossy().into_owned()
}

/// Compiles one glob with the options the tools use: `*` and `?` never
/// match `/`, `{a,b}` alternates, `\` escapes.
pub fn compile_glob(pattern: &str, case_insensitive: bool) -> Result<GlobMatcher, globset::Error> {
    Ok(GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .case_insensitive(case_insensitive)
        .build()?
        .compile_matcher())
}

/// What a glob is matched against.
#[derive(Clone, Debug)]
enum Target {
    /// The entry's name (patterns without `/`).
    Name(GlobMatcher),
    /// The path relative to the search directory.
    Relative(GlobMatcher),
}

impl Target {
    fn is_match(&self, rel: &str) -> bool {
        match self {
            Self::Name(glob) => glob.is_match(rel.rsplit('/').next().unwrap_or(rel)),
            Self::Relative(glob) => glob.is_match(rel),
        }
    }
}

/// grep's `glob` file filter, with ripgrep's `--glob` meaning: a pattern
/// without `/` matches the file name at any depth, a pattern with `/` matches
/// the path relative to the search directory (a leading `/` anchors there
/// too), a trailing `/` matches directories (the files below them), and a
/// leading `!` excludes instead of selecting.
#[derive(Clone, Debug)]
pub struct FileFilter {
    target: Target,
    negated: bool,
    dirs_only: bool,
}

impl FileFilter {
    /// Compiles a filter; the error names what is wrong with the glob.
    pub fn new(glob: &str) -> Result<Self, globset::Error> {
        let (negated, rest) = match glob.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, glob),
        };
        let (dirs_only, rest) = match rest.strip_suffix('/') {
            Some(stripped) if !stripped.is_empty() => (true, stripped),
            _ => (false, rest),
        };
        let target = match rest.strip_prefix('/') {
            Some(anchored) => Target::Relative(compile_glob(anchored, false)?),
            None if rest.contains('/') => Target::Relative(compile_glob(rest, false)?),
            None => Target::Name(compile_glob(rest, false)?),
        };
        Ok(Self {
            target,
            negated,
            dirs_only,
        })
    }

    /// Whether the file at `rel` (relative to the search directory, `/`
    /// separators) is searched.
    pub fn allows(&self, rel: &str) -> bool {
        let ancestors = || {
            rel.match_indices('/')
                .map(|(i, _)| &rel[..i])
                .filter(|dir| !dir.is_empty())
        };
        let by_dir = || ancestors().any(|dir| self.target.is_match(dir));
        let hit = if self.dirs_only {
            by_dir()
        } else if self.negated {
            self.target.is_match(rel) || by_dir()
        } else {
            self.target.is_match(rel)
        };
        hit != self.negated
    }
}

/// find's pattern, with fd's `--glob` meaning (§find.4) on paths relative
/// to the search directory: a pattern without `/` matches names at any
/// depth; a pattern with `/` matches relative paths at any depth (it gets a
/// `**/` prefix unless it starts with `**/` or is `**`); a pattern that
/// starts with `/` matches either the absolute path or the path relative to
/// the search directory; a trailing `/` selects directories only. Matching
/// is case-insensitive unless the pattern has an uppercase letter (fd's
/// smart case).
#[derive(Clone, Debug)]
pub struct NamePattern {
    target: Target,
    absolute: Option<GlobMatcher>,
    dirs_only: bool,
}

impl NamePattern {
    /// Compiles a pattern; the error names what is wrong with the glob.
    pub fn new(pattern: &str) -> Result<Self, globset::Error> {
        let case_insensitive = !pattern.chars().any(char::is_uppercase);
        let (dirs_only, rest) = match pattern.strip_suffix('/') {
            Some(stripped) if !stripped.is_empty() => (true, stripped),
            _ => (false, pattern),
        };
        let mut absolute = None;
        let target = if let Some(anchored) = rest.strip_prefix('/') {
            absolute = Some(compile_glob(rest, case_insensitive)?);
            Target::Relative(compile_glob(anchored, case_insensitive)?)
        } else if rest.contains('/') {
            let full = if rest.starts_with("**/") || rest == "**" {
                rest.to_owned()
            } else {
                format!("**/{rest}")
            };
            Target::Relative(compile_glob(&full, case_insensitive)?)
        } else {
            Target::Name(compile_glob(rest, case_insensitive)?)
        };
        Ok(Self {
            target,
            absolute,
            dirs_only,
        })
    }

    /// Whether the entry at `abs` (shown as `rel`) is a result.
    pub fn matches(&self, abs: &Path, rel: &str, is_dir: bool) -> bool {
        if self.dirs_only && !is_dir {
            return false;
        }
        self.target.is_match(rel) || self.absolute.as_ref().is_some_and(|g| g.is_match(abs))
    }
}

// Shared by the search tools (grep, find, ls).

/// How many unreadable paths a notice names.
const NAMED_UNREADABLE: usize = 3;

/// A limit argument as a count: absent → `default`, `<= 0` → 1.
pub fn effective_limit(arg: Option<f64>, default: usize) -> usize {
    match arg {
        None => default.max(1),
        // `as` saturates: NaN → 0, huge → usize::MAX.
        Some(value) => (value as usize).max(1),
    }
}

/// Walks `root` (a search tool's resolved directory) with the workspace's
/// ignore rules, stopping when the call is cancelled; errors are worded for
/// the model.
pub(crate) fn search_walk(
    ctx: &super::contract::ToolContext,
    root: &Path,
    include_dirs: bool,
    display: &str,
) -> Result<Walk, super::error::ToolError> {
    let options = WalkOptions {
        respect_ignore_files: true,
        include_dirs,
        max_depth: None,
        ignore_base: ignore_base(ctx.workspace.root(), root),
        cancel: Some(ctx.cancel.clone()),
    };
    ctx.workspace.fs().walk(root, &options).map_err(|err| {
        if ctx.cancel.is_cancelled() {
            super::error::ToolError::cancelled()
        } else {
            super::error::ToolError::failed(super::fs_error::describe_io_error(
                "search", display, &err,
            ))
        }
    })
}

/// The directory whose ignore files apply above `root`: the workspace root
/// when `root` is inside it.
pub fn ignore_base(workspace_root: &Path, root: &Path) -> Option<PathBuf> {
    root.starts_with(workspace_root)
        .then(|| workspace_root.to_path_buf())
}

/// How a notice names a path the walk could not read: relative to the
/// search directory when below it, else as the workspace shows it.
pub fn shown_path(workspace: &Workspace, search_root: &Path, path: &Path) -> String {
    match path.strip_prefix(search_root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.to_string_lossy().into_owned(),
        _ => workspace.paths().display(path),
    }
}

/// The notice for paths that could not be read (D8).
pub fn unreadable_notice(paths: &[String]) -> String {
    let named: Vec<&str> = paths
        .iter()
        .take(NAMED_UNREADABLE)
        .map(String::as_str)
        .collect();
    let more = paths.len().saturating_sub(NAMED_UNREADABLE);
    let list = if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    };
    let (count, verb) = match paths.len() {
        1 => ("1 path".to_owned(), "was"),
        n => (format!("{n} paths"), "were"),
    };
    format!(
        "{count} could not be read and {verb} skipped: {list}. Check permissions with bash (ls \
         -l) if they matter"
    )
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
