//! The search itself (steps 2 to 4 of the tool's docs): the files searched
//! while the walk goes on, the rest in parallel in sorted order, each read
//! once by the searcher, and the first `limit` matching lines assembled in
//! path and line order with their context.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;
use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use grep_regex::RegexMatcher;
use grep_searcher::BinaryDetection;
use grep_searcher::Searcher;
use grep_searcher::SearcherBuilder;
use grep_searcher::Sink;
use grep_searcher::SinkContext;
use grep_searcher::SinkMatch;
use tokio_util::sync::CancellationToken;

use crate::tools::fs_error::plain_reason;
use crate::tools::ops::FileKind;
use crate::tools::ops::FsOps;
use crate::tools::search::glob::FileFilter;
use crate::tools::search::relative_display;
use crate::tools::search::walk::Visitor;
use crate::tools::search::walk::WalkEntry;
use crate::tools::search::walk::component_order;
use crate::tools::search::walk::cores;
use crate::tools::truncate::HeadTruncator;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::truncate_line;
use crate::tools::visible::show_controls;

/// Most worker threads one search uses.
const MAX_SEARCH_THREADS: usize = 16;

/// One file to search.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// Where to read it.
    pub path: PathBuf,
    /// How the output names it.
    pub display: String,
}

/// One line of output from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct HitLine {
    number: u64,
    is_match: bool,
    text: String,
    cut: bool,
}

/// What the search of one file found.
#[derive(Debug, Default)]
pub(super) struct FileHits {
    pub(super) lines: Vec<HitLine>,
    pub(super) matches: usize,
    pub(super) binary_offset: Option<u64>,
    pub(super) error: Option<io::Error>,
}

/// Everything a search needs besides the files.
pub(super) struct Plan<'a> {
    pub(super) matcher: &'a RegexMatcher,
    pub(super) context: usize,
    pub(super) limit: usize,
    pub(super) max_line: usize,
    pub(super) cancel: &'a CancellationToken,
}

impl Plan<'_> {
    pub(super) fn searcher(&self) -> Searcher {
        SearcherBuilder::new()
            .line_number(true)
            .before_context(self.context)
            .after_context(self.context)
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build()
    }
}

/// A reader that fails once the search no longer needs the file.
struct Stoppable<'a, R> {
    inner: R,
    stop: &'a dyn Fn() -> bool,
}

impl<R: Read> Read for Stoppable<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if (self.stop)() {
            return Err(io::Error::other("search stopped"));
        }
        self.inner.read(buf)
    }
}

/// Collects the lines of one file.
struct Collect<'a> {
    hits: &'a mut FileHits,
    /// Matching lines after which the file is no longer interesting.
    cap: usize,
    max_line: usize,
    stop: &'a dyn Fn() -> bool,
}

impl Collect<'_> {
    fn push(&mut self, number: Option<u64>, is_match: bool, bytes: &[u8]) {
        let (text, cut) = line_text(bytes, self.max_line);
        self.hits.lines.push(HitLine {
            number: number.unwrap_or(0),
            is_match,
            text,
            cut,
        });
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.push(mat.line_number(), true, mat.bytes());
        self.hits.matches += 1;
        Ok(self.hits.matches < self.cap && !(self.stop)())
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push(context.line_number(), false, context.bytes());
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, offset: u64) -> Result<bool, io::Error> {
        self.hits.binary_offset = Some(offset);
        Ok(false)
    }
}

/// The text of a line as shown: without its line terminator and without
/// `\r`, invalid UTF-8 replaced, cut to `max_chars` characters, other
/// control characters (but tab) shown as control pictures (`␀`, `␛`). Only
/// a bounded prefix of a huge line is decoded.
pub(super) fn line_text(bytes: &[u8], max_chars: usize) -> (String, bool) {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    // Enough bytes for `max_chars + 1` characters, however they decode.
    let window = max_chars.saturating_add(1).saturating_mul(4);
    let text: Cow<'_, [u8]> = if memchr::memchr(b'\r', bytes).is_none() {
        Cow::Borrowed(&bytes[..bytes.len().min(window)])
    } else {
        Cow::Owned(
            bytes
                .iter()
                .copied()
                .filter(|&b| b != b'\r')
                .take(window)
                .collect(),
        )
    };
    let text = String::from_utf8_lossy(&text);
    let (shown, cut) = truncate_line(&text, max_chars);
    (show_controls(&shown).into_owned(), cut)
}

