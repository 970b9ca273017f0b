use std::io;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tools::Limits;
use crate::tools::UpdateSink;
use crate::tools::ops::FsOps;
use crate::tools::testutil::Harness;
use files::line_text;

async fn grep(h: &Harness, args: Value) -> (String, Value) {
    let r = h.call("grep", args).await;
    assert!(!r.is_error, "unexpected error: {}", r.text());
    (r.text(), r.details.unwrap_or(Value::Null))
}

async fn grep_error(h: &Harness, args: Value) -> String {
    let r = h.call("grep", args).await;
    assert!(r.is_error, "expected an error, got: {}", r.text());
    r.text()
}

#[tokio::test]
async fn matches_are_sorted_by_path_then_line_with_facts() {
    let h = Harness::memory();
    h.add_file("src/z.rs", "fn zed() {}\n");
    h.add_file("b.txt", "x\nfn b\n");
    h.add_file("a.txt", "fn a1\nno\nfn a2\n");
    h.add_file("src/a/deep.rs", "fn deep\n");
    let (text, details) = grep(&h, json!({"pattern": "fn"})).await;
    assert_eq!(
        text,
        "a.txt:1: fn a1\na.txt:3: fn a2\nb.txt:2: fn b\nsrc/a/deep.rs:1: fn deep\nsrc/z.rs:1: \
         fn zed() {}"
    );
    assert_eq!(details, json!({"matches": 5, "files_with_matches": 4}));
}

#[tokio::test]
async fn no_matches_says_so() {
    let h = Harness::memory();
    h.add_file("a.txt", "hello\n");
    let (text, details) = grep(&h, json!({"pattern": "absent"})).await;
    assert_eq!(text, "No matches found");
    assert_eq!(details, json!({"matches": 0, "files_with_matches": 0}));
}

#[tokio::test]
async fn gitignore_applies_outside_a_git_repository() {
    let h = Harness::local();
    h.add_file(".gitignore", "ignored/\n*.log\n");
    h.add_file("ignored/a.txt", "needle\n");
    h.add_file("debug.log", "needle\n");
    h.add_file("kept.txt", "needle\n");
    let (text, _) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, "kept.txt:1: needle");
}

#[tokio::test]
async fn git_directory_is_never_searched_and_hidden_files_are() {
    let h = Harness::local();
    h.add_file(".git/config", "needle\n");
    h.add_file(".git/info/exclude", "excluded.txt\n");
    h.add_file("excluded.txt", "needle\n");
    h.add_file(".hidden/inner.txt", "needle\n");
    h.add_file(".env", "needle\n");
    let (text, _) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, ".env:1: needle\n.hidden/inner.txt:1: needle");
}

#[tokio::test]
async fn nested_ignore_rules_are_scoped_to_their_directory() {
    let h = Harness::local();
    h.add_file("a/.gitignore", "secret.txt\n");
    h.add_file("a/secret.txt", "needle\n");
    h.add_file("b/secret.txt", "needle\n");
    let (text, _) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, "b/secret.txt:1: needle");
}

#[tokio::test]
async fn workspace_rules_apply_when_searching_a_subdirectory() {
    let h = Harness::local();
    h.add_file(".gitignore", "*.gen.rs\n");
    h.add_file("src/a.gen.rs", "needle\n");
    h.add_file("src/a.rs", "needle\n");
    let (text, _) = grep(&h, json!({"pattern": "needle", "path": "src"})).await;
    assert_eq!(text, "a.rs:1: needle");
}

#[tokio::test]
async fn symlinks_are_not_followed() {
    let h = Harness::local();
    h.add_file("real/a.txt", "needle\n");
    h.add_symlink("link", "real");
    h.add_symlink("file-link.txt", "real/a.txt");
    let (text, _) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, "real/a.txt:1: needle");
}

#[tokio::test]
async fn limit_counts_matching_lines_and_notices_only_when_more_exist() {
    let h = Harness::memory();
    h.add_file("a.txt", "m1\nm2\n");
    h.add_file("b.txt", "m3\n");
    let (text, details) = grep(&h, json!({"pattern": "m", "limit": 3})).await;
    assert_eq!(text, "a.txt:1: m1\na.txt:2: m2\nb.txt:1: m3");
    assert_eq!(details.get("match_limit_reached"), None);
    let (text, details) = grep(&h, json!({"pattern": "m", "limit": 2})).await;
    assert_eq!(
        text,
        "a.txt:1: m1\na.txt:2: m2\n\n[2 matches limit reached. Use limit=4 for more, or refine \
         pattern]"
    );
    assert_eq!(details["match_limit_reached"], 2);
    assert_eq!(details["matches"], 2);
    // The smallest limit (0 and below are refused: registry tests).
    let (text, details) = grep(&h, json!({"pattern": "m", "limit": 1})).await;
    assert_eq!(
        text,
        "a.txt:1: m1\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
    );
    assert_eq!(details["match_limit_reached"], 1);
}

