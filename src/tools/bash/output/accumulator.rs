//! The bounded output accumulator: raw bytes in, through the full log, the
//! UTF-8 decoder, the cleaner and the tail window; a [`Snapshot`] out.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use super::full_log::FullLog;
use super::tail::Lines;
use super::utf8::Utf8Decoder;
use crate::tools::bash::ansi::Cleaner;
use crate::tools::ops::FsOps;
use crate::tools::truncate::Truncation;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::truncate_tail;

/// The smallest rolling window, so tiny byte limits still keep a useful tail.
const MIN_WINDOW: usize = 1024;

/// What a snapshot shows and the facts about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
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

/// The bounded accumulator; see the module documentation of `output`.
#[derive(Debug)]
pub(crate) struct OutputAccumulator {
    limits: TruncationLimits,
    raw_bytes: u64,
    raw_newlines: u64,
    raw_ends_with_newline: bool,
    decoder: Utf8Decoder,
    cleaner: Cleaner,
    lines: Lines,
    full: FullLog,
    finished: bool,
}

impl OutputAccumulator {
    /// An accumulator with the given limits whose full-output file, when one
    /// is needed, is created through `fs` as
    /// `{temp dir}/{prefix}-{16 hex}.log`.
    pub(crate) fn new(limits: TruncationLimits, prefix: &str, fs: Arc<dyn FsOps>) -> Self {
        let window = limits.max_bytes.saturating_mul(2).max(MIN_WINDOW);
        Self {
            limits,
            raw_bytes: 0,
            raw_newlines: 0,
            raw_ends_with_newline: false,
            decoder: Utf8Decoder::default(),
            cleaner: Cleaner::new(),
            lines: Lines::new(window),
            full: FullLog::new(prefix, fs),
            finished: false,
        }
    }

    /// Keeps at most `cap` raw bytes in the full-output file (the first
    /// ones); 0 keeps no file at all. Without it there is no cap.
    pub(crate) fn with_log_cap(mut self, cap: u64) -> Self {
        self.full.cap = cap;
        self
    }

    /// Puts the full-output file in `dir` instead of the system temp dir.
    pub(crate) fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.full.dir = dir.into();
        self
    }

    /// Names the full-output file `{stem}.log` (or `{stem}-2.log` … when
    /// taken) instead of a random name; `None` keeps the random name.
    pub(crate) fn named(mut self, stem: Option<String>) -> Self {
        self.full.stem = stem;
        self
    }

    /// Adds the next raw chunk. Chunks after [`finish`](Self::finish) are
    /// ignored.
    pub(crate) fn append(&mut self, chunk: &[u8]) {
        debug_assert!(!self.finished, "append after finish");
        if self.finished || chunk.is_empty() {
            return;
        }
        self.raw_bytes += chunk.len() as u64;
        self.raw_newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.raw_ends_with_newline = chunk.last() == Some(&b'\n');
        self.full.push(chunk);
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
    pub(crate) fn finish(&mut self) -> bool {
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
        self.full.flush();
        had_partial_char || before != (self.lines.total_bytes(), self.cleaner.removed_anything())
    }

    /// Raw bytes received.
    #[cfg(test)]
    pub(crate) fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    /// Raw lines received (a final newline ends a line, it does not start
    /// one).
    pub(crate) fn raw_lines(&self) -> u64 {
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
        self.lines.committed.capacity() + self.lines.current.capacity() + self.full.retained_bytes()
    }

    /// The tail window's size in bytes.
    #[cfg(test)]
    pub(crate) fn window(&self) -> usize {
        self.lines.window
    }

    /// The tail truncated to the limits, with whole-stream facts. Flushes
    /// the full-output file so that its path can be handed out.
    pub(crate) fn snapshot(&mut self) -> Snapshot {
        self.full.flush();
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
        let log = self.full.facts();
        Snapshot {
            content: tail.content.to_owned(),
            truncation,
            last_line_bytes: lines.last_line_bytes(),
            full_output_path: log.path,
            full_output_error: log.error,
            full_output_truncated: log.truncated,
            full_output_bytes: log.bytes,
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
        if self.full.is_buffered() && self.needs_full_output() {
            self.full.open();
        }
    }
}
