//! The one directory walker behind `grep` and `find` (D7, D9).
//!
//! [`walk`] runs over any [`FsOps`] (it only lists directories and reads
//! ignore files), so the local disk and the in-memory file system share one
//! set of rules:
//!
//! - the ignore files apply inside **and** outside git repositories, as
//!   [`super::ignore`] describes;
//! - rules come only from the walk's [`ignore_base`](WalkOptions::ignore_base)
//!   (the tools pass the workspace root) downwards. Ignore files above the
//!   workspace and the user's global git excludes (`core.excludesFile`) are
//!   **not** read, so a search gives the same answer on every machine;
//! - the root itself is never filtered: a directory named explicitly is
//!   searched even when a rule would ignore it (as ripgrep does);
//! - hidden entries are included; `.git` (a directory, or the file of a
//!   worktree or submodule) is never entered or reported; symlinks are
//!   reported as symlinks and never followed, so a walk cannot leave the
//!   tree it started in;
//! - directories are listed in parallel (scoped threads over a shared work
//!   stack); the result is sorted by path, component by component, so the
//!   output does not depend on scheduling;
//! - [`walk_visiting`] also hands each entry to a per-thread visitor as it
//!   is found, so a caller can work on it (grep searches files) while the
//!   walk goes on; the entries still come back sorted at the end.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Condvar;
use std::sync::Mutex;
use std::sync::PoisonError;

use tokio_util::sync::CancellationToken;

use super::ignore::Rules;
use super::ignore::ancestor_rules;
use super::ignore::is_ignored;
use super::ignore::level_for;
use crate::tools::fs_error::plain_reason;
use crate::tools::ops::DirEntry;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;

/// The cores this process may use (asked once: the answer reads cgroup
/// files), for the number of search threads.
pub(super) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Most worker threads one walk uses.
const MAX_WALK_THREADS: usize = 8;

/// Directories the calling thread lists alone before it shares the walk
/// with more threads (when directories are still waiting).
const SHARE_AFTER_DIRS: usize = 16;

/// What a walk should include.
#[derive(Clone, Debug)]
pub(crate) struct WalkOptions {
    /// Apply `.gitignore`, `.ignore` and `.git/info/exclude` (D7).
    pub respect_ignore_files: bool,
    /// Report directories as well as files.
    pub include_dirs: bool,
    /// Stop descending below this depth (the root is depth 0).
    pub max_depth: Option<usize>,
    /// An ancestor of the root (the workspace root) whose ignore files, and
    /// those of every directory down to the root, apply too. Ignore files
    /// above it are never read. `None`: only the root's own and below.
    pub ignore_base: Option<PathBuf>,
    /// Stops the walk early; the walk then fails with
    /// [`io::ErrorKind::Interrupted`].
    pub cancel: Option<CancellationToken>,
    /// Keep the entries in [`Walk::entries`] (sorted). Off, they are only
    /// handed to the visitors, and `entries` stays empty.
    pub keep_entries: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        Self {
            respect_ignore_files: true,
            include_dirs: false,
            max_depth: None,
            ignore_base: None,
            cancel: None,
            keep_entries: true,
        }
    }
}

/// One entry found by a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WalkEntry {
    /// The entry's path (the walk root joined with the relative path).
    pub path: PathBuf,
    /// The entry's own kind (symlinks are not followed).
    pub kind: FileKind,
}

/// The result of a walk: entries sorted by path, and the entries that could
/// not be read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Walk {
    /// Every entry, sorted by path bytes.
    pub entries: Vec<WalkEntry>,
    /// Paths the walk could not enter or read, with the reason.
    pub errors: Vec<(PathBuf, String)>,
}

