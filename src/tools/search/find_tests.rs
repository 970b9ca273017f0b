use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tools::Limits;
use crate::tools::Registry;
use crate::tools::ToolCall;
use crate::tools::UpdateSink;
use crate::tools::Workspace;
use crate::tools::ops::LocalProcess;
use crate::tools::ops::MemoryFs;
use crate::tools::testutil::Harness;

async fn find(h: &Harness, args: Value) -> (String, Value) {
    let r = h.call("find", args).await;
    assert!(!r.is_error, "unexpected error: {}", r.text());
    (r.text(), r.details.unwrap_or(Value::Null))
}

async fn find_error(h: &Harness, args: Value) -> String {
    let r = h.call("find", args).await;
    assert!(r.is_error, "expected an error, got: {}", r.text());
    r.text()
}

fn sample() -> Harness {
    let h = Harness::memory();
    h.add_file("src/main.rs", "");
    h.add_file("src/lib.rs", "");
    h.add_file("src/tools/grep.rs", "");
    h.add_file("src/tools/grep.spec.ts", "");
    h.add_file("pkg/src/x.spec.ts", "");
    h.add_file("README.md", "");
    h.add_file("docs/guide.MD", "");
    h.add_file("Cargo.toml", "");
    h
}

#[tokio::test]
async fn a_name_pattern_matches_at_any_depth_sorted() {
    let h = sample();
    let (text, details) = find(&h, json!({"pattern": "*.rs"})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs\nsrc/tools/grep.rs");
    assert_eq!(details, json!({"results": 3}));
}

#[tokio::test]
async fn directories_are_found_with_a_trailing_slash() {
    let h = sample();
    let (text, _) = find(&h, json!({"pattern": "src"})).await;
    assert_eq!(text, "pkg/src/\nsrc/");
    let (text, _) = find(&h, json!({"pattern": "src/**"})).await;
    assert_eq!(
        text,
        "pkg/src/x.spec.ts\nsrc/lib.rs\nsrc/main.rs\nsrc/tools/\nsrc/tools/grep.rs\n\
         src/tools/grep.spec.ts"
    );
    let (text, _) = find(&h, json!({"pattern": "*/"})).await;
    assert_eq!(text, "docs/\npkg/\npkg/src/\nsrc/\nsrc/tools/");
}

#[tokio::test]
async fn a_path_pattern_matches_relative_paths_at_any_depth() {
    let h = sample();
    let (text, _) = find(&h, json!({"pattern": "src/**/*.spec.ts"})).await;
    assert_eq!(text, "pkg/src/x.spec.ts\nsrc/tools/grep.spec.ts");
    let (text, _) = find(&h, json!({"pattern": "**/*.spec.ts"})).await;
    assert_eq!(text, "pkg/src/x.spec.ts\nsrc/tools/grep.spec.ts");
    let (text, _) = find(&h, json!({"pattern": "/src/*.rs"})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs");
    let (text, _) = find(&h, json!({"pattern": "tools/*.rs"})).await;
    assert_eq!(text, "src/tools/grep.rs");
}

#[tokio::test]
async fn matching_is_smart_case() {
    let h = sample();
    let (text, _) = find(&h, json!({"pattern": "*.md"})).await;
    assert_eq!(text, "README.md\ndocs/guide.MD");
    let (text, _) = find(&h, json!({"pattern": "*.MD"})).await;
    assert_eq!(text, "docs/guide.MD");
}

#[tokio::test]
async fn paths_are_relative_to_any_search_root() {
    let h = sample();
    let root = h.root().display().to_string();
    let (text, _) = find(&h, json!({"pattern": "*.rs", "path": "src"})).await;
    assert_eq!(text, "lib.rs\nmain.rs\ntools/grep.rs");
    let (text, _) = find(&h, json!({"pattern": "*.rs", "path": "src/tools/"})).await;
    assert_eq!(text, "grep.rs");
    let (text, _) = find(&h, json!({"pattern": "*.rs", "path": "."})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs\nsrc/tools/grep.rs");
    let (text, _) = find(
        &h,
        json!({"pattern": "*.rs", "path": format!("{root}/src")}),
    )
    .await;
    assert_eq!(text, "lib.rs\nmain.rs\ntools/grep.rs");
    let (text, _) = find(&h, json!({"pattern": "*.rs", "path": root})).await;
    assert_eq!(text, "src/lib.rs\nsrc/main.rs\nsrc/tools/grep.rs");
}

#[tokio::test]
async fn the_file_system_root_gives_correct_paths_when_unconfined() {
    // D11: pi's prefix strip turns /etc/x into tc/x here.
    let fs = MemoryFs::new();
    fs.add_file("/etc/hosts", "");
    fs.add_file("/ws/a.txt", "");
    let workspace = Workspace::new(
        Arc::new(fs),
        Arc::new(LocalProcess::default()),
        "/ws",
        false,
    )
    .unwrap();
    let registry = Registry::builder(workspace).build().unwrap();
    let r = registry
        .dispatch(
            &ToolCall::new("c", "find", json!({"pattern": "*", "path": "/"})),
            CancellationToken::new(),
            UpdateSink::discard(),
        )
        .await;
    assert_eq!(r.text(), "etc/\netc/hosts\nws/\nws/a.txt");
}

#[tokio::test]
async fn limit_notice_only_when_more_results_exist() {
    let h = Harness::memory();
    for name in ["a.txt", "b.txt", "c.txt"] {
        h.add_file(name, "");
    }
    let (text, details) = find(&h, json!({"pattern": "*.txt", "limit": 3})).await;
    assert_eq!(text, "a.txt\nb.txt\nc.txt");
    assert_eq!(details, json!({"results": 3}));
    let (text, details) = find(&h, json!({"pattern": "*.txt", "limit": 2})).await;
    assert_eq!(
        text,
        "a.txt\nb.txt\n\n[2 results limit reached (3 found). Use limit=4 for more, or refine \
         pattern]"
    );
    assert_eq!(details["result_limit_reached"], 2);
    assert_eq!(details["results"], 3);
    // The smallest limit (0 and below are refused: registry tests).
    let (text, _) = find(&h, json!({"pattern": "*.txt", "limit": 1})).await;
    assert_eq!(
        text,
        "a.txt\n\n[1 results limit reached (3 found). Use limit=2 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn default_limit_comes_from_the_limits() {
    let h = Harness::memory_with(Limits {
        find_limit: 2,
        ..Limits::default()
    });
    for name in ["a.txt", "b.txt", "c.txt"] {
        h.add_file(name, "");
    }
    let (text, _) = find(&h, json!({"pattern": "*.txt"})).await;
    assert_eq!(
        text,
        "a.txt\nb.txt\n\n[2 results limit reached (3 found). Use limit=4 for more, or refine \
         pattern]"
    );
}

#[tokio::test]
async fn output_is_cut_at_the_byte_cap() {
    let h = Harness::memory();
    let names: Vec<String> = (0..2000)
        .map(|i| format!("{i:04}-{}.txt", "n".repeat(40)))
        .collect();
    for name in &names {
        h.add_file(name, "");
    }
    let (text, details) = find(&h, json!({"pattern": "*.txt", "limit": 5000})).await;
    let per_line = names[0].len() + 1;
    let kept = (51200 + 1) / per_line;
    assert_eq!(
        text,
        format!(
            "{}\n\n[50.0KB output limit reached: showing {kept} of 2000 results. Refine the \
             pattern or search a narrower path to see the rest]",
            names[..kept].join("\n")
        )
    );
    assert_eq!(details["truncation"]["truncated_by"], "bytes");
    assert_eq!(details["truncation"]["output_lines"], kept);
    assert_eq!(details.get("result_limit_reached"), None);
}

#[tokio::test]
async fn ignore_rules_git_directory_and_hidden_entries() {
    let h = Harness::local();
    h.add_file(".gitignore", "target/\n");
    h.add_file(".git/HEAD", "");
    h.add_file("target/debug/app.rs", "");
    h.add_file(".config/settings.rs", "");
    h.add_file("a/.gitignore", "gen.rs\n");
    h.add_file("a/gen.rs", "");
    h.add_file("b/gen.rs", "");
    let (text, _) = find(&h, json!({"pattern": "*"})).await;
    assert_eq!(
        text,
        ".config/\n.config/settings.rs\n.gitignore\na/\na/.gitignore\nb/\nb/gen.rs"
    );
}

#[tokio::test]
async fn nothing_found_and_errors() {
    let h = sample();
    let (text, details) = find(&h, json!({"pattern": "*.zig"})).await;
    assert_eq!(text, "No files found matching pattern");
    assert_eq!(details, json!({"results": 0}));
    let err = find_error(&h, json!({"pattern": "["})).await;
    assert_eq!(
        err,
        "Invalid glob pattern \"[\": error parsing glob '[': unclosed character class; missing \
         ']'. Use *, ?, [abc], {a,b} and **, e.g. \"*.rs\" or \"src/**/*.ts\"; put a special \
         character in brackets to match it literally (\"[[]\")."
    );
    let err = find_error(&h, json!({"pattern": "*.rs", "path": "scr"})).await;
    assert_eq!(err, "Path not found: scr. Did you mean src?");
    let err = find_error(&h, json!({"pattern": "*.rs", "path": "src/main.rs"})).await;
    assert_eq!(
        err,
        "Not a directory: src/main.rs. find searches directories; use ls or read on a file, or \
         give its parent directory as path."
    );
}

#[tokio::test]
async fn unreadable_directories_are_named() {
    // MemoryFs directories are always readable; an unreadable ignore file
    // is the walk error it can produce.
    let h = Harness::memory();
    h.add_file("a.txt", "");
    h.add_file_with_mode(".gitignore", "a.txt\n", 0o200);
    let (text, details) = find(&h, json!({"pattern": "*.txt"})).await;
    assert_eq!(
        text,
        "a.txt\n\n[1 path could not be read and was skipped: .gitignore (permission denied). If \
         it matters, look at it with bash (ls -l)]"
    );
    assert_eq!(details["unreadable_paths"], json!([".gitignore"]));
}

#[test]
fn spec_numbers_come_from_the_limits() {
    let limits = Limits {
        find_limit: 9,
        max_bytes: 1024,
        ..Limits::default()
    };
    let spec = FindTool.spec(&limits);
    assert!(spec.description.contains("Stops at 9 results"));
    assert!(spec.description.contains("or 1.0KB of output"));
    assert_eq!(
        spec.parameters["properties"]["limit"]["description"],
        "Maximum number of results (default: 9)"
    );
    let default = FindTool.spec(&Limits::default()).description;
    assert!(default.contains("Stops at 1000 results"));
    assert!(default.contains("or 50.0KB of output"));
}

/// Issue 21: a name with a newline made two entries of one; ESC reached
/// the model raw; names that are not UTF-8 all read `bad�.txt`.
#[tokio::test]
async fn every_result_is_one_line_whatever_its_name() {
    let h = Harness::local();
    h.add_file("a.txt", "");
    h.add_file_named(b"a.txt\nb.txt", "");
    h.add_file_named(b"esc\x1b[2K.txt", "");
    h.add_file_named(b"bad\xfe.txt", "");
    h.add_file_named(b"bad\xff.txt", "");
    let (text, details) = find(&h, json!({"pattern": "*.txt"})).await;
    assert_eq!(
        text,
        "a.txt\na.txt␊b.txt\nbad\\xFE.txt\nbad\\xFF.txt\nesc␛[2K.txt"
    );
    assert_eq!(details["results"], 5);
    // The pattern matches the names as shown.
    let (text, _) = find(&h, json!({"pattern": "*␊*"})).await;
    assert_eq!(text, "a.txt␊b.txt");
}
