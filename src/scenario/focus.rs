//! Where to look in a long text that failed a check.
//!
//! A `contains` that fails on a 3000-line result is not helped by the
//! result's first 40 lines. When a check fails on a text of more than
//! [`FOCUS_MIN_LINES`] lines, the failure carries a [`Focus`]: a window of
//! lines and why they were chosen, which the console, `summary.md` and the
//! JUnit text show instead of the text's beginning (the report files keep
//! the whole text as well).
//!
//! How the window is found:
//!
//! - `contains`: the whole expected text where it is but for the case of
//!   its letters, else but for its whitespace, else but for both (a near
//!   miss: `# Textstats` for `# textstats`); failing that, the longest
//!   beginning or end of the expected text that the text holds (at least
//!   3 characters, and at least half of the expected text or 8
//!   characters); failing that, the line most like the expected text's
//!   first line, case aside (60 % alike or more, by normalised
//!   Levenshtein distance); failing that, the end of the text, where
//!   notices are;
//! - `not_contains`: the first place the text holds what it should not;
//! - a regex that did not match: the end of the text.

use serde::Deserialize;
use serde::Serialize;

/// Texts with more lines than this get a focus when a check on them fails.
pub const FOCUS_MIN_LINES: usize = 20;

/// Lines shown before and after the line that was found.
const CONTEXT: usize = 2;

/// Lines shown at the end of a text.
const TAIL: usize = 8;

/// The shortest part of an expected text worth pointing at.
const MIN_PART: usize = 3;

/// How alike a line must be to the expected text to be pointed at.
const MIN_SIMILARITY: f64 = 0.6;

/// Lines longer than this are not compared for similarity (too costly, and
/// never "alike" a short expected text anyway).
const MAX_COMPARED_LINE: usize = 2000;

/// Lines of a long text worth showing first, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Focus {
    /// The first line of the window (from 1).
    pub first_line: usize,
    /// The last line of the window (inclusive).
    pub last_line: usize,
    /// Why these lines: `line 3002 has the first 18 of the 48 characters
    /// expected`, `the end of the text` …
    pub reason: String,
}

impl Focus {
    /// The lines of the window in `text`, each with its number (from 1),
    /// without line endings.
    pub fn lines<'t>(&self, text: &'t str) -> Vec<(usize, &'t str)> {
        text.split_inclusive('\n')
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim_end_matches('\n').trim_end_matches('\r')))
            .skip(self.first_line.saturating_sub(1))
            .take(
                self.last_line
                    .saturating_sub(self.first_line.saturating_sub(1)),
            )
            .collect()
    }
}

/// The number of lines of `text` (a final newline ends the last line).
pub fn line_count(text: &str) -> usize {
    text.split_inclusive('\n').count()
}

/// The 0-based line that byte `at` of `text` is on.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
}

/// A window around lines `line ..= line + extra` (0-based).
fn around(total: usize, line: usize, extra: usize, reason: String) -> Focus {
    Focus {
        first_line: line.saturating_sub(CONTEXT) + 1,
        last_line: (line + extra + CONTEXT + 1).min(total),
        reason,
    }
}

/// The last lines of a text of `total` lines.
fn at_end(total: usize, reason: &str) -> Focus {
    Focus {
        first_line: total.saturating_sub(TAIL) + 1,
        last_line: total,
        reason: reason.to_owned(),
    }
}

/// Where to look when `text` does not contain `needle`; `None` for a text
/// short enough to show whole.
pub fn for_contains(text: &str, needle: &str) -> Option<Focus> {
    let total = line_count(text);
    if total <= FOCUS_MIN_LINES {
        return None;
    }
    if let Some(focus) = near_miss(text, needle, total) {
        return Some(focus);
    }
    let chars = needle.chars().count();
    let wanted = MIN_PART.max(8.min(chars.div_ceil(2)));
    let prefix = longest_part(text, needle, Part::Start);
    let suffix = longest_part(text, needle, Part::End);
    let best = match (prefix, suffix) {
        (Some(p), Some(s)) if s.chars > p.chars => Some(s),
        (Some(p), _) => Some(p),
        (None, s) => s,
    };
    if let Some(found) = best.filter(|f| f.chars >= wanted && f.chars < chars) {
        let line = line_of(text, found.at);
        let span = line_of(text, found.at + found.len) - line;
        let which = match found.part {
            Part::Start => "first",
            Part::End => "last",
        };
        return Some(around(
            total,
            line,
            span,
            format!(
                "line {} has the {which} {} of the {chars} characters expected",
                line + 1,
                found.chars
            ),
        ));
    }
    if let Some((line, alike)) = most_similar_line(text, needle) {
        return Some(around(
            total,
            line,
            0,
            format!(
                "line {} is the most similar line ({:.0} % alike)",
                line + 1,
                alike * 100.0
            ),
        ));
    }
    Some(at_end(
        total,
        "the end of the text; no line is close to the expected text",
    ))
}

