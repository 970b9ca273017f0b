//! grep against ripgrep on a generated tree.
//!
//! At start the bench writes a deterministic tree of source-like files
//! (about 120 MB; about 1 MB under `--test`) into a temporary directory,
//! with a `.gitignore` that hides a `target/` directory and `*.log` files,
//! hidden directories, and a few binary files. Every iteration searches the
//! same tree, so after warm-up it is in the page cache.
//!
//! Groups: a literal, a case-insensitive word, a regex; each without and
//! with a glob (`*.rs`); and `walk`, the walker through find (`*.rs`, every
//! result) and a limited grep (`fn `, limit 100, which prunes the walk).
//! Per group of the first three:
//!
//! - `harness`: the `grep` tool through the registry, as a model calls it,
//!   with a limit high enough to collect every match (the text is still cut
//!   at 50 KB, as always);
//! - `rg`: `rg -n --hidden --no-require-git …`, unsorted: ripgrep's
//!   fastest mode (with `--sort path` it searches on one thread), the one to
//!   beat. The `harness` output stays sorted.
//!
//! Whole processes on a real tree are compared by `benches/compare.sh`.
//! The rg variant is skipped when `rg` is not on PATH. Before measuring,
//! each case checks that both tools find the same number of matching lines;
//! under `--test` a mismatch fails the run.
//!
//! Run: `cargo bench --bench grep` (or `-- --test` for a quick check).
//! With `GREP_BENCH_DIR=/some/dir` the tree is written there and kept.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "benchmark setup panics on failure"
)]

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

mod common;

use criterion::BenchmarkId;
use criterion::Criterion;
use harness::tools::Registry;
use harness::tools::ToolCall;
use harness::tools::UpdateSink;
use harness::tools::Workspace;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::Rng;

const IDENTS: &[&str] = &[
    "config", "value", "buffer", "index", "item", "result", "state", "count", "entry", "node",
    "request", "response", "handler", "Handler", "HANDLER", "path", "name", "len", "offset",
    "reader", "writer", "cache", "token", "session", "user_id", "parse", "render", "update",
];
const TYPES: &[&str] = &[
    "u32",
    "u64",
    "usize",
    "String",
    "Vec<u8>",
    "Option<u32>",
    "Config",
    "Result<(), Error>",
];
const WORDS: &[&str] = &[
    "the", "value", "is", "read", "from", "disk", "and", "then", "cached", "for", "later", "use",
    "note", "this", "handles", "errors", "when", "input", "ends",
];

/// One line of made-up source code.
fn line(rng: &mut Rng, out: &mut String) {
    let indent = "    ".repeat(rng.below(3));
    out.push_str(&indent);
    match rng.below(12) {
        0 => {
            let name = rng.pick(IDENTS).to_lowercase();
            let suffix = rng.pick(&["count", "id", "len", "total", "name"]);
            out.push_str(&format!(
                "pub fn {name}_{suffix}(&self, {}: {}) -> {} {{",
                rng.pick(IDENTS).to_lowercase(),
                rng.pick(TYPES),
                rng.pick(TYPES)
            ));
        }
        1 => {
            let words: Vec<&str> = (0..6).map(|_| rng.pick(WORDS)).collect();
            let tag = if rng.below(8) == 0 { "TODO: " } else { "" };
            out.push_str(&format!("// {tag}{}", words.join(" ")));
        }
        2 => out.push_str(&format!(
            "let {} = {}.{}({});",
            rng.pick(IDENTS).to_lowercase(),
            rng.pick(IDENTS),
            rng.pick(IDENTS).to_lowercase(),
            rng.below(10_000)
        )),
        3 if rng.below(40) == 0 => out.push_str("self.process_request(ctx, &request)?;"),
        4 => out.push_str(&format!(
            "if {} > {} {{ return Err(Error::new(\"{} {}\")); }}",
            rng.pick(IDENTS).to_lowercase(),
            rng.below(1000),
            rng.pick(WORDS),
            rng.pick(WORDS)
        )),
        5 => out.push('}'),
        _ => out.push_str(&format!(
            "{}.{} = {}::from({});",
            rng.pick(IDENTS).to_lowercase(),
            rng.pick(IDENTS).to_lowercase(),
            rng.pick(TYPES),
            rng.below(100_000)
        )),
    }
    out.push('\n');
}

