//! The matching engine of the `edit` tool (§edit.3–§edit.6).
//!
//! Everything here works on text whose line endings are already `\n` (the
//! tool converts the file's content; `oldText` and `newText` are converted
//! here). [`apply_edits`] takes the file's content and the edits and
//! returns the new content, or the first problem in pi's order
//! (§edit.4.6): an empty `oldText` (checked for every edit first), then per
//! edit in input order "not found" and "not unique", then overlaps, then "no
//! change". Nothing is applied unless every edit passes.
//!
//! Matching is exact first. When an edit only matches after
//! [`fuzzy_normalize`] (NFKC, trailing whitespace stripped per line, smart
//! quotes, unicode dashes and spaces made ASCII), the whole call works in
//! that normalised space, and only the lines a replacement touches are
//! rewritten from it; every other line keeps its original bytes (§edit.6).
//! Uniqueness is always counted in normalised space, as non-overlapping
//! occurrences (§edit.4.4).
//!
//! Cost: the content is normalised once per call (a borrowed `Cow` when
//! nothing changes, the common case for clean files), and each edit costs a
//! few `memmem` scans. Hints for failed matches are only computed on the
//! error path. The model-facing wording of the errors lives with the tool
//! (`edit/messages.rs`).
//!
//! This module is public so that the `edit` bench can measure the engine
//! alone, apart from reading and writing the file, and so that an embedder
//! can preview exactly what the tool would do to a text.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::ops::Range;

use memchr::memmem;
use unicode_normalization::IsNormalized;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::is_nfkc_quick;

use super::line_ending::to_lf;

/// What JavaScript's `trimEnd` removes (WhiteSpace and LineTerminator).
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// The ASCII stand-in for a smart quote, unicode dash or unicode space
/// (§edit.5 steps 3–6).
fn fuzzy_char(c: char) -> Option<char> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => Some('\''),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => Some('"'),
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => Some('-'),
        '\u{A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => Some(' '),
        _ => None,
    }
}

/// One line (without its `\n`) normalised for fuzzy matching.
fn fuzzy_line(line: &str) -> Cow<'_, str> {
    if line.is_ascii() {
        return Cow::Borrowed(line.trim_end_matches(|c: char| c.is_ascii() && is_js_whitespace(c)));
    }
    // NFKC works per line: `\n` is a starter that nothing composes with.
    let nfkc: Cow<'_, str> = if is_nfkc_quick(line.chars()) == IsNormalized::Yes {
        Cow::Borrowed(line)
    } else {
        Cow::Owned(line.nfkc().collect())
    };
    let trimmed_len = nfkc.trim_end_matches(is_js_whitespace).len();
    let needs_mapping = nfkc[..trimmed_len].chars().any(|c| fuzzy_char(c).is_some());
    if !needs_mapping {
        return match nfkc {
            Cow::Borrowed(text) => Cow::Borrowed(&text[..trimmed_len]),
            Cow::Owned(mut text) => {
                text.truncate(trimmed_len);
                Cow::Owned(text)
            }
        };
    }
    Cow::Owned(
        nfkc[..trimmed_len]
            .chars()
            .map(|c| fuzzy_char(c).unwrap_or(c))
            .collect(),
    )
}

/// pi's `normalizeForFuzzyMatch` (§edit.5): NFKC, trailing whitespace
/// removed from every line, smart quotes to `'`/`"`, unicode dashes to `-`,
/// unicode spaces to a space. The number of lines never changes. Borrowed
/// when the text is already normalised.
pub fn fuzzy_normalize(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut offset = 0;
    for (index, line) in text.split('\n').enumerate() {
        let normalized = fuzzy_line(line);
        let unchanged = matches!(&normalized, Cow::Borrowed(n) if n.len() == line.len());
        match (&mut out, unchanged) {
            (None, true) => {}
            (None, false) => {
                let mut buf = String::with_capacity(text.len());
                buf.push_str(&text[..offset]);
                buf.push_str(&normalized);
                out = Some(buf);
            }
            (Some(buf), _) => {
                if index > 0 {
                    buf.push('\n');
                }
                buf.push_str(&normalized);
            }
        }
        offset += line.len() + 1;
    }
    match out {
        Some(buf) => Cow::Owned(buf),
        None => Cow::Borrowed(text),
    }
}

/// One requested replacement, as sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditRequest {
    /// The text to find.
    pub old_text: String,
    /// The text to put in its place.
    pub new_text: String,
}

