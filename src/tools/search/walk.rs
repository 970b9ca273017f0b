//! The one directory walker behind `grep` and `find` (D7, D9).
//!
//! [`walk`] runs over any [`FsOps`] through its directory handles
//! ([`FsOps::open_dir`]: each directory opened once, relative to its
//! parent, and listed into a reused buffer; files opened by one name
//! relative to their directory), so the local disk and the in-memory file
//! system share one set of rules:
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
//! - directories are listed in parallel (scoped threads over a shared
//!   queue that hands out the directory that sorts first when the walk is
//!   bounded, the one added last otherwise); each thread
//!   hands every entry it finds to its visitor, which says whether the
//!   entry is a result. A [`KeepFile`] test (find's pattern, grep's
//!   glob) sees files first: the ignore rules, the costlier test, are
//!   matched only against the files it keeps. The calling thread walks
//!   alone until four directories wait, or one waits after 64 entries: a
//!   small workspace is walked before another thread would have started.
//!   Each thread it then starts begins on a CPU of its own
//!   ([`crate::tools::place`]), not queued behind the calling thread;
//! - the output is **sorted by construction**: each directory's listing is
//!   sorted once by name bytes, and the results come out of a depth-first
//!   pass over the sorted listings, which is the order of `Path::cmp`
//!   (component by component). No global sort; display paths are built
//!   from that pass's path, for results only;
//! - with a [`Bound`], a limited search keeps the smallest keys (an
//!   entry's indices in its ancestors' sorted listings) whose weights
//!   reach the bound's cap, and never lists or visits what sorts after
//!   the largest of them: the results are exactly the first ones of the
//!   full walk, up to and including the entry that reaches the cap.

use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Condvar;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use super::bound::Bound;
use super::bound::BoundView;
use super::ignore::Rules;
use super::ignore::ancestor_rules;
use super::ignore::is_ignored;
use super::ignore::level_for;
use crate::tools::fs_error::plain_reason;
use crate::tools::ops::DirHandle;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::ops::Listing;
use crate::tools::place::spawn_helpers;
use crate::tools::visible::show_name;

/// The cores this process may use (asked once: the answer reads cgroup
/// files), for the number of search threads.
pub(super) fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Most worker threads one walk uses.
const MAX_WALK_THREADS: usize = 8;

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
}

impl Default for WalkOptions {
    fn default() -> Self {
        Self {
            respect_ignore_files: true,
            include_dirs: false,
            max_depth: None,
            ignore_base: None,
            cancel: None,
        }
    }
}

/// One entry, as a walk thread hands it to its visitor.
pub(crate) struct Entry<'a> {
    /// The directory that holds it (open: its children open by name).
    pub dir: &'a DirHandle,
    /// The entry's name.
    pub name: &'a OsStr,
    /// The entry's own kind (symlinks are not followed).
    pub kind: FileKind,
    /// Its path (the walk root joined with `rel`).
    pub path: &'a Path,
    /// Its path relative to the walk root, `/` between names.
    pub rel: &'a [u8],
    /// Its key: its index in each sorted listing from the root down.
    pub key: &'a [u32],
}

impl Entry<'_> {
    /// What a glob is matched against, as tools show it ([`show_name`]):
    /// the name alone, or the path relative to the walk root.
    pub(super) fn shown(&self, name_only: bool) -> std::borrow::Cow<'_, str> {
        show_name(if name_only {
            self.name.as_bytes()
        } else {
            self.rel
        })
    }
}

/// What a walk thread calls for each entry it reports, as it finds it:
/// `Some((value, weight))` makes the entry a result (the weight counts
/// towards a [`Bound`]'s cap).
pub(crate) type Visitor<'a, T> = Box<dyn FnMut(&Entry<'_>) -> Option<(T, usize)> + 'a>;