#[tokio::test]
async fn default_limit_comes_from_the_limits() {
    let h = Harness::memory_with(Limits {
        grep_limit: 3,
        ..Limits::default()
    });
    h.add_file("a.txt", "m\nm\nm\nm\n");
    let (text, details) = grep(&h, json!({"pattern": "m"})).await;
    assert!(text.ends_with("[3 matches limit reached. Use limit=6 for more, or refine pattern]"));
    assert_eq!(details["matches"], 3);
}

#[tokio::test]
async fn the_first_matches_in_sorted_order_win_across_many_files() {
    let h = Harness::local();
    // Created in reverse so that no walk order happens to be sorted.
    for i in (0..300).rev() {
        h.add_file(
            &format!("d{}/f{i:03}.txt", i % 7),
            format!("x\nhit {i}\nhit {i} again\n"),
        );
    }
    let (text, details) = grep(&h, json!({"pattern": "hit", "limit": 5})).await;
    let mut files: Vec<(String, usize)> = (0..300)
        .map(|i| (format!("d{}/f{i:03}.txt", i % 7), i))
        .collect();
    files.sort();
    let (f0, i0) = &files[0];
    let (f1, i1) = &files[1];
    let (f2, i2) = &files[2];
    assert_eq!(
        text,
        format!(
            "{f0}:2: hit {i0}\n{f0}:3: hit {i0} again\n{f1}:2: hit {i1}\n{f1}:3: hit {i1} \
             again\n{f2}:2: hit {i2}\n\n[5 matches limit reached. Use limit=10 for more, or \
             refine pattern]"
        )
    );
    assert_eq!(details["files_with_matches"], 3);
    // Without a limit in the way every file shows, in order.
    let (text, details) = grep(&h, json!({"pattern": "again", "limit": 1000})).await;
    let expected: Vec<String> = files
        .iter()
        .map(|(f, i)| format!("{f}:3: hit {i} again"))
        .collect();
    assert_eq!(text, expected.join("\n"));
    assert_eq!(details["matches"], 300);
}

#[tokio::test]
async fn context_example_of_the_reference() {
    // §grep.8.
    let h = Harness::memory();
    h.add_file(
        "context.txt",
        "before\nmatch one\nafter\nmiddle\nmatch two\nafter two\n",
    );
    let (text, _) = grep(
        &h,
        json!({"pattern": "match", "path": "context.txt", "limit": 1, "context": 1}),
    )
    .await;
    assert_eq!(
        text,
        "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n[1 matches \
         limit reached. Use limit=2 for more, or refine pattern]"
    );
}

#[tokio::test]
async fn context_blocks_merge_without_repeating_lines() {
    let h = Harness::memory();
    h.add_file("f.txt", "1\nhit a\n3\nhit b\n5\n6\n7\n8\nhit c\n");
    let (text, _) = grep(&h, json!({"pattern": "hit", "context": 1})).await;
    assert_eq!(
        text,
        "f.txt-1- 1\nf.txt:2: hit a\nf.txt-3- 3\nf.txt:4: hit b\nf.txt-5- 5\nf.txt-8- 8\n\
         f.txt:9: hit c"
    );
}

#[tokio::test]
async fn after_context_of_the_last_match_stops_before_the_next_match() {
    let h = Harness::memory();
    h.add_file("f.txt", "a\nhit 1\nb\nhit 2\nc\n");
    let (text, _) = grep(&h, json!({"pattern": "hit", "context": 3, "limit": 1})).await;
    assert_eq!(
        text,
        "f.txt-1- a\nf.txt:2: hit 1\nf.txt-3- b\n\n[1 matches limit reached. Use limit=2 for \
         more, or refine pattern]"
    );
}

#[tokio::test]
async fn long_lines_are_cut_with_a_notice() {
    let h = Harness::memory();
    let long = "x".repeat(600);
    h.add_file("a.txt", format!("{long}\nshort x\n"));
    let (text, details) = grep(&h, json!({"pattern": "x"})).await;
    assert_eq!(
        text,
        format!(
            "a.txt:1: {}... [truncated]\na.txt:2: short x\n\n[Some lines truncated to 500 \
             chars. Use the read tool to see full lines]",
            "x".repeat(500)
        )
    );
    assert_eq!(details["lines_truncated"], true);
}

#[tokio::test]
async fn line_cut_counts_characters_and_uses_the_limits() {
    let h = Harness::memory_with(Limits {
        grep_max_line: 4,
        ..Limits::default()
    });
    h.add_file("a.txt", "ééééé\n");
    let (text, _) = grep(&h, json!({"pattern": "é"})).await;
    assert_eq!(
        text,
        "a.txt:1: éééé... [truncated]\n\n[Some lines truncated to 4 chars. Use the read tool to \
         see full lines]"
    );
}

