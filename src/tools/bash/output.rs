//! The bounded output accumulator of `bash` (§common.5, D12, D13, D18).
//!
//! A command can print a gigabyte; the model reads at most the last
//! `max_lines` lines or `max_bytes` bytes of it. [`OutputAccumulator`] takes
//! the raw bytes chunk by chunk and keeps memory bounded by the limits, not by
//! the output:
//!
//! 1. raw bytes are counted, and as soon as the output is larger than the
//!    limits (raw bytes, raw lines, or the cleaned text's bytes or lines) a
//!    full-output file is opened that receives **every raw byte**, the ones
//!    buffered so far first. It is created with mode `0600` in the
//!    workspace's scratch directory (D18): in the system temp dir as
//!    `harness-bash-{16 hex digits}.log` ([`FsOps::create_temp`]), or, in a
//!    directory of the run's own, as `bash-{call id}.log` (see
//!    [`Scratch`](crate::tools::Scratch)). The tool never deletes it: it is
//!    the model's way to the rest of the output. It holds at most the log
//!    cap ([`OutputAccumulator::with_log_cap`], `Limits::max_log_bytes`): the
//!    first bytes of the output up to the cap, and the snapshot says when
//!    more were left out;
//! 2. bytes are decoded by a streaming UTF-8 decoder (a character split
//!    across chunks decodes whole; every maximal invalid sequence becomes one
//!    U+FFFD);
//! 3. the text is cleaned for the model (D12, see [`super::ansi`]): escape
//!    sequences removed, `\r` redraws collapsed;
//! 4. the cleaned text is kept as a rolling tail of whole lines plus the
//!    line being written, each cut to a window of `2 × max_bytes` once it is
//!    twice that, while exact whole-stream totals are counted.
//!
//! [`OutputAccumulator::snapshot`] tail-truncates the kept text and reports
//! the whole stream's totals. **All facts describe the cleaned text**, which
//! is what the model reads: bytes are cleaned bytes and a notice's sizes
//! match the shown text. Line numbers also match the raw full-output file,
//! because cleaning never adds or removes a newline (a final line made only
//! of escape codes is the one exception: it is not a line of the cleaned
//! text).
//!
//! Why the facts stay right after the window is cut (D13): the kept text is
//! always at least `2 × max_bytes` bytes once anything was cut, so the only
//! line that may have lost its beginning (the first kept one) can never be
//! shown whole; when it is the last line it is shown as the end of a line
//! whose true size is counted separately. pi drops that partial line
//! instead, which is how it shows an empty tail and "lines 2-1 of 1".

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use super::ansi::Cleaner;
use super::ansi::Piece;
use crate::tools::fs_error::plain_reason;
use crate::tools::ops::FsOps;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::truncate_tail;

/// The prefix of the bash full-output files (D18).
pub(crate) const BASH_FILE_PREFIX: &str = "harness-bash";

/// The suffix of the bash full-output files (D18).
const BASH_FILE_SUFFIX: &str = ".log";

/// The smallest rolling window, so tiny byte limits still keep a useful tail.
const MIN_WINDOW: usize = 1024;

/// Capacity of the buffered writer of the full-output file.
const FILE_BUFFER: usize = 64 * 1024;

/// What a snapshot shows and the facts about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The cleaned tail the model reads (without any notice).
    pub content: String,
    /// Tail-truncation facts with whole-stream totals (cleaned text).
    pub truncation: Truncation,
    /// Cleaned bytes of the last line (line `truncation.total_lines`),
    /// without its line ending: the "line is …" of a partial-line notice.
    pub last_line_bytes: usize,
    /// The file holding every raw byte, once one was opened.
    pub full_output_path: Option<PathBuf>,
    /// Why the full output could not be saved (completely), if it could not.
    pub full_output_error: Option<String>,
    /// Raw bytes were left out of the full output because of the log cap.
    pub full_output_truncated: bool,
    /// Raw bytes in the full-output file.
    pub full_output_bytes: u64,
    /// Whether cleaning removed or collapsed anything (D12).
    pub cleaned: bool,
}

/// The bounded accumulator; see the module documentation.
#[derive(Debug)]
pub(crate) struct OutputAccumulator {
    limits: TruncationLimits,
    fs: Arc<dyn FsOps>,
    prefix: String,
    dir: PathBuf,
    /// The file's fixed name without its suffix; `None`: a random name.
    stem: Option<String>,
    /// At most this many raw bytes go to the full-output file.
    log_cap: u64,
    raw_bytes: u64,
    raw_newlines: u64,
    raw_ends_with_newline: bool,
    decoder: Utf8Decoder,
    cleaner: Cleaner,
    lines: Lines,
    full: FullOutput,
    finished: bool,
}

