//! Head and tail truncation of tool output (§common.4), as pure functions.
//!
//! Every tool that can produce more text than a model should read goes
//! through here: `read`, `grep`, `find` and `ls` keep the beginning
//! ([`truncate_head`]), `bash` keeps the end ([`truncate_tail`]). Both cut
//! at whole lines and report exactly what they cut in a [`Truncation`], which
//! the tools put in `details.truncation` and turn into a notice.
//!
//! Lines are counted the way a person counts them: the empty string has no
//! lines, and a final `\n` ends the last line instead of starting a new one
//! (`"a\nb"` and `"a\nb\n"` both have two lines). `\r` is an ordinary byte.
//!
//! Where pi's module reports odd facts we report the true ones (D13):
//! input that is over the byte limit only because of its final newline is
//! returned whole (without that newline) and is not called truncated.

use serde::Deserialize;
use serde::Serialize;

/// The line cap applied when a caller does not set one.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// The byte cap applied when a caller does not set one (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// The number of characters after which a grep line is cut.
pub const GREP_MAX_LINE_CHARS: usize = 500;

/// The suffix [`truncate_line`] appends to a cut line.
pub const LINE_TRUNCATED_SUFFIX: &str = "... [truncated]";

/// Which limit stopped the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncatedBy {
    /// The line cap was reached.
    Lines,
    /// The byte cap was reached.
    Bytes,
}

/// The caps one truncation applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TruncationLimits {
    /// Maximum number of lines kept; `usize::MAX` for no line cap.
    pub max_lines: usize,
    /// Maximum number of UTF-8 bytes kept.
    pub max_bytes: usize,
}

impl Default for TruncationLimits {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl TruncationLimits {
    /// Only a byte cap (grep, find and ls output).
    pub fn bytes_only(max_bytes: usize) -> Self {
        Self {
            max_lines: usize::MAX,
            max_bytes,
        }
    }
}

/// The facts of one truncation (§common.4.2), as reported in
/// `details.truncation`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncation {
    /// Whether anything was cut.
    pub truncated: bool,
    /// Which limit cut the output, if any.
    pub truncated_by: Option<TruncatedBy>,
    /// Lines in the whole input.
    pub total_lines: usize,
    /// UTF-8 bytes in the whole input.
    pub total_bytes: usize,
    /// Lines in the output.
    pub output_lines: usize,
    /// UTF-8 bytes in the output.
    pub output_bytes: usize,
    /// Tail only: the output is the end of a line longer than the byte cap.
    pub last_line_partial: bool,
    /// Head only: the first line alone is longer than the byte cap, so the
    /// output is empty.
    pub first_line_exceeds_limit: bool,
    /// The line cap that was applied (`null` in JSON when there was none).
    #[serde(with = "optional_cap")]
    pub max_lines: usize,
    /// The byte cap that was applied.
    pub max_bytes: usize,
}

impl Truncation {
    /// The facts a tool result keeps in `details.truncation`, read back
    /// through serde; `None` when the result has none (nothing was cut) or
    /// they are not truncation facts.
    pub fn from_details(details: &serde_json::Value) -> Option<Self> {
        #[derive(Deserialize)]
        struct Details {
            truncation: Option<Truncation>,
        }
        Details::deserialize(details).ok()?.truncation
    }
}

/// Serialises `usize::MAX` ("no cap") as `null`.
mod optional_cap {
    use serde::Deserialize;
    use serde::Deserializer;
    use serde::Serializer;

    pub(super) fn serialize<S: Serializer>(value: &usize, s: S) -> Result<S::Ok, S::Error> {
        if *value == usize::MAX {
            s.serialize_none()
        } else {
            s.serialize_u64(*value as u64)
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
        let value = Option::<u64>::deserialize(d)?;
        Ok(value.map_or(usize::MAX, |v| usize::try_from(v).unwrap_or(usize::MAX)))
    }
}

/// The kept text and the facts of how it was cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncated<'a> {
    /// The kept text: always a slice of the input.
    pub content: &'a str,
    /// What was cut.
    pub facts: Truncation,
}

