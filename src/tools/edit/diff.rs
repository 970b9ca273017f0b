//! The two diffs an `edit` reports (§edit.7, §edit.9): the numbered display
//! diff people read, and a standard unified patch that applies cleanly to
//! the original (LF, BOM-free) content.
//!
//! The edit knows which byte ranges it changed, and everything outside them
//! is identical in the old and the new text. So instead of diffing the whole
//! file, each changed range is widened to whole lines, only those lines are
//! diffed (with `similar`), and the lines between them are one equal run.
//! A 10 MB file with a few changes costs a line count, not a file-sized
//! diff. [`diffs`] without change ranges diffs the whole text.
//!
//! Each of the two texts is written into a [`Bounded`] buffer of at most
//! [`MAX_DIFF_BYTES`]: a 100 MB `newText`, or a 6-byte change in a file
//! made of one 200 MB line, gives the first 256 KiB of each and a flag, not
//! a result of hundreds of megabytes (nor the memory to build one).

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use similar::DiffOp;
use similar::DiffTag;
use similar::TextDiff;

use super::matching::Change;

/// Context lines around each change, in both formats.
pub(crate) const CONTEXT_LINES: usize = 4;

/// The most bytes of the display diff, and of the patch, kept in `details`.
pub(super) const MAX_DIFF_BYTES: usize = 256 * 1024;

/// How long one region's line diff may search for a minimal result before
/// it settles for a correct but longer one (only huge rewrites get near).
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// The display diff, the patch and where the first change is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Diffs {
    /// The numbered display diff (§edit.9), at most [`MAX_DIFF_BYTES`].
    pub diff: String,
    /// The unified patch (§edit.7), at most [`MAX_DIFF_BYTES`].
    pub patch: String,
    /// 1-based line in the new content where the first change starts.
    pub first_changed_line: Option<usize>,
    /// The display diff was cut at [`MAX_DIFF_BYTES`].
    pub diff_truncated: bool,
    /// The patch was cut at [`MAX_DIFF_BYTES`].
    pub patch_truncated: bool,
}

/// A string that keeps at most `cap` bytes of what is pushed (cut at a
/// character boundary) and remembers whether anything was left out.
pub(crate) struct Bounded {
    text: String,
    cap: usize,
    cut: bool,
}

impl Bounded {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            text: String::new(),
            cap,
            cut: false,
        }
    }

    pub(crate) fn push_str(&mut self, piece: &str) {
        if self.cut {
            return;
        }
        let room = self.cap - self.text.len();
        if piece.len() <= room {
            self.text.push_str(piece);
            return;
        }
        let mut end = room;
        while !piece.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&piece[..end]);
        self.cut = true;
    }

    pub(crate) fn push(&mut self, ch: char) {
        self.push_str(ch.encode_utf8(&mut [0; 4]));
    }

    /// The text kept and whether anything was cut.
    pub(crate) fn finish(self) -> (String, bool) {
        (self.text, self.cut)
    }
}

impl std::fmt::Write for Bounded {
    fn write_str(&mut self, piece: &str) -> std::fmt::Result {
        self.push_str(piece);
        Ok(())
    }
}

/// Both diffs of `old` → `new`; `path` goes into the patch headers.
/// `changes` (from the edit) limits the work to the changed lines; `None`
/// diffs everything.
pub(crate) fn diffs(path: &str, old: &str, new: &str, changes: Option<&[Change]>) -> Diffs {
    diffs_within(path, old, new, changes, MAX_DIFF_BYTES)
}

