//! Line endings and BOM (§edit.3, §edit.7).

use pretty_assertions::assert_eq;

use super::*;

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