/// The outcome of a successful [`apply_edits`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The new content (LF).
    pub content: String,
    /// Whether the call worked in fuzzy-normalised space.
    pub fuzzy: bool,
    /// Indices of the edits whose `oldText` did not match the file exactly
    /// and needed normalisation.
    pub fuzzy_edits: Vec<usize>,
    /// The byte ranges that differ between the old and the new content,
    /// in order; everything else is identical.
    pub changes: Vec<Change>,
}

/// Where the closest thing to an unmatched `oldText` is, to help a model
/// fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Hint {
    /// The `oldText` lines match the file from `file_start` on, up to
    /// `old_line`, which differs from the file's `file_line`.
    Diverges {
        /// 1-based file line where the block that matches starts (where
        /// its first `oldText` lines are, also when lines were inserted
        /// after them).
        file_start: usize,
        /// 1-based line of `oldText` that differs.
        old_line: usize,
        /// Lines of `oldText` (out of `old_lines`) that match there.
        matching: usize,
        /// Number of lines in `oldText`.
        old_lines: usize,
        /// 1-based file line it was compared with, `None` past the end.
        file_line: Option<usize>,
        /// That file line's text (normalised).
        file_text: String,
        /// The `oldText` line.
        old_text: String,
    },
    /// No line contains the most distinctive `oldText` line; this one is
    /// the most similar.
    Similar {
        /// The `oldText` line looked for.
        old_text: String,
        /// 1-based file line.
        file_line: usize,
        /// Its text.
        file_text: String,
    },
    /// The best window of the file matches fewer than half of the
    /// `oldText` lines (of three or more): no place is close.
    NoCloseMatch {
        /// Lines of `oldText` that match exactly in the best window.
        matching: usize,
        /// Number of lines in `oldText`.
        old_lines: usize,
    },
    /// Nothing in the file resembles the most distinctive `oldText` line.
    Nothing {
        /// The `oldText` line looked for.
        old_text: String,
    },
    /// `oldText` holds escaped `\n` / `\t` sequences and matches once they
    /// are real line breaks and tabs.
    EscapedNewlines,
}

/// Why the edits cannot be applied. Indices are positions in `edits`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MatchError {
    /// An `oldText` is empty (after line-ending normalisation).
    EmptyOldText {
        /// The edit.
        index: usize,
    },
    /// An `oldText` occurs nowhere, not even after normalisation.
    NotFound {
        /// The edit.
        index: usize,
        /// The closest thing in the file, if anything.
        hint: Option<Hint>,
    },
    /// An `oldText` occurs more than once (in normalised space).
    Duplicate {
        /// The edit.
        index: usize,
        /// Non-overlapping occurrences.
        count: usize,
        /// 1-based lines where the first occurrences start.
        lines: Vec<usize>,
    },
    /// An `oldText` is only whitespace without a line break: after trailing
    /// whitespace is ignored it is empty and matches everywhere.
    WhitespaceOnly {
        /// The edit.
        index: usize,
    },
    /// Two edits claim overlapping text.
    Overlap {
        /// The edit positioned first.
        first: usize,
        /// The edit positioned second.
        second: usize,
        /// 1-based first and last line of the first edit's match.
        first_lines: (usize, usize),
        /// 1-based first and last line of the second edit's match.
        second_lines: (usize, usize),
    },
    /// Applying the edits leaves the content as it was.
    NoChange,
    /// A broken invariant (pi's internal guard errors).
    Internal(String),
}

/// One changed range: `old[old]` became `new[new]`; outside the changes the
/// two texts are identical. Ranges are byte offsets, sorted, disjoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// Bytes of the old text.
    pub old: Range<usize>,
    /// Bytes of the new text.
    pub new: Range<usize>,
}

/// Lines of occurrences listed in a duplicate error.
const MAX_LISTED_LINES: usize = 10;
/// Candidate alignments examined for a "diverges" hint.
const MAX_CANDIDATES: usize = 2_000;
/// Character comparisons allowed for the "most similar line" search.
const SIMILARITY_BUDGET: usize = 40_000_000;
/// Best-voted window starts examined for a "diverges" hint.
const MAX_VOTED_STARTS: usize = 64;
/// File-line votes counted when looking for the best window.
const MAX_VOTES: usize = 1_000_000;

/// Byte offsets where each line starts (a final empty piece after a
/// trailing `\n` counts as a line).
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 32 + 1);
    starts.push(0);
    starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    starts
}