/// One directory waiting to be listed.
struct Job {
    dir: PathBuf,
    depth: usize,
    rules: Rules,
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

/// What a walk thread calls for each entry it reports, as it finds it.
pub(crate) type Visitor<'a> = Box<dyn FnMut(&WalkEntry) + 'a>;

/// Walks `root` (which must be a directory) with the rules described in the
/// module docs. Fails only when the root cannot be used or the walk was
/// cancelled (`ErrorKind::Interrupted`); unreadable directories below the
/// root end up in [`Walk::errors`].
#[cfg(test)]
pub(crate) fn walk(fs: &dyn FsOps, root: &Path, options: &WalkOptions) -> io::Result<Walk> {
    walk_visiting(fs, root, options, &|| Box::new(|_: &WalkEntry| {}))
}

/// [`walk`], handing every reported entry, as it is found, to a visitor
/// that each walk thread makes for itself with `visitor` (in no particular
/// order, and from several threads at once).
pub(crate) fn walk_visiting<'v>(
    fs: &dyn FsOps,
    root: &Path,
    options: &WalkOptions,
    visitor: &(dyn Fn() -> Visitor<'v> + Sync),
) -> io::Result<Walk> {
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
    let threads = cores().clamp(1, MAX_WALK_THREADS);
    // The calling thread is one of the workers, and the only one at first:
    // it starts the others once the tree proves big enough to share (a
    // small workspace is walked before a thread would have started).
    let found: Vec<Found> = std::thread::scope(|scope| {
        let mut workers = Vec::new();
        let mut listed = 0;
        let mut grow = |pending: usize| {
            listed += 1;
            if listed >= SHARE_AFTER_DIRS && pending > 0 && workers.len() + 1 < threads {
                workers.push(scope.spawn(|| work(fs, &queue, options, visitor(), &mut |_| {})));
            }
        };
        let mine = work(fs, &queue, options, visitor(), &mut grow);
        std::iter::once(mine)
            .chain(
                workers
                    .into_iter()
                    .map(|worker| worker.join().unwrap_or_default()),
            )
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
    walk.entries
        .sort_unstable_by(|a, b| component_order(&a.path, &b.path));
    walk.errors.sort();
    Ok(walk)
}

/// The order of `Path::cmp` (component by component) for the paths a walk
/// makes: its root joined with names, so no `.` components and no doubled
/// separators. Then comparing the bytes with `/` as the smallest byte gives
/// the same order (a name holds neither `/` nor NUL), without splitting the
/// paths into components, which dominated sorting large walks.
pub(super) fn component_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    use std::os::unix::ffi::OsStrExt;
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let same = common_len(a, b);
    let rank = |byte: Option<&u8>| byte.map(|&b| if b == b'/' { 0 } else { u16::from(b) + 1 });
    rank(a.get(same)).cmp(&rank(b.get(same)))
}

/// The length of the common prefix of `a` and `b`, eight bytes at a time
/// (paths of one walk share long prefixes).
fn common_len(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let mut at = 0;
    for (x, y) in a[..len].chunks_exact(8).zip(b[..len].chunks_exact(8)) {
        let word = |c: &[u8]| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(c);
            u64::from_le_bytes(bytes)
        };
        let diff = word(x) ^ word(y);
        if diff != 0 {
            return at + (diff.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + a[at..len]
        .iter()
        .zip(&b[at..len])
        .take_while(|(x, y)| x == y)
        .count()
}

/// One worker: takes directories from the stack until none is left and no
/// other worker can add more. After each directory it tells `after_each`
/// how many directories are waiting.
fn work(
    fs: &dyn FsOps,
    queue: &Queue,
    options: &WalkOptions,
    mut visit: Visitor<'_>,
    after_each: &mut dyn FnMut(usize),
) -> Found {
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
            list(fs, job, options, &mut found, &mut visit)
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
        let pending = state.jobs.len();
        drop(state);
        after_each(pending);
    }
}

/// Lists one directory: reports its entries and returns its subdirectories
/// to descend into.
fn list(
    fs: &dyn FsOps,
    job: Job,
    options: &WalkOptions,
    found: &mut Found,
    visit: &mut Visitor<'_>,
) -> Vec<Job> {
    let entries = match fs.read_dir(&job.dir) {
        Ok(entries) => entries,
        Err(err) => {
            found.errors.push((job.dir, plain_reason(&err)));
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
            let entry = WalkEntry {
                path,
                kind: entry.kind,
            };
            visit(&entry);
            if options.keep_entries {
                found.entries.push(entry);
            }
        }
    }
    jobs
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
