//! Where to look in a long text that failed a check.
//!
//! A `contains` that fails on a 3000-line result is not helped by the
//! result's first 40 lines. When a check fails on a text of more than
//! [`FOCUS_MIN_LINES`] lines, the failure carries a [`Focus`]: a window of
//! lines and why they were chosen, which the console, `summary.md` and the
//! JUnit text show instead of the text's beginning (the report files keep
//! the text as well, within the bound of a failure's actual text).
//!
//! How the window is found:
//!
//! - `contains`: in a text of at most [`MAX_NEAR_MISS_BYTES`], the whole
//!   expected text where it is but for the case of its letters, else but
//!   for its whitespace, else but for both (a near miss: `# Textstats` for
//!   `# textstats`); failing that, the longest beginning or end of the
//!   expected text that the text holds (at least 3 characters, and at
//!   least half of the expected text or 8 characters); failing that, the
//!   line most like the expected text's first line, case aside (60 % alike
//!   or more, by normalised Levenshtein distance, among the lines compared
//!   within [`MAX_SIMILARITY_WORK`]); failing that, the end of the text, where
//!   notices are;
//! - `not_contains`: the first place the text holds what it should not;
//! - a regex that did not match: the end of the text.
//!
//! The window is found in the whole text, so its lines are numbered as in
//! the whole text. When a failure keeps only part of a long text (its
//! `actual` is cut), the focus keeps the window's lines itself
//! ([`Focus::keeping_lines`]), each cut to [`MAX_LINE_CHARS`] characters.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Where `needle` first occurs in `text`: memchr's substring search, which
/// is built optimised in every profile (Cargo.toml), so a check over a
/// 20 MB text costs milliseconds in a test build too, as in a release.
pub(crate) fn find(text: &str, needle: &str) -> Option<usize> {
    memchr::memmem::find(text.as_bytes(), needle.as_bytes())
}

/// Whether `needle` occurs in `text` ([`find`]).
pub(crate) fn occurs(text: &str, needle: &str) -> bool {
    find(text, needle).is_some()
}

use serde::Deserialize;
use serde::Serialize;

use super::deadline::Deadline;
use super::deadline::Stopped;

/// Texts with more lines than this get a focus when a check on them fails.
pub(crate) const FOCUS_MIN_LINES: usize = 20;

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

/// The most pairs of characters one search for the most similar line
/// compares (a line of `a` characters against an expected line of `b`
/// costs `a × b`): some 15 ms in a release build, the whole of a text of
/// 10,000 lines of 40 characters. The lines after those it had the work for are not compared,
/// and the focus's reason says so. A number, not a time, so that the same
/// run gives the same focus on any machine.
pub(crate) const MAX_SIMILARITY_WORK: u64 = 1 << 24;

/// The longest text a near miss (the expected text but for case or
/// spacing) is looked for in: each of the three loosenings makes a copy of
/// the text, so a failure on a larger text skips them (its focus still
/// comes from the parts and lines below), and many failures on one large
/// file stay cheap.
pub(crate) const MAX_NEAR_MISS_BYTES: usize = 1 << 20;

/// Characters of one line of a focus window as it is shown (the console,
/// `summary.md`, the JUnit text, and the lines a focus keeps).
pub(crate) const MAX_LINE_CHARS: usize = 240;

/// The most lines a focus keeps of a text the failure does not keep whole.
pub(crate) const MAX_KEPT_LINES: usize = 40;

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
    /// Only when the failure keeps part of the text (its `actual` is cut):
    /// the window's lines, from `first_line` to `last_line`, as shown
    /// (each cut to [`MAX_LINE_CHARS`] characters), which the part kept
    /// may not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

impl Focus {
    /// The lines of the window in `text`, each with its number (from 1),
    /// without line endings, as shown: each cut to [`MAX_LINE_CHARS`]
    /// characters ([`cut_line`]). A focus that keeps its lines gives
    /// those, whatever `text` is.
    pub fn window<'t>(&'t self, text: &'t str) -> Vec<(usize, Cow<'t, str>)> {
        if !self.lines.is_empty() {
            return self
                .lines
                .iter()
                .enumerate()
                .map(|(i, line)| (self.first_line + i, Cow::Borrowed(line.as_str())))
                .collect();
        }
        self.raw_lines(text)
            .into_iter()
            .map(|(n, line)| (n, cut_line(line)))
            .collect()
    }

    /// The lines of the window in `text`, whole.
    fn raw_lines<'t>(&self, text: &'t str) -> Vec<(usize, &'t str)> {
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

    /// The focus holding its window's lines of `text` (the whole text it
    /// was found in), as shown, for a failure that keeps only part of the
    /// text: at most [`MAX_KEPT_LINES`] of them (`last_line` then says
    /// which was the last kept).
    pub fn keeping_lines(mut self, text: &str) -> Self {
        let mut lines: Vec<String> = self
            .raw_lines(text)
            .into_iter()
            .take(MAX_KEPT_LINES)
            .map(|(_, line)| cut_line(line).into_owned())
            .collect();
        if lines.is_empty() {
            // A window past the text's end (never made here): one empty
            // line, so that the kept lines are never taken for none.
            lines.push(String::new());
        }
        self.last_line = self.first_line + lines.len() - 1;
        self.lines = lines;
        self
    }
}