/// [`diffs`] with each text cut at `cap` bytes.
pub(crate) fn diffs_within(
    path: &str,
    old: &str,
    new: &str,
    changes: Option<&[Change]>,
    cap: usize,
) -> Diffs {
    let old_lines = Lines::new(old);
    let new_lines = Lines::new(new);
    let whole = [Change {
        old: 0..old.len(),
        new: 0..new.len(),
    }];
    let ops = changes
        .and_then(|changes| line_ops(old, new, &old_lines, &new_lines, changes))
        .unwrap_or_else(|| line_ops(old, new, &old_lines, &new_lines, &whole).unwrap_or_default());
    let mut diff = Bounded::new(cap);
    let first_changed_line = display_diff(&mut diff, &ops, &old_lines, &new_lines, CONTEXT_LINES);
    let mut patch = Bounded::new(cap);
    unified_patch(
        &mut patch,
        &ops,
        &old_lines,
        &new_lines,
        path,
        CONTEXT_LINES,
    );
    let (diff, diff_truncated) = diff.finish();
    let (patch, patch_truncated) = patch.finish();
    Diffs {
        diff,
        patch,
        first_changed_line,
        diff_truncated,
        patch_truncated,
    }
}

/// A text split into lines the way a line diff sees them: each line keeps
/// its `\n`; a last line without one is a line; nothing after a final `\n`.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        if !text.is_empty() {
            starts.push(0);
        }
        starts.extend(
            memchr::memchr_iter(b'\n', text.as_bytes())
                .map(|i| i + 1)
                .filter(|&s| s < text.len()),
        );
        Self { text, starts }
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn get(&self, index: usize) -> &'a str {
        let start = self.starts.get(index).copied().unwrap_or(self.text.len());
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        &self.text[start..end]
    }

    /// The index of the line starting at byte `pos` (the line count at the
    /// end of the text), if a line starts there.
    fn index_at(&self, pos: usize) -> Option<usize> {
        if pos == self.text.len() {
            return Some(self.len());
        }
        self.starts.binary_search(&pos).ok()
    }
}

fn at_line_boundary(text: &str, pos: usize) -> bool {
    pos == 0 || pos == text.len() || text.as_bytes().get(pos - 1) == Some(&b'\n')
}

/// The changes widened to whole lines in both texts, merged where they
/// share a line.
fn line_regions(old: &str, new: &str, changes: &[Change]) -> Option<Vec<Change>> {
    let mut regions: Vec<Change> = Vec::new();
    let mut i = 0;
    while i < changes.len() {
        let change = &changes[i];
        let (gap_old, gap_new) = regions.last().map_or((0, 0), |r| (r.old.end, r.new.end));
        // The gap before this change is the same text in both.
        let gap = old.get(gap_old..change.old.start)?;
        let mut region = match gap.rfind('\n') {
            Some(k) => {
                let back = change.old.start - (gap_old + k + 1);
                Change {
                    old: change.old.start - back..change.old.end,
                    new: change.new.start.checked_sub(back)?..change.new.end,
                }
            }
            // The previous region ended at a line boundary, so the gap
            // starts a line.
            None => Change {
                old: gap_old..change.old.end,
                new: gap_new..change.new.end,
            },
        };
        // Extend the end to a line boundary in both texts, swallowing any
        // change that starts on the way.
        while !(at_line_boundary(old, region.old.end) && at_line_boundary(new, region.new.end)) {
            let rest = old.get(region.old.end..)?;
            let line_end = rest
                .find('\n')
                .map_or(old.len(), |k| region.old.end + k + 1);
            match changes.get(i + 1) {
                Some(next) if next.old.start < line_end => {
                    region.old.end = next.old.end;
                    region.new.end = next.new.end;
                    i += 1;
                }
                _ if line_end == region.old.end => return None,
                _ => {
                    region.new.end += line_end - region.old.end;
                    region.old.end = line_end;
                }
            }
            if region.new.end > new.len() {
                return None;
            }
        }
        regions.push(region);
        i += 1;
    }
    Some(regions)
}