/// 0-based index of the line holding byte `pos`.
fn line_of(starts: &[usize], pos: usize) -> usize {
    starts.partition_point(|&s| s <= pos).saturating_sub(1)
}

fn find(haystack: &str, needle: &str) -> Option<usize> {
    memmem::find(haystack.as_bytes(), needle.as_bytes())
}

/// One edit matched in the base content.
#[derive(Clone, Copy, Debug)]
struct Matched<'a> {
    index: usize,
    pos: usize,
    len: usize,
    new_text: &'a str,
}

/// Applies `edits` to `content` (LF, BOM-free) with pi's rules (§edit.4).
pub fn apply_edits(content: &str, edits: &[EditRequest]) -> Result<Applied, MatchError> {
    let normalized: Vec<(Cow<'_, str>, Cow<'_, str>)> = edits
        .iter()
        .map(|e| (to_lf(&e.old_text), to_lf(&e.new_text)))
        .collect();
    if let Some(index) = normalized.iter().position(|(old, _)| old.is_empty()) {
        return Err(MatchError::EmptyOldText { index });
    }

    let fuzzy_content = fuzzy_normalize(content);
    let fuzzy_olds: Vec<Cow<'_, str>> = normalized
        .iter()
        .map(|(old, _)| fuzzy_normalize(old))
        .collect();

    // First pass: exact, else fuzzy (§edit.4.2).
    let mut exact_positions = Vec::with_capacity(normalized.len());
    let mut fuzzy_edits = Vec::new();
    for (index, (old, _)) in normalized.iter().enumerate() {
        let exact = find(content, old);
        if exact.is_none() && find(&fuzzy_content, &fuzzy_olds[index]).is_some() {
            fuzzy_edits.push(index);
        }
        exact_positions.push(exact);
    }
    let fuzzy = !fuzzy_edits.is_empty();
    let base: &str = if fuzzy { &fuzzy_content } else { content };
    // Whether `base` is the fuzzy-normalised content itself.
    let base_is_fuzzy = fuzzy || matches!(fuzzy_content, Cow::Borrowed(_));

    // Second pass, in input order: not found, then not unique (§edit.4.3–4).
    let mut matched = Vec::with_capacity(normalized.len());
    for (index, (old, new)) in normalized.iter().enumerate() {
        let fuzzy_old = &fuzzy_olds[index];
        let exact = if fuzzy {
            find(base, old)
        } else {
            exact_positions[index]
        };
        // `first_fuzzy`: the position, when the search that found it was a
        // search for `fuzzy_old` in `fuzzy_content` (then it is also the
        // first occurrence there, and counting can start after it).
        let (pos, len, first_fuzzy) = match exact {
            Some(pos) => (
                pos,
                old.len(),
                (base_is_fuzzy && old == fuzzy_old).then_some(pos),
            ),
            None => match find(&fuzzy_content, fuzzy_old) {
                Some(pos) => (pos, fuzzy_old.len(), Some(pos)),
                None => {
                    return Err(MatchError::NotFound {
                        index,
                        hint: not_found_hint(&fuzzy_content, old, fuzzy_old),
                    });
                }
            },
        };
        if fuzzy_old.is_empty() {
            return Err(MatchError::WhitespaceOnly { index });
        }
        let finder = memmem::Finder::new(fuzzy_old.as_bytes());
        let haystack = fuzzy_content.as_bytes();
        let first = first_fuzzy.or_else(|| finder.find(haystack));
        // Non-overlapping count: a second occurrence starts after the first.
        let second = first.and_then(|first| finder.find(&haystack[first + fuzzy_old.len()..]));
        if second.is_some() {
            return Err(duplicate_error(index, &fuzzy_content, &finder));
        }
        matched.push(Matched {
            index,
            pos,
            len,
            new_text: new,
        });
    }

    // Overlaps, after sorting by position (§edit.4.5); the sort is stable.
    matched.sort_by_key(|m| m.pos);
    for pair in matched.windows(2) {
        let (prev, cur) = (pair[0], pair[1]);
        if prev.pos + prev.len > cur.pos {
            let starts = line_starts(base);
            let lines = |m: Matched<'_>| {
                (
                    line_of(&starts, m.pos) + 1,
                    line_of(&starts, m.pos + m.len.saturating_sub(1)) + 1,
                )
            };
            return Err(MatchError::Overlap {
                first: prev.index,
                second: cur.index,
                first_lines: lines(prev),
                second_lines: lines(cur),
            });
        }
    }

    let mut changes = Vec::with_capacity(matched.len());
    let new_content = if fuzzy {
        preserve_unchanged_lines(content, base, &matched, &mut changes)?
    } else {
        let mut out = String::with_capacity(splice_len(base, &matched));
        splice(&mut out, base, 0, &matched, Some(&mut changes));
        out
    };
    if new_content == content {
        return Err(MatchError::NoChange);
    }
    Ok(Applied {
        content: new_content,
        fuzzy,
        fuzzy_edits,
        changes,
    })
}