fn write_file(path: &Path, data: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = std::fs::File::create(path).unwrap();
    file.write_all(data).unwrap();
}

/// Writes the tree; returns the total bytes written outside ignored parts.
fn generate(root: &Path, files: usize, lines_per_file: usize) -> u64 {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let exts = ["rs", "rs", "ts", "py", "md"];
    let mut searched = 0u64;
    write_file(&root.join(".gitignore"), b"target/\n*.log\n");
    for i in 0..files {
        let depth = 1 + rng.below(4);
        let mut dir = PathBuf::new();
        for _ in 0..depth {
            dir.push(format!(
                "{}{}",
                rng.pick(IDENTS).to_lowercase(),
                rng.below(6)
            ));
        }
        let ext = exts[rng.below(exts.len())];
        let path = if i % 97 == 0 {
            // Some hidden files, which both tools search.
            dir.join(format!(".hidden_{i}.{ext}"))
        } else {
            dir.join(format!("file_{i}.{ext}"))
        };
        let lines = lines_per_file / 2 + rng.below(lines_per_file);
        let mut text = String::with_capacity(lines * 40);
        for _ in 0..lines {
            line(&mut rng, &mut text);
        }
        if i % 500 == 0 {
            // A binary file: skipped by both.
            let mut data = text.clone().into_bytes();
            data.insert(10, 0);
            write_file(&root.join(&dir).join(format!("blob_{i}.bin")), &data);
        }
        searched += text.len() as u64;
        write_file(&root.join(path), text.as_bytes());
        if i % 10 == 0 {
            // Ignored copies: `target/` and `*.log`.
            write_file(
                &root.join("target").join(format!("gen_{i}.rs")),
                text.as_bytes(),
            );
            write_file(
                &root.join(&dir).join(format!("run_{i}.log")),
                text.as_bytes(),
            );
        }
    }
    searched
}

/// One benchmarked search.
struct Case {
    group: &'static str,
    pattern: &'static str,
    ignore_case: bool,
    literal: bool,
}

const CASES: &[Case] = &[
    Case {
        group: "literal",
        pattern: "process_request",
        ignore_case: false,
        literal: true,
    },
    Case {
        group: "case-insensitive-word",
        pattern: "todo",
        ignore_case: true,
        literal: false,
    },
    Case {
        group: "regex",
        pattern: r"fn [a-z_]+_(?:count|id)\(",
        ignore_case: false,
        literal: false,
    },
];

const GLOB: &str = "*.rs";

fn tool_args(case: &Case, glob: Option<&str>) -> Value {
    let mut args = json!({
        "pattern": case.pattern,
        "ignoreCase": case.ignore_case,
        "literal": case.literal,
        "limit": 1_000_000_000u64,
    });
    if let Some(glob) = glob {
        args["glob"] = json!(glob);
    }
    args
}

fn rg_command(root: &Path, case: &Case, glob: Option<&str>) -> Command {
    let mut cmd = Command::new("rg");
    cmd.env_remove("RIPGREP_CONFIG_PATH");
    cmd.args(["-n", "--hidden", "--no-require-git", "--color=never"]);
    if case.ignore_case {
        cmd.arg("-i");
    }
    if case.literal {
        cmd.arg("-F");
    }
    if let Some(glob) = glob {
        cmd.args(["--glob", glob]);
    }
    cmd.arg("--").arg(case.pattern).arg(root);
    cmd
}

/// Matching lines as rg counts them (one output line each, no context).
fn rg_lines(root: &Path, case: &Case, glob: Option<&str>) -> usize {
    let out = rg_command(root, case, glob).output().unwrap();
    out.stdout.iter().filter(|&&b| b == b'\n').count()
}