/// The line diff operations of the whole text: equal runs between the
/// regions, `similar`'s line diff inside them. `None` if the changes do not
/// describe the texts (then the caller diffs everything).
fn line_ops(
    old: &str,
    new: &str,
    old_lines: &Lines<'_>,
    new_lines: &Lines<'_>,
    changes: &[Change],
) -> Option<Vec<DiffOp>> {
    let regions = line_regions(old, new, changes)?;
    let mut ops: Vec<DiffOp> = Vec::new();
    let push_equal = |ops: &mut Vec<DiffOp>, old_index: usize, new_index: usize, len: usize| {
        if len == 0 {
            return;
        }
        if let Some(DiffOp::Equal { len: prev, .. }) = ops.last_mut() {
            *prev += len;
        } else {
            ops.push(DiffOp::Equal {
                old_index,
                new_index,
                len,
            });
        }
    };
    let (mut old_next, mut new_next) = (0, 0);
    for region in &regions {
        let old_first = old_lines.index_at(region.old.start)?;
        let new_first = new_lines.index_at(region.new.start)?;
        let old_end = old_lines.index_at(region.old.end)?;
        let new_end = new_lines.index_at(region.new.end)?;
        let equal = old_first.checked_sub(old_next)?;
        if new_first.checked_sub(new_next)? != equal {
            return None;
        }
        push_equal(&mut ops, old_next, new_next, equal);
        let diff = TextDiff::configure()
            .timeout(DIFF_TIMEOUT)
            .diff_lines(old.get(region.old.clone())?, new.get(region.new.clone())?);
        for op in diff.ops() {
            let (tag, o, n) = op.as_tag_tuple();
            let (o, n) = (
                o.start + old_first..o.end + old_first,
                n.start + new_first..n.end + new_first,
            );
            match tag {
                DiffTag::Equal => push_equal(&mut ops, o.start, n.start, o.len()),
                DiffTag::Delete => ops.push(DiffOp::Delete {
                    old_index: o.start,
                    old_len: o.len(),
                    new_index: n.start,
                }),
                DiffTag::Insert => ops.push(DiffOp::Insert {
                    old_index: o.start,
                    new_index: n.start,
                    new_len: n.len(),
                }),
                DiffTag::Replace => ops.push(DiffOp::Replace {
                    old_index: o.start,
                    old_len: o.len(),
                    new_index: n.start,
                    new_len: n.len(),
                }),
            }
        }
        old_next = old_end;
        new_next = new_end;
    }
    let equal = old_lines.len().checked_sub(old_next)?;
    if new_lines.len().checked_sub(new_next)? != equal {
        return None;
    }
    push_equal(&mut ops, old_next, new_next, equal);
    Some(ops)
}

/// A run of the diff: equal lines, or a change (removed then added lines).
enum Part {
    Equal {
        old: usize,
        len: usize,
    },
    Change {
        old: Range<usize>,
        new: Range<usize>,
    },
}

/// Consecutive non-equal operations merged into one change, reported as a
/// line diff reports them: removals first, then additions.
fn parts(ops: &[DiffOp]) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            if !old.is_empty() {
                parts.push(Part::Equal {
                    old: old.start,
                    len: old.len(),
                });
            }
            continue;
        }
        if let Some(Part::Change {
            old: prev_old,
            new: prev_new,
        }) = parts.last_mut()
        {
            prev_old.end = old.end.max(prev_old.end);
            prev_new.end = new.end.max(prev_new.end);
            continue;
        }
        parts.push(Part::Change { old, new });
    }
    parts
}

fn line_text(slice: &str) -> &str {
    slice.strip_suffix('\n').unwrap_or(slice)
}