#[tokio::test]
async fn output_is_cut_at_the_byte_cap_with_whole_lines() {
    let h = Harness::memory();
    let line = format!("hit {}", "y".repeat(95));
    let body: String = (0..1000).map(|_| format!("{line}\n")).collect();
    h.add_file("a.txt", body);
    let (text, details) = grep(&h, json!({"pattern": "hit", "limit": 1000})).await;
    // Each output line is "a.txt:N: " + 99 bytes.
    let all: Vec<String> = (1..=1000).map(|n| format!("a.txt:{n}: {line}")).collect();
    let mut kept = 0;
    let mut bytes = 0;
    for l in &all {
        let cost = l.len() + usize::from(kept > 0);
        if bytes + cost > 51200 {
            break;
        }
        bytes += cost;
        kept += 1;
    }
    assert_eq!(
        text,
        format!(
            "{}\n\n[50.0KB output limit reached: showing {kept} of 1000 lines. Refine the \
             pattern, or narrow the search with path or glob, to see the rest]",
            all[..kept].join("\n")
        )
    );
    let t = &details["truncation"];
    assert_eq!(t["truncated"], true);
    assert_eq!(t["truncated_by"], "bytes");
    assert_eq!(t["output_lines"], kept);
    assert_eq!(t["total_lines"], 1000);
    assert_eq!(t["total_bytes"], all.join("\n").len());
    assert_eq!(t["output_bytes"], all[..kept].join("\n").len());
    assert_eq!(t["max_bytes"], 51200);
    assert_eq!(details["matches"], 1000);
    assert_eq!(details.get("match_limit_reached"), None);
}

#[tokio::test]
async fn unreadable_files_are_skipped_counted_and_named() {
    // MemoryFs enforces permission bits even for root.
    let h = Harness::memory();
    h.add_file("a.txt", "needle\n");
    h.add_file_with_mode("secret.txt", "needle\n", 0o200);
    h.add_file("z.txt", "needle\n");
    let (text, details) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(
        text,
        "a.txt:1: needle\nz.txt:1: needle\n\n[1 path could not be read and was skipped: \
         secret.txt (permission denied). If it matters, look at it with bash (ls -l)]"
    );
    assert_eq!(details["unreadable_files"], 1);
    assert_eq!(details["unreadable_paths"], json!(["secret.txt"]));
    assert_eq!(details["matches"], 2);
    // Named explicitly, an unreadable file is an error.
    let err = grep_error(&h, json!({"pattern": "needle", "path": "secret.txt"})).await;
    assert_eq!(
        err,
        "Permission denied: cannot read secret.txt. Check its permissions with bash (ls -l) or \
         use another file."
    );
}

#[tokio::test]
async fn invalid_regex_quotes_the_error_and_suggests_literal() {
    let h = Harness::memory();
    h.add_file("a.txt", "call foo(1)\n");
    let err = grep_error(&h, json!({"pattern": "foo("})).await;
    assert_eq!(
        err,
        "Invalid regular expression \"foo(\": regex parse error:\n    foo(\n       ^\nerror: \
         unclosed group\nFix the pattern, or set literal: true to search for the text exactly \
         as written."
    );
    let (text, _) = grep(&h, json!({"pattern": "foo(", "literal": true})).await;
    assert_eq!(text, "a.txt:1: call foo(1)");
    let err = grep_error(&h, json!({"pattern": "a\nb"})).await;
    assert!(err.starts_with("The pattern contains a newline"), "{err}");
}

#[tokio::test]
async fn ignore_case_and_its_snake_case_alias() {
    let h = Harness::memory();
    h.add_file("a.txt", "Hello\nhello\nHELLO\nbye\n");
    let (text, _) = grep(&h, json!({"pattern": "hello"})).await;
    assert_eq!(text, "a.txt:2: hello");
    let (text, _) = grep(&h, json!({"pattern": "hello", "ignoreCase": true})).await;
    assert_eq!(text, "a.txt:1: Hello\na.txt:2: hello\na.txt:3: HELLO");
    let (text, _) = grep(&h, json!({"pattern": "hello", "ignore_case": true})).await;
    assert_eq!(text, "a.txt:1: Hello\na.txt:2: hello\na.txt:3: HELLO");
}

