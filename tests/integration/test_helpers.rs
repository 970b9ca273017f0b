//! Shared helpers for the property tests: the `arb_*` proptest strategies,
//! small reference implementations the properties compare against, and a
//! registry on a temporary workspace. At the end, the helpers of the
//! whole-output snapshots of the CLI tests.
//!
//! The strategies generate what the tools meet in practice, biased towards
//! the places where they can go wrong: empty lines, a missing or present
//! final newline, `\r`, multibyte characters of every UTF-8 length, the
//! characters fuzzy matching rewrites (smart quotes, unicode dashes and
//! spaces, trailing whitespace), and limits small enough to cut.

use std::path::Path;
use std::path::PathBuf;

use harness::tools::Limits;
use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::ToolResult;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use harness::tools::truncate::TruncationLimits;
use proptest::prelude::*;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------
// Text

/// One character of ordinary text, multibyte and `\r` included, never `\n`.
/// Weighted towards ASCII so lines look like code.
pub(crate) fn arb_text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        12 => prop::char::range('a', 'z'),
        3 => Just(' '),
        1 => Just('\t'),
        1 => Just('\r'),
        1 => Just('é'),     // 2 bytes
        1 => Just('中'),    // 3 bytes
        1 => Just('🙂'),    // 4 bytes
    ]
}

/// A line (without its `\n`) of up to `max_chars` characters.
pub(crate) fn arb_line(max_chars: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(arb_text_char(), 0..=max_chars).prop_map(|c| c.into_iter().collect())
}

/// Lines joined by `\n`, with or without a final newline.
pub(crate) fn arb_text(max_lines: usize, max_chars: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(arb_line(max_chars), 0..=max_lines),
        any::<bool>(),
    )
        .prop_map(|(lines, final_newline)| join_lines(&lines, final_newline))
}

/// Text for the truncation kernels: usually many short lines, sometimes a
/// few long ones, sometimes one line with no newline at all.
pub(crate) fn arb_truncation_text() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => arb_text(40, 12),
        2 => arb_text(6, 80),
        1 => arb_line(200),
        1 => Just(String::new()),
        1 => prop::collection::vec(Just('\n'), 1..5).prop_map(|c| c.into_iter().collect()),
    ]
}

/// Caps small enough to cut the texts above, including the degenerate
/// zero caps and "no line cap".
pub(crate) fn arb_limits() -> impl Strategy<Value = TruncationLimits> {
    let lines = prop_oneof![4 => 0usize..12, 1 => Just(usize::MAX)];
    let bytes = prop_oneof![1 => 0usize..4, 4 => 0usize..160, 1 => 160usize..2000];
    (lines, bytes).prop_map(|(max_lines, max_bytes)| TruncationLimits {
        max_lines,
        max_bytes,
    })
}

/// A text whose every line fits in `max_bytes` (so paging through it with
/// head truncation always makes progress), and limits that fit it. Mostly
/// small files cut into many pages; sometimes files of tens of kilobytes,
/// so that reading crosses the 8 KB sniffing buffer.
pub(crate) fn arb_pageable() -> impl Strategy<Value = (String, TruncationLimits)> {
    let small = (1usize..8, 8usize..96, Just(60usize));
    let large = (20usize..200, 96usize..4096, Just(400usize));
    prop_oneof![4 => small, 1 => large].prop_flat_map(|(max_lines, max_bytes, lines)| {
        // A character is at most 4 bytes, so max_bytes / 4 characters fit.
        let text = arb_text(lines, (max_bytes / 4).min(64));
        (
            text,
            Just(TruncationLimits {
                max_lines,
                max_bytes,
            }),
        )
    })
}

/// `lines` joined by `\n`, plus a final `\n` when asked and there is text.
pub(crate) fn join_lines(lines: &[String], final_newline: bool) -> String {
    let mut text = lines.join("\n");
    if final_newline && !lines.is_empty() {
        text.push('\n');
    }
    text
}

/// The lines of `text` as the truncation module counts them: none for the
/// empty string, and a final `\n` ends the last line instead of starting
/// another one.
pub(crate) fn lines_of(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

/// Byte offset where each line of `text` starts (as [`lines_of`] counts).
pub(crate) fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    for line in lines_of(text) {
        starts.push(at);
        at += line.len() + 1;
    }
    starts
}

// ---------------------------------------------------------------------------
// Edits

/// Characters fuzzy matching rewrites (§edit.5): smart quotes, unicode
/// dashes, unicode spaces. None of them composes under NFKC with a
/// neighbour, so an exact occurrence is also an occurrence after
/// normalisation.
const FUZZY_CHARS: &[char] = &[
    '\u{2018}', '\u{2019}', '\u{201C}', '\u{201D}', '\u{2013}', '\u{2014}', '\u{2212}', '\u{00A0}',
    '\u{202F}', '\u{3000}',
];

