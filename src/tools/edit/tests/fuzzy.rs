//! Fuzzy matching and write-back (§edit.5, §edit.6).

use pretty_assertions::assert_eq;

use super::*;

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