/// Counts lines: 0 for the empty string; otherwise the number of `\n` plus
/// one when text follows the last `\n`.
pub fn count_lines(text: &str) -> usize {
    count_lines_bytes(text.as_bytes())
}

/// [`count_lines`] on bytes.
pub fn count_lines_bytes(bytes: &[u8]) -> usize {
    if bytes.is_empty() {
        return 0;
    }
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(bytes.last() != Some(&b'\n'))
}

/// The byte ranges of the lines of `text`, without their `\n`, found
/// lazily from either end.
fn line_spans(text: &str) -> LineSpans<'_> {
    let bytes = text.as_bytes();
    // A final newline ends the last line; it does not start another one.
    let end = if bytes.last() == Some(&b'\n') {
        bytes.len() - 1
    } else {
        bytes.len()
    };
    LineSpans {
        bytes,
        front: 0,
        back: end,
        done: bytes.is_empty(),
    }
}

struct LineSpans<'a> {
    bytes: &'a [u8],
    front: usize,
    back: usize,
    done: bool,
}

impl Iterator for LineSpans<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        if self.done {
            return None;
        }
        match memchr::memchr(b'\n', &self.bytes[self.front..self.back]) {
            Some(offset) => {
                let span = (self.front, self.front + offset);
                self.front += offset + 1;
                Some(span)
            }
            None => {
                self.done = true;
                Some((self.front, self.back))
            }
        }
    }
}

impl DoubleEndedIterator for LineSpans<'_> {
    fn next_back(&mut self) -> Option<(usize, usize)> {
        if self.done {
            return None;
        }
        match memchr::memrchr(b'\n', &self.bytes[self.front..self.back]) {
            Some(offset) => {
                let nl = self.front + offset;
                let span = (nl + 1, self.back);
                self.back = nl;
                Some(span)
            }
            None => {
                self.done = true;
                Some((self.front, self.back))
            }
        }
    }
}

fn unchanged(text: &str, limits: TruncationLimits, total_lines: usize) -> Truncated<'_> {
    Truncated {
        content: text,
        facts: Truncation {
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: text.len(),
            output_lines: total_lines,
            output_bytes: text.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        },
    }
}

/// Keeps whole lines from the beginning of `text` while both caps hold
/// (§common.4.4).
pub fn truncate_head(text: &str, limits: TruncationLimits) -> Truncated<'_> {
    let total_lines = count_lines(text);
    if total_lines <= limits.max_lines && text.len() <= limits.max_bytes {
        return unchanged(text, limits, total_lines);
    }
    let mut head = HeadTruncator::new(limits);
    let mut kept_end = 0;
    for (start, stop) in line_spans(text) {
        if !head.push_line(stop - start) {
            break;
        }
        kept_end = stop;
    }
    let mut facts = head.facts();
    facts.total_lines = total_lines;
    facts.total_bytes = text.len();
    if !facts.truncated {
        // Every line fits; only the final newline is over the byte cap. The
        // lines are the whole content, so nothing was cut (D13).
        facts.output_bytes = kept_end;
    }
    Truncated {
        content: &text[..kept_end],
        facts,
    }
}

/// The incremental form of [`truncate_head`], for callers that stream lines
/// (the `read` tool pages through files without loading them whole).
///
/// Feed the byte length of every line in order with [`push_line`]; it says
/// whether the line is part of the output. Lines after the first refused one
/// are only counted.
///
/// [`push_line`]: HeadTruncator::push_line
#[derive(Clone, Debug)]
pub struct HeadTruncator {
    limits: TruncationLimits,
    total_lines: usize,
    total_bytes: usize,
    output_lines: usize,
    output_bytes: usize,
    stopped_by: Option<TruncatedBy>,
    first_line_exceeds_limit: bool,
}

impl HeadTruncator {
    /// A truncator with nothing fed yet.
    pub fn new(limits: TruncationLimits) -> Self {
        Self {
            limits,
            total_lines: 0,
            total_bytes: 0,
            output_lines: 0,
            output_bytes: 0,
            stopped_by: None,
            first_line_exceeds_limit: false,
        }
    }

