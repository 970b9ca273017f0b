use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::EditTool;
use crate::tools::Limits;
use crate::tools::Tool;
use crate::tools::ToolResult;
use crate::tools::UpdateSink;
use crate::tools::edit::line_ending::to_lf;
use crate::tools::edit::matching::EditRequest;
use crate::tools::edit::matching::MatchError;
use crate::tools::edit::matching::apply_edits;
use crate::tools::edit::matching::fuzzy_normalize;
use crate::tools::testutil::Harness;
use crate::tools::testutil::disk;

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

// ---------------------------------------------------------------------------
// Spec and argument preparation (§edit.1, §edit.2)

#[test]
fn schema_requires_path_and_edits_without_min_items() {
    let spec = EditTool.spec(&Limits::default());
    assert_eq!(spec.name, "edit");
    let p = &spec.parameters;
    assert_eq!(p["required"], json!(["path", "edits"]));
    assert_eq!(p["additionalProperties"], json!(false));
    let edits = &p["properties"]["edits"];
    assert_eq!(edits["type"], "array");
    assert!(edits.get("minItems").is_none());
    assert_eq!(edits["items"]["required"], json!(["oldText", "newText"]));
    assert_eq!(edits["items"]["additionalProperties"], json!(false));
    assert!(p["properties"].get("oldText").is_none());
    let names: Vec<String> = crate::tools::builtin_tools()
        .iter()
        .map(|t| t.spec(&Limits::default()).name.into_owned())
        .collect();
    assert_eq!(&names[..3], &["read", "write", "edit"]);
}

#[test]
fn prepare_moves_legacy_fields_last_and_parses_json_text() {
    let t = EditTool;
    assert_eq!(
        t.prepare_arguments(json!({"path": "a", "oldText": "before", "newText": "after"})),
        json!({"path": "a", "edits": [{"oldText": "before", "newText": "after"}]})
    );
    assert_eq!(
        t.prepare_arguments(json!({
            "path": "a",
            "oldText": "legacy", "newText": "L",
            "edits": [{"oldText": "x", "newText": "y"}]
        })),
        json!({"path": "a", "edits": [
            {"oldText": "x", "newText": "y"},
            {"oldText": "legacy", "newText": "L"}
        ]})
    );
    assert_eq!(
        t.prepare_arguments(json!({
            "path": "a",
            "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]",
            "oldText": "p", "newText": "q"
        })),
        json!({"path": "a", "edits": [
            {"oldText": "x", "newText": "y"},
            {"oldText": "p", "newText": "q"}
        ]})
    );
    // A single object keeps its edit; the legacy pair still comes last.
    assert_eq!(
        t.prepare_arguments(json!({
            "path": "a",
            "edits": {"oldText": "x", "newText": "y"},
            "oldText": "p", "newText": "q"
        })),
        json!({"path": "a", "edits": [
            {"oldText": "x", "newText": "y"},
            {"oldText": "p", "newText": "q"}
        ]})
    );
    // Not both strings: left alone (validation reports the missing edits).
    let only_old = json!({"path": "a", "oldText": "x"});
    assert_eq!(t.prepare_arguments(only_old.clone()), only_old);
    let numeric = json!({"path": "a", "oldText": "x", "newText": 5});
    assert_eq!(t.prepare_arguments(numeric.clone()), numeric);
    // Unparseable text and non-objects pass through unchanged.
    let text = json!({"path": "a", "edits": "not json"});
    assert_eq!(t.prepare_arguments(text.clone()), text);
    assert_eq!(t.prepare_arguments(json!("edit a")), json!("edit a"));
    assert_eq!(t.prepare_arguments(Value::Null), Value::Null);
}

