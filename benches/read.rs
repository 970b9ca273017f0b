//! `read` on a 100 MB file: the first, a middle and the last page, against
//! counting the file's lines.
//!
//! At start the bench writes a 100 MB text file of lines of 20 to 100 bytes
//! (about 1.7 million lines; 1 MB under `--test`) into a temporary
//! directory, so it is in the page cache for every iteration. Group
//! `read_100MB` (throughput: the file's bytes per second):
//!
//! - `count_lines`: the reference. Read the file in 256 KB chunks and count
//!   newlines with `memchr`; the least any reader that reports "of N
//!   lines" must do (the read tool reports the total, so it reads it all);
//! - `first_page`, `middle_page`, `last_page`: the `read` tool through the
//!   registry, as a model calls it, with no offset, the middle line as
//!   offset, and an offset whose page reaches the end of the file.
//!
//! The target (benches/README.md): the first page within 1.2× of
//! `count_lines`.
//!
//! Run: `cargo bench --bench read` (or `-- --test` for a quick check).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup panics on failure"
)]

mod common;

use std::hint::black_box;
use std::io::Read;
use std::io::Write;
use std::path::Path;

use criterion::Throughput;
use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::Rng;

/// Writes `size` bytes of lines to `path`; returns the number of lines.
fn generate(path: &Path, size: usize) -> usize {
    let mut rng = Rng(0x243F_6A88_85A3_08D3);
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut written = 0;
    let mut lines = 0;
    let mut line = String::new();
    while written < size {
        line.clear();
        let len = 20 + rng.below(80);
        common::words(&mut rng, &mut line, len);
        line.push('\n');
        file.write_all(line.as_bytes()).unwrap();
        written += line.len();
        lines += 1;
    }
    file.flush().unwrap();
    lines
}

/// The reference: newlines counted in 256 KB chunks (the read tool's chunk
/// size).
fn count_lines(path: &Path) -> usize {
    let mut file = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; 256 * 1024];
    let mut count = 0;
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            return count;
        }
        count += memchr::memchr_iter(b'\n', &buf[..n]).count();
    }
}

fn read(rt: &tokio::runtime::Runtime, registry: &Registry, args: &Value) -> String {
    let result = rt.block_on(registry.dispatch(
        &ToolCall::new("bench", "read", args.clone()),
        CancellationToken::new(),
        UpdateSink::discard(),
    ));
    assert!(!result.is_error, "read failed: {}", result.text());
    result.text()
}

fn main() {
    let test_mode = common::test_mode();
    let size = if test_mode { 1 << 20 } else { 100 << 20 };
    eprintln!("read bench: {}", common::describe_machine());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let started = std::time::Instant::now();
    let total = generate(&path, size);
    let bytes = std::fs::metadata(&path).unwrap().len();
    eprintln!(
        "read bench: {} lines, {bytes} bytes, generated in {:.1?}",
        total,
        started.elapsed()
    );

    let registry = Registry::builder(Workspace::local(dir.path()).unwrap())
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let cases = [
        ("first_page", json!({ "path": "big.txt" }), 1),
        (
            "middle_page",
            json!({ "path": "big.txt", "offset": total / 2 }),
            total / 2,
        ),
        (
            "last_page",
            json!({ "path": "big.txt", "offset": total - 299 }),
            total - 299,
        ),
    ];
    // The pages must be right before their speed means anything.
    assert_eq!(count_lines(&path), total);
    for (name, args, first) in &cases {
        let text = read(&rt, &registry, args);
        if *name == "last_page" {
            assert!(!text.contains("[Showing lines"), "{name} is not the last");
            assert_eq!(text.lines().count(), 300);
        } else {
            let notice = format!("[Showing lines {first}-");
            assert!(
                text.contains(&notice),
                "{name}: {}",
                &text[text.len() - 120..]
            );
            assert!(text.contains(&format!(" of {total} (50.0KB limit). Use offset=")));
        }
    }

    let mut criterion = common::criterion(20, 5);
    let mut group = criterion.benchmark_group(format!("read_{}", common::size_label(size)));
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("count_lines", |b| {
        b.iter(|| black_box(count_lines(black_box(&path))));
    });
    for (name, args, _) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| black_box(read(&rt, &registry, args).len()))
        });
    }
    group.finish();
    criterion.final_summary();
}
