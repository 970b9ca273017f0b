//! Matching (§edit.4, §edit.5), and the hints of a failed match.

use pretty_assertions::assert_eq;

use super::*;

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
