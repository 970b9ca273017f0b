//! Scale and properties.

use pretty_assertions::assert_eq;

use super::*;

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