/// One character of a line body in an anchored file: ASCII, a few
/// multibyte letters and the characters fuzzy matching rewrites. Never
/// `@` or `#` (anchors and replacement markers) or `\r`/`\n`.
pub(crate) fn arb_body_char() -> impl Strategy<Value = char> {
    prop_oneof![
        10 => prop::char::range('a', 'z'),
        3 => Just(' '),
        1 => Just('\t'),
        1 => Just('é'),
        1 => Just('中'),
        2 => prop::sample::select(FUZZY_CHARS),
    ]
}

/// A file for edit properties: line `i` is
/// `{indent}@{i}@{body}{trailing whitespace}`, so every anchor `@i@` occurs
/// exactly once, even after fuzzy normalisation.
#[derive(Clone, Debug)]
pub(crate) struct AnchoredFile {
    /// The lines, without line endings.
    pub lines: Vec<String>,
    /// Whether the last line ends with a line ending.
    pub final_newline: bool,
}

impl AnchoredFile {
    /// The content with `\n` line endings.
    pub(crate) fn lf(&self) -> String {
        join_lines(&self.lines, self.final_newline)
    }

    /// Byte range of the anchor of line `i` inside that line.
    pub(crate) fn anchor_range(&self, i: usize) -> std::ops::Range<usize> {
        let anchor = format!("@{i}@");
        let start = self.lines[i].find(&anchor).unwrap_or(0);
        start..start + anchor.len()
    }
}

/// An [`AnchoredFile`] of 1 to `max_lines` lines.
pub(crate) fn arb_anchored_file(max_lines: usize) -> impl Strategy<Value = AnchoredFile> {
    let line = (
        prop::sample::select(vec!["", "  ", "\t", "    "]),
        prop::collection::vec(arb_body_char(), 0..16),
        prop::sample::select(vec!["", " ", "  ", "\t", "\u{00A0}", " \u{3000}"]),
    );
    (prop::collection::vec(line, 1..=max_lines), any::<bool>()).prop_map(
        |(parts, final_newline)| AnchoredFile {
            lines: parts
                .into_iter()
                .enumerate()
                .map(|(i, (indent, body, trailing))| {
                    let body: String = body.into_iter().collect();
                    format!("{indent}@{i}@{body}{trailing}")
                })
                .collect(),
            final_newline,
        },
    )
}

/// Replacement text: never empty, never containing an anchor, always
/// holding the marker `#{tag}#` so it is unique in the result.
pub(crate) fn replacement(tag: usize, filler: &str, newline: bool) -> String {
    let mut text = format!("#{tag}#{filler}");
    if newline {
        text.push('\n');
    }
    text
}

/// Filler for replacement texts (may hold newlines and fuzzy characters).
pub(crate) fn arb_filler() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![8 => arb_body_char(), 1 => Just('\n')], 0..10)
        .prop_map(|c| c.into_iter().collect())
}

// ---------------------------------------------------------------------------
// Registry

/// The configuration of a property with `cases` cases by default: an
/// explicit `PROPTEST_CASES` always wins (proptest reads it into
/// [`ProptestConfig::default`]); without it, expensive properties keep a
/// modest count and cheap ones a larger one.
pub(crate) fn cases(cases: u32) -> ProptestConfig {
    let config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_some() {
        config
    } else {
        ProptestConfig { cases, ..config }
    }
}

/// A registry on a temporary local workspace, with a current-thread
/// runtime to call it from synchronous property tests.
pub(crate) struct ToolBench {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
    /// The registry.
    pub registry: Registry,
    runtime: tokio::runtime::Runtime,
}

impl ToolBench {
    /// A registry with default limits.
    pub(crate) fn new() -> Self {
        Self::with_limits(Limits::default())
    }

    /// A registry with these limits.
    pub(crate) fn with_limits(limits: Limits) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::builder(Workspace::local(dir.path()).unwrap())
            .limits(limits)
            .build()
            .unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Self {
            dir,
            registry,
            runtime,
        }
    }

    /// The absolute path of a workspace file.
    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Calls a tool and returns its one result.
    pub(crate) fn call(&self, tool: &str, args: Value) -> ToolResult {
        let call = ToolCall::new("prop", tool, args);
        self.runtime.block_on(self.registry.dispatch(
            &call,
            CancellationToken::new(),
            UpdateSink::discard(),
        ))
    }
}

// ---------------------------------------------------------------------------
// Whole-output snapshots (cli.rs, run.rs, reports.rs)

