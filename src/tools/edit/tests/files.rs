//! Files: paths, symlinks, errors (§edit.3, §edit.8, D1, D6).

use pretty_assertions::assert_eq;

use super::*;

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
