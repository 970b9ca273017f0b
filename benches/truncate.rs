//! Head and tail truncation (§common.4) over 1 MB, 10 MB and 100 MB inputs.
//!
//! Three shapes of input, generated at start from a fixed seed:
//!
//! - `short_lines`: lines of 20 to 100 bytes (log or source text);
//! - `long_lines`: lines of 1 to 8 KB (minified code, JSON dumps);
//! - `huge_line`: one line with no newline at all.
//!
//! Each shape is generated once at the largest size; the smaller inputs
//! are its prefixes, cut at a line end. `truncate_head` and `truncate_tail`
//! run with the default caps (2000 lines, 50 KB), as the tools call them;
//! `count_lines` (one `memchr` pass) is the floor both have to pay, because
//! the facts report the total line count. Throughput is input bytes per
//! second. The target (benches/README.md): at least 2 GB/s on short lines.
//!
//! Run: `cargo bench --bench truncate` (or `-- --test` for a quick check,
//! on inputs of 64 KB to 256 KB, still over the 50 KB cap).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup panics on failure"
)]

mod common;

use std::hint::black_box;

use criterion::BenchmarkId;
use criterion::Throughput;
use harness::tools::truncate::Truncated;
use harness::tools::truncate::TruncationLimits;
use harness::tools::truncate::count_lines;
use harness::tools::truncate::truncate_head;
use harness::tools::truncate::truncate_tail;

use common::Rng;

/// Lines whose lengths fall in `min..max` bytes, until `size` bytes.
fn lines(rng: &mut Rng, size: usize, min: usize, max: usize) -> String {
    let mut text = String::with_capacity(size + max + 1);
    while text.len() < size {
        let len = min + rng.below(max - min);
        common::words(rng, &mut text, len);
        text.push('\n');
    }
    text
}

/// The prefix of `text` of at most `size` bytes, cut after a newline when
/// there is one (the shapes keep their line lengths).
fn prefix(text: &str, size: usize) -> &str {
    let end = size.min(text.len());
    match memchr::memrchr(b'\n', &text.as_bytes()[..end]) {
        Some(nl) => &text[..=nl],
        None => &text[..end],
    }
}

fn main() {
    let test_mode = common::test_mode();
    let sizes: &[usize] = if test_mode {
        &[64 << 10, 128 << 10, 256 << 10]
    } else {
        &[1 << 20, 10 << 20, 100 << 20]
    };
    let largest = sizes[sizes.len() - 1];
    eprintln!("truncate bench: {}", common::describe_machine());

    let mut criterion = common::criterion(20, 3);
    let limits = TruncationLimits::default();
    for shape in ["short_lines", "long_lines", "huge_line"] {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let input = match shape {
            "short_lines" => lines(&mut rng, largest, 20, 100),
            "long_lines" => lines(&mut rng, largest, 1024, 8192),
            _ => {
                let mut text = String::with_capacity(largest + 16);
                common::words(&mut rng, &mut text, largest);
                text
            }
        };
        // The facts must be right before their speed means anything.
        for &size in sizes {
            let text = prefix(&input, size);
            let head = truncate_head(text, limits);
            let tail = truncate_tail(text, limits);
            assert_eq!(head.facts.total_bytes, text.len());
            assert_eq!(tail.facts.total_lines, count_lines(text));
            assert!(
                head.facts.truncated && tail.facts.truncated,
                "{shape}: nothing cut"
            );
            assert!(head.content.len() <= limits.max_bytes);
            assert!(tail.content.len() <= limits.max_bytes);
        }
        for (name, run) in [
            (
                "truncate_head",
                truncate_head as fn(&str, TruncationLimits) -> Truncated<'_>,
            ),
            ("truncate_tail", truncate_tail),
        ] {
            let mut group = criterion.benchmark_group(format!("{name}/{shape}"));
            for &size in sizes {
                let text = prefix(&input, size);
                group.throughput(Throughput::Bytes(text.len() as u64));
                group.bench_with_input(
                    BenchmarkId::from_parameter(common::size_label(size)),
                    text,
                    |b, text| b.iter(|| black_box(run(black_box(text), limits).facts.output_bytes)),
                );
            }
            group.finish();
        }
        let mut group = criterion.benchmark_group(format!("count_lines/{shape}"));
        for &size in sizes {
            let text = prefix(&input, size);
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_with_input(
                BenchmarkId::from_parameter(common::size_label(size)),
                text,
                |b, text| b.iter(|| black_box(count_lines(black_box(text)))),
            );
        }
        group.finish();
    }
    criterion.final_summary();
}