/// `line` cut to [`MAX_LINE_CHARS`] characters, with how many more it has.
pub(crate) fn cut_line(line: &str) -> Cow<'_, str> {
    // Four bytes a character at most: a shorter line is never cut.
    if line.len() <= MAX_LINE_CHARS {
        return Cow::Borrowed(line);
    }
    let Some((end, _)) = line.char_indices().nth(MAX_LINE_CHARS) else {
        return Cow::Borrowed(line);
    };
    let more = line[end..].chars().count();
    let mut shown = line[..end].to_owned();
    let _ = write!(shown, " … ({more} more characters)");
    Cow::Owned(shown)
}

/// The number of lines of `text` (a final newline ends the last line).
pub(crate) fn line_count(text: &str) -> usize {
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
        lines: Vec::new(),
    }
}

/// The last lines of a text of `total` lines.
fn at_end(total: usize, reason: &str) -> Focus {
    Focus {
        first_line: total.saturating_sub(TAIL) + 1,
        last_line: total,
        reason: reason.to_owned(),
        lines: Vec::new(),
    }
}

/// Where to look when `text` does not contain `needle`; `None` for a text
/// short enough to show whole. The search looks at `deadline` as it goes:
/// [`Stopped`] when the time was up before it was done.
pub(crate) fn for_contains(
    text: &str,
    needle: &str,
    deadline: &Deadline,
) -> Result<Option<Focus>, Stopped> {
    let total = line_count(text);
    if total <= FOCUS_MIN_LINES {
        return Ok(None);
    }
    if let Some(focus) = near_miss(text, needle, total, deadline)? {
        return Ok(Some(focus));
    }
    let chars = needle.chars().count();
    let wanted = MIN_PART.max(8.min(chars.div_ceil(2)));
    let prefix = longest_part(text, needle, Part::Start, wanted, deadline)?;
    let suffix = longest_part(text, needle, Part::End, wanted, deadline)?;
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
        return Ok(Some(around(
            total,
            line,
            span,
            format!(
                "line {} has the {which} {} of the {chars} characters expected",
                line + 1,
                found.chars
            ),
        )));
    }
    let similar = most_similar_line(text, needle, deadline)?;
    // When the work ran out: which lines were compared.
    let (among, rest) = match similar.compared {
        Some(n) => (
            format!(" of the first {n}"),
            "; the lines after them were not compared",
        ),
        None => (String::new(), ""),
    };
    if let Some((line, alike)) = similar.best {
        let reason = match similar.compared {
            None => format!(
                "line {} is the most similar line ({:.0} % alike)",
                line + 1,
                alike * 100.0
            ),
            Some(_) => format!(
                "line {} is the most similar{among} lines ({:.0} % alike{rest})",
                line + 1,
                alike * 100.0
            ),
        };
        return Ok(Some(around(total, line, 0, reason)));
    }
    let reason = match similar.compared {
        None => "the end of the text; no line is close to the expected text".to_owned(),
        Some(_) => {
            format!("the end of the text; none{among} lines is close to the expected text{rest}")
        }
    };
    Ok(Some(at_end(total, &reason)))
}