#[tokio::test]
async fn glob_filters_by_name_or_relative_path() {
    let h = Harness::memory();
    h.add_file("a.ts", "x\n");
    h.add_file("a.js", "x\n");
    h.add_file("src/b.ts", "x\n");
    h.add_file("src/deep/c.ts", "x\n");
    h.add_file("pkg/src/d.ts", "x\n");
    let (text, _) = grep(&h, json!({"pattern": "x", "glob": "*.ts"})).await;
    assert_eq!(
        text,
        "a.ts:1: x\npkg/src/d.ts:1: x\nsrc/b.ts:1: x\nsrc/deep/c.ts:1: x"
    );
    let (text, _) = grep(&h, json!({"pattern": "x", "glob": "src/*.ts"})).await;
    assert_eq!(text, "src/b.ts:1: x");
    let (text, _) = grep(&h, json!({"pattern": "x", "glob": "src/**/*.ts"})).await;
    assert_eq!(text, "src/b.ts:1: x\nsrc/deep/c.ts:1: x");
    let (text, _) = grep(&h, json!({"pattern": "x", "glob": "!*.ts"})).await;
    assert_eq!(text, "a.js:1: x");
    // Relative to the searched directory.
    let (text, _) = grep(
        &h,
        json!({"pattern": "x", "path": "src", "glob": "deep/*.ts"}),
    )
    .await;
    assert_eq!(text, "deep/c.ts:1: x");
}

#[tokio::test]
async fn invalid_glob_is_a_clear_error() {
    let h = Harness::memory();
    h.add_file("a.txt", "x\n");
    let err = grep_error(&h, json!({"pattern": "x", "glob": "*.{ts"})).await;
    assert_eq!(
        err,
        "Invalid glob \"*.{ts\": error parsing glob '*.{ts': unclosed alternate group; missing \
         '}' (maybe escape '{' with '[{]'?). Use *, ?, [abc], {a,b} and **, e.g. \"*.rs\" or \
         \"src/**/*.ts\"."
    );
}

#[tokio::test]
async fn missing_path_suggests_close_names() {
    let h = Harness::memory();
    h.add_file("src/main.rs", "x\n");
    let err = grep_error(&h, json!({"pattern": "x", "path": "scr"})).await;
    assert_eq!(err, "Path not found: scr. Did you mean src?");
    let err = grep_error(&h, json!({"pattern": "x", "path": "src/mian.rs"})).await;
    assert_eq!(
        err,
        "Path not found: src/mian.rs. Did you mean src/main.rs?"
    );
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let h = Harness::memory();
    let err = grep_error(&h, json!({"pattern": "x", "path": "../etc"})).await;
    assert!(err.contains("is outside the workspace"), "{err}");
}

#[tokio::test]
async fn a_file_path_searches_that_file_and_shows_its_name() {
    let h = Harness::local();
    h.add_file(".gitignore", "*.log\n");
    h.add_file("logs/app.log", "one\nneedle two\n");
    let (text, details) = grep(&h, json!({"pattern": "needle", "path": "logs/app.log"})).await;
    assert_eq!(text, "app.log:2: needle two");
    assert_eq!(details["files_with_matches"], 1);
}

#[tokio::test]
async fn binary_files_are_skipped_in_walks_and_reported_when_named() {
    let h = Harness::memory();
    h.add_file("text.txt", "needle\n");
    h.add_file("blob.bin", b"needle\x00\x01\x02needle\n");
    let (text, details) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, "text.txt:1: needle");
    assert_eq!(details["binary_files"], 1);
    let (text, _) = grep(&h, json!({"pattern": "needle", "path": "blob.bin"})).await;
    assert_eq!(
        text,
        "No matches found\n\n[blob.bin is a binary file (NUL byte at offset 6), so the search \
         stopped there. Use bash (e.g. strings) to look inside binary files]"
    );
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily_and_carriage_returns_are_dropped() {
    let h = Harness::memory();
    h.add_file("a.txt", b"caf\xe9 needle\r\nnext\r\n");
    let (text, _) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, "a.txt:1: caf\u{fffd} needle");
}

#[tokio::test]
async fn control_characters_in_lines_are_shown_as_pictures() {
    let h = Harness::memory();
    h.add_file(
        "log.txt",
        b"\x1b[31mERROR\x1b[0m needle\x07\tend\x7f\nctx \x0c\n",
    );
    let (text, _) = grep(&h, json!({"pattern": "needle", "context": 1})).await;
    assert_eq!(
        text,
        "log.txt:1: ␛[31mERROR␛[0m needle␇\tend␡\nlog.txt-2- ctx ␌"
    );
}

/// Issue 21: a file named `a.txt:7:TODO forged⏎b.txt` made grep print a
/// match line of a file that does not say that, and ESC in a name reached
/// the model raw. Names show their controls as pictures and their bytes
/// that are not UTF-8 as `\xNN`: one line is one match.
#[tokio::test]
async fn names_cannot_forge_match_lines() {
    let h = Harness::local();
    h.add_file("a.txt", "nothing\n");
    h.add_file_named(b"a.txt:7:TODO forged\nb.txt", "TODO real\n");
    h.add_file_named(b"esc\x1b]0;pwned\x07\t.txt", "TODO real\n");
    h.add_file_named(b"bad\xff.txt", "TODO real\n");
    let (text, details) = grep(&h, json!({"pattern": "TODO", "context": 1})).await;
    assert_eq!(
        text,
        "a.txt:7:TODO forged␊b.txt:1: TODO real\nbad\\xFF.txt:1: TODO real\n\
         esc␛]0;pwned␇␉.txt:1: TODO real"
    );
    assert_eq!(details["matches"], 3);
    // A file named as shown is the file shown, searched on its own.
    let (text, _) = grep(&h, json!({"pattern": "TODO", "path": "esc␛]0;pwned␇␉.txt"})).await;
    assert_eq!(text, "esc␛]0;pwned␇␉.txt:1: TODO real");
    let (text, _) = grep(&h, json!({"pattern": "TODO", "path": "bad\\xff.txt"})).await;
    assert_eq!(text, "bad\\xFF.txt:1: TODO real");
}