fn rg_available() -> bool {
    Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run_tool(rt: &tokio::runtime::Runtime, registry: &Registry, args: &Value) -> Value {
    call_tool(rt, registry, "grep", args)
}

fn call_tool(rt: &tokio::runtime::Runtime, registry: &Registry, tool: &str, args: &Value) -> Value {
    let result = rt.block_on(registry.dispatch(
        &ToolCall::new("bench", tool, args.clone()),
        CancellationToken::new(),
        UpdateSink::discard(),
    ));
    assert!(!result.is_error, "{tool} failed: {}", result.text());
    result.details.unwrap_or(Value::Null)
}

fn main() {
    let test_mode = common::test_mode();
    eprintln!("grep bench: {}", common::describe_machine());
    let (files, lines) = if test_mode { (200, 60) } else { (6000, 440) };
    // GREP_BENCH_DIR keeps the tree for runs outside criterion (e.g. to
    // time the CLI against rg by hand); by default it is a temp dir.
    let temp = tempfile::tempdir().unwrap();
    let root = match std::env::var_os("GREP_BENCH_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            dir.canonicalize().unwrap()
        }
        None => temp.path().canonicalize().unwrap(),
    };
    let started = std::time::Instant::now();
    let searched = generate(&root, files, lines);
    eprintln!(
        "grep bench: {files} files, {:.1} MB searched (plus ignored and binary files) in {}, \
         generated in {:.1?}",
        searched as f64 / 1_048_576.0,
        root.display(),
        started.elapsed()
    );

    let registry = Registry::builder(Workspace::local(&root).unwrap())
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let rg = rg_available();
    if !rg {
        eprintln!("grep bench: rg is not on PATH; the ripgrep variants are skipped");
    }

    // Both tools must agree before their speed means anything.
    for case in CASES {
        for glob in [None, Some(GLOB)] {
            let ours = run_tool(&rt, &registry, &tool_args(case, glob))["matches"]
                .as_u64()
                .unwrap_or(0) as usize;
            let theirs = if rg {
                rg_lines(&root, case, glob)
            } else {
                ours
            };
            eprintln!(
                "grep bench: {} glob={glob:?}: harness {ours} matching lines, rg {theirs}",
                case.group
            );
            if ours != theirs {
                eprintln!("grep bench: MISMATCH for {}", case.group);
                assert!(!test_mode, "harness and rg disagree on {}", case.group);
            }
            assert!(ours > 0, "the tree must contain matches for {}", case.group);
        }
    }

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8))
        .configure_from_args();
    for case in CASES {
        let mut group = criterion.benchmark_group(case.group);
        for (label, glob) in [("all", None), ("glob", Some(GLOB))] {
            let args = tool_args(case, glob);
            group.bench_with_input(BenchmarkId::new("harness", label), &args, |b, args| {
                b.iter(|| black_box(run_tool(&rt, &registry, args)));
            });
            if rg {
                group.bench_function(BenchmarkId::new("rg", label), |b| {
                    b.iter(|| {
                        let out = rg_command(&root, case, glob).output().unwrap();
                        black_box(out.stdout.len())
                    });
                });
            }
        }
        group.finish();
    }
    // The walker itself (issue 27): a whole walk that keeps every `*.rs`
    // (find), and a limited search that prunes the walk once its first
    // 101 matching lines are known (grep `fn`, limit 100).
    let mut group = criterion.benchmark_group("walk");
    let find_all = json!({"pattern": "*.rs", "limit": 10_000_000});
    group.bench_function("find_all_rs", |b| {
        b.iter(|| black_box(call_tool(&rt, &registry, "find", &find_all)));
    });
    let limited = json!({"pattern": "fn ", "literal": true, "limit": 100});
    let found = run_tool(&rt, &registry, &limited);
    assert_eq!(
        found["match_limit_reached"], 100,
        "the tree must hold over 100 `fn `"
    );
    group.bench_function("grep_limit_100", |b| {
        b.iter(|| black_box(run_tool(&rt, &registry, &limited)));
    });
    group.finish();
    criterion.final_summary();
}
