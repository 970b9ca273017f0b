//! The edit tool's tests: helpers here, the tests by topic.

use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::EditTool;
use crate::tools::Limits;
use crate::tools::Tool;
use crate::tools::ToolResult;
use crate::tools::UpdateSink;
use crate::tools::builtin_tools;
use crate::tools::edit::line_ending::to_lf;
use crate::tools::edit::matching::EditRequest;
use crate::tools::edit::matching::MatchError;
use crate::tools::edit::matching::apply_edits;
use crate::tools::edit::matching::fuzzy_normalize;
use crate::tools::testutil::Harness;
use crate::tools::testutil::disk;

mod args;
mod diff;
mod files;
mod fuzzy;
mod line_endings;
mod matching;
mod scale;

fn edit(path: &str, edits: Value) -> Value {
    json!({ "path": path, "edits": edits })
}

fn one(path: &str, old: &str, new: &str) -> Value {
    edit(path, json!([{ "oldText": old, "newText": new }]))
}

fn ok_text(r: &ToolResult) -> String {
    assert!(!r.is_error, "unexpected error: {}", r.text());
    r.text()
}

fn err_text(r: &ToolResult) -> String {
    assert!(r.is_error, "expected an error, got: {}", r.text());
    r.text()
}

fn detail<'a>(r: &'a ToolResult, key: &str) -> &'a Value {
    &r.details.as_ref().expect("details")[key]
}

/// Applies a unified patch strictly: every context and removed line must
/// match the original at the hunk's stated position.
fn apply_patch(original: &str, patch: &str) -> Result<String, String> {
    let old: Vec<&str> = original.split_inclusive('\n').collect();
    let mut lines = patch.split_inclusive('\n').peekable();
    let header_old = lines.next().ok_or("no --- header")?;
    let header_new = lines.next().ok_or("no +++ header")?;
    if !header_old.starts_with("--- ") || !header_new.starts_with("+++ ") {
        return Err(format!("bad headers {header_old:?} {header_new:?}"));
    }
    let mut out = String::new();
    let mut cursor = 0; // index into `old` of the next unconsumed line
    while let Some(header) = lines.next() {
        let header = header.trim_end_matches('\n');
        let ranges = header
            .strip_prefix("@@ -")
            .and_then(|h| h.strip_suffix(" @@"))
            .ok_or_else(|| format!("bad hunk header {header:?}"))?;
        let (old_range, new_range) = ranges.split_once(" +").ok_or("bad ranges")?;
        let parse = |r: &str| -> Result<(usize, usize), String> {
            let (a, b) = r.split_once(',').ok_or("ranges need counts")?;
            Ok((a.parse().map_err(|_| "num")?, b.parse().map_err(|_| "num")?))
        };
        let (old_start, old_len) = parse(old_range)?;
        let (_, new_len) = parse(new_range)?;
        let mut body: Vec<(char, String)> = Vec::new();
        while let Some(line) = lines.peek() {
            if line.starts_with("@@") {
                break;
            }
            let line = lines.next().unwrap_or_default();
            if line.starts_with('\\') {
                let last = body.last_mut().ok_or("marker without a line")?;
                if !last.1.ends_with('\n') {
                    return Err("double marker".into());
                }
                last.1.pop();
                continue;
            }
            let mut chars = line.chars();
            let kind = chars.next().ok_or("empty hunk line")?;
            body.push((kind, chars.as_str().to_owned()));
        }
        let start = if old_len == 0 {
            old_start
        } else {
            old_start - 1
        };
        if start < cursor {
            return Err("hunks out of order".into());
        }
        for line in &old[cursor..start] {
            out.push_str(line);
        }
        let mut at = start;
        let (mut seen_old, mut seen_new) = (0, 0);
        for (kind, text) in body {
            match kind {
                ' ' | '-' => {
                    if old.get(at).copied() != Some(text.as_str()) {
                        return Err(format!("line {} does not match {text:?}", at + 1));
                    }
                    at += 1;
                    seen_old += 1;
                    if kind == ' ' {
                        out.push_str(&text);
                        seen_new += 1;
                    }
                }
                '+' => {
                    out.push_str(&text);
                    seen_new += 1;
                }
                other => return Err(format!("unknown line kind {other:?}")),
            }
        }
        if seen_old != old_len || seen_new != new_len {
            return Err(format!(
                "hunk counts {old_len},{new_len} but saw {seen_old},{seen_new}"
            ));
        }
        cursor = at;
    }
    for line in &old[cursor..] {
        out.push_str(line);
    }
    Ok(out)
}