    /// Whether output has stopped (every further line is only counted).
    pub fn is_stopped(&self) -> bool {
        self.stopped_by.is_some()
    }

    /// Lines accepted into the output so far.
    pub fn output_lines(&self) -> usize {
        self.output_lines
    }

    /// Counts one line of `len` bytes (without its newline) and returns
    /// whether it belongs to the output.
    pub fn push_line(&mut self, len: usize) -> bool {
        self.total_bytes += len + usize::from(self.total_lines > 0);
        self.total_lines += 1;
        if self.stopped_by.is_some() {
            return false;
        }
        if self.output_lines >= self.limits.max_lines {
            self.stopped_by = Some(TruncatedBy::Lines);
            return false;
        }
        let cost = len + usize::from(self.output_lines > 0);
        if self.output_bytes + cost > self.limits.max_bytes {
            self.stopped_by = Some(TruncatedBy::Bytes);
            self.first_line_exceeds_limit = self.output_lines == 0;
            return false;
        }
        self.output_lines += 1;
        self.output_bytes += cost;
        true
    }

    /// Counts lines that are known to be outside the output, in bulk:
    /// `lines` lines holding `bytes` bytes, newlines between them included.
    /// Only valid once [`is_stopped`](Self::is_stopped) is true.
    pub fn skip_lines(&mut self, lines: usize, bytes: usize) {
        debug_assert!(self.is_stopped());
        self.total_bytes += bytes;
        self.total_lines += lines;
    }

    /// Records that the input ended with a newline (it adds a byte but no
    /// line).
    pub fn push_final_newline(&mut self) {
        self.total_bytes += 1;
    }

    /// The facts so far. `output_bytes` counts the kept lines joined by
    /// `\n`; when nothing was cut, the caller returns its input unchanged.
    pub fn facts(&self) -> Truncation {
        let truncated = self.stopped_by.is_some();
        Truncation {
            truncated,
            truncated_by: self.stopped_by,
            total_lines: self.total_lines,
            total_bytes: self.total_bytes,
            output_lines: self.output_lines,
            output_bytes: if truncated {
                self.output_bytes
            } else {
                self.total_bytes
            },
            last_line_partial: false,
            first_line_exceeds_limit: self.first_line_exceeds_limit,
            max_lines: self.limits.max_lines,
            max_bytes: self.limits.max_bytes,
        }
    }
}

/// [`truncate_head`] of lines joined by `\n`, built line by line: only the
/// kept lines are copied, the others only counted, so a listing far over
/// the byte cap is never joined whole (find's thousands of paths). Each
/// line is given in parts (a path, then `/`), is not empty (an empty last
/// line is no line to [`count_lines`]) and holds no `\n`.
#[derive(Clone, Debug)]
pub struct HeadJoin {
    head: HeadTruncator,
    text: String,
}

impl HeadJoin {
    /// Nothing joined yet.
    pub fn new(limits: TruncationLimits) -> Self {
        Self {
            head: HeadTruncator::new(limits),
            text: String::new(),
        }
    }

    /// Adds one line, the concatenation of `parts`.
    pub fn push(&mut self, parts: &[&str]) {
        let len = parts.iter().map(|part| part.len()).sum();
        debug_assert!(len > 0, "a line of a HeadJoin is not empty");
        let first = self.head.output_lines() == 0;
        if self.head.push_line(len) {
            if !first {
                self.text.push('\n');
            }
            for part in parts {
                debug_assert!(
                    !part.contains('\n'),
                    "a line of a HeadJoin holds no newline"
                );
                self.text.push_str(part);
            }
        }
    }

    /// The kept lines joined, and the facts [`truncate_head`] gives for the
    /// whole join.
    pub fn finish(self) -> (String, Truncation) {
        (self.text, self.head.facts())
    }
}