/// Where to look when `text` contains `needle` and should not; `None` for
/// a short text or when it does not contain it.
pub fn for_occurrence(text: &str, needle: &str) -> Option<Focus> {
    let total = line_count(text);
    if total <= FOCUS_MIN_LINES || needle.is_empty() {
        return None;
    }
    let at = text.find(needle)?;
    // A needle like "\n25\n" is about the line after its first newline.
    let lead = needle.len() - needle.trim_start_matches('\n').len();
    let line = line_of(text, (at + lead).min(text.len()));
    let span = line_of(text, at + needle.trim_end_matches('\n').len()).saturating_sub(line);
    Some(around(
        total,
        line,
        span,
        format!("line {} has it", line + 1),
    ))
}

/// Where to look when `text` did not match a regex: its end, where notices
/// are; `None` for a short text.
pub fn for_regex(text: &str) -> Option<Focus> {
    let total = line_count(text);
    (total > FOCUS_MIN_LINES).then(|| at_end(total, "the end of the text"))
}

/// How a text is compared when looking for a near miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Loose {
    /// Letters compared without their case.
    case: bool,
    /// Whitespace left out.
    space: bool,
}

impl Loose {
    /// The loosenings tried, strictest first, and how a reason words each.
    const TRIED: [(Self, &'static str); 3] = [
        (
            Self {
                case: true,
                space: false,
            },
            "but for the case of its letters",
        ),
        (
            Self {
                case: false,
                space: true,
            },
            "but for its spaces and line breaks",
        ),
        (
            Self {
                case: true,
                space: true,
            },
            "but for case and spacing",
        ),
    ];

    /// The characters `c` compares as.
    fn chars(self, c: char) -> impl Iterator<Item = char> {
        let kept = !(self.space && c.is_whitespace());
        let lower = self.case.then(|| c.to_lowercase());
        let same = (!self.case).then_some(c);
        lower
            .into_iter()
            .flatten()
            .chain(same)
            .filter(move |_| kept)
    }

    fn apply(self, text: &str) -> String {
        text.chars().flat_map(|c| self.chars(c)).collect()
    }

    /// The byte offset in `text` of the character that `apply(text)`'s
    /// byte `at` comes from.
    fn original(self, text: &str, at: usize) -> usize {
        let mut made = 0;
        for (i, c) in text.char_indices() {
            made += self.chars(c).map(char::len_utf8).sum::<usize>();
            if made > at {
                return i;
            }
        }
        text.len()
    }
}

/// The whole expected text, found when case or spacing is not compared
/// (`# Textstats` for `# textstats`): a nearer miss than any part of it
/// found exactly.
fn near_miss(text: &str, needle: &str, total: usize) -> Option<Focus> {
    Loose::TRIED.iter().find_map(|&(loose, how)| {
        let wanted = loose.apply(needle);
        if wanted.chars().count() < MIN_PART {
            return None;
        }
        let loosened = loose.apply(text);
        let at = loosened.find(&wanted)?;
        let start = loose.original(text, at);
        let end = loose.original(text, at + wanted.len() - 1);
        let line = line_of(text, start);
        let span = line_of(text, end) - line;
        let lines = if span == 0 {
            format!("line {}", line + 1)
        } else {
            format!("lines {}-{}", line + 1, line + span + 1)
        };
        Some(around(
            total,
            line,
            span,
            format!(
                "{lines} {} the expected text {how}",
                if span == 0 { "has" } else { "have" }
            ),
        ))
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Start,
    End,
}

/// A part of the expected text found in the text.
#[derive(Clone, Copy, Debug)]
struct Found {
    part: Part,
    /// Its length in characters.
    chars: usize,
    /// Its length in bytes.
    len: usize,
    /// Where it starts in the text (bytes).
    at: usize,
}

/// The longest beginning (or end) of `needle` that `text` contains. Being
/// contained is monotone in the length, so a binary search finds it.
fn longest_part(text: &str, needle: &str, part: Part) -> Option<Found> {
    // Byte offsets of the candidate cuts, by number of characters taken.
    let cuts: Vec<usize> = match part {
        Part::Start => needle
            .char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .collect(),
        Part::End => needle.char_indices().rev().map(|(i, _)| i).collect(),
    };
    let piece = |k: usize| match part {
        Part::Start => &needle[..cuts[k - 1]],
        Part::End => &needle[cuts[k - 1]..],
    };
    let (mut lo, mut hi) = (0, cuts.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if text.contains(piece(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo > 0).then(|| {
        let found = piece(lo);
        Found {
            part,
            chars: lo,
            len: found.len(),
            at: text.find(found).unwrap_or(0),
        }
    })
}

/// The 0-based line most like `needle`'s first non-empty line, and how
/// alike, when alike enough.
fn most_similar_line(text: &str, needle: &str) -> Option<(usize, f64)> {
    let target = needle
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?
        .to_lowercase();
    let mut best: Option<(usize, f64)> = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.len() > MAX_COMPARED_LINE {
            continue;
        }
        let alike = strsim::normalized_levenshtein(&line.to_lowercase(), &target);
        if best.is_none_or(|(_, b)| alike > b) {
            best = Some((i, alike));
        }
    }
    best.filter(|(_, alike)| *alike >= MIN_SIMILARITY)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn short_texts_get_no_focus() {
        let text = numbered(FOCUS_MIN_LINES);
        assert_eq!(for_contains(&text, "nothing"), None);
        assert_eq!(for_occurrence(&text, "line 3"), None);
        assert_eq!(for_regex(&text), None);
    }

    #[test]
    fn a_notice_that_differs_is_found_by_the_part_it_has() {
        let mut text: String = (1001..=3000).map(|i| format!("{i}\n")).collect();
        text.push_str("\n[Showing lines 1001-3000 of 3000. Full output: /scratch/a.log]");
        let needle = "[Showing lines 1000-3000 of 3000. Full output: ";
        let focus = for_contains(&text, needle).unwrap();
        assert_eq!(
            focus,
            Focus {
                first_line: 2000,
                last_line: 2002,
                reason: "line 2002 has the last 28 of the 47 characters expected".into(),
            }
        );
        assert_eq!(
            focus.lines(&text),
            vec![
                (2000, "3000"),
                (2001, ""),
                (
                    2002,
                    "[Showing lines 1001-3000 of 3000. Full output: /scratch/a.log]"
                )
            ]
        );
    }

    #[test]
    fn the_most_similar_line_when_no_long_part_is_found() {
        let mut text = numbered(30);
        text.insert_str(
            text.find("line 14\n").unwrap(),
            "export function mean(xs) {\n",
        );
        let focus = for_contains(&text, "exprot fucntion maen(xs) {").unwrap();
        assert_eq!(
            focus,
            Focus {
                first_line: 12,
                last_line: 16,
                reason: "line 14 is the most similar line (77 % alike)".into(),
            }
        );
        assert_eq!(focus.lines(&text)[2], (14, "export function mean(xs) {"));
    }

    #[test]
    fn the_end_of_the_text_when_nothing_is_close() {
        let text = numbered(40);
        assert_eq!(
            for_contains(&text, "zzzz qqqq"),
            Some(Focus {
                first_line: 33,
                last_line: 40,
                reason: "the end of the text; no line is close to the expected text".into(),
            })
        );
        assert_eq!(
            for_regex(&text).map(|f| (f.first_line, f.last_line)),
            Some((33, 40))
        );
    }

    #[test]
    fn an_unwanted_text_is_shown_where_it_is() {
        let text = numbered(50);
        assert_eq!(
            for_occurrence(&text, "line 25\nline 26"),
            Some(Focus {
                first_line: 23,
                last_line: 28,
                reason: "line 25 has it".into(),
            })
        );
        assert_eq!(
            for_occurrence(&text, "\nline 25\n"),
            Some(Focus {
                first_line: 23,
                last_line: 27,
                reason: "line 25 has it".into(),
            })
        );
    }

    #[test]
    fn a_near_miss_of_case_or_spacing_comes_before_any_exact_part() {
        // Issue 25: `# textstats` against a README whose title is
        // `# Textstats` pointed at line 6, which has `textstats` too.
        let mut text = "# Textstats\n\nCount the words of a file.\n\n## Usage\n\
                        Run `python -m textstats FILE`.\n"
            .to_owned();
        text.push_str(&numbered(30));
        let focus = |needle: &str| for_contains(&text, needle).unwrap();
        assert_eq!(
            focus("# textstats"),
            Focus {
                first_line: 1,
                last_line: 3,
                reason: "line 1 has the expected text but for the case of its letters".into(),
            }
        );
        assert_eq!(
            focus("Count  the words\tof").reason,
            "line 3 has the expected text but for its spaces and line breaks"
        );
        assert_eq!(
            focus("## usage run").reason,
            "lines 5-6 have the expected text but for case and spacing"
        );
        assert_eq!(
            (
                focus("## usage run").first_line,
                focus("## usage run").last_line
            ),
            (3, 8)
        );
        // Similar lines are compared case aside too (`line 7`, after the
        // six lines of the README).
        assert_eq!(
            focus("LINE 7x").reason,
            "line 13 is the most similar line (86 % alike)"
        );
    }

    #[test]
    fn windows_stay_inside_the_text_and_handle_multibyte_needles() {
        let mut text = "é€🙂 start\n".to_owned();
        text.push_str(&numbered(30));
        let focus = for_contains(&text, "é€🙂 stap").unwrap();
        assert_eq!((focus.first_line, focus.last_line), (1, 3));
        assert_eq!(
            focus.reason,
            "line 1 has the first 7 of the 8 characters expected"
        );
    }
}