/// pi's `generateDiffString`: `-{n} text` (old numbering), `+{n} text` (new
/// numbering), ` {n} text` for context (old numbering); up to `context`
/// lines after a change and before the next; a longer unchanged run between
/// two changes shows `context` + a skip line + `context`; runs touching no
/// change are left out. Line numbers are padded to the width of the larger
/// line count (`split("\n")` pieces).
fn display_diff(
    out: &mut Bounded,
    ops: &[DiffOp],
    old_lines: &Lines<'_>,
    new_lines: &Lines<'_>,
    context: usize,
) -> Option<usize> {
    let pieces = |lines: &Lines<'_>| memchr::memchr_iter(b'\n', lines.text.as_bytes()).count() + 1;
    let width = pieces(old_lines).max(pieces(new_lines)).to_string().len();
    let skip = format!(" {:width$} ...", "");
    // Lines are joined by `\n`, without a final one.
    let mut first_line = true;
    let mut line = |out: &mut Bounded, marker: char, number: Option<usize>, text: &str| {
        if !std::mem::take(&mut first_line) {
            out.push('\n');
        }
        out.push(marker);
        match number {
            Some(number) => {
                let _ = write!(out, "{number:>width$} ");
                out.push_str(text);
            }
            None => out.push_str(text),
        }
    };

    let parts = parts(ops);
    let mut old_num = 1;
    let mut new_num = 1;
    let mut first_changed = None;
    let mut last_was_change = false;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Change { old, new } => {
                first_changed.get_or_insert(new_num);
                for index in old.clone() {
                    line(out, '-', Some(old_num), line_text(old_lines.get(index)));
                    old_num += 1;
                }
                for index in new.clone() {
                    line(out, '+', Some(new_num), line_text(new_lines.get(index)));
                    new_num += 1;
                }
                last_was_change = true;
            }
            Part::Equal { old: start, len } => {
                let len = *len;
                let leading = last_was_change;
                let trailing = matches!(parts.get(i + 1), Some(Part::Change { .. }));
                // (lines shown before the skip, lines skipped, shown after).
                let (before, skipped, after) = match (leading, trailing) {
                    (true, true) if len <= context * 2 => (len, 0, 0),
                    (true, true) => (context, len - 2 * context, context),
                    (true, false) => (len.min(context), len.saturating_sub(context), 0),
                    (false, true) => (0, len.saturating_sub(context), len.min(context)),
                    (false, false) => (0, len, 0),
                };
                let shows_skip = leading || trailing;
                for index in (0..before).chain(len - after..len) {
                    if index == len - after && skipped > 0 && shows_skip {
                        line(out, ' ', None, &skip[1..]);
                        old_num += skipped;
                        new_num += skipped;
                    }
                    line(
                        out,
                        ' ',
                        Some(old_num),
                        line_text(old_lines.get(start + index)),
                    );
                    old_num += 1;
                    new_num += 1;
                }
                if after == 0 && skipped > 0 {
                    if shows_skip {
                        line(out, ' ', None, &skip[1..]);
                    }
                    old_num += skipped;
                    new_num += skipped;
                }
                last_was_change = false;
            }
        }
    }
    first_changed
}