/// Where to look when `text` contains `needle` and should not; `None` for
/// a short text or when it does not contain it.
pub(crate) fn for_occurrence(text: &str, needle: &str) -> Option<Focus> {
    let total = line_count(text);
    if total <= FOCUS_MIN_LINES || needle.is_empty() {
        return None;
    }
    let at = find(text, needle)?;
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
pub(crate) fn for_regex(text: &str) -> Option<Focus> {
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
fn near_miss(
    text: &str,
    needle: &str,
    total: usize,
    deadline: &Deadline,
) -> Result<Option<Focus>, Stopped> {
    if text.len() > MAX_NEAR_MISS_BYTES {
        return Ok(None);
    }
    for &(loose, how) in &Loose::TRIED {
        if deadline.passed() {
            return Err(Stopped);
        }
        let wanted = loose.apply(needle);
        if wanted.chars().count() < MIN_PART {
            continue;
        }
        let loosened = loose.apply(text);
        let Some(at) = find(&loosened, &wanted) else {
            continue;
        };
        let start = loose.original(text, at);
        let end = loose.original(text, at + wanted.len() - 1);
        let line = line_of(text, start);
        let span = line_of(text, end) - line;
        let lines = if span == 0 {
            format!("line {}", line + 1)
        } else {
            format!("lines {}-{}", line + 1, line + span + 1)
        };
        return Ok(Some(around(
            total,
            line,
            span,
            format!(
                "{lines} {} the expected text {how}",
                if span == 0 { "has" } else { "have" }
            ),
        )));
    }
    Ok(None)
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

/// The longest beginning (or end) of `needle` that `text` contains, when
/// it is at least `wanted` characters long (a shorter one is not pointed
/// at, so it is not looked for). Being contained is monotone in the
/// length, so one look at `wanted` characters, then a binary search, finds
/// it.
fn longest_part(
    text: &str,
    needle: &str,
    part: Part,
    wanted: usize,
    deadline: &Deadline,
) -> Result<Option<Found>, Stopped> {
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
    if wanted == 0 || wanted > cuts.len() || !occurs(text, piece(wanted)) {
        return Ok(None);
    }
    let (mut lo, mut hi) = (wanted, cuts.len());
    while lo < hi {
        if deadline.passed() {
            return Err(Stopped);
        }
        let mid = (lo + hi).div_ceil(2);
        if occurs(text, piece(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let found = piece(lo);
    Ok(Some(Found {
        part,
        chars: lo,
        len: found.len(),
        at: find(text, found).unwrap_or(0),
    }))
}

/// What the search for the most similar line found.
struct Similar {
    /// The 0-based line most like the expected text, and how alike, when
    /// alike enough.
    best: Option<(usize, f64)>,
    /// When [`MAX_SIMILARITY_WORK`] ran out: the lines looked at (the
    /// first ones); `None`: all of them.
    compared: Option<usize>,
}

/// The 0-based line most like `needle`'s first non-empty line, and how
/// alike, when alike enough; lines are looked at in order while the work
/// lasts. A line whose length alone keeps it from being alike enough (or
/// more alike than the best so far) is not compared: normalised
/// Levenshtein similarity is at most `1 - |a - b| / max(a, b)` for lengths
/// `a` and `b`.
fn most_similar_line(text: &str, needle: &str, deadline: &Deadline) -> Result<Similar, Stopped> {
    let Some(target) = needle
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_lowercase)
    else {
        return Ok(Similar {
            best: None,
            compared: None,
        });
    };
    let wanted = target.chars().count();
    let mut best: Option<(usize, f64)> = None;
    let mut work: u64 = 0;
    for (i, line) in text.lines().enumerate() {
        if i % 4096 == 0 && deadline.passed() {
            return Err(Stopped);
        }
        let line = line.trim();
        if line.is_empty() || line.len() > MAX_COMPARED_LINE {
            continue;
        }
        let chars = line.chars().count();
        let longest = chars.max(wanted) as f64;
        let at_most = 1.0 - chars.abs_diff(wanted) as f64 / longest;
        if at_most < MIN_SIMILARITY || best.is_some_and(|(_, b)| at_most <= b) {
            continue;
        }
        let cost = (chars as u64) * (wanted as u64);
        if work + cost > MAX_SIMILARITY_WORK {
            return Ok(Similar {
                best: best.filter(|(_, alike)| *alike >= MIN_SIMILARITY),
                compared: Some(i),
            });
        }
        work += cost;
        if cost > 65_536 && deadline.passed() {
            return Err(Stopped);
        }
        let alike = strsim::normalized_levenshtein(&line.to_lowercase(), &target);
        if best.is_none_or(|(_, b)| alike > b) {
            best = Some((i, alike));
        }
    }
    Ok(Similar {
        best: best.filter(|(_, alike)| *alike >= MIN_SIMILARITY),
        compared: None,
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn for_contains(text: &str, needle: &str) -> Option<Focus> {
        super::for_contains(text, needle, &Deadline::never()).unwrap()
    }

    fn shown<'t>(lines: &[(usize, &'t str)]) -> Vec<(usize, Cow<'t, str>)> {
        lines.iter().map(|(n, l)| (*n, Cow::Borrowed(*l))).collect()
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
                lines: Vec::new(),
            }
        );
        assert_eq!(
            focus.window(&text),
            shown(&[
                (2000, "3000"),
                (2001, ""),
                (
                    2002,
                    "[Showing lines 1001-3000 of 3000. Full output: /scratch/a.log]"
                )
            ])
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
                lines: Vec::new(),
            }
        );
        assert_eq!(
            focus.window(&text)[2],
            (14, Cow::Borrowed("export function mean(xs) {"))
        );
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
                lines: Vec::new(),
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
                lines: Vec::new(),
            })
        );
        assert_eq!(
            for_occurrence(&text, "\nline 25\n"),
            Some(Focus {
                first_line: 23,
                last_line: 27,
                reason: "line 25 has it".into(),
                lines: Vec::new(),
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
                lines: Vec::new(),
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

    /// Issue 21 item 2: the search for the most similar line does a
    /// bounded amount of work, the same on every machine, and says which
    /// lines it compared.
    #[test]
    fn the_similar_line_search_compares_lines_while_its_work_lasts() {
        // 38 characters a line, as the expected text: each costs 38 × 38.
        let line = |i: usize| format!("{:0>38}\n", i * 7919 % 1_000_003);
        let mut text: String = (0..20_000).map(line).collect();
        let needle = "abcdefghijklmnopqrstuvwxyz0123456789AB";
        // Alike, but no 8 characters of its beginning or end in common.
        let near = "abcdXfghiXklmnXpqrsXuvwxXz012X4567X9AB\n";
        let reach = usize::try_from(MAX_SIMILARITY_WORK / (38 * 38)).unwrap();
        // Within the work: found, the reason names the lines compared.
        text.replace_range(39 * 100..39 * 101, near);
        let found = for_contains(&text, needle).unwrap();
        assert_eq!(
            (found.first_line, found.last_line, found.reason.as_str()),
            (
                99,
                103,
                format!(
                    "line 101 is the most similar of the first {reach} lines (82 % alike; the \
                     lines after them were not compared)"
                )
                .as_str()
            )
        );
        // Past it: not looked at, and said.
        let mut text: String = (0..20_000).map(line).collect();
        text.replace_range(39 * 15_000..39 * 15_001, near);
        let missed = for_contains(&text, needle).unwrap();
        assert_eq!(
            missed,
            Focus {
                first_line: 19_993,
                last_line: 20_000,
                reason: format!(
                    "the end of the text; none of the first {reach} lines is close to the \
                     expected text; the lines after them were not compared"
                ),
                lines: Vec::new(),
            }
        );
        // Lines whose length keeps them from being alike are not compared
        // at all: the same text with lines twice as long is searched whole.
        let long: String = (0..20_000)
            .map(|i| line(i).repeat(2).replace("\n", "") + "\n")
            .collect();
        assert_eq!(
            for_contains(&long, needle).unwrap().reason,
            "the end of the text; no line is close to the expected text"
        );
    }

    /// Issue 21 item 2: a search that runs past the scenario's deadline
    /// stops instead of finishing.
    #[test]
    fn a_search_past_the_deadline_stops() {
        let mut text = numbered(30);
        text.insert_str(
            text.find("line 14\n").unwrap(),
            "export function mean(xs) {\n",
        );
        let needle = "exprot fucntion maen(xs) {";
        let spent = Deadline::after(std::time::Instant::now(), std::time::Duration::ZERO);
        assert_eq!(super::for_contains(&text, needle, &spent), Err(Stopped));
        assert!(for_contains(&text, needle).is_some());
    }

    #[test]
    fn a_focus_keeps_its_lines_cut_as_shown() {
        let mut text = numbered(30);
        let long = "é".repeat(300);
        text.insert_str(text.find("line 14\n").unwrap(), &format!("{long}\n"));
        let focus = Focus {
            first_line: 13,
            last_line: 15,
            reason: "why".into(),
            lines: Vec::new(),
        };
        let cut = format!("{} … (60 more characters)", "é".repeat(240));
        let kept = focus.clone().keeping_lines(&text);
        assert_eq!(
            kept.lines,
            vec!["line 13".to_owned(), cut.clone(), "line 14".to_owned()]
        );
        let want = vec![
            (13, Cow::Borrowed("line 13")),
            (14, Cow::Owned(cut)),
            (15, Cow::Borrowed("line 14")),
        ];
        // The same lines, from the text or from the focus alone.
        assert_eq!(focus.window(&text), want);
        assert_eq!(kept.window("another text"), want);
        // At most MAX_KEPT_LINES, and the window says which.
        let wide = Focus {
            first_line: 2,
            last_line: 31,
            ..focus
        };
        let text = numbered(100);
        let wide = Focus {
            last_line: 90,
            ..wide
        }
        .keeping_lines(&text);
        assert_eq!(
            (wide.first_line, wide.last_line, wide.lines.len()),
            (2, 41, MAX_KEPT_LINES)
        );
        assert_eq!(wide.lines.last().map(String::as_str), Some("line 41"));
        assert_eq!(cut_line("short"), Cow::Borrowed("short"));
    }
}