#[tokio::test]
async fn memory_workspace_honours_ignore_files_too() {
    let h = Harness::memory();
    h.add_file(".gitignore", "dist/\n");
    h.add_file("dist/app.js", "needle\n");
    h.add_file("src/app.js", "needle\n");
    let (text, _) = grep(&h, json!({"pattern": "needle"})).await;
    assert_eq!(text, "src/app.js:1: needle");
}

#[tokio::test]
async fn a_cancelled_call_returns_the_cancelled_error() {
    let h = Harness::memory();
    h.add_file("a.txt", "x\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = ToolContext {
        call_id: "c".into(),
        workspace: h.registry.workspace().clone(),
        limits: Limits::default(),
        cancel,
        updates: UpdateSink::discard(),
    };
    let args = GrepArgs {
        pattern: "x".into(),
        path: None,
        glob: None,
        ignore_case: None,
        literal: None,
        context: None,
        limit: None,
    };
    // Cancelled while the blocking work runs: the walk stops and says so.
    let err = grep_blocking(&args, &ctx).unwrap_err();
    assert_eq!(err, ToolError::cancelled());
    let err = GrepTool.execute(args, ctx).await.unwrap_err();
    assert_eq!(err, ToolError::cancelled());
}

/// A MemoryFs that records the files it opens.
#[derive(Debug)]
struct OpenLog(crate::tools::ops::MemoryFs, std::sync::Mutex<Vec<String>>);

impl FsOps for OpenLog {
    fn metadata(&self, path: &std::path::Path) -> io::Result<crate::tools::ops::Metadata> {
        self.0.metadata(path)
    }
    fn symlink_metadata(&self, path: &std::path::Path) -> io::Result<crate::tools::ops::Metadata> {
        self.0.symlink_metadata(path)
    }
    fn canonicalize(&self, path: &std::path::Path) -> io::Result<PathBuf> {
        self.0.canonicalize(path)
    }
    fn read_link(&self, path: &std::path::Path) -> io::Result<PathBuf> {
        self.0.read_link(path)
    }
    fn open(&self, path: &std::path::Path) -> io::Result<Box<dyn Read + Send>> {
        self.1.lock().unwrap().push(path.display().to_string());
        self.0.open(path)
    }
    fn write(&self, path: &std::path::Path, data: &[u8]) -> io::Result<()> {
        self.0.write(path, data)
    }
    fn create_dir_all(&self, path: &std::path::Path) -> io::Result<()> {
        self.0.create_dir_all(path)
    }
    fn read_dir(&self, path: &std::path::Path) -> io::Result<Vec<crate::tools::ops::DirEntry>> {
        self.0.read_dir(path)
    }
    fn create_new(
        &self,
        path: &std::path::Path,
        mode: u32,
    ) -> io::Result<Box<dyn std::io::Write + Send>> {
        self.0.create_new(path, mode)
    }
}

fn context_on(fs: Arc<dyn FsOps>, limits: Limits) -> ToolContext {
    let workspace = crate::tools::Workspace::new(
        fs,
        Arc::new(crate::tools::ops::LocalProcess::default()),
        "/ws",
        true,
    )
    .unwrap();
    ToolContext {
        call_id: "c".into(),
        workspace,
        limits,
        cancel: CancellationToken::new(),
        updates: UpdateSink::discard(),
    }
}

fn grep_args(pattern: &str, limit: usize) -> GrepArgs {
    GrepArgs {
        pattern: pattern.into(),
        path: None,
        glob: None,
        ignore_case: None,
        literal: None,
        context: None,
        limit: Some(limit as f64),
    }
}