#[tokio::test]
async fn legacy_only_call_edits_the_file() {
    let h = Harness::memory();
    h.add_file("a.txt", "before\n");
    let r = h
        .call(
            "edit",
            json!({"path": "a.txt", "oldText": "before", "newText": "after"}),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in a.txt.");
    assert_eq!(h.file("a.txt"), "after\n");
    assert!(r.details.as_ref().unwrap().get("ignored_fields").is_none());
}

#[tokio::test]
async fn mixed_legacy_pair_is_applied_as_the_last_edit() {
    let h = Harness::memory();
    h.add_file("a.txt", "one\ntwo\n");
    let r = h
        .call(
            "edit",
            json!({
                "path": "a.txt",
                "edits": [{"oldText": "one", "newText": "1"}],
                "oldText": "one", "newText": "uno"
            }),
        )
        .await;
    // The legacy pair is edits[1]: both claim "one".
    assert_eq!(
        err_text(&r),
        "edits[0] and edits[1] overlap in a.txt. Merge them into one edit or target disjoint \
         regions. (edits[0] matches line 1, edits[1] matches line 1.) None of the 2 edits were \
         applied; fix this one and send all of them again."
    );
    let r = h
        .call(
            "edit",
            json!({
                "path": "a.txt",
                "edits": [{"oldText": "one", "newText": "1"}],
                "oldText": "two", "newText": "2"
            }),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 2 block(s) in a.txt.");
    assert_eq!(h.file("a.txt"), "1\n2\n");
}

#[tokio::test]
async fn json_text_and_single_object_edits_are_accepted() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h
        .call(
            "edit",
            json!({"path": "a.txt", "edits": "[{\"oldText\":\"a\",\"newText\":\"A\"}]"}),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in a.txt.");
    let r = h
        .call(
            "edit",
            json!({"path": "a.txt", "edits": {"oldText": "b", "newText": "B"}}),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in a.txt.");
    assert_eq!(h.file("a.txt"), "ABc");
}

#[tokio::test]
async fn missing_edits_and_bad_items_fail_validation() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h.call("edit", json!({"path": "a.txt"})).await;
    assert!(err_text(&r).contains("  - /edits: expected a value (the property is required)"));
    let r = h
        .call("edit", edit("a.txt", json!([{"oldText": "a"}])))
        .await;
    assert!(err_text(&r).contains("  - /edits/0/newText: expected a value"));
    let r = h
        .call("edit", json!({"path": "a.txt", "edits": null}))
        .await;
    assert!(err_text(&r).contains("/edits"));
    assert_eq!(h.file("a.txt"), "abc");
}

#[tokio::test]
async fn empty_edits_array_is_refused_by_the_tool() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h.call("edit", edit("a.txt", json!([]))).await;
    assert_eq!(
        err_text(&r),
        "Edit tool input is invalid. edits must contain at least one replacement. Send edits as \
         a list with one {\"oldText\", \"newText\"} object per change."
    );
}

// ---------------------------------------------------------------------------
// Success output: text, diff, patch, first_changed_line (§edit.7, §edit.9)

#[tokio::test]
async fn display_diff_example_with_two_changes() {
    let h = Harness::memory();
    h.add_file("g.txt", "alpha\nbeta\ngamma\ndelta\n");
    let r = h
        .call(
            "edit",
            edit(
                "g.txt",
                json!([
                    {"oldText": "gamma", "newText": "GAMMA"},
                    {"oldText": "alpha", "newText": "ALPHA"}
                ]),
            ),
        )
        .await;
    assert_eq!(ok_text(&r), "Successfully replaced 2 block(s) in g.txt.");
    assert_eq!(h.file("g.txt"), "ALPHA\nbeta\nGAMMA\ndelta\n");
    assert_eq!(
        detail(&r, "diff"),
        "-1 alpha\n+1 ALPHA\n 2 beta\n-3 gamma\n+3 GAMMA\n 4 delta"
    );
    assert_eq!(detail(&r, "first_changed_line"), 1);
    assert_eq!(detail(&r, "fuzzy"), false);
    assert!(r.details.as_ref().unwrap().get("fuzzy_edits").is_none());
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!(
        patch,
        "--- g.txt\n+++ g.txt\n@@ -1,4 +1,4 @@\n-alpha\n+ALPHA\n beta\n-gamma\n+GAMMA\n delta\n"
    );
}

#[tokio::test]
async fn display_diff_skips_long_unchanged_runs() {
    let h = Harness::memory();
    let old: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    h.add_file("t.txt", &old);
    let r = h.call("edit", one("t.txt", "l15\n", "L15\n")).await;
    ok_text(&r);
    let expected = [
        "    ...", " 11 l11", " 12 l12", " 13 l13", " 14 l14", "-15 l15", "+15 L15", " 16 l16",
        " 17 l17", " 18 l18", " 19 l19", "    ...",
    ]
    .join("\n");
    assert_eq!(detail(&r, "diff"), expected.as_str());
    assert_eq!(detail(&r, "first_changed_line"), 15);
    let patch = detail(&r, "patch").as_str().unwrap();
    assert!(patch.starts_with("--- t.txt\n+++ t.txt\n@@ -11,9 +11,9 @@\n l11\n"));
    assert_eq!(apply_patch(&old, patch).unwrap(), h.file("t.txt"));
}

#[tokio::test]
async fn display_diff_between_two_changes_far_apart() {
    let h = Harness::memory();
    let old: String = (1..=20).map(|i| format!("l{i}\n")).collect();
    h.add_file("t.txt", &old);
    let r = h
        .call(
            "edit",
            edit(
                "t.txt",
                json!([
                    {"oldText": "l2\n", "newText": "L2\n"},
                    {"oldText": "l13\n", "newText": ""}
                ]),
            ),
        )
        .await;
    ok_text(&r);
    let expected = [
        "  1 l1", "- 2 l2", "+ 2 L2", "  3 l3", "  4 l4", "  5 l5", "  6 l6", "    ...", "  9 l9",
        " 10 l10", " 11 l11", " 12 l12", "-13 l13", " 14 l14", " 15 l15", " 16 l16", " 17 l17",
        "    ...",
    ]
    .join("\n");
    assert_eq!(detail(&r, "diff"), expected.as_str());
    assert_eq!(detail(&r, "first_changed_line"), 2);
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!(apply_patch(&old, patch).unwrap(), h.file("t.txt"));
}

#[tokio::test]
async fn patch_example_without_final_newline() {
    let h = Harness::memory();
    h.add_file("f.txt", "Hello, world!");
    let r = h.call("edit", one("f.txt", "world", "testing")).await;
    ok_text(&r);
    assert_eq!(
        detail(&r, "patch"),
        "--- f.txt\n+++ f.txt\n@@ -1,1 +1,1 @@\n-Hello, world!\n\\ No newline at end of \
         file\n+Hello, testing!\n\\ No newline at end of file\n"
    );
    assert_eq!(detail(&r, "diff"), "-1 Hello, world!\n+1 Hello, testing!");
    assert_eq!(detail(&r, "first_changed_line"), 1);
}

#[tokio::test]
async fn patch_headers_use_the_path_as_sent() {
    let h = Harness::memory();
    h.add_file("src/x.rs", "a\nb\n");
    let r = h.call("edit", one("./src/x.rs", "b\n", "")).await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in src/x.rs.");
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!(
        patch,
        "--- ./src/x.rs\n+++ ./src/x.rs\n@@ -1,2 +1,1 @@\n a\n-b\n"
    );
    assert_eq!(detail(&r, "diff"), " 1 a\n-2 b");
    assert_eq!(detail(&r, "first_changed_line"), 2);
}

#[tokio::test]
async fn deleting_everything_gives_an_empty_file_and_a_zero_range() {
    let h = Harness::memory();
    h.add_file("f.txt", "only");
    let r = h.call("edit", one("f.txt", "only", "")).await;
    ok_text(&r);
    assert_eq!(h.file("f.txt"), "");
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!(
        patch,
        "--- f.txt\n+++ f.txt\n@@ -1,1 +0,0 @@\n-only\n\\ No newline at end of file\n"
    );
    assert_eq!(apply_patch("only", patch).unwrap(), "");
}

#[tokio::test]
async fn first_changed_line_counts_in_the_new_file() {
    let h = Harness::memory();
    h.add_file("f.txt", "a\nb\nc\nd\ne\n");
    let r = h
        .call(
            "edit",
            edit(
                "f.txt",
                json!([
                    {"oldText": "a\nb\n", "newText": "x\n"},
                    {"oldText": "d\n", "newText": "D\n"}
                ]),
            ),
        )
        .await;
    ok_text(&r);
    assert_eq!(h.file("f.txt"), "x\nc\nD\ne\n");
    assert_eq!(detail(&r, "first_changed_line"), 1);
    let h = Harness::memory();
    h.add_file("f.txt", "a\nb\nc\nd\ne\n");
    let r = h.call("edit", one("f.txt", "d\n", "d\nnew\n")).await;
    ok_text(&r);
    assert_eq!(detail(&r, "first_changed_line"), 5);
    assert_eq!(detail(&r, "diff"), " 1 a\n 2 b\n 3 c\n 4 d\n+5 new\n 5 e");
}

// ---------------------------------------------------------------------------
// Line endings and BOM (§edit.3, §edit.7)

#[tokio::test]
async fn bom_and_crlf_are_preserved() {
    let h = Harness::memory();
    h.add_file("w.txt", "\u{FEFF}one\r\ntwo\r\nthree\r\n");
    // oldText with LF matches CRLF content; oldText with CRLF too.
    let r = h
        .call(
            "edit",
            edit(
                "w.txt",
                json!([
                    {"oldText": "one\ntwo", "newText": "1\n2"},
                    {"oldText": "three\r\n", "newText": "3\r\n"}
                ]),
            ),
        )
        .await;
    ok_text(&r);
    assert_eq!(h.bytes("w.txt"), "\u{FEFF}1\r\n2\r\n3\r\n".as_bytes());
    // The diff and patch are of the LF, BOM-free text.
    assert_eq!(
        detail(&r, "diff"),
        "-1 one\n-2 two\n-3 three\n+1 1\n+2 2\n+3 3"
    );
    assert_eq!(detail(&r, "line_ending"), "crlf");
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!(
        apply_patch("one\ntwo\nthree\n", patch).unwrap(),
        "1\n2\n3\n"
    );
}

#[tokio::test]
async fn mixed_line_endings_follow_the_first_line() {
    let h = Harness::memory();
    h.add_file("crlf.txt", "a\r\nb\nc\r\n");
    h.add_file("lf.txt", "a\nb\r\nc\n");
    ok_text(&h.call("edit", one("crlf.txt", "b", "B")).await);
    ok_text(&h.call("edit", one("lf.txt", "b", "B")).await);
    assert_eq!(h.file("crlf.txt"), "a\r\nB\r\nc\r\n");
    assert_eq!(h.file("lf.txt"), "a\nB\nc\n");
}

#[tokio::test]
async fn cr_only_files_become_lf_and_files_without_newline_stay_lf() {
    let h = Harness::memory();
    h.add_file("cr.txt", "a\rb\rc");
    ok_text(&h.call("edit", one("cr.txt", "b", "B")).await);
    assert_eq!(h.file("cr.txt"), "a\nB\nc");
    h.add_file("flat.txt", "\u{FEFF}abc");
    let r = h.call("edit", one("flat.txt", "b", "x\r\ny")).await;
    ok_text(&r);
    assert_eq!(h.file("flat.txt"), "\u{FEFF}ax\nyc");
}

#[tokio::test]
async fn crlf_and_lf_blocks_with_the_same_text_are_duplicates() {
    let h = Harness::memory();
    h.add_file("m.txt", "x\r\ny\nx\ny\n");
    let r = h.call("edit", one("m.txt", "x\ny", "z")).await;
    assert_eq!(
        err_text(&r),
        "Found 2 occurrences of the text in m.txt. The text must be unique. Please provide more \
         context to make it unique. The occurrences start at lines 1 and 3. Extend oldText with \
         neighbouring lines that differ between these places."
    );
    assert_eq!(h.file("m.txt"), "x\r\ny\nx\ny\n");
}

// ---------------------------------------------------------------------------
// Matching (§edit.4, §edit.5)

#[tokio::test]
async fn empty_old_text_is_refused_with_single_and_multi_wording() {
    let h = Harness::memory();
    h.add_file("a.txt", "abc");
    let r = h.call("edit", one("a.txt", "", "x")).await;
    assert_eq!(
        err_text(&r),
        "oldText must not be empty in a.txt. Copy the exact text to replace from the file; to \
         insert new text, use a neighbouring line as oldText and repeat it in newText."
    );
    let r = h
        .call(
            "edit",
            edit(
                "a.txt",
                json!([
                    {"oldText": "zzz", "newText": "y"},
                    {"oldText": "", "newText": "x"}
                ]),
            ),
        )
        .await;
    // Empty oldText is checked for all edits before any matching.
    assert_eq!(
        err_text(&r),
        "edits[1].oldText must not be empty in a.txt. Copy the exact text to replace from the \
         file; to insert new text, use a neighbouring line as oldText and repeat it in newText. \
         None of the 2 edits were applied; fix this one and send all of them again."
    );
    assert_eq!(h.file("a.txt"), "abc");
}

#[tokio::test]
async fn not_found_single_and_multi_wording() {
    let h = Harness::memory();
    h.add_file("a.txt", "alpha\nbeta\n");
    let r = h.call("edit", one("a.txt", "omega", "x")).await;
    assert_eq!(
        err_text(&r),
        "Could not find the exact text in a.txt. The old text must match exactly including all \
         whitespace and newlines. Nothing in a.txt resembles the oldText line \"omega\"; the \
         text may have changed or be in another file. Use read to see the current content of \
         a.txt and copy oldText from it exactly, including indentation."
    );
    let r = h
        .call(
            "edit",
            edit(
                "a.txt",
                json!([
                    {"oldText": "alpha", "newText": "A"},
                    {"oldText": "omega", "newText": "x"}
                ]),
            ),
        )
        .await;
    assert!(err_text(&r).starts_with(
        "Could not find edits[1] in a.txt. The oldText must match exactly including all \
         whitespace and newlines."
    ));
    assert!(
        r.text().ends_with(
            "None of the 2 edits were applied; fix this one and send all of them again."
        )
    );
    assert_eq!(
        r.details,
        Some(json!({"error": "not_found", "edit_index": 1}))
    );
    // All or nothing: edits[0] matched but was not applied.
    assert_eq!(h.file("a.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn not_found_points_at_where_a_multi_line_old_text_diverges() {
    let h = Harness::memory();
    h.add_file(
        "s.rs",
        "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{a}\");\n}\n",
    );
    let r = h
        .call(
            "edit",
            one(
                "s.rs",
                "    let a = 1;\n    let b = 3;\n    println!(\"{a}\");\n",
                "",
            ),
        )
        .await;
    assert_eq!(
        err_text(&r),
        "Could not find the exact text in s.rs. The old text must match exactly including all \
         whitespace and newlines. The closest match starts at line 2 of s.rs: 2 of the 3 \
         oldText lines match there, but oldText line 2 is \"    let b = 3;\" where line 3 of \
         the file is \"    let b = 2;\". Use read to see the current content of s.rs and copy \
         oldText from it exactly, including indentation."
    );
    assert_eq!(
        r.details,
        Some(json!({"error": "not_found", "edit_index": 0, "closest_match_line": 2}))
    );
}

#[tokio::test]
async fn not_found_names_an_indentation_difference() {
    let h = Harness::memory();
    h.add_file("s.py", "def f():\n\treturn 1\n");
    let r = h
        .call("edit", one("s.py", "def f():\n    return 1", "x"))
        .await;
    let text = err_text(&r);
    assert!(
        text.contains(
            "oldText line 2 is \"    return 1\" where line 2 of the file is \"\\treturn 1\". \
             Only the leading whitespace differs: copy the indentation exactly, tabs and spaces \
             included."
        ),
        "{text}"
    );
    let r = h.call("edit", one("s.py", "  return 1", "x")).await;
    let text = err_text(&r);
    assert!(
        text.contains(
            "The closest line is line 2: \"\\treturn 1\" (oldText: \"  return 1\"). Only the \
             leading whitespace differs"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn not_found_suggests_the_most_similar_line() {
    let h = Harness::memory();
    h.add_file("c.txt", "let total = compute(items);\nprint(total)\n");
    let r = h
        .call("edit", one("c.txt", "let totl = compute(item);", "x"))
        .await;
    let text = err_text(&r);
    assert!(
        text.contains(
            "No line of c.txt contains the oldText line \"let totl = compute(item);\"; the most \
             similar is line 1: \"let total = compute(items);\"."
        ),
        "{text}"
    );
}

#[tokio::test]
async fn not_found_detects_escaped_newlines() {
    let h = Harness::memory();
    h.add_file("e.txt", "one\ntwo\n");
    let r = h.call("edit", one("e.txt", "one\\ntwo", "x")).await;
    assert!(
        err_text(&r).contains(
            "oldText contains the characters \\n or \\t written as escape sequences; it matches \
             when they are real line breaks and tabs"
        ),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn duplicates_give_the_count_and_lines() {
    let h = Harness::memory();
    h.add_file("d.txt", "x = 1\ny\nx = 1\nz\nx = 1\n");
    let r = h
        .call(
            "edit",
            edit(
                "d.txt",
                json!([
                    {"oldText": "y", "newText": "Y"},
                    {"oldText": "x = 1", "newText": "x = 2"}
                ]),
            ),
        )
        .await;
    assert_eq!(
        err_text(&r),
        "Found 3 occurrences of edits[1] in d.txt. Each oldText must be unique. Please provide \
         more context to make it unique. The occurrences start at lines 1, 3 and 5. Extend \
         oldText with neighbouring lines that differ between these places. None of the 2 edits \
         were applied; fix this one and send all of them again."
    );
    assert_eq!(
        r.details,
        Some(json!({"error": "duplicate", "edit_index": 1, "occurrences": 3, "lines": [1, 3, 5]}))
    );
    let many: String = (0..15).map(|_| "dup\n").collect();
    h.add_file("many.txt", many);
    let r = h.call("edit", one("many.txt", "dup", "x")).await;
    assert!(
        err_text(&r)
            .contains("The occurrences start at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 5 more."),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn uniqueness_is_counted_in_fuzzy_space_without_overlaps() {
    let h = Harness::memory();
    h.add_file("f.txt", "foo  \nfoo\n");
    let r = h.call("edit", one("f.txt", "foo\n", "bar\n")).await;
    assert!(
        err_text(&r).starts_with("Found 2 occurrences of the text in f.txt."),
        "{}",
        r.text()
    );
    h.add_file("a.txt", "aaa");
    let r = h.call("edit", one("a.txt", "aa", "x")).await;
    ok_text(&r);
    assert_eq!(h.file("a.txt"), "xa");
}

#[tokio::test]
async fn whitespace_only_old_text_cannot_be_unique() {
    let h = Harness::memory();
    h.add_file("w.txt", "a  b\n");
    let r = h.call("edit", one("w.txt", "  ", " ")).await;
    assert_eq!(
        err_text(&r),
        "oldText is only spaces or tabs, which cannot identify a unique place in w.txt \
         (trailing whitespace is ignored when counting occurrences). Include the text around \
         it, e.g. the whole line, in oldText and newText."
    );
    assert_eq!(h.file("w.txt"), "a  b\n");
}

#[tokio::test]
async fn overlapping_edits_name_both_indices_in_position_order() {
    let h = Harness::memory();
    h.add_file("o.txt", "abcdef\nline2\n");
    let r = h
        .call(
            "edit",
            edit(
                "o.txt",
                json!([
                    {"oldText": "cdef\nline2", "newText": "X"},
                    {"oldText": "abc", "newText": "Y"}
                ]),
            ),
        )
        .await;
    assert_eq!(
        err_text(&r),
        "edits[1] and edits[0] overlap in o.txt. Merge them into one edit or target disjoint \
         regions. (edits[1] matches line 1, edits[0] matches lines 1-2.) None of the 2 edits \
         were applied; fix this one and send all of them again."
    );
    assert_eq!(
        r.details,
        Some(json!({"error": "overlap", "edit_indices": [1, 0]}))
    );
    assert_eq!(h.file("o.txt"), "abcdef\nline2\n");
}

#[tokio::test]
async fn touching_edits_are_allowed() {
    let h = Harness::memory();
    h.add_file("t.txt", "ab");
    let r = h
        .call(
            "edit",
            edit(
                "t.txt",
                json!([{"oldText": "a", "newText": "A"}, {"oldText": "b", "newText": "B"}]),
            ),
        )
        .await;
    ok_text(&r);
    assert_eq!(h.file("t.txt"), "AB");
}

#[tokio::test]
async fn edits_match_the_original_not_each_other() {
    let h = Harness::memory();
    h.add_file("t.txt", "a b\n");
    let r = h
        .call(
            "edit",
            edit(
                "t.txt",
                json!([{"oldText": "a", "newText": "b"}, {"oldText": "b", "newText": "c"}]),
            ),
        )
        .await;
    ok_text(&r);
    assert_eq!(h.file("t.txt"), "b c\n");
}

#[test]
fn errors_come_in_pis_order() {
    let req = |old: &str, new: &str| EditRequest {
        old_text: old.to_owned(),
        new_text: new.to_owned(),
    };
    let content = "dup\ndup\nabc\n";
    // Per edit in input order: edits[0]'s duplicate before edits[1]'s miss.
    assert!(matches!(
        apply_edits(content, &[req("dup", "x"), req("zzz", "y")]),
        Err(MatchError::Duplicate {
            index: 0,
            count: 2,
            ..
        })
    ));
    assert!(matches!(
        apply_edits(content, &[req("zzz", "y"), req("dup", "x")]),
        Err(MatchError::NotFound { index: 0, .. })
    ));
    // Not found before overlap.
    assert!(matches!(
        apply_edits(content, &[req("ab", "x"), req("bc", "y"), req("zzz", "q")]),
        Err(MatchError::NotFound { index: 2, .. })
    ));
    // Overlap before no-change.
    assert!(matches!(
        apply_edits(content, &[req("ab", "ab"), req("bc", "bc")]),
        Err(MatchError::Overlap {
            first: 0,
            second: 1,
            ..
        })
    ));
    // Empty before everything, even a miss in an earlier edit.
    assert_eq!(
        apply_edits(content, &[req("zzz", "y"), req("dup", "x"), req("", "z")]),
        Err(MatchError::EmptyOldText { index: 2 })
    );
    assert_eq!(
        apply_edits(content, &[req("abc", "abc")]),
        Err(MatchError::NoChange)
    );
}

#[tokio::test]
async fn no_change_errors_single_and_multi() {
    let h = Harness::memory();
    h.add_file("n.txt", "same\nother\n");
    let r = h.call("edit", one("n.txt", "same", "same")).await;
    assert_eq!(
        err_text(&r),
        "No changes made to n.txt. The replacement produced identical content. This might \
         indicate an issue with special characters or the text not existing as expected. Make \
         newText differ from oldText, or skip the edit if the file already says what you want."
    );
    let r = h
        .call(
            "edit",
            edit(
                "n.txt",
                json!([
                    {"oldText": "same", "newText": "same"},
                    {"oldText": "other", "newText": "other"}
                ]),
            ),
        )
        .await;
    assert_eq!(
        err_text(&r),
        "No changes made to n.txt. The replacements produced identical content. Make each \
         newText differ from its oldText, or skip the edit if the file already says what you \
         want."
    );
}

// ---------------------------------------------------------------------------
// Fuzzy matching and write-back (§edit.5, §edit.6)

#[tokio::test]
async fn fuzzy_example_smart_quotes_and_trailing_spaces() {
    let h = Harness::memory();
    h.add_file("q.py", "x = \u{201C}hi\u{201D}  \ny = 1\n");
    let r = h
        .call("edit", one("q.py", "x = \"hi\"", "x = \"yo\""))
        .await;
    ok_text(&r);
    assert_eq!(h.file("q.py"), "x = \"yo\"\ny = 1\n");
    assert_eq!(detail(&r, "fuzzy"), true);
    assert_eq!(detail(&r, "fuzzy_edits"), &json!([0]));
}

#[tokio::test]
async fn fuzzy_example_untouched_lines_keep_their_bytes() {
    let h = Harness::memory();
    h.add_file("r.txt", "replace me   \nafter   \n");
    let r = h
        .call("edit", one("r.txt", "replace me\n", "after\n"))
        .await;
    ok_text(&r);
    assert_eq!(h.file("r.txt"), "after\nafter   \n");
}

#[tokio::test]
async fn fuzzy_example_nfkc_full_width_punctuation() {
    let h = Harness::memory();
    h.add_file("z.txt", "你好，世界\n你好（世界）\n");
    let r = h
        .call(
            "edit",
            one("z.txt", "你好,世界\n你好(世界)\n", "你好，pi\n你好(pi)\n"),
        )
        .await;
    ok_text(&r);
    assert_eq!(h.file("z.txt"), "你好，pi\n你好(pi)\n");
}

#[tokio::test]
async fn one_fuzzy_edit_moves_every_edit_to_normalised_lines() {
    let h = Harness::memory();
    h.add_file(
        "m.txt",
        "a = 1   \nb = \u{2018}q\u{2019}\nc = 3   \nd = 4\u{2014}5  \n",
    );
    let r = h
        .call(
            "edit",
            edit(
                "m.txt",
                json!([
                    {"oldText": "a = 1", "newText": "a = 10"},
                    {"oldText": "b = 'q'", "newText": "b = \u{2018}r\u{2019}"}
                ]),
            ),
        )
        .await;
    ok_text(&r);
    // Line 1 matched exactly but is rewritten from the normalised text
    // (its trailing spaces go); newText is inserted verbatim; lines 3-4
    // were not touched and keep their bytes.
    assert_eq!(
        h.file("m.txt"),
        "a = 10\nb = \u{2018}r\u{2019}\nc = 3   \nd = 4\u{2014}5  \n"
    );
    assert_eq!(detail(&r, "fuzzy_edits"), &json!([1]));
}

#[tokio::test]
async fn fuzzy_dashes_spaces_and_trailing_whitespace_in_old_text() {
    let h = Harness::memory();
    h.add_file("d.txt", "range 1\u{2013}5\u{00A0}items\nkeep\u{3000}\n");
    let r = h
        .call(
            "edit",
            one("d.txt", "range 1-5 items  \n", "range 1-6 items\n"),
        )
        .await;
    ok_text(&r);
    assert_eq!(h.file("d.txt"), "range 1-6 items\nkeep\u{3000}\n");
}

#[tokio::test]
async fn fuzzy_edit_in_a_bom_crlf_file() {
    let h = Harness::memory();
    h.add_file("b.txt", "\u{FEFF}say \u{201C}hi\u{201D} \r\nnext \r\n");
    let r = h
        .call("edit", one("b.txt", "say \"hi\"", "say \"bye\""))
        .await;
    ok_text(&r);
    assert_eq!(
        h.bytes("b.txt"),
        "\u{FEFF}say \"bye\"\r\nnext \r\n".as_bytes()
    );
}

#[test]
fn fuzzy_normalisation_steps() {
    assert_eq!(fuzzy_normalize("plain\ntext"), "plain\ntext");
    assert!(matches!(
        fuzzy_normalize("plain\ntext"),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(fuzzy_normalize("a  \t\nb \u{3000}\n"), "a\nb\n");
    assert_eq!(
        fuzzy_normalize("\u{2018}a\u{2019} \u{201C}b\u{201D} \u{201E}c\u{201F} \u{201A}\u{201B}"),
        "'a' \"b\" \"c\" ''"
    );
    assert_eq!(
        fuzzy_normalize("1\u{2010}2\u{2011}3\u{2012}4\u{2013}5\u{2014}6\u{2015}7\u{2212}8"),
        "1-2-3-4-5-6-7-8"
    );
    assert_eq!(
        fuzzy_normalize("a\u{00A0}b\u{2002}c\u{200A}d\u{202F}e\u{205F}f\u{3000}g"),
        "a b c d e f g"
    );
    // NFKC: full-width forms, composition, ligatures.
    assert_eq!(fuzzy_normalize("ＡＢＣ１２３（）"), "ABC123()");
    assert_eq!(fuzzy_normalize("e\u{0301}"), "\u{00E9}");
    assert_eq!(fuzzy_normalize("\u{FB01}le"), "file");
    // Leading indentation is kept; the line count never changes.
    assert_eq!(fuzzy_normalize("\t  x  \n  \n"), "\t  x\n\n");
    // JavaScript's trimEnd also removes U+FEFF at a line end.
    assert_eq!(fuzzy_normalize("x\u{FEFF}\ny"), "x\ny");
}

#[test]
fn line_ending_normalisation() {
    assert_eq!(to_lf("a\r\nb\rc\n\r\r\n"), "a\nb\nc\n\n\n");
    assert!(matches!(to_lf("a\nb"), std::borrow::Cow::Borrowed(_)));
}

// ---------------------------------------------------------------------------
// Files: paths, symlinks, errors (§edit.3, §edit.8, D1, D6)

#[tokio::test]
async fn symlinked_file_writes_the_target_and_keeps_the_link() {
    let h = Harness::local();
    h.add_file("real.txt", "old value\n");
    h.add_symlink("link.txt", "real.txt");
    let r = h.call("edit", one("link.txt", "old", "new")).await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in link.txt.");
    assert_eq!(h.file("real.txt"), "new value\n");
    let meta = disk::symlink_metadata(h.root().join("link.txt")).unwrap();
    assert_eq!(meta.kind, crate::tools::ops::FileKind::Symlink);
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let h = Harness::local();
    let r = h.call("edit", one("../outside.txt", "a", "b")).await;
    assert!(
        err_text(&r).starts_with("Path \"../outside.txt\" is outside the workspace"),
        "{}",
        r.text()
    );
    let r = h.call("edit", one("/etc/hostname", "a", "b")).await;
    assert!(err_text(&r).starts_with("Path \"/etc/hostname\" is outside the workspace"));
}

#[tokio::test]
async fn missing_file_suggests_close_names() {
    let h = Harness::memory();
    h.add_file("src/main.rs", "fn main() {}\n");
    let r = h.call("edit", one("src/mian.rs", "a", "b")).await;
    assert_eq!(
        err_text(&r),
        "File not found: src/mian.rs. Did you mean src/main.rs? To create a new file, use write."
    );
    let r = h.call("edit", one("nothing/like/it.py", "a", "b")).await;
    assert_eq!(
        err_text(&r),
        "File not found: nothing/like/it.py. No similar name exists there; use the find tool \
         (pattern \"**/it.py\") or ls to locate it. To create a new file, use write."
    );
}

#[tokio::test]
async fn permission_denied_for_reading_and_writing() {
    let h = Harness::memory();
    h.add_file_with_mode("ro.txt", "abc", 0o444);
    h.add_file_with_mode("secret.txt", "abc", 0o200);
    let r = h.call("edit", one("ro.txt", "b", "x")).await;
    assert_eq!(
        err_text(&r),
        "Permission denied: cannot write ro.txt. Check its permissions with bash (ls -l) or use \
         another file."
    );
    assert_eq!(h.file("ro.txt"), "abc");
    let r = h.call("edit", one("secret.txt", "b", "x")).await;
    assert_eq!(
        err_text(&r),
        "Permission denied: cannot read secret.txt. Check its permissions with bash (ls -l) or \
         use another file."
    );
}

#[tokio::test]
async fn directories_are_refused() {
    let h = Harness::memory();
    h.add_file("src/main.rs", "");
    let r = h.call("edit", one("src", "a", "b")).await;
    assert_eq!(
        err_text(&r),
        "Cannot edit src: it is a directory. Give the path of a file inside it."
    );
}

#[tokio::test]
async fn invalid_utf8_and_binary_files_are_refused_untouched() {
    let h = Harness::memory();
    let latin1 = b"caf\xE9\nline two\n".to_vec();
    h.add_file("l1.txt", &latin1);
    let r = h.call("edit", one("l1.txt", "line", "LINE")).await;
    assert_eq!(
        err_text(&r),
        "Cannot edit l1.txt: it is not valid UTF-8 (the first invalid byte is on line 1, at byte \
         offset 3); it may use another encoding such as Latin-1. Editing it as text would \
         replace those bytes, so nothing was changed. Convert it first (e.g. with bash: iconv -f \
         latin1 -t utf-8) or change it with bash."
    );
    assert_eq!(h.bytes("l1.txt"), latin1);
    let elf = b"\x7fELF\x02\x01\x01\0\0\0\xff\xfe".to_vec();
    h.add_file("prog", &elf);
    let r = h.call("edit", one("prog", "ELF", "FLE")).await;
    assert_eq!(
        err_text(&r),
        "Cannot edit prog: it is a binary file (ELF executable, 12B), and edit only changes \
         UTF-8 text. To inspect it, use bash, e.g. `file prog`."
    );
    assert_eq!(h.bytes("prog"), elf);
    // NUL bytes in valid UTF-8 round-trip untouched, so they are edited.
    h.add_file("nul.txt", "a\0b\nc\n");
    ok_text(&h.call("edit", one("nul.txt", "c", "C")).await);
    assert_eq!(h.bytes("nul.txt"), b"a\0b\nC\n");
}

#[tokio::test]
async fn same_file_edits_in_one_batch_apply_in_call_order() {
    let h = Harness::memory();
    h.add_file("f.txt", "v1\n");
    let first = h.prepare("edit", one("f.txt", "v1", "v2"));
    let second = h.prepare("edit", one("./f.txt", "v2", "v3"));
    let third = h.prepare("write", json!({"path": "f.txt", "content": "w\nv3\n"}));
    let fourth = h.prepare("edit", one("f.txt", "w\n", ""));
    // Start them in reverse order: the queue still applies them in call order.
    let d = tokio::spawn(fourth.execute(CancellationToken::new(), UpdateSink::discard()));
    let c = tokio::spawn(third.execute(CancellationToken::new(), UpdateSink::discard()));
    let b = tokio::spawn(second.execute(CancellationToken::new(), UpdateSink::discard()));
    tokio::task::yield_now().await;
    let a = tokio::spawn(first.execute(CancellationToken::new(), UpdateSink::discard()));
    for task in [a, b, c, d] {
        let r = task.await.unwrap();
        assert!(!r.is_error, "{}", r.text());
    }
    assert_eq!(h.file("f.txt"), "v3\n");
}

#[tokio::test]
async fn cancelled_call_changes_nothing() {
    let h = Harness::memory();
    h.add_file("f.txt", "abc\n");
    let call = h.prepare("edit", one("f.txt", "abc", "xyz"));
    let token = CancellationToken::new();
    token.cancel();
    let r = call.execute(token, UpdateSink::discard()).await;
    assert_eq!(err_text(&r), crate::tools::error::CANCELLED_MESSAGE);
    assert_eq!(h.file("f.txt"), "abc\n");
}

#[tokio::test]
async fn unknown_fields_are_ignored_and_listed() {
    let h = Harness::memory();
    h.add_file("f.txt", "abc\n");
    let r = h
        .call(
            "edit",
            json!({"path": "f.txt", "why": "x", "edits": [{"oldText": "a", "newText": "A", "n": 1}]}),
        )
        .await;
    ok_text(&r);
    assert_eq!(detail(&r, "ignored_fields"), &json!(["/why", "/edits/0/n"]));
}

// ---------------------------------------------------------------------------
// Scale and properties

#[tokio::test]
async fn ten_megabytes_with_fifty_edits_applies_every_edit() {
    let h = Harness::memory();
    let mut content = String::with_capacity(10_500_000);
    let mut i = 0;
    while content.len() < 10_000_000 {
        content.push_str(&format!(
            "line {i:07} some ordinary source text here, nothing more\n"
        ));
        i += 1;
    }
    let total_lines = i;
    h.add_file("big.txt", &content);
    let edits: Vec<Value> = (0..50)
        .map(|k| {
            let n = k * (total_lines / 50) + 7;
            json!({"oldText": format!("line {n:07} "), "newText": format!("LINE {n:07} ")})
        })
        .collect();
    // Speed is measured by the `edit` criterion bench; this checks the result.
    let r = h.call("edit", edit("big.txt", json!(edits))).await;
    assert_eq!(ok_text(&r), "Successfully replaced 50 block(s) in big.txt.");
    assert_eq!(detail(&r, "first_changed_line"), 8);
    let written = h.file("big.txt");
    assert_eq!(written.matches("LINE ").count(), 50);
    assert_eq!(written.len(), content.len());
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!(apply_patch(&content, patch).unwrap(), h.file("big.txt"));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("  ".to_owned()),
            "[a-c]{1,3}",
            "[a-c \u{201C}\u{2013}]{1,4}",
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        (prop::collection::vec(line(), 0..12), any::<bool>()).prop_map(|(lines, final_nl)| {
            let mut text = lines.join("\n");
            if final_nl && !text.is_empty() {
                text.push('\n');
            }
            text
        })
    }

    proptest! {
        #![proptest_config(crate::tools::testutil::cases(512))]

        #[test]
        fn fuzzy_normalisation_is_idempotent_and_keeps_line_count(t in text()) {
            let once = fuzzy_normalize(&t).into_owned();
            let twice = fuzzy_normalize(&once);
            prop_assert_eq!(twice.as_ref(), once.as_str());
            prop_assert_eq!(once.matches('\n').count(), t.matches('\n').count());
        }

        #[test]
        fn successful_edits_give_a_patch_that_applies(
            old in text(),
            picks in prop::collection::vec((0usize..40, 1usize..6, text(), any::<bool>()), 1..4),
        ) {
            // Edits cut from the file itself, or from its normalised view
            // (which sends the call into fuzzy space).
            let view = fuzzy_normalize(&old).into_owned();
            prop_assume!(!old.is_empty() && !view.is_empty());
            let requests: Vec<EditRequest> = picks
                .iter()
                .map(|(start, len, new, from_view)| {
                    let source = if *from_view { &view } else { &old };
                    let chars: Vec<(usize, char)> = source.char_indices().collect();
                    let a = chars[start % chars.len()].0;
                    let b = chars.get(start % chars.len() + len).map_or(source.len(), |c| c.0);
                    EditRequest { old_text: source[a..b].to_owned(), new_text: new.clone() }
                })
                .collect();
            if let Ok(applied) = apply_edits(&old, &requests) {
                let diffs = crate::tools::edit::diff::diffs(
                    "p.txt", &old, &applied.content, Some(&applied.changes));
                let patched = apply_patch(&old, &diffs.patch);
                prop_assert_eq!(patched, Ok(applied.content.clone()), "patch:\n{}", diffs.patch);
                // The changes describe the texts exactly.
                let mut rebuilt = String::new();
                let mut cursor = 0;
                for change in &applied.changes {
                    rebuilt.push_str(&old[cursor..change.old.start]);
                    rebuilt.push_str(&applied.content[change.new.clone()]);
                    cursor = change.old.end;
                }
                rebuilt.push_str(&old[cursor..]);
                prop_assert_eq!(&rebuilt, &applied.content);
                let whole = crate::tools::edit::diff::diffs("p.txt", &old, &applied.content, None);
                prop_assert_eq!(apply_patch(&old, &whole.patch), Ok(applied.content.clone()));
                prop_assert!(diffs.first_changed_line.is_some());
                prop_assert!(!diffs.diff.is_empty());
                prop_assert!(applied.content != old);
                if applied.fuzzy {
                    // Lines outside the changes keep their original bytes.
                    for change in &applied.changes {
                        prop_assert!(change.old.start == 0 || old.as_bytes()[change.old.start - 1] == b'\n');
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn a_huge_replacement_gives_bounded_diffs_that_say_they_were_cut() {
    use crate::tools::edit::diff::MAX_DIFF_BYTES;
    let h = Harness::memory();
    h.add_file("f.txt", "keep\nold\nkeep too\n");
    // 2 MB of new lines: the file gets all of it, details only the start.
    let big: String = (0..200_000).map(|i| format!("line {i:05}\n")).collect();
    let r = h.call("edit", one("f.txt", "old\n", &big)).await;
    assert_eq!(ok_text(&r), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(h.file("f.txt"), format!("keep\n{big}keep too\n"));
    let diff = detail(&r, "diff").as_str().unwrap();
    let patch = detail(&r, "patch").as_str().unwrap();
    assert_eq!((diff.len(), patch.len()), (MAX_DIFF_BYTES, MAX_DIFF_BYTES));
    assert!(
        diff.starts_with("      1 keep\n-     2 old\n+     2 line 00000\n+     3 line 00001\n"),
        "{}",
        &diff[..100]
    );
    assert!(
        patch.starts_with("--- f.txt\n+++ f.txt\n@@ -1,3 +1,200002 @@\n keep\n-old\n+line 00000\n"),
        "{}",
        &patch[..100]
    );
    assert_eq!(detail(&r, "diff_truncated"), &json!(true));
    assert_eq!(detail(&r, "patch_truncated"), &json!(true));
    assert_eq!(detail(&r, "first_changed_line"), &json!(2));
}

#[tokio::test]
async fn a_small_change_on_a_huge_line_gives_bounded_diffs() {
    use crate::tools::edit::diff::MAX_DIFF_BYTES;
    let h = Harness::memory();
    let line = format!("abc{}\n", "y".repeat(3 * MAX_DIFF_BYTES));
    h.add_file("one.txt", &line);
    let r = h.call("edit", one("one.txt", "abc", "abcdef")).await;
    ok_text(&r);
    let diff = detail(&r, "diff").as_str().unwrap();
    assert_eq!(diff.len(), MAX_DIFF_BYTES);
    assert!(diff.starts_with("-1 abcyyy"), "{}", &diff[..20]);
    assert_eq!(detail(&r, "diff_truncated"), &json!(true));
    assert_eq!(detail(&r, "patch_truncated"), &json!(true));
    // Small diffs are whole and carry no flags.
    h.add_file("small.txt", "a\nb\n");
    let r = h.call("edit", one("small.txt", "b", "c")).await;
    let details = r.details.unwrap();
    assert_eq!(details.get("diff_truncated"), None);
    assert_eq!(details.get("patch_truncated"), None);
}

/// Found by replaying recorded sessions: a line inserted in the file
/// inside the block the model copied shifted the hint to a window where
/// almost nothing matched. The hint now names the window most lines agree
/// on and the first line that really differs there.
#[tokio::test]
async fn not_found_hint_survives_a_line_inserted_inside_the_block() {
    let h = Harness::memory();
    h.add_file(
        "m.ts",
        "import x from 'x';\n\
         export function total(items: Item[]): number {\n\
         \x20 let sum = 0;\n\
         \x20 // inserted since the model read the file\n\
         \x20 for (const item of items) {\n\
         \x20   sum += item.price * item.quantity + item.shippingCostForThisParticularItem;\n\
         \x20 }\n\
         \x20 return sum;\n\
         }\n",
    );
    let old = "export function total(items: Item[]): number {\n\
               \x20 let sum = 0;\n\
               \x20 for (const item of items) {\n\
               \x20   sum += item.price * item.quantity + item.shippingCostForThisParticularItem;\n\
               \x20 }\n\
               \x20 return sum;\n\
               }\n";
    let r = h.call("edit", one("m.ts", old, "")).await;
    assert_eq!(
        err_text(&r),
        "Could not find the exact text in m.ts. The old text must match exactly including all \
         whitespace and newlines. The closest match starts at line 2 of m.ts: 5 of the 7 \
         oldText lines match there, but oldText line 2 is \"  let sum = 0;\" where line 4 of \
         the file is \"  // inserted since the model read the file\". Use read to see the \
         current content of m.ts and copy oldText \
         from it exactly, including indentation."
    );
}

/// Issue 14 audit: with a line inserted inside the block, the hint named
/// the line after the block's first one ("starts at line 14" for a block
/// at line 13), in the message and in `closest_match_line`; a decoy copy
/// of the most distinctive line elsewhere in the file must not draw the
/// hint either (the hint before 6cb4d2a aligned windows on that line only).
#[tokio::test]
async fn not_found_hint_names_the_line_the_block_starts_on_despite_a_decoy() {
    let h = Harness::memory();
    let anchor =
        "  const theMostDistinctiveAnchorLineInThisWholeBlockIsThisOne = compute(item, 7) + extra;";
    let values = |range: std::ops::RangeInclusive<u32>| -> String {
        range
            .map(|i| format!("  const value{i} = compute(item, {i});\n"))
            .collect()
    };
    let decoy = format!(
        "// header\n{}{anchor}\n// filler\n// filler\n",
        values(1..=8)
    );
    let block = |inserted: &str| {
        format!(
            "function f(item) {{\n{}{inserted}{}{anchor}\n{}}}\n",
            values(1..=3),
            values(4..=6),
            values(8..=12)
        )
    };
    let content = format!(
        "{decoy}{}// trailer\n",
        block("  // a line inserted above the anchor\n")
    );
    h.add_file("c.js", &content);
    let block_line = decoy.lines().count() + 1;
    assert_eq!(
        content.lines().nth(block_line - 1),
        Some("function f(item) {")
    );
    let r = h.call("edit", one("c.js", &block(""), "x")).await;
    assert_eq!(
        err_text(&r),
        format!(
            "Could not find the exact text in c.js. The old text must match exactly including all \
             whitespace and newlines. The closest match starts at line {block_line} of c.js: 10 \
             of the 14 oldText lines match there, but oldText line 4 is \"  const value3 = \
             compute(item, 3);\" where line {} of the file is \"  // a line inserted above the \
             anchor\". Use read to see the current content of c.js and copy oldText from it \
             exactly, including indentation.",
            block_line + 4
        )
    );
    assert_eq!(
        r.details,
        Some(json!({"error": "not_found", "edit_index": 0, "closest_match_line": block_line}))
    );
}

/// When no window comes close, the hint says so instead of naming one.
#[tokio::test]
async fn not_found_says_when_nothing_is_close() {
    let h = Harness::memory();
    h.add_file("n.txt", "alpha one\nbeta two\ngamma three\ndelta four\n");
    let old = "alpha one\nsomething else\nentirely different\nnot here at all\n";
    let r = h.call("edit", one("n.txt", old, "")).await;
    assert_eq!(
        err_text(&r),
        "Could not find the exact text in n.txt. The old text must match exactly including all \
         whitespace and newlines. No place in n.txt comes close to the oldText: at most 1 of its \
         4 lines match in any one place, so the text may have changed or be in another file. \
         Use read to see the current content of n.txt and copy oldText from it exactly, \
         including indentation."
    );
    assert_eq!(
        r.details,
        Some(json!({"error": "not_found", "edit_index": 0}))
    );
}
