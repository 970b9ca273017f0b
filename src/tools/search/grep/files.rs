//! The search itself (steps 2 and 3 of the tool's docs): each file searched
//! by the walk thread that finds it, read once by the searcher, and the
//! first `limit` matching lines assembled in path and line order with
//! their context.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;
use std::io::Read;

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
use crate::tools::search::bound::Bound;
use crate::tools::search::glob::FileFilter;
use crate::tools::search::walk::Entry;
use crate::tools::search::walk::Visitor;
use crate::tools::truncate::HeadTruncator;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::truncate_line;
use crate::tools::visible::show_controls;

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

/// Whether `entry` is a file the glob selects (every file without a glob):
/// the walk asks before matching the ignore rules, and hands the visitor
/// only the files this keeps.
pub(super) fn selects(filter: Option<&FileFilter>, entry: &Entry<'_>) -> bool {
    entry.kind == FileKind::File
        && filter.is_none_or(|filter| {
            !filter.surely_rejects(entry.name.as_encoded_bytes())
                && filter.allows(&entry.shown(filter.names_only()))
        })
}

/// The visitor of one walk thread (step 2 of the tool's docs): searches
/// each file it is handed (those [`selects`] keeps), opened by its name in
/// its directory, and keeps what it found when there is anything to show or
/// count (a match, an error, a NUL byte). A file stops being searched
/// once it sorts after `bound` (the walk then drops it), and after
/// `limit + 1` matching lines, which is enough to know whether more
/// exist, so the result does not depend on which files were searched
/// first.
pub(super) fn visitor<'a>(
    fs: &'a dyn FsOps,
    plan: &'a Plan<'a>,
    bound: &'a Bound,
) -> Visitor<'a, FileHits> {
    let mut searcher = plan.searcher();
    // This thread's own token, cancelled with the call's: looking at a
    // token locks its mutex, and this one is looked at before every read
    // of every file, so the walk threads must not share it.
    let cancel = plan.cancel.child_token();
    Box::new(move |entry: &Entry<'_>| {
        if cancel.is_cancelled() {
            return None;
        }
        let stop = || cancel.is_cancelled() || bound.is_past(entry.key);
        let reader = fs.open_child_file(entry.dir, entry.name);
        let hits = search_reader(reader, &mut searcher, plan, &stop);
        let keep = hits.matches > 0 || hits.error.is_some() || hits.binary_offset.is_some();
        keep.then(|| {
            let weight = hits.matches;
            (hits, weight)
        })
    })
}

/// Searches one file, opened as `reader`; I/O errors end up in the result.
pub(super) fn search_reader(
    reader: io::Result<Box<dyn Read + Send>>,
    searcher: &mut Searcher,
    plan: &Plan<'_>,
    stop: &dyn Fn() -> bool,
) -> FileHits {
    let mut hits = FileHits::default();
    let reader = match reader {
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
    files: Vec<(String, FileHits)>,
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
    for (display, hits) in files {
        if let Some(err) = &hits.error {
            unreadable.push((display.clone(), plain_reason(err)));
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
            let len = display.len() + digits(line.number) + line.text.len() + 3;
            found.any = true;
            if found.head.push_line(len) {
                if found.head.output_lines() > 1 {
                    found.text.push('\n');
                }
                let _ = write!(
                    found.text,
                    "{display}{separator}{}{separator} {}",
                    line.number, line.text
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