/// Issue 27: with a limit, the files that sort after the last one needed
/// are never opened. One directory's files are searched in order by the
/// thread that lists it, so which of them are opened does not depend on
/// timing.
#[test]
fn a_limited_search_opens_no_file_after_the_last_one_it_needs() {
    let fs = crate::tools::ops::MemoryFs::new();
    fs.add_dir("/ws");
    for i in 0..10 {
        fs.add_file(format!("/ws/f{i}.txt"), "hit\nhit\n");
    }
    let log = Arc::new(OpenLog(fs, std::sync::Mutex::default()));
    let ctx = context_on(log.clone(), Limits::default());
    // Limit 3: f0 and f1 hold 4 matching lines, which shows that more
    // than 3 exist.
    let out = grep_blocking(&grep_args("hit", 3), &ctx).unwrap();
    let text = crate::tools::contract::text_of(&out.content);
    assert_eq!(
        text,
        "f0.txt:1: hit\nf0.txt:2: hit\nf1.txt:1: hit\n\n[3 matches limit reached. Use limit=6 \
         for more, or refine pattern]"
    );
    let mut opened = log.1.lock().unwrap().clone();
    opened.sort();
    assert_eq!(opened, ["/ws/f0.txt", "/ws/f1.txt"]);
}

#[test]
fn a_cancelled_search_fails_as_cancelled() {
    let fs = crate::tools::ops::MemoryFs::new();
    fs.add_dir("/ws");
    fs.add_file("/ws/a.txt", "x\n");
    let ctx = context_on(Arc::new(fs), Limits::default());
    ctx.cancel.cancel();
    let err = grep_blocking(&grep_args("x", 10), &ctx).unwrap_err();
    assert_eq!(err, ToolError::cancelled());
}

/// A tree of `dirs` directories, some nested, whose files hold between 0
/// and 40 matching lines each, from `seed`.
fn seeded_tree(seed: u64, files: usize) -> crate::tools::ops::MemoryFs {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let fs = crate::tools::ops::MemoryFs::new();
    fs.add_dir("/ws");
    for i in 0..files {
        let depth = next(4);
        let mut path = String::from("/ws");
        for _ in 0..depth {
            path.push_str(&format!("/d{}", next(5)));
        }
        let hits = next(41);
        let mut text = String::new();
        for line in 0..hits + next(5) {
            if line < hits {
                text.push_str(&format!("hit {line}\n"));
            } else {
                text.push_str("miss\n");
            }
        }
        fs.add_file(format!("{path}/f{i}-{}.txt", next(100)), text);
    }
    fs
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Issue 27: a limited search shows exactly the first N lines of the
    /// full sorted search, whatever was pruned, for every N up to 5000.
    #[test]
    fn a_limited_search_is_the_head_of_the_full_search(seed in 0u64..1000, n in 1usize..=5000) {
        let limits = Limits { max_bytes: usize::MAX, ..Limits::default() };
        let ctx = context_on(Arc::new(seeded_tree(seed, 400)), limits);
        let full = crate::tools::contract::text_of(&grep_blocking(&grep_args("hit", 1_000_000), &ctx).unwrap().content);
        let lines: Vec<&str> = full.lines().collect();
        let out = crate::tools::contract::text_of(&grep_blocking(&grep_args("hit", n), &ctx).unwrap().content);
        let expected = if n < lines.len() {
            format!(
                "{}\n\n[{n} matches limit reached. Use limit={} for more, or refine pattern]",
                lines[..n].join("\n"),
                n * 2
            )
        } else {
            full.clone()
        };
        proptest::prop_assert_eq!(out, expected);
    }
}

#[tokio::test]
async fn files_after_the_limit_count_for_nothing_whichever_were_searched_early() {
    let h = Harness::local();
    for i in 0..40 {
        h.add_file(&format!("a/f{i:02}.txt"), "hit\nhit\n");
    }
    h.add_file("z/binary.dat", b"hit\n\0\x01");
    h.add_file("z/late.txt", "hit\n");
    let expected: Vec<String> = (0..3)
        .flat_map(|i| {
            [
                format!("a/f{i:02}.txt:1: hit"),
                format!("a/f{i:02}.txt:2: hit"),
            ]
        })
        .take(5)
        .collect();
    // Walk threads race; every run must give the same answer.
    for _ in 0..20 {
        let (text, details) = grep(&h, json!({"pattern": "hit", "limit": 5})).await;
        assert_eq!(
            text,
            format!(
                "{}\n\n[5 matches limit reached. Use limit=10 for more, or refine pattern]",
                expected.join("\n")
            )
        );
        assert_eq!(
            details,
            json!({"matches": 5, "files_with_matches": 3, "match_limit_reached": 5})
        );
    }
    // Without a limit in the way the binary file is counted.
    let (_, details) = grep(&h, json!({"pattern": "hit", "limit": 1000})).await;
    assert_eq!(details["binary_files"], 1);
    assert_eq!(details["matches"], 81);
}