/// A cheap test of an entry that is not a directory (a name glob), made
/// before the ignore rules are matched against it: an entry it rejects is
/// neither a result nor matched against the rules, which most entries of
/// a narrow search then never are. It must not have effects (it sees
/// ignored entries too); the visitor sees only entries it kept.
pub(crate) type KeepFile<'a> = &'a (dyn Fn(&Entry<'_>) -> bool + Sync);

/// One result of a walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found<T> {
    /// The path relative to the walk root, as tools show it
    /// ([`show_name`]).
    pub rel: String,
    /// The entry's own kind.
    pub kind: FileKind,
    /// What the visitor said of it.
    pub value: T,
}

/// The result of a walk: the results in path order, and the paths that
/// could not be read.
pub(crate) struct Walk<T> {
    /// The results, sorted by path (component by component).
    pub results: Ordered<T>,
    /// Paths the walk could not enter or read, with the reason, sorted.
    pub errors: Vec<(PathBuf, String)>,
}

impl<T> std::fmt::Debug for Walk<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Walk")
            .field("errors", &self.errors)
            .finish_non_exhaustive()
    }
}

/// A walk's results in path order: [`Ordered::each`] hands them out
/// without making a `String` of each path, for a caller (find) that
/// shows only some of many; [`Ordered::into_vec`] takes them all.
pub(crate) struct Ordered<T> {
    nodes: Vec<Option<Node<T>>>,
    cap: Option<usize>,
}

/// How a job's directory is opened.
enum Open {
    /// The walk root, by its path.
    Root,
    /// A child of an open directory, by its name.
    Child(Arc<DirHandle>, OsString),
}

/// One directory waiting to be listed.
struct Job {
    key: Vec<u32>,
    /// Its node in the result tree.
    id: usize,
    depth: usize,
    rules: Rules,
    open: Open,
}

impl PartialEq for Job {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for Job {}

impl PartialOrd for Job {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Job {
    /// Reversed: the queue (a max-heap) hands out the smallest key first,
    /// the depth-first order of the output.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}

/// The shared work queue.
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

struct QueueState {
    jobs: Jobs,
    /// Jobs taken and not finished yet.
    running: usize,
    /// Workers waiting for a job.
    idle: usize,
    stop: bool,
}

/// The directories waiting. A bounded walk takes the one that sorts first
/// (what sorts after the bound is never listed, so the smallest keys must
/// be listed first); an unbounded one takes the last one added, which
/// costs no comparisons of keys and keeps the queue short (depth first).
enum Jobs {
    Sorted(BinaryHeap<Job>),
    Stack(Vec<Job>),
}

impl Jobs {
    fn new(bounded: bool, first: Job) -> Self {
        if bounded {
            Self::Sorted(BinaryHeap::from([first]))
        } else {
            Self::Stack(vec![first])
        }
    }

    fn pop(&mut self) -> Option<Job> {
        match self {
            Self::Sorted(heap) => heap.pop(),
            Self::Stack(stack) => stack.pop(),
        }
    }

