use std::cmp::Ordering;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tools::Limits;
use crate::tools::UpdateSink;
use crate::tools::testutil::Harness;

async fn ls(h: &Harness, args: Value) -> (String, Value) {
    let r = h.call("ls", args).await;
    assert!(!r.is_error, "unexpected error: {}", r.text());
    (r.text(), r.details.unwrap_or(Value::Null))
}

async fn ls_error(h: &Harness, args: Value) -> String {
    let r = h.call("ls", args).await;
    assert!(r.is_error, "expected an error, got: {}", r.text());
    r.text()
}

#[tokio::test]
async fn sorts_case_insensitively_with_byte_order_ties() {
    // The names of §ls.2.3, in D19's order.
    let h = Harness::local();
    let names = [
        "_x",
        "-y",
        ".hidden",
        "@y",
        "#x",
        "~tmp",
        "10.txt",
        "9.txt",
        "a_b",
        "a-b",
        "a.b",
        "A.txt",
        "a.txt",
        "ab",
        "b.txt",
        "e.txt",
        "é.txt",
        "f.txt",
        "README.md",
        "Zeta",
        "zeta",
    ];
    for name in names {
        h.add_file(name, "");
    }
    h.add_dir("node_modules");
    let (text, details) = ls(&h, json!({})).await;
    assert_eq!(
        text,
        "#x\n-y\n.hidden\n10.txt\n9.txt\n@y\n_x\na-b\na.b\nA.txt\na.txt\na_b\nab\nb.txt\ne.txt\n\
         f.txt\nnode_modules/\nREADME.md\nZeta\nzeta\n~tmp\né.txt"
    );
    assert_eq!(details, json!({"entries": 22}));
}

#[tokio::test]
async fn empty_directory() {
    let h = Harness::memory();
    h.add_dir("empty");
    let (text, details) = ls(&h, json!({"path": "empty"})).await;
    assert_eq!(text, "(empty directory)");
    assert_eq!(details, json!({"entries": 0}));
}

#[tokio::test]
async fn directories_and_symlinks_to_directories_get_a_slash() {
    let h = Harness::local();
    h.add_file("real/a.txt", "");
    h.add_file("file.txt", "");
    h.add_symlink("link-dir", "real");
    h.add_symlink("link-file", "file.txt");
    h.add_symlink("broken", "nowhere");
    let (text, details) = ls(&h, json!({"path": "."})).await;
    assert_eq!(text, "broken\nfile.txt\nlink-dir/\nlink-file\nreal/");
    assert_eq!(details, json!({"entries": 5, "unresolved_symlinks": 1}));
}

#[tokio::test]
async fn a_symlinked_directory_can_be_listed() {
    let h = Harness::memory();
    h.add_file("real/inner/x.txt", "");
    h.add_symlink("link", "real");
    let (text, _) = ls(&h, json!({"path": "link"})).await;
    assert_eq!(text, "inner/");
}

#[tokio::test]
async fn limit_notice_only_when_more_entries_remain() {
    let h = Harness::memory();
    for name in ["a", "b", "c"] {
        h.add_file(name, "");
    }
    let (text, details) = ls(&h, json!({"limit": 3})).await;
    assert_eq!(text, "a\nb\nc");
    assert_eq!(details, json!({"entries": 3}));
    let (text, details) = ls(&h, json!({"limit": 2})).await;
    assert_eq!(
        text,
        "a\nb\n\n[2 entries limit reached (3 entries). Use limit=4 for more]"
    );
    assert_eq!(details["entry_limit_reached"], 2);
    // The smallest limit (0 and below are refused: registry tests).
    let (text, _) = ls(&h, json!({"limit": 1})).await;
    assert_eq!(
        text,
        "a\n\n[1 entries limit reached (3 entries). Use limit=2 for more]"
    );
}

#[tokio::test]
async fn default_limit_comes_from_the_limits() {
    let h = Harness::memory_with(Limits {
        ls_limit: 1,
        ..Limits::default()
    });
    h.add_file("a", "");
    h.add_file("b", "");
    let (text, _) = ls(&h, json!({})).await;
    assert_eq!(
        text,
        "a\n\n[1 entries limit reached (2 entries). Use limit=2 for more]"
    );
}

