//! `harness import codex` end to end (docs/replay.md, "Codex's tools"): a
//! rollout written from what Codex CLI 0.171.0 records
//! (tests/fixtures/import/codex-rollout.jsonl: commands in and out of the
//! working directory, a failing one, a command Codex kept running and
//! polled, patches that add, update, move, delete and fail, a patch piped
//! into `apply_patch` by a command, a second turn in another directory, a
//! call never answered) imports and replays against the files it started
//! from (codex-ws), every call agreeing; and each importer names the one a
//! file belongs to.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use insta::assert_snapshot;
use serde_json::Value;
use serde_json::json;

use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;

const LIMIT: Duration = Duration::from_secs(120);

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import")
        .join(name)
        .display()
        .to_string()
}

/// `text` with the fixtures directory written as `FIXTURES`.
fn redact(text: &str) -> String {
    text.replace(&fixture(""), "FIXTURES/")
}

/// A temp dir for a test: `work` (the command's directory), `tmp`, `state`.
struct Dirs {
    root: tempfile::TempDir,
}

impl Dirs {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for d in ["work", "tmp", "state"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        Self { root }
    }
    fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = harness(
            &self.work(),
            &self.root.path().join("tmp"),
            &self.root.path().join("state"),
        );
        cmd.args(args);
        let out = output_within(cmd, LIMIT);
        let (stdout, stderr) = texts(&out);
        (out.status.code().unwrap_or(-1), stdout, stderr)
    }
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.work().join(rel)).unwrap()
    }
}

#[test]
fn a_codex_rollout_imports_and_every_call_replays_in_agreement() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "codex",
        &fixture("codex-rollout.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("codex-ws"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (stdout.as_str(), redact(&stderr).as_str()),
        (
            "wrote 1 scenario to imported: 20 calls replayed, 3 not replayed, 2 problems in the \
             session (above)\ncalls in file: 21 = replayed 18 + listed 3\n",
            "FIXTURES/codex-rollout.jsonl:39: Codex's `write_stdin` polls a command it kept \
             running (session 83015); the command is replayed to its end, and this output is \
             part of its answer; its call is skipped\n\
             FIXTURES/codex-rollout.jsonl:41: Codex's `update_plan` keeps the client's plan; its \
             call is skipped\n"
        )
    );
    assert_snapshot!("codex_rollout_yaml", d.read("imported/codex-rollout.yaml"));
    // The files end as Codex left them (as the real Codex run this
    // rollout was written from left them).
    let mut scenario = d.read("imported/codex-rollout.yaml");
    scenario.push_str(
        "expect:\n  files:\n    hello.txt: \"hello world\\nappended line\\n\"\n    \
         new.txt: \"first line\\nsecond line\\n\"\n    via-exec.txt: \"from exec\\n\"\n    \
         src/lib.rs: \"pub fn greet() {\\n    println!(\\\"hello harness\\\");\\n}\\n\\npub \
         fn other() {\\n    2\\n}\\n\"\n    docs/b.md: \"# B\\n\\ntext\\n\"\n    docs/a.md: { \
         absent: true }\n    notes/old.txt: { absent: true }\n    never.txt: { absent: true \
         }\n",
    );
    std::fs::write(d.work().join("imported/codex-rollout.yaml"), scenario).unwrap();
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run: Value = serde_json::from_str(&d.read("out/run.json")).unwrap();
    let calls: Vec<(&str, bool, &str)> = run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["tool"].as_str().unwrap(),
                c["recorded_is_error"].as_bool().unwrap(),
                c["agreement"].as_str().unwrap(),
            )
        })
        .collect();
    // Every command's output and every patch's effect is today's as it
    // was: only the presentation differs (Codex's header, our wording).
    assert_eq!(
        calls,
        [
            ("bash", false, "presentation"),
            ("bash", false, "presentation"),
            ("bash", false, "presentation"),
            ("bash", true, "presentation"),
            ("bash", false, "presentation"),
            ("bash", false, "presentation"),
            ("bash", false, "presentation"),
            ("write", false, "presentation"),
            ("edit", false, "presentation"),
            ("bash", false, "presentation"),
            ("edit", false, "presentation"),
            ("bash", false, "presentation"),
            ("edit", true, "presentation"),
            ("edit", true, "presentation"),
            ("edit", false, "presentation"),
            ("edit", true, "presentation"),
            ("write", false, "presentation"),
            ("bash", false, "presentation"),
            ("bash", true, "presentation"),
            ("bash", false, "presentation"),
        ]
    );
    assert_eq!(
        [
            &run["replay"]["calls"],
            &run["replay"]["error_agree"],
            &run["replay"]["skipped"],
        ],
        [&json!(20), &json!(20), &json!(3)]
    );
}