/// What a command printed, stdout then stderr, as one text for a snapshot.
/// Each stream is shown exactly as printed: a missing final newline glues
/// the next header to the last line, so it shows in the snapshot too
/// (insta ignores trailing whitespace at the end of a snapshot). The exit
/// code is asserted on its own, before the snapshot.
pub(crate) fn printed(out: &std::process::Output) -> String {
    format!(
        "--- stdout\n{}--- stderr\n{}--- end\n",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// [`printed`] for `harness run`: the lines it prints as each scenario
/// finishes (`PASS  …`, `FAIL  …`, `SKIP  …`, the first lines of stdout)
/// come in the order the scenarios finish, which depends on scheduling
/// even with `--jobs 1`, so the snapshot holds them sorted. Everything
/// after them (failures, summary, baseline, gates) is in discovery order
/// and kept as printed.
pub(crate) fn printed_run(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let is_result = |line: &&str| {
        ["PASS  ", "FAIL  ", "SKIP  "]
            .iter()
            .any(|p| line.starts_with(p))
    };
    let mut lines: Vec<&str> = stdout.split_inclusive('\n').collect();
    let results = lines.iter().take_while(|l| is_result(l)).count();
    lines[..results].sort_unstable();
    let sorted = std::process::Output {
        status: out.status,
        stdout: lines.concat().into_bytes(),
        stderr: out.stderr.clone(),
    };
    printed(&sorted)
}

/// A file's text for a snapshot, with an end marker so that its final
/// newline (or the lack of one) is part of the snapshot.
pub(crate) fn file_text(text: &str) -> String {
    format!("{text}--- end of file\n")
}

/// insta settings for the snapshots of `harness` output: the snapshots
/// live in tests/integration/snapshots/, and filters replace what changes
/// from run to run with a fixed placeholder:
///
/// - each of `temp_dirs` (as given and canonical): `[tmp]`;
/// - durations: `(3 calls, 12 ms)` and `in 0.1 s` on the console,
///   `· 0.1 s` in summary.md, `time="0.012"` in junit.xml and
///   `"duration_ms": 12` in run.json (the CSVs' `duration_ms` column is
///   redacted where they are read, in reports.rs);
/// - `"harness_version"` in run.json, so a version bump does not touch
///   the snapshots.
///
/// Token figures are not redacted: the model sees the workspace as
/// `/workspace` and never a temporary path, so token counts do not depend
/// on where the run happens (tests/integration/determinism.rs).
pub(crate) fn redacting(temp_dirs: &[&Path]) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    let mut dirs: Vec<String> = Vec::new();
    for dir in temp_dirs {
        dirs.push(dir.display().to_string());
        if let Ok(canonical) = dir.canonicalize() {
            dirs.push(canonical.display().to_string());
        }
    }
    // Longest first, so a temp dir inside another is replaced whole.
    dirs.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    dirs.dedup();
    for dir in &dirs {
        settings.add_filter(&regex::escape(dir), "[tmp]");
    }
    settings.add_filter(r"(\(\d+ calls?), \d+ ms\)", "$1, [ms] ms)");
    settings.add_filter(r" in \d+\.\d s\b", " in [secs] s");
    settings.add_filter(r" · \d+\.\d s\b", " · [secs] s");
    settings.add_filter(r#"\btime="[0-9.]+""#, r#"time="[secs]""#);
    settings.add_filter(r#""duration_ms": \d+"#, r#""duration_ms": "[ms]""#);
    // What a scenario's sandbox enforced depends on the machine's kernel
    // (tests/integration/sandbox_run.rs checks it).
    settings.add_filter(
        r#"(?s)"sandbox": \{\n\s*"fs": .*?"processes": \{[^}]*\}\s*\}"#,
        r#""sandbox": "[sandbox]""#,
    );
    settings.add_filter(
        r#""harness_version": "[^"]*""#,
        r#""harness_version": "[version]""#,
    );
    settings
}

// ---------------------------------------------------------------------------
// The MCP test server

/// The misbehaving MCP server of the tests (tests/fixtures/mcp_fixture.rs,
/// an example target: `cargo test` builds it into the `examples` folder
/// beside the harness binary's).
pub(crate) fn mcp_fixture() -> String {
    let harness = Path::new(env!("CARGO_BIN_EXE_harness"));
    let path = harness
        .parent()
        .map(|dir| dir.join("examples").join("mcp_fixture"))
        .unwrap_or_default();
    assert!(
        path.is_file(),
        "{} is missing: `cargo test` builds it (or `cargo build --example mcp_fixture`)",
        path.display()
    );
    path.display().to_string()
}

/// `yaml` with each server command `["${harness}", mcp-fixture…` made the
/// test server's (`["/…/mcp_fixture"…`).
pub(crate) fn with_mcp_fixture(yaml: &str) -> String {
    yaml.replace(
        "[\"${harness}\", mcp-fixture",
        &format!("[\"{}\"", mcp_fixture()),
    )
}