/// A unified patch in the form of jsdiff's `createTwoFilesPatch` with file
/// headers only: `--- path`, `+++ path`, hunks `@@ -a,b +c,d @@` (counts
/// always written; a zero count moves the start one line back) with
/// `context` lines, and `\ No newline at end of file` after a last line
/// that has none.
fn unified_patch(
    out: &mut Bounded,
    ops: &[DiffOp],
    old_lines: &Lines<'_>,
    new_lines: &Lines<'_>,
    path: &str,
    context: usize,
) {
    let _ = write!(out, "--- {path}\n+++ {path}\n");
    let emit = |out: &mut Bounded, prefix: char, line: &str| {
        out.push(prefix);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for group in similar::group_diff_ops(ops.to_vec(), context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_start = first.old_range().start;
        let new_start = first.new_range().start;
        let old_len = last.old_range().end - old_start;
        let new_len = last.new_range().end - new_start;
        let start = |index: usize, len: usize| if len == 0 { index } else { index + 1 };
        let _ = writeln!(
            out,
            "@@ -{},{old_len} +{},{new_len} @@",
            start(old_start, old_len),
            start(new_start, new_len)
        );
        for op in &group {
            let (tag, old, new) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                for index in old {
                    emit(out, ' ', old_lines.get(index));
                }
                continue;
            }
            for index in old {
                emit(out, '-', old_lines.get(index));
            }
            for index in new {
                emit(out, '+', new_lines.get(index));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn regions_widen_to_lines_and_merge_on_shared_lines() {
        let old = "a1\nb2\nc3\n";
        let new = "a1\nbX2\nY3\n";
        let changes = [
            Change {
                old: 4..4,
                new: 4..5,
            },
            Change {
                old: 6..7,
                new: 7..8,
            },
        ];
        let regions = line_regions(old, new, &changes).unwrap();
        assert_eq!(
            regions,
            vec![
                Change {
                    old: 3..6,
                    new: 3..7
                },
                Change {
                    old: 6..9,
                    new: 7..10
                }
            ]
        );
        // A change that ends mid-line in the new text pulls in the next line.
        let old = "a\nb\nc\n";
        let new = "xb\nc\n";
        let changes = [Change {
            old: 0..2,
            new: 0..1,
        }];
        assert_eq!(
            line_regions(old, new, &changes).unwrap(),
            vec![Change {
                old: 0..4,
                new: 0..3
            }]
        );
        // ... and swallows a change that starts on that line.
        let old = "a\nb\nc\n";
        let new = "xB\nc\n";
        let changes = [
            Change {
                old: 0..2,
                new: 0..1,
            },
            Change {
                old: 2..3,
                new: 1..2,
            },
        ];
        assert_eq!(
            line_regions(old, new, &changes).unwrap(),
            vec![Change {
                old: 0..4,
                new: 0..3
            }]
        );
    }

    #[test]
    fn region_diff_equals_whole_file_diff() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 3\n", "line three\n")
            .replace("line 30\nline 31\n", "");
        let a = old.find("line 3\n").unwrap();
        let b = old.find("line 30\n").unwrap();
        let shift = "line three\n".len() - "line 3\n".len();
        let changes = [
            Change {
                old: a..a + 7,
                new: a..a + 11,
            },
            Change {
                old: b..b + 16,
                new: b + shift..b + shift,
            },
        ];
        let by_region = diffs("f", &old, &new, Some(&changes));
        let whole = diffs("f", &old, &new, None);
        assert_eq!(by_region, whole);
        assert_eq!(by_region.first_changed_line, Some(3));
    }

    #[test]
    fn bounded_text_keeps_a_prefix_cut_at_a_character_boundary() {
        let mut b = Bounded::new(5);
        b.push_str("ab");
        b.push_str("cé🙂");
        b.push_str("more");
        assert_eq!(b.finish(), ("abcé".to_owned(), true));
        let mut b = Bounded::new(4);
        b.push_str("abcd");
        assert_eq!(b.finish(), ("abcd".to_owned(), false));
    }

    #[test]
    fn cut_diffs_are_prefixes_of_the_whole_ones() {
        let old: String = (1..=200).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 5\n", "five\n").replace("line 150\n", "");
        let whole = diffs_within("f", &old, &new, None, usize::MAX);
        assert!(!whole.diff_truncated && !whole.patch_truncated);
        for cap in [0, 1, 10, 50, whole.diff.len() - 1] {
            let cut = diffs_within("f", &old, &new, None, cap);
            assert!(cut.diff_truncated, "{cap}");
            assert_eq!(cut.diff, whole.diff[..cap], "{cap}");
            assert_eq!(
                cut.patch,
                whole.patch[..cap.min(whole.patch.len())],
                "{cap}"
            );
            assert_eq!(cut.first_changed_line, whole.first_changed_line);
        }
        let exact = diffs_within(
            "f",
            &old,
            &new,
            None,
            whole.diff.len().max(whole.patch.len()),
        );
        assert_eq!(exact, whole);
    }

    #[test]
    fn wrong_changes_fall_back_to_a_whole_diff() {
        let changes = [Change {
            old: 0..1,
            new: 0..5,
        }];
        let d = diffs("f", "a\nb\n", "a\nc\n", Some(&changes));
        assert_eq!(d.diff, " 1 a\n-2 b\n+2 c");
    }
}