#[test]
fn each_importer_names_the_one_a_file_belongs_to() {
    let d = Dirs::new();
    let refused = |format: &str, file: &str| {
        let (code, stdout, stderr) = d.run(&["import", format, &fixture(file), "-o", "x"]);
        assert_eq!((code, stdout.as_str()), (2, ""), "{format} {file}");
        redact(&stderr)
    };
    let codex = "looks like a Codex CLI rollout (JSON lines of `session_meta`, `response_item`, …); \
                 import it with `harness import codex`\n";
    for format in ["pi", "claude", "gemini"] {
        assert_eq!(
            refused(format, "codex-rollout.jsonl"),
            format!("error: FIXTURES/codex-rollout.jsonl {codex}")
        );
    }
    assert_eq!(
        [
            refused("codex", "pi-session.jsonl"),
            refused("codex", "claude-session.jsonl"),
            refused("codex", "gemini-session.json"),
        ],
        [
            "error: FIXTURES/pi-session.jsonl looks like a pi session (JSON lines); import it \
             with `harness import pi`\n",
            "error: FIXTURES/claude-session.jsonl looks like a Claude Code transcript (JSON \
             lines); import it with `harness import claude`\n",
            "error: FIXTURES/gemini-session.json looks like a Gemini CLI session (one JSON object \
             with `messages`, or its JSON lines: metadata, then messages); import it with \
             `harness import gemini`\n",
        ]
    );
    // What `codex exec --json` prints is no rollout.
    let exec = d.work().join("exec.jsonl");
    std::fs::write(
        &exec,
        "{\"type\":\"thread.started\",\"thread_id\":\"01a2\"}\n{\"type\":\"turn.started\"}\n",
    )
    .unwrap();
    let (code, _, stderr) = d.run(&["import", "codex", "exec.jsonl", "-o", "x"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: exec.jsonl looks like Codex CLI's `codex exec --json` output, not a rollout; \
             `harness import codex` reads the rollout files in ~/.codex/sessions/YYYY/MM/DD/\n"
        )
    );
    assert!(!d.work().join("x").exists());
}

#[test]
fn the_minimal_codex_rollout_of_the_docs_imports_and_replays() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/replay.md"))
        .unwrap();
    let block = doc
        .split_once("```jsonl codex\n")
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map(|(block, _)| block)
        .expect("docs/replay.md has a ```jsonl codex block");
    let d = Dirs::new();
    std::fs::create_dir_all(d.work().join("proj/src")).unwrap();
    std::fs::write(d.work().join("proj/src/app.ts"), "export {};\n").unwrap();
    std::fs::write(d.work().join("codex.jsonl"), block).unwrap();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "codex",
        "codex.jsonl",
        "-o",
        "replays",
        "--workspace",
        "proj",
    ]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "wrote 1 scenario to replays: 1 call replayed, 0 not replayed\ncalls in file: 1 = \
             replayed 1 + listed 0\n",
            ""
        )
    );
    assert_snapshot!("docs_minimal_codex_yaml", d.read("replays/codex.yaml"));
    let (code, stdout, _) = d.run(&["run", "replays", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run: Value = serde_json::from_str(&d.read("out/run.json")).unwrap();
    assert_eq!(
        run["scenarios"][0]["calls"][0]["agreement"],
        json!("presentation")
    );
}