    fn extend(&mut self, more: Vec<Job>) {
        match self {
            Self::Sorted(heap) => heap.extend(more),
            Self::Stack(stack) => stack.extend(more),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Sorted(heap) => heap.len(),
            Self::Stack(stack) => stack.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A listed directory's kept entries: results, and subdirectories that
/// were descended into.
struct Node<T> {
    names: Vec<u8>,
    kept: Vec<Kept<T>>,
}

struct Kept<T> {
    span: (u32, u32),
    kind: FileKind,
    result: Option<(T, usize)>,
    child: Option<usize>,
}

/// What one worker found.
struct Part<T> {
    nodes: Vec<(usize, Node<T>)>,
    /// With the key of the directory they belong to.
    errors: Vec<(Vec<u32>, PathBuf, String)>,
}

impl<T> Default for Part<T> {
    fn default() -> Self {
        Self {
            nodes: Vec::new(),
            errors: Vec::new(),
        }
    }
}

/// What the walk threads share.
struct Shared<'a> {
    fs: &'a dyn FsOps,
    root: &'a Path,
    options: &'a WalkOptions,
    bound: Option<&'a Bound>,
    keep_file: Option<KeepFile<'a>>,
    queue: Queue,
    next_id: AtomicUsize,
}

/// A worker's reused buffers.
#[derive(Default)]
struct Scratch {
    listing: Listing,
    path: Vec<u8>,
    key: Vec<u32>,
    view: BoundView,
    /// Entries listed so far.
    seen: usize,
}

/// Walks `root` (which must be a directory) with the rules described in the
/// module docs, handing every entry, as it is found, to a visitor that each
/// walk thread makes for itself with `visitor` (in no particular order, and
/// from several threads at once). Fails only when the root cannot be used
/// or the walk was cancelled (`ErrorKind::Interrupted`); unreadable
/// directories below the root end up in [`Walk::errors`].
pub(crate) fn walk<'v, T: Send>(
    fs: &dyn FsOps,
    root: &Path,
    options: &WalkOptions,
    bound: Option<&Bound>,
    keep_file: Option<KeepFile<'_>>,
    visitor: &(dyn Fn() -> Visitor<'v, T> + Sync),
) -> io::Result<Walk<T>> {
    if !fs.metadata(root)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "Not a directory",
        ));
    }
    let mut early = Vec::new();
    let rules = if options.respect_ignore_files {
        ancestor_rules(fs, root, options.ignore_base.as_deref(), &mut early)
    } else {
        None
    };
    let shared = Shared {
        fs,
        root,
        options,
        bound,
        keep_file,
        queue: Queue {
            state: Mutex::new(QueueState {
                jobs: Jobs::new(
                    bound.is_some(),
                    Job {
                        key: Vec::new(),
                        id: 0,
                        depth: 0,
                        rules,
                        open: Open::Root,
                    },
                ),
                running: 0,
                idle: 0,
                stop: false,
            }),
            ready: Condvar::new(),
        },
        next_id: AtomicUsize::new(1),
    };
    let threads = cores().clamp(1, MAX_WALK_THREADS);
    // The calling thread is one of the workers, and the only one while the
    // walk has found little to share: a flat directory, or a small
    // workspace of a few directories and entries, is walked before a
    // thread would have started (starting one costs more than such a walk).
    // The others all start at once when there is more to do, each on a
    // CPU of its own.
    let work_alone = || work(&shared, visitor(), &mut |_, _| {});
    let parts: Vec<Part<T>> = std::thread::scope(|scope| {
        let mut workers = Vec::new();
        let mut grow = |pending: usize, seen: usize| {
            if threads > 1 && workers.is_empty() && worth_more_threads(pending, seen) {
                workers = spawn_helpers(scope, threads - 1, &work_alone);
            }
        };
        let mine = work(&shared, visitor(), &mut grow);
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
    let count = shared.next_id.load(Ordering::Relaxed);
    let mut nodes: Vec<Option<Node<T>>> = (0..count).map(|_| None).collect();
    let last = bound.and_then(Bound::last);
    let mut errors = early;
    for part in parts {
        for (id, node) in part.nodes {
            if let Some(slot) = nodes.get_mut(id) {
                *slot = Some(node);
            }
        }
        // Past the bound, whether a directory was reached depends on
        // timing: what it says is dropped, as its files are.
        errors.extend(
            part.errors
                .into_iter()
                .filter(|(key, ..)| last.as_ref().is_none_or(|last| key < last))
                .map(|(_, path, why)| (path, why)),
        );
    }
    errors.sort();
    Ok(Walk {
        results: Ordered {
            nodes,
            cap: bound.map(Bound::cap),
        },
        errors,
    })
}

/// Directories waiting that are worth other threads at once.
const SHARE_DIRS: usize = 4;

/// Entries listed by the calling thread alone after which any directory
/// waiting is worth other threads.
const SHARE_ENTRIES: usize = 64;

/// Whether a walk whose calling thread has listed `seen` entries, with
/// `pending` directories waiting, should start its other threads.
fn worth_more_threads(pending: usize, seen: usize) -> bool {
    pending >= SHARE_DIRS || (pending > 0 && seen >= SHARE_ENTRIES)
}

impl<T> Ordered<T> {
    /// Hands each result to `each` in path order, depth first over the
    /// sorted listings, with its path relative to the walk root (`/`
    /// between names, raw bytes: [`show_name`] makes the text tools show),
    /// its kind and what its visitor said; with a cap, up to and including
    /// the result whose weight reaches it.
    pub(super) fn each(mut self, mut each: impl FnMut(&[u8], FileKind, T)) {
        let Some(root) = self.nodes.first_mut().and_then(Option::take) else {
            return;
        };
        let mut rel: Vec<u8> = Vec::new();
        let mut weight = 0usize;
        // Each level: its entries still to emit, its names, and the length
        // of its own relative path.
        let mut stack = vec![(root.kept.into_iter(), root.names, 0usize)];
        while let Some((entries, names, base)) = stack.last_mut() {
            let Some(kept) = entries.next() else {
                stack.pop();
                continue;
            };
            let (start, len) = (kept.span.0 as usize, kept.span.1 as usize);
            rel.truncate(*base);
            if *base > 0 {
                rel.push(b'/');
            }
            rel.extend_from_slice(&names[start..start + len]);
            if let Some((value, w)) = kept.result {
                each(&rel, kept.kind, value);
                weight = weight.saturating_add(w);
                if self.cap.is_some_and(|cap| weight >= cap) {
                    break;
                }
            }
            if let Some(node) = kept.child.and_then(|id| self.nodes.get_mut(id)?.take()) {
                stack.push((node.kept.into_iter(), node.names, rel.len()));
            }
        }
    }

    /// The results in path order, each path as tools show it.
    pub(super) fn into_vec(self) -> Vec<Found<T>> {
        let mut results = Vec::new();
        self.each(|rel, kind, value| {
            results.push(Found {
                rel: show_name(rel).into_owned(),
                kind,
                value,
            });
        });
        results
    }
}

/// One worker: takes directories from the queue until none is left and no
/// other worker can add more. After each directory it tells `after_each`
/// how many directories are waiting and how many entries it has listed.
fn work<T>(
    shared: &Shared<'_>,
    mut visit: Visitor<'_, T>,
    after_each: &mut dyn FnMut(usize, usize),
) -> Part<T> {
    let queue = &shared.queue;
    // This thread's own token (looking at one locks its mutex).
    let cancel = shared
        .options
        .cancel
        .as_ref()
        .map(CancellationToken::child_token);
    let cancel = cancel.as_ref();
    let mut part = Part::default();
    let mut scratch = Scratch::default();
    loop {
        let job = {
            let mut state = queue.state.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if cancel.is_some_and(CancellationToken::is_cancelled) {
                    state.stop = true;
                }
                if state.stop {
                    queue.ready.notify_all();
                    return part;
                }
                if let Some(job) = state.jobs.pop() {
                    state.running += 1;
                    break job;
                }
                if state.running == 0 {
                    state.stop = true;
                    continue;
                }
                state.idle += 1;
                state = queue
                    .ready
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
                state.idle -= 1;
            }
        };
        let past = shared
            .bound
            .is_some_and(|bound| scratch.view.is_past(bound, &job.key));
        let more = if past {
            Vec::new()
        } else {
            let listed = crate::base::panics::isolate(|| {
                list(shared, &job, &mut scratch, &mut part, &mut visit)
            });
            // A panic must not leave the other workers waiting for this job.
            listed.unwrap_or_else(|_| {
                part.errors.push((
                    job.key.clone(),
                    job_path(shared.root, &job),
                    "internal error while listing".to_owned(),
                ));
                scratch = Scratch::default();
                Vec::new()
            })
        };
        let mut state = queue.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.running -= 1;
        let added = more.len();
        state.jobs.extend(more);
        if state.running == 0 && state.jobs.is_empty() {
            queue.ready.notify_all();
        } else {
            // Wake only as many waiting workers as there is new work.
            for _ in 0..added.min(state.idle) {
                queue.ready.notify_one();
            }
        }
        let pending = state.jobs.len();
        drop(state);
        after_each(pending, scratch.seen);
    }
}

/// The path of a job's directory.
fn job_path(root: &Path, job: &Job) -> PathBuf {
    match &job.open {
        Open::Root => root.to_path_buf(),
        Open::Child(parent, name) => parent.path().join(name),
    }
}

/// The index of `name` in a sorted listing.
fn find_name(listing: &Listing, name: &[u8]) -> Option<usize> {
    let (mut low, mut high) = (0, listing.len());
    while low < high {
        let mid = low + (high - low) / 2;
        match listing.name_bytes(mid).cmp(name) {
            std::cmp::Ordering::Less => low = mid + 1,
            std::cmp::Ordering::Greater => high = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

/// Lists one directory: hands its entries to the visitor, keeps its node
/// for the output, and returns its subdirectories to descend into.
fn list<T>(
    shared: &Shared<'_>,
    job: &Job,
    scratch: &mut Scratch,
    part: &mut Part<T>,
    visit: &mut Visitor<'_, T>,
) -> Vec<Job> {
    let (fs, options) = (shared.fs, shared.options);
    let opened = match &job.open {
        Open::Root => fs.open_dir(shared.root),
        Open::Child(parent, name) => fs.open_child_dir(parent, name),
    };
    let listed = opened.and_then(|dir| {
        fs.list_dir(&dir, &mut scratch.listing)?;
        Ok(dir)
    });
    let dir = match listed {
        Ok(dir) => dir,
        Err(err) => {
            let path = job_path(shared.root, job);
            part.errors
                .push((job.key.clone(), path, plain_reason(&err)));
            return Vec::new();
        }
    };
    scratch.seen = scratch.seen.saturating_add(scratch.listing.len());
    let listing = &mut scratch.listing;
    listing.sort();
    let rules = if options.respect_ignore_files {
        let kind_of =
            |name: &str| find_name(listing, name.as_bytes()).map(|index| listing.kind(index));
        let kinds = [kind_of(".ignore"), kind_of(".gitignore"), kind_of(".git")];
        let mut errors = Vec::new();
        let rules = level_for(fs, dir.path(), kinds, job.rules.clone(), &mut errors);
        part.errors.extend(
            errors
                .into_iter()
                .map(|(path, why)| (job.key.clone(), path, why)),
        );
        rules
    } else {
        None
    };
    let depth = job.depth + 1;
    let descend = options.max_depth.is_none_or(|max| depth < max);
    let dir = Arc::new(dir);
    let path = &mut scratch.path;
    path.clear();
    path.extend_from_slice(dir.path().as_os_str().as_bytes());
    if !path.ends_with(b"/") {
        path.push(b'/');
    }
    let dir_len = path.len();
    let root_bytes = shared.root.as_os_str().as_bytes();
    let rel_start = root_bytes.len() + usize::from(!root_bytes.ends_with(b"/"));
    let key = &mut scratch.key;
    key.clear();
    key.extend_from_slice(&job.key);
    let mut kept = Vec::new();
    let mut jobs = Vec::new();
    for index in 0..listing.len() {
        let name = listing.name_bytes(index);
        if name == b".git" {
            continue;
        }
        key.truncate(job.key.len());
        key.push(u32::try_from(index).unwrap_or(u32::MAX));
        // Entries come in order: once one is past the bound, all are.
        if shared
            .bound
            .is_some_and(|bound| scratch.view.is_past(bound, key))
        {
            break;
        }
        path.truncate(dir_len);
        path.extend_from_slice(name);
        let entry_path = Path::new(OsStr::from_bytes(path));
        let kind = listing.kind(index);
        let is_dir = kind == FileKind::Dir;
        let entry = Entry {
            dir: &dir,
            name: OsStr::from_bytes(name),
            kind,
            path: entry_path,
            rel: path.get(rel_start..).unwrap_or_default(),
            key,
        };
        if !is_dir && shared.keep_file.is_some_and(|keep| !keep(&entry)) {
            continue;
        }
        if rules.is_some() && is_ignored(rules.as_ref(), entry_path, is_dir) {
            continue;
        }
        let child = (is_dir && descend).then(|| {
            let id = shared.next_id.fetch_add(1, Ordering::Relaxed);
            jobs.push(Job {
                key: key.clone(),
                id,
                depth,
                rules: rules.clone(),
                open: Open::Child(Arc::clone(&dir), OsStr::from_bytes(name).to_os_string()),
            });
            id
        });
        let result = if !is_dir || options.include_dirs {
            visit(&entry)
        } else {
            None
        };
        if let (Some(bound), Some((_, weight))) = (shared.bound, &result) {
            bound.record(key, *weight);
        }
        if result.is_some() || child.is_some() {
            kept.push(Kept {
                span: listing.name_span(index),
                kind,
                result,
                child,
            });
        }
    }
    if !kept.is_empty() {
        part.nodes.push((
            job.id,
            Node {
                names: listing.take_names(),
                kept,
            },
        ));
    }
    jobs
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
