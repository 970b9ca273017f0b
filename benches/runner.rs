//! 200 small scenarios end to end through the synchronous
//! `Runner::execute`.
//!
//! The scenarios (8 under `--test`) are generated at start as one
//! multi-document YAML text and loaded with `load_text`, as `harness run`
//! loads a file. Each gets a fresh temporary workspace with two files and
//! runs a six-call script through the real registry and agent loop with
//! the faux model: read, grep, edit, a parallel ls + find, write, then a
//! final message; its per-call and workspace checks all hold. No bash
//! (process start-up would dominate and depends on the machine more than
//! on the runner).
//!
//! `runner/200_scenarios` measures `RunnerBuilder::build` and
//! `Runner::execute` (runtime start-up, the workspaces, the loop, the
//! checks, clean-up) with the default number of jobs (the number of cores); `load_text` measures parsing and validating
//! the YAML. Throughput is in scenarios per second.
//!
//! Run: `cargo bench --bench runner` (or `-- --test` for a quick check).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup panics on failure"
)]

mod common;

use std::hint::black_box;
use std::path::Path;

use criterion::Throughput;
use harness::run::RunSummary;
use harness::run::RunnerBuilder;
use harness::run::Scenario;
use harness::run::Status;
use harness::run::Suite;
use harness::run::Tokenizer;
use harness::run::load_text;

/// Scenario `i`, as YAML.
fn scenario(i: usize) -> String {
    format!(
        r#"name: bench scenario {i}
tags: [bench]
workspace:
  files:
    src/lib.rs: "pub fn value() -> u32 {{\n    // TODO: tune\n    {i}\n}}\n"
    notes.txt: "alpha\nbeta\ngamma\n"
model:
  - call: read
    args: {{ path: src/lib.rs }}
    expect: {{ ok: true, contains: "pub fn value", lines: 4 }}
  - call: grep
    args: {{ pattern: TODO }}
    expect: {{ ok: true, contains: "src/lib.rs:2:" }}
  - call: edit
    args: {{ path: src/lib.rs, edits: [{{ oldText: "    {i}\n", newText: "    {i} + 1\n" }}] }}
    expect: {{ ok: true }}
  - parallel:
      - call: ls
        args: {{}}
        expect: {{ contains: "notes.txt" }}
      - call: find
        args: {{ pattern: "*.rs" }}
        expect: {{ contains: "src/lib.rs" }}
  - call: write
    args: {{ path: out/result.txt, content: "done {i}\n" }}
    expect: {{ ok: true }}
  - say: Done.
expect:
  files:
    src/lib.rs: {{ contains: "{i} + 1" }}
    out/result.txt: "done {i}\n"
  order: [read, grep, edit, ls, find, write]
  stats: {{ errors: 0, retries: 0 }}
"#
    )
}

fn main() {
    let test_mode = common::test_mode();
    let count = if test_mode { 8 } else { 200 };
    eprintln!("runner bench: {}", common::describe_machine());
    let text: String = (0..count).map(scenario).collect::<Vec<_>>().join("---\n");
    let path = Path::new("bench.yaml");
    let (scenarios, errors) = load_text(path, &text, &Suite::default());
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(scenarios.len(), count);

    // The figures are counted with chars4, as `Runner::run` did.
    let run = |scenarios: Vec<Scenario>| -> RunSummary {
        RunnerBuilder::new(scenarios)
            .tokenizer(Tokenizer::parse("chars4").ok())
            .build()
            .unwrap()
            .execute(|_| {})
            .unwrap()
    };
    // Every scenario must pass before the run's speed means anything.
    let summary = run(scenarios.clone());
    for outcome in summary.scenarios() {
        assert_eq!(
            outcome.status(),
            Status::Passed,
            "{}: {:?}",
            outcome.name(),
            outcome.failures()
        );
    }
    assert_eq!(summary.count(Status::Passed), count);

    let mut criterion = common::criterion(10, 20);
    let mut group = criterion.benchmark_group("runner");
    group.throughput(Throughput::Elements(count as u64));
    group.bench_function(format!("{count}_scenarios"), |b| {
        b.iter(|| {
            let summary = run(black_box(scenarios.clone()));
            assert_eq!(summary.count(Status::Passed), count);
            summary.figures().calls
        });
    });
    group.bench_function("load_text", |b| {
        b.iter(|| black_box(load_text(path, black_box(&text), &Suite::default())));
    });
    group.finish();
    criterion.final_summary();
}