#[test]
fn spec_numbers_come_from_the_limits() {
    let limits = Limits {
        grep_limit: 7,
        grep_max_line: 123,
        max_bytes: 2048,
        ..Limits::default()
    };
    let spec = GrepTool.spec(&limits);
    assert!(spec.description.contains("Stops at 7 matching lines"));
    assert!(spec.description.contains("or 2.0KB of output"));
    assert!(spec.description.contains("longer than 123 characters"));
    assert_eq!(
        spec.parameters["properties"]["limit"]["description"],
        "Maximum number of matching lines to return (default: 7)"
    );
    assert_eq!(spec.execution_mode, ExecutionMode::Parallel);
    let default = GrepTool.spec(&Limits::default()).description;
    assert!(default.contains("Stops at 100 matching lines"));
    assert!(default.contains("or 50.0KB of output"));
    assert!(default.contains("longer than 500 characters"));
}

#[test]
fn line_text_decodes_only_what_it_shows() {
    assert_eq!(line_text(b"abc\n", 500), ("abc".to_owned(), false));
    assert_eq!(line_text(b"a\rb\r\n", 500), ("ab".to_owned(), false));
    let huge = vec![b'z'; 10_000_000];
    let (text, cut) = line_text(&huge, 5);
    assert_eq!(text, "zzzzz... [truncated]");
    assert!(cut);
    // A multi-byte character split by the decoding window is never shown.
    let mut wide = "é".repeat(10).into_bytes();
    wide.push(b'\n');
    assert_eq!(line_text(&wide, 3), ("ééé... [truncated]".to_owned(), true));
    let mut crs = b"\r".repeat(100);
    crs.extend_from_slice(b"abcdef");
    assert_eq!(line_text(&crs, 3), ("abc... [truncated]".to_owned(), true));
}

#[tokio::test]
async fn context_zero_shows_no_context_and_dashes_are_text() {
    let h = Harness::memory();
    h.add_file("a.txt", "before\nrun --pre=/x.sh now\nafter\n");
    let (text, _) = grep(&h, json!({"pattern": "--pre=/x.sh", "context": 0})).await;
    assert_eq!(text, "a.txt:2: run --pre=/x.sh now");
    let (text, _) = grep(&h, json!({"pattern": "--pre", "context": "1"})).await;
    assert_eq!(
        text,
        "a.txt-1- before\na.txt:2: run --pre=/x.sh now\na.txt-3- after"
    );
}

#[tokio::test]
async fn a_pattern_too_large_to_search_quickly_is_refused_with_what_to_do() {
    let h = Harness::memory();
    h.add_file("a.txt", "aaaa\n");
    let text = grep_error(&h, json!({"pattern": "a{65536}"})).await;
    assert_eq!(
        text,
        "The pattern \"a{65536}\" is too large: compiled, it is over the 1.0MB limit that keeps a \
         search fast and its memory bounded. Use smaller repetition counts (a{1000} rather than \
         a{100000}), an ASCII class such as [A-Za-z0-9_] instead of the Unicode-aware \\w, or \
         several shorter searches."
    );
    // Large repetitions within the limit still work.
    h.add_file("b.txt", format!("{}\n", "b".repeat(1500)));
    let (text, _) = grep(&h, json!({"pattern": "b{1000}", "limit": 1})).await;
    assert!(text.starts_with("b.txt:1: bbb"), "{text}");
}

/// A file system whose `endless.txt` never ends: a search of it can only
/// stop by cancellation.
/// Its `stuck.txt` blocks the reading thread until the gate opens, as a
/// regex stuck inside one huge line would: a worker that cannot notice
/// that it was told to stop.
#[derive(Debug, Clone)]
struct EndlessFs(crate::tools::ops::MemoryFs, Arc<Gate>);

/// A gate threads wait at until it opens.
#[derive(Debug, Default)]
struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn wait(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
    }
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

struct Stuck(Arc<Gate>);

impl Read for Stuck {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        self.0.wait();
        Ok(0)
    }
}

struct Endless;

impl Read for Endless {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        for pair in buf.chunks_mut(2) {
            pair.copy_from_slice(&b"x\n"[..pair.len()]);
        }
        Ok(buf.len())
    }
}

impl FsOps for EndlessFs {
    fn metadata(&self, path: &std::path::Path) -> io::Result<crate::tools::ops::Metadata> {
        self.0.metadata(path)
    }
    fn symlink_metadata(&self, path: &std::path::Path) -> io::Result<crate::tools::ops::Metadata> {
        self.0.symlink_metadata(path)
    }
    fn canonicalize(&self, path: &std::path::Path) -> io::Result<PathBuf> {
        self.0.canonicalize(path)
    }
    fn read_link(&self, path: &std::path::Path) -> io::Result<PathBuf> {
        self.0.read_link(path)
    }
    fn open(&self, path: &std::path::Path) -> io::Result<Box<dyn Read + Send>> {
        if path.ends_with("endless.txt") {
            return Ok(Box::new(Endless));
        }
        if path.ends_with("stuck.txt") {
            return Ok(Box::new(Stuck(Arc::clone(&self.1))));
        }
        self.0.open(path)
    }
    fn write(&self, path: &std::path::Path, data: &[u8]) -> io::Result<()> {
        self.0.write(path, data)
    }
    fn create_dir_all(&self, path: &std::path::Path) -> io::Result<()> {
        self.0.create_dir_all(path)
    }
    fn read_dir(&self, path: &std::path::Path) -> io::Result<Vec<crate::tools::ops::DirEntry>> {
        self.0.read_dir(path)
    }
    fn create_new(
        &self,
        path: &std::path::Path,
        mode: u32,
    ) -> io::Result<Box<dyn std::io::Write + Send>> {
        self.0.create_new(path, mode)
    }
}