enum FullOutput {
    /// Not needed yet: the raw bytes so far (at most the limits plus one
    /// chunk).
    Buffered(Vec<u8>),
    /// Every raw byte goes here, up to the log cap.
    Open {
        path: PathBuf,
        file: io::BufWriter<Box<dyn Write + Send>>,
        /// Bytes written so far.
        written: u64,
        /// Bytes were left out because of the cap.
        cut: bool,
    },
    /// The log cap is 0: no file is kept.
    Off,
    /// Creating or writing the file failed; nothing more is kept.
    Failed {
        path: Option<PathBuf>,
        error: String,
    },
}

impl fmt::Debug for FullOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Buffered(buffer) => f.debug_tuple("Buffered").field(&buffer.len()).finish(),
            Self::Open {
                path, written, cut, ..
            } => f
                .debug_struct("Open")
                .field("path", path)
                .field("written", written)
                .field("cut", cut)
                .finish(),
            Self::Off => f.write_str("Off"),
            Self::Failed { path, error } => f
                .debug_struct("Failed")
                .field("path", path)
                .field("error", error)
                .finish(),
        }
    }
}

impl OutputAccumulator {
    /// An accumulator with the given limits whose full-output file, when one
    /// is needed, is created through `fs` as
    /// `{temp dir}/{prefix}-{16 hex}.log`.
    pub(crate) fn new(limits: TruncationLimits, prefix: &str, fs: Arc<dyn FsOps>) -> Self {
        let window = limits.max_bytes.saturating_mul(2).max(MIN_WINDOW);
        Self {
            limits,
            fs,
            prefix: prefix.to_owned(),
            dir: std::env::temp_dir(),
            stem: None,
            log_cap: u64::MAX,
            raw_bytes: 0,
            raw_newlines: 0,
            raw_ends_with_newline: false,
            decoder: Utf8Decoder::default(),
            cleaner: Cleaner::new(),
            lines: Lines::new(window),
            full: FullOutput::Buffered(Vec::new()),
            finished: false,
        }
    }

    /// Keeps at most `cap` raw bytes in the full-output file (the first
    /// ones); 0 keeps no file at all. Without it there is no cap.
    pub(crate) fn with_log_cap(mut self, cap: u64) -> Self {
        self.log_cap = cap;
        self
    }