fn duplicate_error(index: usize, haystack: &str, finder: &memmem::Finder<'_>) -> MatchError {
    let mut count = 0;
    let mut lines = Vec::new();
    let mut line = 1;
    let mut cursor = 0;
    for pos in finder.find_iter(haystack.as_bytes()) {
        count += 1;
        if lines.len() < MAX_LISTED_LINES {
            line += memchr::memchr_iter(b'\n', &haystack.as_bytes()[cursor..pos]).count();
            cursor = pos;
            lines.push(line);
        }
    }
    MatchError::Duplicate {
        index,
        count,
        lines,
    }
}

fn splice_len(text: &str, matches: &[Matched<'_>]) -> usize {
    let added: usize = matches.iter().map(|m| m.new_text.len()).sum();
    text.len() + added
}

/// Appends `text` with the sorted, disjoint `matches` replaced to `out`
/// (match positions are offsets into `text` plus `offset`), recording each
/// replacement in `changes` (old side relative to `text`). Built front to
/// back: the same result as pi's back-to-front splicing, in linear time.
fn splice(
    out: &mut String,
    text: &str,
    offset: usize,
    matches: &[Matched<'_>],
    mut changes: Option<&mut Vec<Change>>,
) {
    let mut cursor = 0;
    for m in matches {
        let start = m.pos - offset;
        out.push_str(&text[cursor..start]);
        let new_start = out.len();
        out.push_str(m.new_text);
        if let Some(changes) = changes.as_deref_mut() {
            changes.push(Change {
                old: start..start + m.len,
                new: new_start..out.len(),
            });
        }
        cursor = start + m.len;
    }
    out.push_str(&text[cursor..]);
}

/// Fuzzy-mode write-back (§edit.6): every replacement is widened to the
/// whole lines it touches; those lines are rewritten from the normalised
/// `base`, all other lines are copied from `original`.
fn preserve_unchanged_lines(
    original: &str,
    base: &str,
    matched: &[Matched<'_>],
    changes: &mut Vec<Change>,
) -> Result<String, MatchError> {
    let original_starts = line_starts(original);
    let base_starts = line_starts(base);
    if original_starts.len() != base_starts.len() {
        return Err(MatchError::Internal(
            "Cannot preserve unchanged lines because the base content has a different line \
             count."
                .to_owned(),
        ));
    }
    let line_end = |starts: &[usize], text_len: usize, line: usize| {
        starts.get(line + 1).copied().unwrap_or(text_len)
    };
    // Groups of replacements sharing lines: (first line, end line exclusive,
    // range in `matched`).
    let mut groups: Vec<(usize, usize, usize, usize)> = Vec::new();
    for (i, m) in matched.iter().enumerate() {
        let end = m.pos + m.len;
        if m.len == 0 || end > base.len() {
            return Err(MatchError::Internal(
                "Replacement range is outside the base content.".to_owned(),
            ));
        }
        let first = line_of(&base_starts, m.pos);
        let last = line_of(&base_starts, end - 1) + 1;
        match groups.last_mut() {
            Some(group) if first < group.1 => {
                group.1 = group.1.max(last);
                group.3 = i + 1;
            }
            _ => groups.push((first, last, i, i + 1)),
        }
    }
    let mut out = String::with_capacity(original.len() + base.len() / 8);
    let mut copied_to = 0;
    for &(first, last, from, to) in &groups {
        let old_start = original_starts[first];
        out.push_str(&original[copied_to..old_start]);
        let start = base_starts[first];
        let end = line_end(&base_starts, base.len(), last - 1);
        let new_start = out.len();
        splice(&mut out, &base[start..end], start, &matched[from..to], None);
        copied_to = line_end(&original_starts, original.len(), last - 1);
        changes.push(Change {
            old: old_start..copied_to,
            new: new_start..out.len(),
        });
    }
    out.push_str(&original[copied_to..]);
    Ok(out)
}

/// A hint for an `oldText` that matches nowhere (error path only).
fn not_found_hint(fuzzy_content: &str, old: &str, fuzzy_old: &str) -> Option<Hint> {
    if old.contains("\\n") || old.contains("\\t") {
        let unescaped = old.replace("\\n", "\n").replace("\\t", "\t");
        if find(fuzzy_content, &fuzzy_normalize(&unescaped)).is_some() {
            return Some(Hint::EscapedNewlines);
        }
    }
    let old = OldLines::new(fuzzy_old);
    // The most distinctive line anchors the search.
    let (anchor, anchor_text) = old
        .lines
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.trim().len().cmp(&b.1.trim().len()).then(b.0.cmp(&a.0)))
        .map(|(i, l)| (i, l.trim()))?;
    if anchor_text.is_empty() {
        return None;
    }
    let file_lines: Vec<&str> = fuzzy_content.split('\n').collect();
    let starts = candidate_starts(&file_lines, &old, anchor);
    // The window with the most exact lines, then the most loose ones; the
    // earliest of equals.
    let mut best: Option<(usize, usize, usize)> = None; // (exact, loose, start)
    for &start in &starts {
        let (exact, loose) = old.score(&file_lines, start);
        if best.is_none_or(|(e, l, _)| (exact, loose) > (e, l)) {
            best = Some((exact, loose, start));
        }
    }
    let m = old.lines.len();
    match best {
        // Nothing close: a hint at a window where most lines differ would
        // cost the model a turn.
        Some((exact, loose, _)) if m >= 3 && (exact + loose) * 2 < m => Some(Hint::NoCloseMatch {
            matching: exact,
            old_lines: m,
        }),
        Some((exact, _, start)) => old.diverges(&file_lines, &starts, start, exact),
        None => Some(most_similar(&file_lines, anchor_text)),
    }
}

/// The lines of an `oldText` that matched nowhere, and how a window of
/// file lines is held against them.
struct OldLines<'a> {
    lines: Vec<&'a str>,
    /// The text ended with a newline (its last, empty line is dropped).
    ends_with_newline: bool,
}

impl<'a> OldLines<'a> {
    fn new(fuzzy_old: &'a str) -> Self {
        let mut lines: Vec<&str> = fuzzy_old.split('\n').collect();
        let ends_with_newline = lines.len() > 1 && lines.last() == Some(&"");
        if ends_with_newline {
            lines.pop();
        }
        Self {
            lines,
            ends_with_newline,
        }
    }

    fn is_edge(&self, k: usize) -> bool {
        k == 0 || k + 1 == self.lines.len()
    }

    /// Old line `k` and a file line agree but for indentation (an edge
    /// line: is contained in it).
    fn loosely(&self, k: usize, line: &str) -> bool {
        if self.is_edge(k) {
            line.contains(self.lines[k].trim())
        } else {
            line.trim() == self.lines[k].trim()
        }
    }

    /// What a real match needs of old line `k` against a file line.
    fn exactly(&self, k: usize, line: &str) -> bool {
        let old_line = self.lines[k];
        let last = k + 1 == self.lines.len();
        match (k == 0, last) {
            (true, true) if self.ends_with_newline => line.ends_with(old_line),
            (true, true) => line.contains(old_line),
            (true, false) => line.ends_with(old_line),
            (false, true) if !self.ends_with_newline => line.starts_with(old_line),
            _ => line == old_line,
        }
    }

    /// How many lines of the window at `start` match exactly, and how
    /// many more loosely.
    fn score(&self, file_lines: &[&str], start: usize) -> (usize, usize) {
        let (mut exact, mut loose) = (0, 0);
        for k in 0..self.lines.len() {
            if let Some(file_line) = file_lines.get(start + k) {
                if self.exactly(k, file_line) {
                    exact += 1;
                } else if self.loosely(k, file_line) {
                    loose += 1;
                }
            }
        }
        (exact, loose)
    }

    /// The hint at the best window (at `start`, with `exact` lines
    /// matching): where the block starts and the line that differs.
    fn diverges(
        &self,
        file_lines: &[&str],
        starts: &BTreeSet<usize>,
        start: usize,
        exact: usize,
    ) -> Option<Hint> {
        let m = self.lines.len();
        let matches_at = |k: usize| {
            file_lines
                .get(start + k)
                .is_some_and(|l| self.exactly(k, l))
        };
        let first = (0..m).find(|&k| matches_at(k));
        // The line that differs next to the block that matches: before
        // it when the window starts with differing lines (a line was
        // inserted or changed above the matching part), else the first.
        let diverging = match first {
            Some(first) if first > 0 => first - 1,
            _ => (0..m).find(|&k| !matches_at(k))?,
        };
        // Where the block starts: when the window's first lines differ
        // because lines were inserted (or removed) above its matching
        // part, those oldText lines match a little above (or below), and
        // the block starts there, not where the window does.
        let block_start = match first {
            Some(first) if first > 0 => {
                let tail = start + first;
                starts
                    .iter()
                    .copied()
                    .filter(|&s| s != start && s < tail && s + m >= start)
                    .map(|s| {
                        let leading = (0..first)
                            .filter(|&k| {
                                s + k < tail
                                    && file_lines.get(s + k).is_some_and(|l| self.exactly(k, l))
                            })
                            .count();
                        (leading, s)
                    })
                    .filter(|&(leading, _)| leading > 0)
                    .max()
                    .map_or(start, |(_, s)| s)
            }
            _ => start,
        };
        let file_line = file_lines.get(start + diverging);
        Some(Hint::Diverges {
            file_start: block_start + 1,
            old_line: diverging + 1,
            matching: exact,
            old_lines: m,
            file_line: file_line.map(|_| start + diverging + 1),
            file_text: file_line.map_or_else(String::new, |l| (*l).to_owned()),
            old_text: self.lines[diverging].to_owned(),
        })
    }
}

/// Candidate windows: where the anchor line is found (aligned on it), and
/// the alignments most file lines vote for (every file line equal to an
/// oldText line, ignoring indentation, votes for the window start that
/// lines them up), so a line inserted or removed inside the window cannot
/// push the hint off the block that really matches.
fn candidate_starts(file_lines: &[&str], old: &OldLines<'_>, anchor: usize) -> BTreeSet<usize> {
    let mut starts: BTreeSet<usize> = BTreeSet::new();
    for (j, line) in file_lines.iter().enumerate() {
        if !old.loosely(anchor, line) || j < anchor {
            continue;
        }
        if starts.len() >= MAX_CANDIDATES {
            break;
        }
        starts.insert(j - anchor);
    }
    starts.extend(voted_starts(file_lines, &old.lines));
    starts
}

/// The window starts that line up the most `oldText` lines with equal
/// file lines (indentation ignored), best first (ties: the earlier), at
/// most [`MAX_VOTED_STARTS`]; the votes counted stop at [`MAX_VOTES`].
fn voted_starts(file_lines: &[&str], old_lines: &[&str]) -> Vec<usize> {
    let mut by_text: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, line) in old_lines.iter().enumerate() {
        let trimmed = line.trim();
        if !trimmed.is_empty() {
            by_text.entry(trimmed).or_default().push(k);
        }
    }
    let mut votes: HashMap<usize, usize> = HashMap::new();
    let mut counted = 0usize;
    'file: for (j, line) in file_lines.iter().enumerate() {
        let Some(ks) = by_text.get(line.trim()) else {
            continue;
        };
        for &k in ks {
            if counted >= MAX_VOTES {
                break 'file;
            }
            counted += 1;
            if let Some(start) = j.checked_sub(k) {
                *votes.entry(start).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(usize, usize)> = votes.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(MAX_VOTED_STARTS)
        .map(|(start, _)| start)
        .collect()
}

/// The file line most similar to `wanted` (trimmed), within a budget.
fn most_similar(file_lines: &[&str], wanted: &str) -> Hint {
    let wanted_len = wanted.chars().count();
    let mut budget = SIMILARITY_BUDGET;
    let mut best: Option<(f64, usize)> = None;
    for (j, line) in file_lines.iter().enumerate() {
        let trimmed = line.trim();
        let len = trimmed.chars().count();
        if len == 0 || len * 2 < wanted_len || len > wanted_len * 2 {
            continue;
        }
        let cost = len * wanted_len;
        if cost > budget {
            break;
        }
        budget -= cost;
        let score = strsim::normalized_levenshtein(trimmed, wanted);
        if score >= 0.5 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, j));
        }
    }
    match best {
        Some((_, j)) => Hint::Similar {
            old_text: wanted.to_owned(),
            file_line: j + 1,
            file_text: file_lines[j].to_owned(),
        },
        None => Hint::Nothing {
            old_text: wanted.to_owned(),
        },
    }
}