fn endless_registry(grep_timeout: Option<f64>) -> crate::tools::Registry {
    stuck_registry(grep_timeout, "endless.txt", Arc::default())
}

/// A workspace with `a.txt` and `special` (`endless.txt` or `stuck.txt`).
fn stuck_registry(
    grep_timeout: Option<f64>,
    special: &str,
    gate: Arc<Gate>,
) -> crate::tools::Registry {
    let fs = crate::tools::ops::MemoryFs::new();
    fs.add_dir("/ws");
    fs.add_file("/ws/a.txt", "needle\n");
    fs.add_file(format!("/ws/{special}"), "");
    let workspace = crate::tools::Workspace::new(
        Arc::new(EndlessFs(fs, gate)),
        Arc::new(crate::tools::ops::LocalProcess::default()),
        "/ws",
        true,
    )
    .unwrap();
    crate::tools::Registry::builder(workspace)
        .limits(Limits {
            grep_timeout,
            ..Limits::default()
        })
        .build()
        .unwrap()
}

/// A worker that cannot notice the stop (a regex inside one huge line)
/// does not hold the call: the time budget and the caller's cancellation
/// end it all the same, and the worker finishes on its own.
#[tokio::test]
async fn a_worker_that_cannot_stop_does_not_hold_the_call() {
    let gate = Arc::new(Gate::default());
    let call = crate::tools::ToolCall::new("c", "grep", json!({"pattern": "needle"}));
    // Without the fix the call waits for the stuck worker forever; the
    // guard turns that hang into a failure.
    let guard = std::time::Duration::from_secs(60);
    let registry = stuck_registry(Some(0.05), "stuck.txt", Arc::clone(&gate));
    let r = tokio::time::timeout(
        guard,
        registry.dispatch(&call, CancellationToken::new(), UpdateSink::discard()),
    )
    .await
    .expect("the time budget ends the call");
    assert_eq!(r.details, Some(json!({"timed_out": true, "timeout": 0.05})));
    let registry = stuck_registry(None, "stuck.txt", Arc::clone(&gate));
    let cancel = CancellationToken::new();
    let dispatch = registry.dispatch(&call, cancel.clone(), UpdateSink::discard());
    let (r, ()) = tokio::join!(tokio::time::timeout(guard, dispatch), async {
        // Cancel once the search is under way.
        tokio::task::yield_now().await;
        cancel.cancel();
    });
    assert_eq!(
        r.expect("the cancellation ends the call").text(),
        crate::tools::ToolResult::from(ToolError::cancelled()).text()
    );
    gate.open();
}

#[tokio::test]
async fn a_search_past_its_time_budget_stops_with_an_error() {
    // The search of the endless file can only end by the budget. (Paused
    // time does not advance while blocking work runs, so the clock is real.)
    let registry = endless_registry(Some(0.05));
    let r = registry
        .dispatch(
            &crate::tools::ToolCall::new("c", "grep", json!({"pattern": "needle"})),
            CancellationToken::new(),
            UpdateSink::discard(),
        )
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "grep stopped after 0.05 seconds, its time limit, before the search was done; nothing \
         is shown because the matches found so far need not be the first ones. Narrow the \
         search with path or glob, or use a simpler pattern."
    );
    assert_eq!(r.details, Some(json!({"timed_out": true, "timeout": 0.05})));
    // A caller's cancellation is still a cancellation, not a timeout.
    let cancel = CancellationToken::new();
    let call = crate::tools::ToolCall::new("c", "grep", json!({"pattern": "needle"}));
    let registry = endless_registry(None);
    let (r, ()) = tokio::join!(
        registry.dispatch(&call, cancel.clone(), UpdateSink::discard()),
        async { cancel.cancel() }
    );
    assert_eq!(
        r.text(),
        crate::tools::ToolResult::from(ToolError::cancelled()).text()
    );
}

#[tokio::test]
async fn an_invalid_configured_time_budget_is_an_internal_error() {
    for secs in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let registry = endless_registry(Some(secs));
        let r = registry
            .dispatch(
                &crate::tools::ToolCall::new("c", "grep", json!({"pattern": "needle"})),
                CancellationToken::new(),
                UpdateSink::discard(),
            )
            .await;
        assert!(r.internal_error.is_some(), "{secs}");
    }
}