/// Keeps whole lines from the end of `text` while both caps hold; when even
/// the last line does not fit, keeps the end of that line, cut at a
/// character boundary (§common.4.5).
pub fn truncate_tail(text: &str, limits: TruncationLimits) -> Truncated<'_> {
    let total_lines = count_lines(text);
    let total_bytes = text.len();
    let mut facts = Truncation {
        truncated: true,
        truncated_by: None,
        total_lines,
        total_bytes,
        output_lines: 0,
        output_bytes: 0,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: limits.max_lines,
        max_bytes: limits.max_bytes,
    };
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut start: Option<usize> = None;
    let mut end: Option<usize> = None;
    let mut stopped_by = None;
    for (line_start, line_end) in line_spans(text).rev() {
        if kept >= limits.max_lines {
            stopped_by = Some(TruncatedBy::Lines);
            break;
        }
        let cost = (line_end - line_start) + usize::from(kept > 0);
        if bytes + cost > limits.max_bytes {
            stopped_by = Some(TruncatedBy::Bytes);
            if kept == 0 {
                // The last line alone is too long: keep its end.
                let mut cut = line_end.saturating_sub(limits.max_bytes).max(line_start);
                while !text.is_char_boundary(cut) {
                    cut += 1;
                }
                let content = &text[cut..line_end];
                facts.truncated_by = stopped_by;
                facts.output_lines = usize::from(!content.is_empty());
                facts.output_bytes = content.len();
                facts.last_line_partial = true;
                return Truncated { content, facts };
            }
            break;
        }
        kept += 1;
        bytes += cost;
        start = Some(line_start);
        end.get_or_insert(line_end);
    }
    let Some(stopped_by) = stopped_by else {
        if total_bytes <= limits.max_bytes {
            return unchanged(text, limits, total_lines);
        }
        // Every line fits; only the final newline is over the cap.
        let end = end.unwrap_or(0);
        facts.truncated = false;
        facts.output_lines = kept;
        facts.output_bytes = end;
        return Truncated {
            content: &text[..end],
            facts,
        };
    };
    let content = match (start, end) {
        (Some(start), Some(end)) => &text[start..end],
        _ => "",
    };
    facts.truncated_by = Some(stopped_by);
    facts.output_lines = kept;
    facts.output_bytes = content.len();
    Truncated { content, facts }
}

/// Cuts a line to `max_chars` characters followed by
/// [`LINE_TRUNCATED_SUFFIX`]; returns whether it was cut (§common.4.6).
pub fn truncate_line(line: &str, max_chars: usize) -> (std::borrow::Cow<'_, str>, bool) {
    match line.char_indices().nth(max_chars) {
        None => (std::borrow::Cow::Borrowed(line), false),
        Some((cut, _)) => (
            std::borrow::Cow::Owned(format!("{}{LINE_TRUNCATED_SUFFIX}", &line[..cut])),
            true,
        ),
    }
}