/// The files searched while the walk was still going on (step 2 of the
/// module docs): each walk thread searches the files it finds, until the
/// files searched so far hold more than `limit` matching lines. Past that
/// the first `limit` lines in path order may lie in files not found yet, so
/// the rest waits for the sorted list. A file is searched the same way
/// either way (capped at `limit + 1` matching lines), so the result does not
/// depend on which files were searched early.
pub(super) struct EarlySearch {
    found: Mutex<Vec<(PathBuf, FileHits)>>,
    /// Matching lines in `found`.
    matches: AtomicUsize,
    /// Cleared once `matches` is over the limit.
    open: AtomicBool,
}

impl EarlySearch {
    pub(super) fn new() -> Self {
        Self {
            found: Mutex::new(Vec::new()),
            matches: AtomicUsize::new(0),
            open: AtomicBool::new(true),
        }
    }

    /// The visitor of one walk thread: searches the files it is handed
    /// (those the glob selects) while the early search is open.
    pub(super) fn visitor<'a>(
        &'a self,
        fs: &'a dyn FsOps,
        root: &'a Path,
        filter: Option<&'a FileFilter>,
        plan: &'a Plan<'a>,
    ) -> Visitor<'a> {
        let mut searcher = plan.searcher();
        Box::new(move |entry: &WalkEntry| {
            if entry.kind != FileKind::File
                || !self.open.load(Ordering::Relaxed)
                || plan.cancel.is_cancelled()
            {
                return;
            }
            let display = relative_display(root, &entry.path);
            if filter.is_some_and(|f| !f.allows(&display)) {
                return;
            }
            let file = Candidate {
                path: entry.path.clone(),
                display,
            };
            let stop = || plan.cancel.is_cancelled();
            let hits = search_file(fs, &mut searcher, &file, plan, &stop);
            let matches = self.matches.fetch_add(hits.matches, Ordering::Relaxed) + hits.matches;
            if matches > plan.limit {
                self.open.store(false, Ordering::Relaxed);
            }
            self.found
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((file.path, hits));
        })
    }

    /// One slot per file of the sorted list: what the early search found
    /// in it, `None` for the files it did not reach.
    pub(super) fn into_slots(self, files: &[Candidate]) -> Vec<Option<FileHits>> {
        let mut found = self
            .found
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        // In the files' (the walk's) order, so one pass pairs them up.
        found.sort_unstable_by(|a, b| component_order(&a.0, &b.0));
        let mut found = found.into_iter().peekable();
        files
            .iter()
            .map(|file| {
                found
                    .next_if(|(path, _)| *path == file.path)
                    .map(|(_, hits)| hits)
            })
            .collect()
    }
}

/// The ordered search's state: the slots of the sorted files, and how far
/// they are complete.
struct Progress {
    slots: Vec<Option<FileHits>>,
    /// Slots `0..done` are filled.
    done: usize,
    /// Matching lines in slots `0..done`.
    matches: usize,
}

impl Progress {
    /// Moves `done` over the filled slots; once the prefix holds more than
    /// `limit` matching lines, the first `limit` (and the fact that there
    /// are more) are known: returns where the needed files end.
    fn advance(&mut self, limit: usize) -> Option<usize> {
        while let Some(Some(hits)) = self.slots.get(self.done) {
            self.matches += hits.matches;
            self.done += 1;
            if self.matches > limit {
                return Some(self.done);
            }
        }
        None
    }
}

/// Searches the `files` that `slots` does not hold yet, in parallel, and
/// returns what each needed file holds, in the files' order; `None` for
/// files the result cannot include.
pub(super) fn search_all(
    fs: &dyn FsOps,
    files: &[Candidate],
    slots: Vec<Option<FileHits>>,
    plan: &Plan<'_>,
) -> Vec<Option<FileHits>> {
    let count = files.len();
    let known: Vec<bool> = slots.iter().map(Option::is_some).collect();
    let mut progress = Progress {
        slots,
        done: 0,
        matches: 0,
    };
    // Files at this index and later are not needed.
    let cutoff = AtomicUsize::new(progress.advance(plan.limit).unwrap_or(count));
    let left = known[..cutoff.load(Ordering::Relaxed)]
        .iter()
        .filter(|k| !**k)
        .count();
    let next = AtomicUsize::new(0);
    let progress = Mutex::new(progress);
    let worker = || {
        let mut searcher = plan.searcher();
        loop {
            if plan.cancel.is_cancelled() {
                return;
            }
            let index = next.fetch_add(1, Ordering::Relaxed);
            // Files are handed out in order: every later one is beyond too.
            if index >= cutoff.load(Ordering::Acquire) {
                return;
            }
            if known[index] {
                continue;
            }
            let stop = || plan.cancel.is_cancelled() || index >= cutoff.load(Ordering::Relaxed);
            let hits = search_file(fs, &mut searcher, &files[index], plan, &stop);
            let mut state = progress.lock().unwrap_or_else(PoisonError::into_inner);
            state.slots[index] = Some(hits);
            if let Some(end) = state.advance(plan.limit) {
                cutoff.fetch_min(end, Ordering::Release);
            }
        }
    };
    let threads = cores().clamp(1, MAX_SEARCH_THREADS).min(left);
    // The calling thread is one of the workers.
    if threads > 0 {
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(worker);
            }
            worker();
        });
    }
    let mut slots = progress
        .into_inner()
        .unwrap_or_else(PoisonError::into_inner)
        .slots;
    slots.truncate(cutoff.into_inner());
    slots
}