    /// Puts the full-output file in `dir` instead of the system temp dir.
    pub(crate) fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = dir.into();
        self
    }

    /// Names the full-output file `{stem}.log` (or `{stem}-2.log` … when
    /// taken) instead of a random name; `None` keeps the random name.
    pub(crate) fn named(mut self, stem: Option<String>) -> Self {
        self.stem = stem;
        self
    }

    /// Adds the next raw chunk. Chunks after [`finish`](Self::finish) are
    /// ignored.
    pub fn append(&mut self, chunk: &[u8]) {
        debug_assert!(!self.finished, "append after finish");
        if self.finished || chunk.is_empty() {
            return;
        }
        self.raw_bytes += chunk.len() as u64;
        self.raw_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.raw_ends_with_newline = chunk.last() == Some(&b'\n');
        match &mut self.full {
            FullOutput::Buffered(buffer) => buffer.extend_from_slice(chunk),
            FullOutput::Open { .. } => self.write_full(chunk),
            FullOutput::Failed { .. } | FullOutput::Off => {}
        }
        let Self {
            decoder,
            cleaner,
            lines,
            ..
        } = self;
        decoder.decode(chunk, |text| {
            cleaner.push(text, &mut |piece| lines.apply(piece))
        });
        self.open_full_if_needed();
    }

    /// Ends the stream: an incomplete character becomes U+FFFD, an
    /// unfinished escape sequence or a final `\r` is dropped, and the
    /// full-output file is flushed. Returns whether the shown text or the
    /// facts changed.
    pub fn finish(&mut self) -> bool {
        if self.finished {
            return false;
        }
        self.finished = true;
        let before = (self.lines.total_bytes(), self.cleaner.removed_anything());
        let Self {
            decoder,
            cleaner,
            lines,
            ..
        } = self;
        let had_partial_char =
            decoder.finish(|text| cleaner.push(text, &mut |piece| lines.apply(piece)));
        self.cleaner.finish();
        self.open_full_if_needed();
        self.flush_full();
        had_partial_char || before != (self.lines.total_bytes(), self.cleaner.removed_anything())
    }

    /// Raw bytes received.
    #[cfg(test)]
    pub(crate) fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Raw lines received (a final newline ends a line, it does not start
    /// one).
    pub fn raw_lines(&self) -> u64 {
        self.raw_newlines + u64::from(self.raw_bytes > 0 && !self.raw_ends_with_newline)
    }

    /// Bytes of memory held for the output (buffers' capacities): bounded
    /// by the limits, whatever the size of the output. Each of the two tail
    /// buffers reaches at most four windows (`2 × max_bytes`, at least
    /// 1 KB) before it is trimmed, so eight of capacity; raw bytes are
    /// buffered only until they outgrow the limits; the file has a 64 KB
    /// write buffer.
    #[cfg(test)]
    pub(crate) fn retained_bytes(&self) -> usize {
        let buffered = match &self.full {
            FullOutput::Buffered(buffer) => buffer.capacity(),
            FullOutput::Open { file, .. } => file.capacity(),
            FullOutput::Failed { .. } | FullOutput::Off => 0,
        };
        self.lines.committed.capacity() + self.lines.current.capacity() + buffered
    }

    /// The tail truncated to the limits, with whole-stream facts. Flushes
    /// the full-output file so that its path can be handed out.
    pub fn snapshot(&mut self) -> Snapshot {
        self.flush_full();
        let lines = &self.lines;
        let text: Cow<'_, str> = if lines.current.is_empty() {
            Cow::Borrowed(&lines.committed)
        } else {
            Cow::Owned(format!("{}{}", lines.committed, lines.current))
        };
        let tail = truncate_tail(&text, self.limits);
        let mut truncation = tail.facts;
        if lines.was_cut() {
            // The kept text is only the end of the stream; what was shown is
            // right, the totals come from the counters.
            debug_assert!(truncation.truncated, "a cut tail must be truncated");
            debug_assert!(
                !lines.committed_starts_mid_line
                    || tail.content.len() < text.len() - usize::from(text.ends_with('\n')),
                "a line that lost its beginning was shown whole"
            );
            truncation.total_lines = lines.total_lines();
            truncation.total_bytes = lines.total_bytes();
        }
        let (full_output_path, full_output_error, full_output_truncated, full_output_bytes) =
            match &self.full {
                FullOutput::Buffered(_) => (None, None, false, 0),
                FullOutput::Open {
                    path, cut, written, ..
                } => (Some(path.clone()), None, *cut, *written),
                FullOutput::Failed { path, error } => (path.clone(), Some(error.clone()), false, 0),
                FullOutput::Off => (None, None, true, 0),
            };
        Snapshot {
            content: tail.content.to_owned(),
            truncation,
            last_line_bytes: lines.last_line_bytes(),
            full_output_path,
            full_output_error,
            full_output_truncated,
            full_output_bytes,
            cleaned: self.cleaner.removed_anything(),
        }
    }

    fn needs_full_output(&self) -> bool {
        let max_bytes = self.limits.max_bytes;
        let max_lines = self.limits.max_lines;
        self.raw_bytes > max_bytes as u64
            || self.raw_lines() > max_lines as u64
            || self.lines.total_bytes() > max_bytes
            || self.lines.total_lines() > max_lines
    }

    fn open_full_if_needed(&mut self) {
        if !matches!(self.full, FullOutput::Buffered(_)) || !self.needs_full_output() {
            return;
        }
        if self.log_cap == 0 {
            self.full = FullOutput::Off;
            return;
        }
        let FullOutput::Buffered(buffer) = std::mem::replace(
            &mut self.full,
            FullOutput::Failed {
                path: None,
                error: String::new(),
            },
        ) else {
            return;
        };
        let created = match &self.stem {
            Some(stem) => self.fs.create_numbered(&self.dir, stem, BASH_FILE_SUFFIX),
            None => self
                .fs
                .create_temp(&self.dir, &self.prefix, BASH_FILE_SUFFIX),
        };
        self.full = match created {
            Ok((path, file)) => FullOutput::Open {
                path,
                file: io::BufWriter::with_capacity(FILE_BUFFER, file),
                written: 0,
                cut: false,
            },
            Err(err) => FullOutput::Failed {
                path: None,
                error: format!(
                    "could not create a file in {}: {}",
                    self.dir.display(),
                    plain_reason(&err)
                ),
            },
        };
        self.write_full(&buffer);
    }

    /// Writes what fits under the log cap; the rest is counted as cut.
    fn write_full(&mut self, bytes: &[u8]) {
        let cap = self.log_cap;
        if let FullOutput::Open {
            path,
            file,
            written,
            cut,
        } = &mut self.full
        {
            let room = cap.saturating_sub(*written);
            let fits = usize::try_from(room).map_or(bytes.len(), |room| room.min(bytes.len()));
            *cut |= fits < bytes.len();
            if fits == 0 {
                return;
            }
            *written += fits as u64;
            if let Err(err) = file.write_all(&bytes[..fits]) {
                self.full = FullOutput::Failed {
                    path: Some(std::mem::take(path)),
                    error: format!("writing it failed: {}", plain_reason(&err)),
                };
            }
        }
    }

    fn flush_full(&mut self) {
        if let FullOutput::Open { path, file, .. } = &mut self.full
            && let Err(err) = file.flush()
        {
            self.full = FullOutput::Failed {
                path: Some(std::mem::take(path)),
                error: format!("writing it failed: {}", plain_reason(&err)),
            };
        }
    }
}