/// A number as people write it, for messages that echo one back: whole
/// numbers as integers (`3`, not `3.0`), very large and very small ones in
/// exponent form (`1e300`, `1e-320`, not hundreds of digits), the rest as
/// Rust shows them (`0.5`).
pub fn format_number(n: f64) -> String {
    let magnitude = n.abs();
    if n.is_finite() && n != 0.0 && !(1e-3..1e15).contains(&magnitude) {
        format!("{n:e}")
    } else if n.fract() == 0.0 && magnitude < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// Formats a byte count for people: `1023B`, `1.0KB`, `50.0KB`, `1.5MB`
/// (§common.4.7).
pub fn format_size(bytes: usize) -> String {
    const KB: usize = 1024;
    const MB: usize = 1024 * 1024;
    if bytes < KB {
        format!("{bytes}B")
    } else if bytes < MB {
        format!("{:.1}KB", bytes as f64 / KB as f64)
    } else {
        format!("{:.1}MB", bytes as f64 / MB as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lim(max_lines: usize, max_bytes: usize) -> TruncationLimits {
        TruncationLimits {
            max_lines,
            max_bytes,
        }
    }

    fn facts(
        truncated_by: Option<TruncatedBy>,
        (total_lines, total_bytes): (usize, usize),
        (output_lines, output_bytes): (usize, usize),
        limits: TruncationLimits,
    ) -> Truncation {
        Truncation {
            truncated: truncated_by.is_some(),
            truncated_by,
            total_lines,
            total_bytes,
            output_lines,
            output_bytes,
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
        }
    }

    proptest::proptest! {
        /// Joining line by line keeps and reports what truncating the whole
        /// join would.
        #[test]
        fn a_head_join_is_the_head_of_the_whole_join(
            lines in proptest::collection::vec(("[a-zé/]{1,12}", proptest::bool::ANY), 0..40),
            max_lines in 1usize..50,
            max_bytes in 0usize..300,
        ) {
            let limits = lim(max_lines, max_bytes);
            let mut join = HeadJoin::new(limits);
            let mut whole: Vec<String> = Vec::new();
            for (line, slash) in &lines {
                let tail = if *slash { "/" } else { "" };
                join.push(&[line, tail]);
                whole.push(format!("{line}{tail}"));
            }
            let whole = whole.join("\n");
            let expected = truncate_head(&whole, limits);
            let (text, facts) = join.finish();
            proptest::prop_assert_eq!(text.as_str(), expected.content);
            proptest::prop_assert_eq!(facts, expected.facts);
        }
    }

    #[test]
    fn counts_lines_like_a_person() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\nb"), 2);
        assert_eq!(count_lines("a\nb\n"), 2);
        assert_eq!(count_lines("\n"), 1);
        assert_eq!(count_lines("\n\n"), 2);
        assert_eq!(count_lines("a\r\nb\r\n"), 2);
    }

    #[test]
    fn head_unchanged_when_within_both_caps_keeps_trailing_newline() {
        let out = truncate_head("a\nb\n", lim(2, 4));
        assert_eq!(out.content, "a\nb\n");
        assert_eq!(out.facts, facts(None, (2, 4), (2, 4), lim(2, 4)));
    }

    // The worked examples of head and tail truncation (§common.4.4,
    // §common.4.5), one test each.
    #[test]
    fn head_by_lines() {
        let l = lim(2, DEFAULT_MAX_BYTES);
        let out = truncate_head("a\nb\nc", l);
        assert_eq!(out.content, "a\nb");
        assert_eq!(
            out.facts,
            facts(Some(TruncatedBy::Lines), (3, 5), (2, 3), l)
        );
    }

    #[test]
    fn head_by_bytes_at_nine_and_ten() {
        for max in [9, 10] {
            let l = lim(DEFAULT_MAX_LINES, max);
            let out = truncate_head("aaaa\nbbbb\ncccc", l);
            assert_eq!(out.content, "aaaa\nbbbb");
            assert_eq!(
                out.facts,
                facts(Some(TruncatedBy::Bytes), (3, 14), (2, 9), l)
            );
        }
    }

    #[test]
    fn head_counts_multibyte_bytes() {
        let out = truncate_head("éé\nabc", lim(DEFAULT_MAX_LINES, 4));
        assert_eq!(out.content, "éé");
        assert_eq!(out.facts.output_bytes, 4);
        assert_eq!(out.facts.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn head_first_line_exceeds_limit() {
        let l = lim(DEFAULT_MAX_LINES, 3);
        let out = truncate_head("éé\nabc", l);
        assert_eq!(out.content, "");
        let mut want = facts(Some(TruncatedBy::Bytes), (2, 8), (0, 0), l);
        want.first_line_exceeds_limit = true;
        assert_eq!(out.facts, want);
    }

    #[test]
    fn head_over_only_by_final_newline_is_whole_and_not_truncated() {
        // D13: pi calls this "truncated by lines" although every line is there.
        let l = lim(DEFAULT_MAX_LINES, 1);
        let out = truncate_head("a\n", l);
        assert_eq!(out.content, "a");
        assert_eq!(out.facts, facts(None, (1, 2), (1, 1), l));
    }

    #[test]
    fn tail_by_lines() {
        let l = lim(2, DEFAULT_MAX_BYTES);
        let out = truncate_tail("a\nb\nc\n", l);
        assert_eq!(out.content, "b\nc");
        assert_eq!(
            out.facts,
            facts(Some(TruncatedBy::Lines), (3, 6), (2, 3), l)
        );
    }

    #[test]
    fn tail_partial_last_line() {
        let l = lim(DEFAULT_MAX_LINES, 5);
        let out = truncate_tail("aaaa\nbbbbbbbbbb", l);
        assert_eq!(out.content, "bbbbb");
        let mut want = facts(Some(TruncatedBy::Bytes), (2, 15), (1, 5), l);
        want.last_line_partial = true;
        assert_eq!(out.facts, want);
    }

    #[test]
    fn tail_partial_cuts_at_char_boundary() {
        let out = truncate_tail("aé🙂b", lim(DEFAULT_MAX_LINES, 5));
        assert_eq!(out.content, "🙂b");
        assert_eq!(out.facts.output_bytes, 5);
        assert!(out.facts.last_line_partial);
    }

    #[test]
    fn tail_when_no_character_fits_reports_zero_lines() {
        let out = truncate_tail("abc🙂", lim(DEFAULT_MAX_LINES, 3));
        assert_eq!(out.content, "");
        assert_eq!(out.facts.output_lines, 0);
        assert_eq!(out.facts.output_bytes, 0);
        assert!(out.facts.last_line_partial);
    }

    #[test]
    fn tail_huge_single_line_with_newline() {
        let text = format!("{}\n", "X".repeat(300_000));
        let l = lim(100, 1024);
        let out = truncate_tail(&text, l);
        assert_eq!(out.content, "X".repeat(1024));
        let mut want = facts(Some(TruncatedBy::Bytes), (1, 300_001), (1, 1024), l);
        want.last_line_partial = true;
        assert_eq!(out.facts, want);
    }

    #[test]
    fn tail_by_bytes_keeps_whole_lines() {
        let l = lim(DEFAULT_MAX_LINES, 9);
        let out = truncate_tail("aaaa\nbbbb\ncccc", l);
        assert_eq!(out.content, "bbbb\ncccc");
        assert_eq!(
            out.facts,
            facts(Some(TruncatedBy::Bytes), (3, 14), (2, 9), l)
        );
    }

    #[test]
    fn empty_input_is_never_truncated() {
        let l = lim(0, 0);
        assert_eq!(truncate_head("", l).facts, facts(None, (0, 0), (0, 0), l));
        assert_eq!(truncate_tail("", l).facts, facts(None, (0, 0), (0, 0), l));
    }

    #[test]
    fn truncate_line_counts_characters() {
        assert_eq!(truncate_line("abc", 3), ("abc".into(), false));
        assert_eq!(
            truncate_line("abcd", 3),
            ("abc... [truncated]".into(), true)
        );
        assert_eq!(truncate_line("ééé", 2), ("éé... [truncated]".into(), true));
    }

    #[test]
    fn format_number_examples() {
        let shown: Vec<String> = [
            3.0,
            60.0,
            0.5,
            2.25,
            0.001,
            -7.0,
            1e300,
            1e-320,
            18446744073709551616.0,
            0.0,
        ]
        .into_iter()
        .map(format_number)
        .collect();
        assert_eq!(
            shown,
            [
                "3",
                "60",
                "0.5",
                "2.25",
                "0.001",
                "-7",
                "1e300",
                "1e-320",
                "1.8446744073709552e19",
                "0"
            ]
        );
    }

    #[test]
    fn format_size_examples() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(1024), "1.0KB");
        assert_eq!(format_size(1536), "1.5KB");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(60000), "58.6KB");
        assert_eq!(format_size(1048576), "1.0MB");
    }

    #[test]
    fn bytes_only_serialises_line_cap_as_null() {
        let out = truncate_head("abc", TruncationLimits::bytes_only(1));
        let json = serde_json::to_value(&out.facts).unwrap();
        assert_eq!(json["max_lines"], serde_json::Value::Null);
        assert_eq!(json["truncated_by"], "bytes");
    }

    #[test]
    fn facts_round_trip_through_details() {
        let cut = truncate_head("a\nb\nc\n", TruncationLimits::bytes_only(3));
        let details = serde_json::json!({ "entries": 3, "truncation": cut.facts });
        assert_eq!(Truncation::from_details(&details), Some(cut.facts));
        assert_eq!(
            Truncation::from_details(&serde_json::json!({ "entries": 3 })),
            None
        );
        assert_eq!(Truncation::from_details(&serde_json::Value::Null), None);
    }
}