/// Searches one file; I/O errors end up in the result.
fn search_file(
    fs: &dyn FsOps,
    searcher: &mut Searcher,
    file: &Candidate,
    plan: &Plan<'_>,
    stop: &dyn Fn() -> bool,
) -> FileHits {
    let mut hits = FileHits::default();
    let reader = match fs.open(&file.path) {
        Ok(reader) => reader,
        Err(err) => {
            hits.error = Some(err);
            return hits;
        }
    };
    let reader = Stoppable {
        inner: reader,
        stop,
    };
    let sink = Collect {
        hits: &mut hits,
        cap: plan.limit.saturating_add(1),
        max_line: plan.max_line,
        stop,
    };
    let result = searcher.search_reader(plan.matcher, reader, sink);
    if let Err(err) = result
        && !stop()
    {
        hits.error = Some(err);
    }
    hits
}

/// The text to show and the facts about it.
#[derive(Debug)]
pub(super) struct Found {
    /// The kept output lines, joined by `\n`.
    pub(super) text: String,
    /// Whether any line was selected (before the byte cap).
    pub(super) any: bool,
    /// How the byte cap applied to the selected lines.
    pub(super) head: HeadTruncator,
    pub(super) matches: usize,
    pub(super) files_with_matches: usize,
    pub(super) more: bool,
    pub(super) lines_truncated: bool,
    pub(super) binary_files: usize,
    pub(super) binary_offset: Option<u64>,
}

/// Decimal digits of `n`.
fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// Takes the first `limit` matching lines in file order, with their
/// context. The after-context of the last one ends before the next match.
pub(super) fn assemble(
    files: &[Candidate],
    slots: Vec<Option<FileHits>>,
    plan: &Plan<'_>,
    limits: TruncationLimits,
    unreadable: &mut Vec<(String, String)>,
) -> Found {
    let mut found = Found {
        text: String::new(),
        any: false,
        head: HeadTruncator::new(limits),
        matches: 0,
        files_with_matches: 0,
        more: false,
        lines_truncated: false,
        binary_files: 0,
        binary_offset: None,
    };
    for (file, slot) in files.iter().zip(slots) {
        let Some(hits) = slot else { continue };
        if let Some(err) = &hits.error {
            unreadable.push((file.display.clone(), plain_reason(err)));
        }
        if hits.binary_offset.is_some() {
            found.binary_files += 1;
            found.binary_offset = hits.binary_offset;
        }
        if found.matches == plan.limit {
            found.more |= hits.matches > 0;
            continue;
        }
        let budget = plan.limit - found.matches;
        let mut taken = 0;
        let mut last_match = 0;
        for line in hits.lines {
            if line.is_match {
                if taken == budget {
                    break;
                }
                taken += 1;
                last_match = line.number;
            } else if taken == budget && line.number > last_match + plan.context as u64 {
                break;
            }
            // Only lines within the byte cap are formatted; the others are
            // only measured, for the truncation facts.
            let separator = if line.is_match { ':' } else { '-' };
            let len = file.display.len() + digits(line.number) + line.text.len() + 3;
            found.any = true;
            if found.head.push_line(len) {
                if found.head.output_lines() > 1 {
                    found.text.push('\n');
                }
                let _ = write!(
                    found.text,
                    "{}{separator}{}{separator} {}",
                    file.display, line.number, line.text
                );
            }
            found.lines_truncated |= line.cut;
        }
        found.more |= hits.matches > taken;
        found.matches += taken;
        if taken > 0 {
            found.files_with_matches += 1;
        }
    }
    found
}