/// The cleaned text: a rolling tail of whole lines, the line being written,
/// and exact totals.
#[derive(Debug)]
struct Lines {
    window: usize,
    /// The end of the completed lines (each with its `\n`).
    committed: String,
    /// `committed` lost its beginning at some point.
    committed_cut: bool,
    /// The first line of `committed` lost its beginning.
    committed_starts_mid_line: bool,
    /// The end of the line being written (no `\n`).
    current: String,
    /// `current` lost its beginning.
    current_cut: bool,
    completed_lines: usize,
    completed_bytes: usize,
    /// Bytes of the line being written.
    current_bytes: usize,
    /// Bytes of the last completed line, without its `\n`.
    last_completed_bytes: usize,
}

impl Lines {
    fn new(window: usize) -> Self {
        Self {
            window,
            committed: String::new(),
            committed_cut: false,
            committed_starts_mid_line: false,
            current: String::new(),
            current_cut: false,
            completed_lines: 0,
            completed_bytes: 0,
            current_bytes: 0,
            last_completed_bytes: 0,
        }
    }

    fn total_lines(&self) -> usize {
        self.completed_lines + usize::from(self.current_bytes > 0)
    }

    fn total_bytes(&self) -> usize {
        self.completed_bytes + self.current_bytes
    }

    fn last_line_bytes(&self) -> usize {
        if self.current_bytes > 0 {
            self.current_bytes
        } else {
            self.last_completed_bytes
        }
    }

    fn was_cut(&self) -> bool {
        self.committed_cut || self.current_cut
    }

    fn apply(&mut self, piece: Piece<'_>) {
        match piece {
            Piece::Text(text) => self.push_text(text),
            Piece::CrLf => self.complete_line("\r\n"),
            Piece::Redraw => {
                self.current.clear();
                self.current_bytes = 0;
                self.current_cut = false;
            }
        }
    }

    fn push_text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let Some(first_nl) = memchr::memchr(b'\n', bytes) else {
            self.push_current(text);
            return;
        };
        self.push_current(&text[..first_nl]);
        self.complete_line("\n");
        // Whole lines in between go to the tail in one step: a command that
        // prints millions of short lines costs a few memchr passes per chunk.
        let rest = &text[first_nl + 1..];
        let last_nl = memchr::memrchr(b'\n', rest.as_bytes());
        if let Some(last_nl) = last_nl {
            let block = &rest[..=last_nl];
            let count = memchr::memchr_iter(b'\n', block.as_bytes()).count();
            let body = &block[..last_nl];
            self.last_completed_bytes =
                body.len() - memchr::memrchr(b'\n', body.as_bytes()).map_or(0, |i| i + 1);
            self.completed_lines += count;
            self.completed_bytes += block.len();
            self.push_committed(block);
        }
        let tail_start = last_nl.map_or(0, |i| i + 1);
        self.push_current(&rest[tail_start..]);
    }

    fn push_current(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.current_bytes += text.len();
        let (kept, skipped) = keep_end(text, 2 * self.window);
        if skipped {
            self.current.clear();
            self.current_cut = true;
        }
        self.current.push_str(kept);
        if self.current.len() > 2 * self.window {
            cut_front(&mut self.current, self.window);
            self.current_cut = true;
        }
    }

    fn complete_line(&mut self, ending: &str) {
        let line_bytes = self.current_bytes + ending.len() - 1;
        if self.current_cut {
            // This line is longer than twice the window: no line before it
            // can ever be shown again.
            self.committed.clear();
            self.committed_cut = true;
            self.committed_starts_mid_line = true;
        }
        self.committed.push_str(&self.current);
        self.committed.push_str(ending);
        self.completed_lines += 1;
        self.completed_bytes += line_bytes + 1;
        self.last_completed_bytes = line_bytes;
        self.current.clear();
        self.current_bytes = 0;
        self.current_cut = false;
        self.trim_committed();
    }

    fn push_committed(&mut self, block: &str) {
        let (kept, skipped) = keep_end(block, 2 * self.window);
        if skipped {
            self.committed.clear();
            self.committed_cut = true;
            self.committed_starts_mid_line =
                !kept.is_empty() && !block[..block.len() - kept.len()].ends_with('\n');
        }
        self.committed.push_str(kept);
        self.trim_committed();
    }

    fn trim_committed(&mut self) {
        if self.committed.len() > 2 * self.window {
            self.committed_starts_mid_line = !cut_front(&mut self.committed, self.window);
            self.committed_cut = true;
        }
    }
}

/// The last `max` bytes of `text` (starting at a character boundary) and
/// whether anything was skipped.
fn keep_end(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    (&text[start..], true)
}

/// Keeps about the last `keep` bytes of `text`; returns whether the cut
/// landed just after a newline.
fn cut_front(text: &mut String, keep: usize) -> bool {
    let cut = text.len() - keep_end(text, keep).0.len();
    let at_line_start = cut == 0 || text.as_bytes()[cut - 1] == b'\n';
    text.drain(..cut);
    at_line_start
}

