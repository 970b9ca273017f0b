//! `edit` on a 10 MB file: 1 and 50 edits, exact and fuzzy.
//!
//! Two files are generated at start (256 KB each under `--test`), both of
//! numbered source lines, so every `oldText` is unique:
//!
//! - exact: `    let v0001234 = compute("arg", 1234);` — each `oldText` is
//!   a line's text as it is;
//! - fuzzy: the same lines with smart quotes and trailing spaces, while
//!   each `oldText` has ASCII quotes and no trailing spaces, so every edit
//!   only matches after normalisation (§edit.5) and the call works in
//!   normalised space, rewriting only the lines it touches (§edit.6).
//!
//! Edits are spread evenly through the file. Two layers, each with
//! throughput in file bytes per second:
//!
//! - `apply_edits/{exact,fuzzy}`: the matching engine alone, on text in
//!   memory;
//! - `edit_tool/{exact,fuzzy}`: the `edit` tool through the registry, as a
//!   model calls it: read, decode, match, write back, and compute the
//!   display diff and the patch. The file is restored before every
//!   iteration, outside the measured time.
//!
//! Run: `cargo bench --bench edit` (or `-- --test` for a quick check).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup panics on failure"
)]

mod common;

use std::hint::black_box;

use criterion::BatchSize;
use criterion::BenchmarkId;
use criterion::Throughput;
use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use harness::tools::edit::matching::EditRequest;
use harness::tools::edit::matching::apply_edits;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Line `i` as the model sends it in `oldText`.
fn plain_line(i: usize) -> String {
    format!("    let v{i:07} = compute(\"arg\", {i});")
}

/// Line `i` as the fuzzy file holds it.
fn fuzzy_line(i: usize) -> String {
    format!("    let v{i:07} = compute(\u{201C}arg\u{201D}, {i});   ")
}

/// Lines `0..` of `line` until `size` bytes; returns the text and the
/// number of lines.
fn file(size: usize, line: fn(usize) -> String) -> (String, usize) {
    let mut text = String::with_capacity(size + 64);
    let mut i = 0;
    while text.len() < size {
        text.push_str(&line(i));
        text.push('\n');
        i += 1;
    }
    (text, i)
}

/// `count` edits spread evenly over `lines` lines.
fn edits(count: usize, lines: usize) -> Vec<EditRequest> {
    (0..count)
        .map(|k| {
            let i = (k * lines) / count + lines / (2 * count);
            let old = plain_line(i);
            EditRequest {
                new_text: old.replace("compute", "compute_fast"),
                old_text: old,
            }
        })
        .collect()
}

fn as_args(edits: &[EditRequest]) -> Value {
    json!({
        "path": "f.txt",
        "edits": edits
            .iter()
            .map(|e| json!({ "oldText": e.old_text, "newText": e.new_text }))
            .collect::<Vec<_>>(),
    })
}

fn main() {
    let test_mode = common::test_mode();
    let size = if test_mode { 256 << 10 } else { 10 << 20 };
    eprintln!("edit bench: {}", common::describe_machine());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    let registry = Registry::builder(Workspace::local(dir.path()).unwrap())
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dispatch = |args: &Value| {
        let result = rt.block_on(registry.dispatch(
            &ToolCall::new("bench", "edit", args.clone()),
            CancellationToken::new(),
            UpdateSink::discard(),
        ));
        assert!(!result.is_error, "edit failed: {}", result.text());
        result
    };

    let mut criterion = common::criterion(20, 5);
    for (mode, line) in [
        ("exact", plain_line as fn(usize) -> String),
        ("fuzzy", fuzzy_line),
    ] {
        let (content, lines) = file(size, line);
        let label = common::size_label(size);
        // Each case must do what it says before its speed means anything.
        for count in [1, 50] {
            let requests = edits(count, lines);
            let applied = apply_edits(&content, &requests).unwrap();
            assert_eq!(applied.fuzzy, mode == "fuzzy");
            assert_eq!(applied.changes.len(), count);
            assert_eq!(applied.content.matches("compute_fast").count(), count);
            std::fs::write(&path, &content).unwrap();
            let result = dispatch(&as_args(&requests));
            assert_eq!(
                result.text(),
                format!("Successfully replaced {count} block(s) in f.txt.")
            );
        }

        let mut group = criterion.benchmark_group(format!("apply_edits/{mode}"));
        group.throughput(Throughput::Bytes(content.len() as u64));
        for count in [1, 50] {
            let requests = edits(count, lines);
            group.bench_with_input(
                BenchmarkId::new(label.as_str(), count),
                &requests,
                |b, requests| {
                    b.iter(|| black_box(apply_edits(black_box(&content), requests).unwrap()));
                },
            );
        }
        group.finish();

        let mut group = criterion.benchmark_group(format!("edit_tool/{mode}"));
        group.throughput(Throughput::Bytes(content.len() as u64));
        for count in [1, 50] {
            let args = as_args(&edits(count, lines));
            group.bench_with_input(BenchmarkId::new(label.as_str(), count), &args, |b, args| {
                b.iter_batched(
                    || std::fs::write(&path, &content).unwrap(),
                    |()| black_box(dispatch(args)),
                    BatchSize::PerIteration,
                );
            });
        }
        group.finish();
    }
    criterion.final_summary();
}
