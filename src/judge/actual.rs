//! What a failure keeps of what happened: an [`Actual`], at most
//! [`MAX_ACTUAL_BYTES`], held once and shared by every failure on the same
//! text (a file with a hundred `contains` strings that fail keeps one cut
//! copy of its text, not a hundred whole ones).
//!
//! A text over the bound keeps its beginning (three quarters of the room)
//! and its end (the rest), each cut at a line break when one is near and
//! otherwise on a character boundary (a single long line is cut too),
//! around a line that says exactly what is left out:
//!
//! ```text
//! [… 1134720 of 1200000 bytes not shown: line 4081 to line 98640 of 100000 …]
//! ```

use std::cell::OnceCell;
use std::sync::Arc;

use serde::Deserialize;
use serde::Serialize;

/// The most bytes of a failure's `actual` text, the line that says what
/// was cut included. More than the 50 KiB a tool's result holds under the
/// default limits (with the words a check puts before it), so a check on
/// a result keeps it whole unless the scenario raised the limits; a file
/// check on a larger file keeps its beginning and end. 200 failures on
/// one text then take 64 KiB of memory, and a report at most 64 KiB a
/// failure.
pub(crate) const MAX_ACTUAL_BYTES: usize = 64 * 1024;

/// Room kept for the line that says what was cut.
const NOTICE_ROOM: usize = 256;

/// When a failure's `actual` is cut: the whole text it was cut from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ActualCut {
    /// The whole text's bytes.
    pub bytes: u64,
    /// Its lines (a final newline ends the last line).
    pub lines: u64,
    /// The bytes of it that `actual` does not hold (where the line that
    /// says so is).
    pub omitted_bytes: u64,
}

/// A failure's `actual`: the text, or its beginning and end around a line
/// that says what is left out; cheap to clone (the text is shared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Actual {
    pub(super) text: Arc<str>,
    pub(super) cut: Option<ActualCut>,
}

impl Actual {
    /// `text` as a failure keeps it: whole up to [`MAX_ACTUAL_BYTES`],
    /// else cut.
    pub fn of(text: &str) -> Self {
        if text.len() <= MAX_ACTUAL_BYTES {
            return Self {
                text: Arc::from(text),
                cut: None,
            };
        }
        cut(text, MAX_ACTUAL_BYTES)
    }

    /// The text kept.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What was left out, when anything was.
    pub fn cut(&self) -> Option<ActualCut> {
        self.cut
    }
}

impl From<&str> for Actual {
    fn from(text: &str) -> Self {
        Self::of(text)
    }
}

impl From<&String> for Actual {
    fn from(text: &String) -> Self {
        Self::of(text)
    }
}

impl From<String> for Actual {
    fn from(text: String) -> Self {
        if text.len() <= MAX_ACTUAL_BYTES {
            return Self {
                text: Arc::from(text),
                cut: None,
            };
        }
        Self::of(&text)
    }
}

/// A text being checked, and the [`Actual`] its failures share: made when
/// the first of them needs it, once.
pub(super) struct Checked<'t> {
    text: &'t str,
    actual: OnceCell<Actual>,
}

impl<'t> Checked<'t> {
    pub(super) fn new(text: &'t str) -> Self {
        Self {
            text,
            actual: OnceCell::new(),
        }
    }

    /// The whole text.
    pub(super) fn text(&self) -> &'t str {
        self.text
    }

    /// What its failures keep of it (the same shared text every time).
    pub(super) fn actual(&self) -> Actual {
        self.actual.get_or_init(|| Actual::of(self.text)).clone()
    }
}

/// The number of lines of `text` (a final newline ends the last line).
fn line_count(text: &str) -> usize {
    let breaks = newlines(text.as_bytes());
    breaks + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

fn newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'\n').count()
}