/// A streaming UTF-8 decoder: a character split across chunks decodes
/// whole; each maximal invalid sequence becomes one U+FFFD (as WHATWG
/// decoders do).
#[derive(Debug, Default)]
struct Utf8Decoder {
    pending: [u8; 4],
    pending_len: usize,
}

const REPLACEMENT: &str = "\u{FFFD}";

impl Utf8Decoder {
    fn decode(&mut self, mut bytes: &[u8], mut out: impl FnMut(&str)) {
        if self.pending_len > 0 {
            // Complete the character that started in an earlier chunk.
            let mut seq = [0u8; 4];
            let mut len = self.pending_len;
            seq[..len].copy_from_slice(&self.pending[..len]);
            let need = sequence_len(seq[0]);
            let mut used = 0;
            // Take continuation bytes only while they keep the sequence a
            // valid (maybe unfinished) character, so an invalid one becomes
            // the same U+FFFDs as in a whole-stream decode.
            while len < need && used < bytes.len() && is_continuation(bytes[used]) {
                seq[len] = bytes[used];
                if std::str::from_utf8(&seq[..=len]).is_err() && !is_incomplete(&seq[..=len]) {
                    break;
                }
                len += 1;
                used += 1;
            }
            bytes = &bytes[used..];
            if len < need && bytes.is_empty() {
                // Still incomplete: wait for more.
                self.pending = seq;
                self.pending_len = len;
                return;
            }
            self.pending_len = 0;
            decode_complete(&seq[..len], &mut out);
        }
        // A character cut off at the end waits for the next chunk.
        let keep = incomplete_suffix(bytes);
        let (complete, rest) = bytes.split_at(bytes.len() - keep);
        decode_complete(complete, &mut out);
        self.pending[..keep].copy_from_slice(rest);
        self.pending_len = keep;
    }

    /// Flushes an incomplete final character as U+FFFD; returns whether
    /// there was one.
    fn finish(&mut self, mut out: impl FnMut(&str)) -> bool {
        if self.pending_len == 0 {
            return false;
        }
        self.pending_len = 0;
        out(REPLACEMENT);
        true
    }
}

/// Decodes bytes that are not followed by more of the same character.
fn decode_complete(bytes: &[u8], out: &mut impl FnMut(&str)) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        if !text.is_empty() {
            out(text);
        }
        return;
    }
    for chunk in bytes.utf8_chunks() {
        if !chunk.valid().is_empty() {
            out(chunk.valid());
        }
        if !chunk.invalid().is_empty() {
            out(REPLACEMENT);
        }
    }
}

/// How many bytes at the end of `bytes` are the valid beginning of a
/// character cut short (0 to 3).
fn incomplete_suffix(bytes: &[u8]) -> usize {
    let from = bytes.len().saturating_sub(3);
    match (from..bytes.len())
        .rev()
        .find(|&i| !is_continuation(bytes[i]))
    {
        Some(lead) if is_incomplete(&bytes[lead..]) => bytes.len() - lead,
        _ => 0,
    }
}

/// The length a sequence starting with `lead` would have (1 for bytes that
/// cannot start one).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xc0 == 0x80
}

