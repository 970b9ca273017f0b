//! The two diffs an `edit` reports (§edit.7, §edit.9): the numbered display
//! diff people read, and a standard unified patch that applies cleanly to
//! the original (LF, BOM-free) content. Both come from one line diff made
//! with `similar`.

use std::fmt::Write as _;
use std::time::Duration;

use similar::DiffOp;
use similar::TextDiff;

/// Context lines around each change, in both formats.
pub const CONTEXT_LINES: usize = 4;

/// How long the line diff may search for a minimal result before it settles
/// for a correct but longer one (only pathological inputs get near this).
const DIFF_TIMEOUT: Duration = Duration::from_secs(2);

/// The display diff and where the first change is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diffs {
    /// The numbered display diff (§edit.9).
    pub diff: String,
    /// The unified patch (§edit.7).
    pub patch: String,
    /// 1-based line in the new content where the first change starts.
    pub first_changed_line: Option<usize>,
}

/// Both diffs of `old` → `new`; `path` goes into the patch headers.
pub fn diffs(path: &str, old: &str, new: &str) -> Diffs {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let (display, first_changed_line) = display_diff(&diff, old, new, CONTEXT_LINES);
    Diffs {
        diff: display,
        patch: unified_patch(&diff, path, CONTEXT_LINES),
        first_changed_line,
    }
}

/// A run of the diff: equal lines, or a change (removed then added lines).
enum Part {
    Equal {
        old: usize,
        len: usize,
    },
    Change {
        old: std::ops::Range<usize>,
        new: std::ops::Range<usize>,
    },
}

/// Consecutive non-equal operations merged into one change, as a line diff
/// that lists removals before additions reports them.
fn parts(ops: &[DiffOp]) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::new();
    for op in ops {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
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
    diff: &TextDiff<'_, '_, str>,
    old: &str,
    new: &str,
    context: usize,
) -> (String, Option<usize>) {
    let old_count = memchr::memchr_iter(b'\n', old.as_bytes()).count() + 1;
    let new_count = memchr::memchr_iter(b'\n', new.as_bytes()).count() + 1;
    let width = old_count.max(new_count).to_string().len();
    let skip = format!(" {:width$} ...", "");
    let old_lines = diff.old_lookup();
    let new_lines = diff.new_lookup();

    let parts = parts(diff.ops());
    let mut out: Vec<String> = Vec::new();
    let mut old_num = 1;
    let mut new_num = 1;
    let mut first_changed = None;
    let mut last_was_change = false;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Change { old, new } => {
                first_changed.get_or_insert(new_num);
                for index in old.clone() {
                    out.push(format!(
                        "-{old_num:>width$} {}",
                        line_text(&old_lines[index])
                    ));
                    old_num += 1;
                }
                for index in new.clone() {
                    out.push(format!(
                        "+{new_num:>width$} {}",
                        line_text(&new_lines[index])
                    ));
                    new_num += 1;
                }
                last_was_change = true;
            }
            Part::Equal { old: start, len } => {
                let len = *len;
                let leading = last_was_change;
                let trailing = matches!(parts.get(i + 1), Some(Part::Change { .. }));
                // (shown lines before the skip, skipped, shown lines after).
                let (before, skipped, after) = match (leading, trailing) {
                    (true, true) if len <= context * 2 => (len, 0, 0),
                    (true, true) => (context, len - 2 * context, context),
                    (true, false) => (len.min(context), len.saturating_sub(context), 0),
                    (false, true) => (0, len.saturating_sub(context), len.min(context)),
                    (false, false) => (0, len, 0),
                };
                let show_skip = leading || trailing;
                for index in (0..before).chain(len - after..len) {
                    if index == len - after && skipped > 0 && show_skip {
                        out.push(skip.clone());
                        old_num += skipped;
                        new_num += skipped;
                    }
                    out.push(format!(
                        " {old_num:>width$} {}",
                        line_text(&old_lines[start + index])
                    ));
                    old_num += 1;
                    new_num += 1;
                }
                if after == 0 && skipped > 0 {
                    if show_skip {
                        out.push(skip.clone());
                    }
                    old_num += skipped;
                    new_num += skipped;
                }
                last_was_change = false;
            }
        }
    }
    (out.join("\n"), first_changed)
}

/// A unified patch in the form of jsdiff's `createTwoFilesPatch` with file
/// headers only: `--- path`, `+++ path`, hunks `@@ -a,b +c,d @@` (counts
/// always written; a zero count moves the start one line back) with
/// `context` lines, and `\ No newline at end of file` after a last line
/// that has none.
fn unified_patch(diff: &TextDiff<'_, '_, str>, path: &str, context: usize) -> String {
    let mut out = format!("--- {path}\n+++ {path}\n");
    let old_lines = diff.old_lookup();
    let new_lines = diff.new_lookup();
    let emit = |out: &mut String, prefix: char, line: &str| {
        out.push(prefix);
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for group in diff.grouped_ops(context) {
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
            match tag {
                similar::DiffTag::Equal => {
                    for index in old {
                        emit(&mut out, ' ', &old_lines[index]);
                    }
                }
                _ => {
                    for index in old {
                        emit(&mut out, '-', &old_lines[index]);
                    }
                    for index in new {
                        emit(&mut out, '+', &new_lines[index]);
                    }
                }
            }
        }
    }
    out
}
