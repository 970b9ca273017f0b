//! Success output: text, diff, patch, first_changed_line (§edit.7, §edit.9).

use pretty_assertions::assert_eq;

use super::*;

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