/// Whether `bytes` is the valid beginning of a character cut short.
fn is_incomplete(bytes: &[u8]) -> bool {
    matches!(std::str::from_utf8(bytes), Err(err) if err.error_len().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ops::LocalFs;
    use crate::tools::testutil::disk;
    use crate::tools::truncate::TruncatedBy;
    use crate::tools::truncate::count_lines;
    use pretty_assertions::assert_eq;

    fn limits() -> TruncationLimits {
        TruncationLimits::default()
    }

    fn acc_in(dir: &tempfile::TempDir) -> OutputAccumulator {
        OutputAccumulator::new(limits(), BASH_FILE_PREFIX, Arc::new(LocalFs)).in_dir(dir.path())
    }

    fn feed(acc: &mut OutputAccumulator, bytes: &[u8], chunk: usize) {
        for piece in bytes.chunks(chunk.max(1)) {
            acc.append(piece);
        }
        acc.finish();
    }

    fn decode_all(pieces: &[&[u8]]) -> String {
        let mut decoder = Utf8Decoder::default();
        let mut out = String::new();
        for piece in pieces {
            decoder.decode(piece, |t| out.push_str(t));
        }
        decoder.finish(|t| out.push_str(t));
        out
    }

    #[test]
    fn decoder_joins_characters_split_across_chunks() {
        let text = "aé🙂€b".as_bytes();
        for cut in 0..=text.len() {
            assert_eq!(
                decode_all(&[&text[..cut], &text[cut..]]),
                "aé🙂€b",
                "cut at {cut}"
            );
        }
        let singles: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(decode_all(&singles), "aé🙂€b");
    }

    #[test]
    fn decoder_replaces_invalid_sequences_like_a_whole_stream_decode() {
        let cases: &[&[u8]] = &[
            b"\xff\xfeA\n",
            b"a\xe2\x82",
            b"a\xe2\x82b",
            b"\xe0\x80\x80A",
            b"\xf0\x9f\x99",
            b"\xc3",
            b"x\xed\xa0\x80y",
            b"\x80\x80",
            b"\xe0\x80",
            b"\xf4\x90\x80",
            b"\xf0\x9f\x99\x82\xf0",
        ];
        for bytes in cases {
            let want = String::from_utf8_lossy(bytes).into_owned();
            assert_eq!(decode_all(&[bytes]), want, "{bytes:?}");
            for cut in 0..=bytes.len() {
                assert_eq!(
                    decode_all(&[&bytes[..cut], &bytes[cut..]]),
                    want,
                    "{bytes:?} cut at {cut}"
                );
            }
            let singles: Vec<&[u8]> = bytes.chunks(1).collect();
            assert_eq!(decode_all(&singles), want, "{bytes:?} byte by byte");
        }
        assert_eq!(decode_all(&[b"\xff\xfeA\n"]), "\u{FFFD}\u{FFFD}A\n");
    }

    #[test]
    fn small_output_is_kept_whole_without_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        feed(&mut acc, b"a\r\nb\r\n", 3);
        let snap = acc.snapshot();
        assert_eq!(snap.content, "a\r\nb\r\n");
        assert!(!snap.truncation.truncated);
        assert_eq!(snap.truncation.total_lines, 2);
        assert_eq!(snap.full_output_path, None);
        assert!(!snap.cleaned);
        assert_eq!(disk::names(dir.path()).len(), 0);
    }

    #[test]
    fn exactly_the_line_limit_is_not_truncated() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        let text: String = (1..=2000).map(|i| format!("{i}\n")).collect();
        feed(&mut acc, text.as_bytes(), 4096);
        let snap = acc.snapshot();
        assert_eq!(snap.content, text);
        assert!(!snap.truncation.truncated);
        assert_eq!(snap.full_output_path, None);
    }

    #[test]
    fn seq_3000_keeps_lines_1001_to_3000_and_saves_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        feed(&mut acc, text.as_bytes(), 100);
        let snap = acc.snapshot();
        let want: String = (1001..=3000).map(|i| format!("{i}\n")).collect();
        assert_eq!(snap.content, want.trim_end());
        let t = &snap.truncation;
        assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!((t.total_lines, t.output_lines), (3000, 2000));
        assert_eq!(t.total_bytes, text.len());
        let path = snap.full_output_path.unwrap();
        assert_eq!(disk::read(&path), text.as_bytes());
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("harness-bash-") && name.ends_with(".log") && name.len() == 33,
            "{name}"
        );
        assert_eq!(disk::metadata(&path).mode & 0o777, 0o600);
    }

    #[test]
    fn one_long_line_reports_its_true_size_with_or_without_newline() {
        for (len, newline) in [
            (60_000, false),
            (60_000, true),
            (300_000, true),
            (300_000, false),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut acc = acc_in(&dir);
            let mut bytes = vec![b'0'; len];
            if newline {
                bytes.push(b'\n');
            }
            feed(&mut acc, &bytes, 8192);
            let snap = acc.snapshot();
            assert_eq!(snap.content, "0".repeat(51_200), "{len} {newline}");
            let t = &snap.truncation;
            assert!(t.last_line_partial);
            assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
            assert_eq!(
                (t.total_lines, t.output_lines, t.output_bytes),
                (1, 1, 51_200)
            );
            assert_eq!(t.total_bytes, bytes.len());
            assert_eq!(snap.last_line_bytes, len, "{len} {newline}");
            assert_eq!(disk::read(snap.full_output_path.unwrap()), bytes);
        }
    }

    #[test]
    fn long_line_followed_by_short_lines_is_not_shown_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        let mut text = "x".repeat(500_000);
        text.push_str("\nshort\nend\n");
        feed(&mut acc, text.as_bytes(), 7000);
        let snap = acc.snapshot();
        assert_eq!(snap.content, "short\nend");
        let t = &snap.truncation;
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!((t.total_lines, t.output_lines), (3, 2));
        assert!(!t.last_line_partial);
    }

    #[test]
    fn invalid_bytes_become_replacement_characters_and_stay_raw_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = OutputAccumulator::new(
            TruncationLimits {
                max_lines: 1,
                max_bytes: 100,
            },
            "t",
            Arc::new(LocalFs),
        )
        .in_dir(dir.path());
        feed(&mut acc, b"\xff\xfeA\nB\n", 1);
        let snap = acc.snapshot();
        assert_eq!(snap.content, "B");
        assert_eq!(snap.truncation.total_bytes, 10);
        assert_eq!(
            disk::read(snap.full_output_path.unwrap()),
            b"\xff\xfeA\nB\n"
        );
    }

    #[test]
    fn cleaning_is_reported_and_facts_describe_the_cleaned_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = OutputAccumulator::new(
            TruncationLimits {
                max_lines: 2,
                max_bytes: 1000,
            },
            "t",
            Arc::new(LocalFs),
        )
        .in_dir(dir.path());
        feed(&mut acc, b"\x1b[31mred\x1b[0m\n10%\r50%\r100%\ndone\n", 2);
        let snap = acc.snapshot();
        assert!(snap.cleaned);
        assert_eq!(snap.content, "100%\ndone");
        let t = &snap.truncation;
        assert_eq!(
            (t.total_lines, t.total_bytes),
            (3, "red\n100%\ndone\n".len())
        );
        // Raw output: 3 lines, so a file was opened with the raw bytes.
        assert_eq!(
            disk::read(snap.full_output_path.unwrap()),
            b"\x1b[31mred\x1b[0m\n10%\r50%\r100%\ndone\n"
        );
    }

    #[test]
    fn a_long_redrawn_line_does_not_push_earlier_lines_out() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        acc.append(b"header\n");
        for i in 0..1000 {
            acc.append(format!("\r{}{i}", "#".repeat(500)).as_bytes());
        }
        acc.append(b"\rfinished\n");
        acc.finish();
        let snap = acc.snapshot();
        assert_eq!(snap.content, "header\nfinished\n");
        assert!(!snap.truncation.truncated);
        assert!(snap.cleaned);
        // The raw output was large, so it is saved anyway.
        assert!(snap.full_output_path.is_some());
    }

    #[test]
    fn memory_stays_bounded_for_huge_output() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        let chunk = b"y\n".repeat(32 * 1024);
        let long = vec![b'z'; 64 * 1024];
        let bound = 8 * 2 * limits().max_bytes + 4 * chunk.len() + FILE_BUFFER;
        let mut total = 0u64;
        // 200 MB of short lines, then 50 MB of one line.
        while total < 200_000_000 {
            acc.append(&chunk);
            total += chunk.len() as u64;
            assert!(
                acc.retained_bytes() <= bound,
                "{} > {bound}",
                acc.retained_bytes()
            );
        }
        for _ in 0..800 {
            acc.append(&long);
            total += long.len() as u64;
            assert!(
                acc.retained_bytes() <= bound,
                "{} > {bound}",
                acc.retained_bytes()
            );
        }
        acc.finish();
        let snap = acc.snapshot();
        assert_eq!(acc.raw_bytes(), total);
        let short_bytes = total as usize - 800 * long.len();
        assert_eq!(snap.truncation.total_lines, short_bytes / 2 + 1);
        assert_eq!(snap.truncation.total_bytes, total as usize);
        assert_eq!(snap.last_line_bytes, 800 * long.len());
        assert_eq!(snap.content.len(), 51_200);
        let path = snap.full_output_path.unwrap();
        assert_eq!(disk::metadata(&path).len, total);
    }

    #[test]
    fn the_full_output_file_keeps_only_the_first_bytes_up_to_the_log_cap() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        for (cap, chunk) in [(100u64, 7usize), (5000, 4096), (5000, 1)] {
            let mut acc = acc_in(&dir).with_log_cap(cap);
            feed(&mut acc, text.as_bytes(), chunk);
            let snap = acc.snapshot();
            // What the model reads does not depend on the cap.
            let want: String = (1001..=3000).map(|i| format!("{i}\n")).collect();
            assert_eq!(snap.content, want.trim_end());
            assert!(snap.full_output_truncated);
            assert_eq!(snap.full_output_bytes, cap);
            let path = snap.full_output_path.unwrap();
            assert_eq!(disk::read(&path), &text.as_bytes()[..cap as usize]);
        }
        // Exactly the cap is not cut.
        let mut acc = acc_in(&dir).with_log_cap(text.len() as u64);
        feed(&mut acc, text.as_bytes(), 333);
        let snap = acc.snapshot();
        assert!(!snap.full_output_truncated);
        assert_eq!(snap.full_output_bytes, text.len() as u64);
    }

    #[test]
    fn a_log_cap_of_zero_keeps_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir).with_log_cap(0);
        let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        feed(&mut acc, text.as_bytes(), 100);
        let snap = acc.snapshot();
        assert_eq!(
            (
                snap.full_output_path,
                snap.full_output_error,
                snap.full_output_truncated
            ),
            (None, None, true)
        );
        assert!(snap.truncation.truncated);
        assert_eq!(disk::names(dir.path()).len(), 0);
    }

    #[test]
    fn no_output_means_no_lines() {
        let mut acc = OutputAccumulator::new(limits(), "t", Arc::new(LocalFs));
        acc.finish();
        let snap = acc.snapshot();
        assert_eq!(snap.content, "");
        assert_eq!(snap.truncation.total_lines, 0);
        assert_eq!(snap.full_output_path, None);
    }

    #[test]
    fn facts_match_a_direct_truncation_for_random_shapes() {
        // Whatever the chunking, the accumulator reports what truncating
        // the whole cleaned text at once reports.
        let dir = tempfile::tempdir().unwrap();
        let shapes: Vec<String> = vec![
            (0..5000).map(|i| format!("line {i}\n")).collect(),
            (0..700).map(|i| "w".repeat(i % 300) + "\n").collect(),
            format!("{}\n{}", "a".repeat(120_000), "b".repeat(70_000)),
            format!("{}\n{}\n", "a".repeat(10), "é".repeat(40_000)),
            "\n".repeat(3000),
            (0..30_000).map(|i| format!("line {i}\n")).collect(),
            format!("{}\nshort\n", "a".repeat(300_000)),
            format!("x\n{}", "é".repeat(150_000)),
        ];
        for text in &shapes {
            for chunk in [1usize, 333, 65_536] {
                let mut acc = acc_in(&dir);
                feed(&mut acc, text.as_bytes(), chunk);
                let snap = acc.snapshot();
                let want = truncate_tail(text, limits());
                assert_eq!(snap.content, want.content, "chunk {chunk}");
                assert_eq!(snap.truncation, want.facts, "chunk {chunk}");
                assert_eq!(snap.truncation.total_lines, count_lines(text));
            }
        }
    }

    mod props {
        use proptest::collection::vec;
        use proptest::prelude::*;

        use super::super::*;
        use crate::tools::bash::ansi::clean;
        use crate::tools::truncate::count_lines;
        use crate::tools::truncate::count_lines_bytes;

        /// Pieces of terminal output: long and short runs, multi-byte and
        /// invalid bytes, line endings, redraws and escape codes.
        fn token() -> impl Strategy<Value = Vec<u8>> {
            prop_oneof![
                (0usize..4000).prop_map(|n| vec![b'a'; n]),
                (0usize..40).prop_map(|n| b"xy".repeat(n)),
                Just("é🙂".as_bytes().to_vec()),
                Just(b"\n".to_vec()),
                Just(b"\n".to_vec()),
                Just(b"\r".to_vec()),
                Just(b"\r\n".to_vec()),
                Just(b"\x1b[1;31m".to_vec()),
                Just(b"\x1b]0;title\x07".to_vec()),
                Just(vec![0xff]),
                Just(vec![0xe2, 0x82]),
                Just(vec![0xe0, 0x80]),
                Just(vec![0xf0, 0x9f]),
            ]
        }

        proptest! {
            #![proptest_config(crate::tools::testutil::cases(128))]

            /// Whatever the chunking and the limits, a snapshot says exactly
            /// what truncating the whole cleaned text at once says, and the
            /// file holds every raw byte exactly when the output outgrew a
            /// limit.
            #[test]
            fn snapshot_equals_truncating_the_whole_cleaned_text(
                tokens in vec(token(), 0..150),
                chunk in 1usize..6000,
                max_lines in 1usize..40,
                max_bytes in 1usize..3000,
            ) {
                let raw = tokens.concat();
                let limits = TruncationLimits { max_lines, max_bytes };
                let dir = tempfile::tempdir().unwrap();
                let mut acc = OutputAccumulator::new(limits, "p", Arc::new(crate::tools::ops::LocalFs)).in_dir(dir.path());
                for piece in raw.chunks(chunk) {
                    acc.append(piece);
                    // Each tail buffer holds at most 4 windows before a trim,
                    // so 8 of capacity; raw bytes wait for the file only
                    // until they outgrow the limit.
                    let bound = 16 * acc.lines.window + 2 * (max_bytes + chunk) + FILE_BUFFER;
                    prop_assert!(acc.retained_bytes() <= bound, "{} > {}", acc.retained_bytes(), bound);
                }
                acc.finish();
                let snap = acc.snapshot();

                let (cleaned, removed) = clean(&String::from_utf8_lossy(&raw));
                let want = truncate_tail(&cleaned, limits);
                prop_assert_eq!(&snap.content, want.content);
                prop_assert_eq!(&snap.truncation, &want.facts);
                prop_assert_eq!(snap.cleaned, removed);
                let body = cleaned.strip_suffix('\n').unwrap_or(&cleaned);
                let last_line = body.rsplit('\n').next().unwrap_or("");
                prop_assert_eq!(snap.last_line_bytes, last_line.len());

                let outgrew = raw.len() > max_bytes
                    || count_lines_bytes(&raw) > max_lines
                    || cleaned.len() > max_bytes
                    || count_lines(&cleaned) > max_lines;
                match &snap.full_output_path {
                    Some(path) => {
                        prop_assert!(outgrew);
                        prop_assert_eq!(&crate::tools::testutil::disk::read(path), &raw);
                    }
                    None => prop_assert!(!outgrew),
                }
            }
        }
    }
}
