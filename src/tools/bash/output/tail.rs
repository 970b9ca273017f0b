//! The tail window of bash's cleaned output: a rolling tail of whole lines
//! plus the line being written, each cut to a window once it is twice
//! that, and exact whole-stream totals.

use super::super::ansi::Piece;

/// The cleaned text: a rolling tail of whole lines, the line being written,
/// and exact totals.
#[derive(Debug)]
pub(super) struct Lines {
    pub(super) window: usize,
    /// The end of the completed lines (each with its `\n`).
    pub(super) committed: String,
    /// `committed` lost its beginning at some point.
    committed_cut: bool,
    /// The first line of `committed` lost its beginning.
    pub(super) committed_starts_mid_line: bool,
    /// The end of the line being written (no `\n`).
    pub(super) current: String,
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
    pub(super) fn new(window: usize) -> Self {
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

    pub(super) fn total_lines(&self) -> usize {
        self.completed_lines + usize::from(self.current_bytes > 0)
    }

    pub(super) fn total_bytes(&self) -> usize {
        self.completed_bytes + self.current_bytes
    }

    pub(super) fn last_line_bytes(&self) -> usize {
        if self.current_bytes > 0 {
            self.current_bytes
        } else {
            self.last_completed_bytes
        }
    }

    pub(super) fn was_cut(&self) -> bool {
        self.committed_cut || self.current_cut
    }

    pub(super) fn apply(&mut self, piece: Piece<'_>) {
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