#[tokio::test]
async fn output_is_cut_at_the_byte_cap() {
    let h = Harness::memory();
    let names: Vec<String> = (0..1500)
        .map(|i| format!("{i:04}{}", "n".repeat(60)))
        .collect();
    for name in &names {
        h.add_file(name, "");
    }
    let (text, details) = ls(&h, json!({"limit": 2000})).await;
    let per_line = names[0].len() + 1;
    let kept = (51200 + 1) / per_line;
    assert_eq!(
        text,
        format!(
            "{}\n\n[50.0KB output limit reached: showing {kept} of 1500 entries. Use find with \
             a pattern, or ls a subdirectory, to see the rest]",
            names[..kept].join("\n")
        )
    );
    assert_eq!(details["truncation"]["truncated_by"], "bytes");
    assert_eq!(details.get("entry_limit_reached"), None);
}

#[tokio::test]
async fn errors_for_missing_paths_files_and_outside_paths() {
    let h = Harness::memory();
    h.add_file("src/main.rs", "");
    let err = ls_error(&h, json!({"path": "scr"})).await;
    assert_eq!(err, "Path not found: scr. Did you mean src?");
    let err = ls_error(&h, json!({"path": "nothing-like-it"})).await;
    assert_eq!(
        err,
        "Path not found: nothing-like-it. No similar name exists there; use the find tool \
         (pattern \"**/nothing-like-it\") or ls to locate it."
    );
    let err = ls_error(&h, json!({"path": "src/main.rs"})).await;
    assert_eq!(
        err,
        "Not a directory: src/main.rs. Use read to view a file; ls lists directories."
    );
    let err = ls_error(&h, json!({"path": "../"})).await;
    assert!(err.contains("is outside the workspace"), "{err}");
}

#[tokio::test]
async fn a_cancelled_call_returns_the_cancelled_error() {
    let h = Harness::memory();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = ToolContext {
        call_id: "c".into(),
        workspace: h.registry.workspace().clone(),
        limits: Limits::default(),
        cancel,
        updates: UpdateSink::discard(),
    };
    let args = LsArgs {
        path: None,
        limit: None,
    };
    assert_eq!(
        LsTool.execute(args, ctx).await.unwrap_err(),
        ToolError::cancelled()
    );
}

#[test]
fn order_helper_and_spec_numbers() {
    assert_eq!(compare_names(b"A.txt", b"a.txt"), Ordering::Less);
    assert_eq!(compare_names(b"b", b"A"), Ordering::Greater);
    assert_eq!(compare_names(b"same", b"same"), Ordering::Equal);
    let spec = LsTool.spec(&Limits {
        ls_limit: 12,
        max_bytes: 3072,
        ..Limits::default()
    });
    assert!(spec.description.contains("Stops at 12 entries"));
    assert!(spec.description.contains("or 3.0KB of output"));
    assert_eq!(
        spec.parameters["properties"]["limit"]["description"],
        "Maximum number of entries to return (default: 12)"
    );
    assert!(
        LsTool
            .spec(&Limits::default())
            .description
            .contains("Stops at 500 entries")
    );
}

/// Issue 21: one line is one entry, whatever the names hold.
#[tokio::test]
async fn every_entry_is_one_line_whatever_its_name() {
    let h = Harness::local();
    h.add_file("a.txt", "");
    h.add_file_named(b"a.txt\nb.txt", "");
    h.add_file_named(b"title\x1b]0;pwned\x07", "");
    h.add_file_named(b"tab\there", "");
    h.add_file_named(b"caf\xe9", "");
    let (text, details) = ls(&h, json!({})).await;
    assert_eq!(
        text,
        "a.txt\na.txt␊b.txt\ncaf\\xE9\ntab␉here\ntitle␛]0;pwned␇"
    );
    assert_eq!(details["entries"], 5);
}