/// `text` (longer than `limit`) cut to at most `limit` bytes, the notice
/// included.
fn cut(text: &str, limit: usize) -> Actual {
    let room = limit.saturating_sub(NOTICE_ROOM);
    let head_room = room / 4 * 3;
    let tail_room = room - head_room;
    // The beginning: up to a line break in the second half of its room,
    // else to a character boundary.
    let mut head = text.floor_char_boundary(head_room);
    if let Some(at) = text[..head].rfind('\n')
        && at + 1 >= head_room / 2
    {
        head = at + 1;
    }
    // The end: from a line break in the first half of its room, else from
    // a character boundary.
    let mut tail = text.ceil_char_boundary(text.len() - tail_room).max(head);
    if text.as_bytes()[tail - 1] != b'\n'
        && let Some(at) = text[tail..].find('\n')
        && at < tail_room / 2
        && tail + at + 1 < text.len()
    {
        tail += at + 1;
    }
    let total = line_count(text);
    // The lines the cut bytes are on (from 1): a byte is on the line
    // its newline, or the text, ends.
    let first = newlines(&text.as_bytes()[..head]) + 1;
    let last = newlines(&text.as_bytes()[..tail - 1]) + 1;
    let starts_line = head == 0 || text.as_bytes()[head - 1] == b'\n';
    let ends_line = text.as_bytes()[tail - 1] == b'\n';
    let lines = if first == last {
        if starts_line && ends_line {
            format!("line {first} of {total}")
        } else {
            format!("part of line {first} of {total}")
        }
    } else {
        let from = if starts_line {
            format!("line {first}")
        } else {
            format!("the rest of line {first}")
        };
        let to = if ends_line {
            format!("line {last}")
        } else {
            format!("the start of line {last}")
        };
        format!("{from} to {to} of {total}")
    };
    let omitted = tail - head;
    let notice = format!("[… {omitted} of {} bytes not shown: {lines} …]", text.len());
    let mut kept = String::with_capacity(head + notice.len() + 2 + text.len() - tail);
    kept.push_str(&text[..head]);
    if !starts_line {
        kept.push('\n');
    }
    kept.push_str(&notice);
    kept.push('\n');
    kept.push_str(&text[tail..]);
    Actual {
        text: Arc::from(kept),
        cut: Some(ActualCut {
            bytes: text.len() as u64,
            lines: total as u64,
            omitted_bytes: omitted as u64,
        }),
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_text_within_the_bound_is_kept_whole() {
        let text = "x".repeat(MAX_ACTUAL_BYTES);
        let actual = Actual::of(&text);
        assert_eq!((actual.text(), actual.cut()), (text.as_str(), None));
        assert_eq!(Actual::from(text), actual);
    }

    /// Issue 21 item 2: lines of a long text are cut at line breaks, and
    /// the notice says exactly which are left out.
    #[test]
    fn a_long_text_keeps_its_beginning_and_end_and_says_what_is_left_out() {
        let text: String = (1..=100_000).map(|i| format!("line {i:06}\n")).collect();
        let actual = Actual::of(&text);
        let kept = actual.text();
        assert!(kept.len() <= MAX_ACTUAL_BYTES, "{}", kept.len());
        // 12 bytes a line: 4080 lines fill the beginning's 48,960 bytes,
        // 1360 the end's 16,320.
        let head: String = (1..=4080).map(|i| format!("line {i:06}\n")).collect();
        let tail: String = (98_641..=100_000)
            .map(|i| format!("line {i:06}\n"))
            .collect();
        let omitted = text.len() - head.len() - tail.len();
        assert_eq!(
            kept,
            format!(
                "{head}[… {omitted} of 1200000 bytes not shown: line 4081 to line 98640 of \
                 100000 …]\n{tail}"
            )
        );
        assert_eq!(
            actual.cut(),
            Some(ActualCut {
                bytes: 1_200_000,
                lines: 100_000,
                omitted_bytes: omitted as u64,
            })
        );
    }

    /// Issue 21 item 2: a single long line is cut too, on a character
    /// boundary, whatever its characters' widths.
    #[test]
    fn a_single_long_line_is_cut_on_a_character_boundary() {
        for ch in ["x", "é", "€", "🙂"] {
            let text = ch.repeat(20_000_000 / ch.len());
            let actual = Actual::of(&text);
            let kept = actual.text();
            assert!(kept.len() <= MAX_ACTUAL_BYTES, "{ch}: {}", kept.len());
            let (head, rest) = kept.split_once('\n').unwrap();
            let (notice, tail) = rest.split_once('\n').unwrap();
            assert!(head.chars().all(|c| c.to_string() == ch), "{ch}");
            assert!(tail.chars().all(|c| c.to_string() == ch), "{ch}");
            let omitted = text.len() - head.len() - tail.len();
            assert_eq!(
                notice,
                format!(
                    "[… {omitted} of {} bytes not shown: part of line 1 of 1 …]",
                    text.len()
                )
            );
            assert!(head.len() > 48_000 && tail.len() > 16_000, "{ch}");
            assert_eq!(actual.cut().map(|c| c.omitted_bytes), Some(omitted as u64));
        }
    }

    #[test]
    fn a_cut_inside_lines_names_the_parts() {
        // Lines of 60,000 bytes: no line break near either cut.
        let line = |c: &str| c.repeat(60_000);
        let text = format!("{}\n{}\n{}", line("a"), line("b"), line("c"));
        let actual = Actual::of(&text);
        let notice = actual.text().lines().nth(1).unwrap();
        let omitted = actual.cut().unwrap().omitted_bytes;
        assert_eq!(
            notice,
            format!(
                "[… {omitted} of 180002 bytes not shown: the rest of line 1 to the start of line \
                 3 of 3 …]"
            )
        );
        // A line break in the second half of the beginning's room ends it.
        let text = format!("{}\n{}\n{}", "a".repeat(30_000), line("b"), line("c"));
        let notice = Actual::of(&text).text().lines().nth(1).unwrap().to_owned();
        assert!(
            notice.ends_with("bytes not shown: line 2 to the start of line 3 of 3 …]"),
            "{notice}"
        );
        assert!(actual.text().len() <= MAX_ACTUAL_BYTES);
    }

    #[test]
    fn failures_on_one_text_share_it() {
        let text = "y\n".repeat(MAX_ACTUAL_BYTES);
        let checked = Checked::new(&text);
        let (a, b) = (checked.actual(), checked.actual());
        assert!(Arc::ptr_eq(&a.text, &b.text));
        assert_eq!(checked.text(), text);
    }
}
