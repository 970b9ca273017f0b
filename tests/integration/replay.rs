//! `harness import` and the replay report, end to end, on session files
//! written by hand (tests/fixtures/import): branching, compaction, aborted
//! calls, legacy edit shapes, absolute paths in bash, images in results,
//! Claude Code's tool names, and bad input.

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

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import")
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
    fn run_json(&self) -> Value {
        serde_json::from_str(&self.read("out/run.json")).unwrap()
    }
}

fn fixture(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

/// Every object of a schema that lists its properties allows no others.
fn close(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.values_mut().for_each(close);
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

/// `text` with the fixtures directory written as `FIXTURES`.
fn redact(text: &str) -> String {
    text.replace(&fixtures().display().to_string(), "FIXTURES")
}

#[test]
fn a_pi_session_becomes_a_scenario_that_replays_and_reports_its_drift() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-session.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("workspace"),
        "--sync-reads",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 6 calls replayed, 1 not replayed, 1 reads synced, 1 not (1: \
         its recorded result is an image)\ncalls in file: 8 = replayed 6 + listed 1 + on other branches 1 (1 on branches the session left)\n"
    );
    assert_snapshot!("pi_session_yaml", d.read("imported/pi-session.yaml"));
    assert_eq!(
        d.read("imported/harness.yaml"),
        "# Imported sessions (docs/replay.md).\nfixtures: fixtures\n"
    );
    assert_eq!(
        d.read("imported/fixtures/pi-session/src/app.ts"),
        std::fs::read_to_string(fixtures().join("workspace/src/app.ts")).unwrap()
    );

    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out", "--jobs", "1"]);
    assert_eq!(code, 0, "{stdout}");
    let replay_line = stdout.lines().find(|l| l.starts_with("replay: ")).unwrap();
    assert_eq!(
        replay_line,
        "replay: 6 calls compared (1 skipped at import) · is_error agrees on 6 · text same 4, \
         paths 1, presentation 1, differs 0 · result tokens 73 recorded, 76 now (1.0411x)"
    );
    // The per-tool table follows it, as in summary.md.
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("replay: "))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(
        table,
        [
            "  tool   calls  is_error agrees  disagrees  same  paths  presentation  differs  recorded tokens  current tokens  ratio",
            "  bash       2                2          0     1      1             0        0               26              23   0.88",
            "  edit       1                1          0     0      0             1        0               13              12   0.92",
            "  ls         1                1          0     1      0             0        0                8               8   1.00",
            "  read       2                2          0     2      0             0        0               26              33   1.27",
            "  total      6                6          0     4      1             1        0               73              76   1.04",
        ]
    );
    let run = d.run_json();
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["replay"], run["replay"]);
    assert_eq!(
        run["replay"],
        json!({
            "calls": 6, "error_agree": 6, "error_disagree": 0,
            "same": 4, "paths": 1, "presentation": 1, "differs": 0,
            "recorded_tokens": 73, "current_tokens": 76,
            "skipped": 1, "unrecorded": 0, "not_replayed": 0, "synced_files": 1, "token_ratio": 1.0411,
            "tools": {
                "bash": {"calls": 2, "error_agree": 2, "error_disagree": 0, "same": 1, "paths": 1, "presentation": 0, "differs": 0, "recorded_tokens": 26, "current_tokens": 23},
                "edit": {"calls": 1, "error_agree": 1, "error_disagree": 0, "same": 0, "paths": 0, "presentation": 1, "differs": 0, "recorded_tokens": 13, "current_tokens": 12},
                "ls": {"calls": 1, "error_agree": 1, "error_disagree": 0, "same": 1, "paths": 0, "presentation": 0, "differs": 0, "recorded_tokens": 8, "current_tokens": 8},
                "read": {"calls": 2, "error_agree": 2, "error_disagree": 0, "same": 2, "paths": 0, "presentation": 0, "differs": 0, "recorded_tokens": 26, "current_tokens": 33}
            }
        })
    );
    // Every field written is described by `harness schema --report`.
    let (code, schema, _) = d.run(&["schema", "--report"]);
    assert_eq!(code, 0);
    let mut schema: Value = serde_json::from_str(&schema).unwrap();
    close(&mut schema);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&run).map(|e| e.to_string()).collect();
    assert_eq!(errors, Vec::<String>::new());
    let agreement: Vec<(String, String)> = scenario["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["agreement"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        agreement,
        [
            ("c1", "same"),
            ("c2", "same"),
            ("c3", "same"),
            ("c5", "presentation"),
            ("c6", "same"),
            ("c8", "paths")
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
    );
    let csv = d.read("out/calls.csv");
    let durations = regex::Regex::new(r",\d+,(\d+,(same|paths|presentation|differs))").unwrap();
    assert_snapshot!(
        "pi_session_calls_csv",
        durations.replace_all(&csv, ",MS,$1")
    );
    let summary = d.read("out/summary.md");
    let table = &summary[summary.find("### Replay").unwrap()..];
    assert_snapshot!("pi_session_summary_replay", table);
}

#[test]
fn a_claude_code_transcript_maps_onto_the_seven_tools() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("claude-session.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("workspace"),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 8 calls replayed, 1 not replayed, 1 problem in the session \
         (above); 1 side chain (1 call) not imported (--sidechains imports them)\ncalls in file: \
         10 = replayed 8 + listed 1 + on other branches 1 (1 in side chains not imported)\n"
    );
    assert_eq!(
        redact(&stderr),
        "FIXTURES/claude-session.jsonl:13: Claude Code's `Task` starts a sub-agent; the \
         sub-agent's own calls are a side chain of the transcript (`--sidechains` imports each as \
         a scenario); its call is skipped\n"
    );
    assert_snapshot!(
        "claude_session_yaml",
        d.read("imported/claude-session.yaml")
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let r = &run["replay"];
    assert_eq!(
        [
            &r["calls"],
            &r["error_agree"],
            &r["same"],
            &r["paths"],
            &r["presentation"],
            &r["differs"],
            &r["skipped"]
        ],
        [
            &json!(8),
            &json!(8),
            &json!(0),
            &json!(0),
            &json!(6),
            &json!(2),
            &json!(1)
        ]
    );
    // The edits were applied: `replace_all` had one match to replace.
    let tools: Vec<&str> = run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        ["read", "grep", "find", "edit", "edit", "bash", "ls", "read"]
    );
}

#[test]
fn require_text_fails_on_a_text_that_differs_and_none_only_reports() {
    let d = Dirs::new();
    let (code, ..) = d.run(&[
        "import",
        "pi",
        &fixture("pi-session.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("workspace"),
    ]);
    assert_eq!(code, 0);
    let suite = d.work().join("imported/harness.yaml");
    std::fs::write(&suite, "fixtures: fixtures\nreplay: { require: text }\n").unwrap();
    // The edit's wording is presentation, which `require: text` lets pass;
    // without the importer's answer, the same texts differ.
    let (code, stdout, _) = d.run(&["run", "imported"]);
    assert_eq!(code, 0, "{stdout}");
    let scenario = d.work().join("imported/pi-session.yaml");
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(
        &scenario,
        text.replacen("      answer:\n        form: done\n", "", 1),
    )
    .unwrap();
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 1, "{stdout}");
    let failures = &d.run_json()["scenarios"][0]["failures"];
    assert_eq!(
        failures,
        &json!([{
            "step": "step 3 (edit)",
            "check": "replay.text",
            "expected": "Successfully replaced text in /workspace/src/app.ts.",
            "actual": "Successfully replaced 1 block(s) in src/app.ts."
        }])
    );
    std::fs::write(&suite, "fixtures: fixtures\nreplay: { require: none }\n").unwrap();
    // A recorded is_error that disagrees fails under `error`, not under `none`.
    let scenario = d.work().join("imported/pi-session.yaml");
    let text = std::fs::read_to_string(&scenario).unwrap();
    std::fs::write(
        &scenario,
        text.replacen("is_error: true", "is_error: false", 1),
    )
    .unwrap();
    let (code, stdout, _) = d.run(&["run", "imported"]);
    assert_eq!(code, 0, "{stdout}");
    std::fs::write(&suite, "fixtures: fixtures\n").unwrap();
    let (code, _, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 1);
    let failure = &d.run_json()["scenarios"][0]["failures"][0];
    assert_eq!(
        (&failure["step"], &failure["check"], &failure["expected"]),
        (
            &json!("step 5 (bash)"),
            &json!("replay.is_error"),
            &json!("not an error (as recorded)")
        )
    );
}

#[test]
fn bad_lines_are_named_and_the_rest_is_imported() {
    let d = Dirs::new();
    let (code, stdout, stderr) =
        d.run(&["import", "pi", &fixture("pi-bad.jsonl"), "-o", "imported"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 1 call replayed, 2 not replayed, 6 problems in the session \
         (above)\ncalls in file: 2 = replayed 1 + listed 1; 1 more listed under an id used \
         before\n"
    );
    assert_snapshot!("pi_bad_stderr", redact(&stderr));
    assert_snapshot!("pi_bad_yaml", d.read("imported/pi-bad.yaml"));
    let (code, _, stderr) = d.run(&["check", "imported"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_branch_can_be_chosen_and_split_cuts_between_batches() {
    let d = Dirs::new();
    let (code, stdout, _) = d.run(&[
        "import",
        "pi",
        &fixture("pi-session.jsonl"),
        "-o",
        "imported",
        "--branch",
        "b2",
        "--split",
        "2",
    ]);
    assert_eq!(code, 0);
    // The abandoned branch: read, bash + ls, then its own edit.
    assert_eq!(
        stdout,
        "wrote 3 scenarios to imported: 4 calls replayed, 0 not replayed\ncalls in file: 8 = replayed 4 + \
         listed 0 + on other branches 4 (4 on branches the session left)\n"
    );
    let ids = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim_start().trim_start_matches("- ").strip_prefix("id: "))
            .map(str::to_owned)
            .collect()
    };
    let parts: Vec<Vec<String>> = (1..=3)
        .map(|n| ids(&d.read(&format!("imported/pi-session-{n}.yaml"))))
        .collect();
    assert_eq!(parts, [vec!["c1"], vec!["c2", "c3"], vec!["c4"]]);
    let (code, stdout, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-session.jsonl"),
        "-o",
        "x",
        "--branch",
        "nope",
    ]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_eq!(
        redact(&stderr),
        "error: --branch nope: no entry of FIXTURES/pi-session.jsonl has that id\n"
    );
    let (code, _, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-session.jsonl"),
        "-o",
        "x",
        "--split",
        "0",
    ]);
    assert_eq!(
        (code, stderr.as_str()),
        (2, "error: --split: give at least 1 call per scenario\n")
    );
    std::fs::create_dir_all(d.work().join("proj")).unwrap();
    let (code, _, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-session.jsonl"),
        "-o",
        "proj/replays",
        "--workspace",
        "proj",
    ]);
    assert_eq!(code, 2);
    let work = d.work().canonicalize().unwrap().display().to_string();
    assert_eq!(
        stderr.replace(&work, "WORK"),
        "error: -o proj/replays is inside --workspace WORK/proj; write the scenarios somewhere \
         else\n"
    );
    assert!(!d.work().join("proj/replays").exists());
}

#[test]
fn a_git_checkout_workspace_replays_against_the_recorded_revision() {
    let d = Dirs::new();
    let repo = d.root.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| dated_git(&repo, args, "2026-11-30T09:00:00Z");
    git(&["init", "--quiet"]);
    for rel in ["src/app.ts", "notes.md", "logo.png"] {
        let to = repo.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixtures().join("workspace").join(rel), to).unwrap();
    }
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "start"]);
    let rev = git(&["rev-parse", "HEAD"]);
    std::fs::write(repo.join("src/app.ts"), "changed later\n").unwrap();
    git(&["commit", "--quiet", "-am", "later"]);
    // A branch that is not the repository's default (issue 14 audit: it
    // failed at run time, `'--detach' cannot be used with '-b/-B/--orphan'`).
    git(&["branch", "recorded", &rev]);
    let import = |rev: &str, repo: &Path, out: &str| {
        d.run(&[
            "import",
            "pi",
            &fixture("pi-session.jsonl"),
            "-o",
            out,
            "--git",
            repo.to_str().unwrap(),
            "--rev",
            rev,
        ])
    };
    let (code, _, stderr) = import("recorded", &repo, "imported");
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(
        d.read("imported/pi-session.yaml")
            .contains("\n  git_checkout:\n    repo: ")
    );
    assert!(
        d.read("imported/pi-session.yaml")
            .contains("\n    rev: recorded\n")
    );
    // A revision the repository does not have, or a directory that is not
    // a repository, is said at import (exit 2), before anything is written.
    let (code, stdout, stderr) = import("nope", &repo, "never");
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            format!(
                "error: --git {0} --rev nope: `nope` names no commit in {0}; give a commit, tag \
                 or branch of that repository (`git -C {0} log --all --oneline` lists them)\n",
                repo.display()
            )
            .as_str()
        )
    );
    std::fs::create_dir_all(repo.join("src/inner")).unwrap();
    let (code, _, stderr) = import("recorded", &repo.join("src/inner"), "never");
    assert_eq!(code, 2);
    let prefix = format!(
        "error: --git {0}/src/inner --rev recorded: {0}/src/inner is not a git repository (",
        repo.display()
    );
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert!(!d.work().join("never").exists());
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    // The checkout has its `.git`, which ls lists: that text differs.
    let r = &d.run_json()["replay"];
    assert_eq!(
        [
            &r["same"],
            &r["paths"],
            &r["presentation"],
            &r["differs"],
            &r["error_agree"]
        ],
        [&json!(3), &json!(1), &json!(1), &json!(1), &json!(6)]
    );
}

#[test]
fn the_loader_names_bad_replay_keys_at_their_place() {
    let d = Dirs::new();
    std::fs::write(
        d.work().join("bad.yaml"),
        "replay: { timeout: 0 }\n\
         workspace:\n  fixture: nope\n  git_checkout: { repo: missing-repo, rev: --upload-pack=x }\n\
         model:\n  - call: read\n    args: { path: a }\n    recorded: { is_error: false, text: a, file: b }\n\
         \x20 - call: read\n    args: { path: a }\n    recorded: { is_error: false, file: ../x.txt }\n",
    )
    .unwrap();
    let (code, stdout, stderr) = d.run(&["check", "bad.yaml"]);
    assert_eq!(code, 2, "{stdout}");
    assert_snapshot!("loader_replay_errors", format!("{stdout}{stderr}"));
}

#[test]
fn a_fifty_megabyte_session_streams() {
    let d = Dirs::new();
    let session = d.root.path().join("big.jsonl");
    let mut text =
        String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/p\"}\n");
    let body = "x".repeat(25_000);
    let mut parent = String::from("null");
    for i in 0..2_000 {
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"q{i}\",\"parentId\":{parent},\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"k{i}\",\"name\":\"read\",\"arguments\":{{\"path\":\"/p/a.txt\"}}}}]}}}}\n\
             {{\"type\":\"message\",\"id\":\"r{i}\",\"parentId\":\"q{i}\",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"k{i}\",\"toolName\":\"read\",\"content\":[{{\"type\":\"text\",\"text\":\"{body}\"}}],\"isError\":false}}}}\n"
        ));
        parent = format!("\"r{i}\"");
    }
    assert!(text.len() > 50_000_000);
    std::fs::write(&session, text).unwrap();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "pi",
        session.to_str().unwrap(),
        "-o",
        "imported",
        "--split",
        "500",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        "wrote 4 scenarios to imported: 2000 calls replayed, 0 not replayed, 2000 recorded texts \
         in sidecar files\ncalls in file: 2000 = replayed 2000 + listed 0\n"
    );
    let (code, stdout, stderr) = d.run(&["check", "imported"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// Issue 14 audit: an unreadable line in the middle of a session hid its
/// id, the branch stopped at the entry after it, and every call before it
/// was dropped ("1 call replayed" of 3).
#[test]
fn an_unreadable_line_in_the_middle_keeps_the_calls_before_it() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-unreadable.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("workspace"),
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 3 calls replayed, 0 not replayed, 2 problems in the \
         session (above)\ncalls in file: 3 = replayed 3 + listed 0\n"
    );
    assert_eq!(
        redact(&stderr),
        "FIXTURES/pi-unreadable.jsonl:6: not a JSON object (invalid escape at line 1 column 86); \
         skipped\n\
         FIXTURES/pi-unreadable.jsonl:7: this entry's parent `a5` is on no readable line; line 6 \
         could not be read, so the branch is assumed to go on through the entry before it (`a4`, \
         line 5)\n"
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let r = &d.run_json()["replay"];
    assert_eq!(
        [&r["calls"], &r["same"], &r["skipped"]],
        [&json!(3), &json!(3), &json!(0)]
    );
}

/// Issue 14 audit: Claude Code's compaction boundary (`parentUuid: null`,
/// `logicalParentUuid`) cut the branch, so the calls before a compaction
/// were dropped; and calls the user rejected or interrupted were replayed
/// as if their refusal were a tool's answer.
#[test]
fn a_claude_compaction_keeps_earlier_calls_and_refused_calls_are_not_replayed() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("claude-compacted.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("workspace"),
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 2 calls replayed, 2 not replayed\ncalls in file: 4 = replayed 2 + listed 2\n"
    );
    assert_snapshot!(
        "claude_compacted_yaml",
        d.read("imported/claude-compacted.yaml")
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let tools: Vec<&str> = run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["ls", "read"]);
    assert_eq!(
        [&run["replay"]["calls"], &run["replay"]["skipped"]],
        [&json!(2), &json!(2)]
    );
}

/// Issue 14 audit: `--sync-reads` marked a read whose recorded text was
/// pi's `[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: …]`, and so
/// wrote that notice into the file. Only a whole file's text is synced;
/// the rest are counted, with why.
#[test]
fn sync_reads_marks_only_texts_that_are_whole_files() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-reads.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("workspace"),
        "--sync-reads",
    ]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 7 calls replayed, 0 not replayed, 1 reads synced, 6 not \
         (1: it reads part of the file (offset or limit); 1: its recorded result is an error; 1: \
         its recorded result is an image; 3: its recorded text ends with a truncation or \
         continuation notice)\ncalls in file: 7 = replayed 7 + listed 0\n"
    );
    assert_snapshot!("pi_reads_yaml", d.read("imported/pi-reads.yaml"));
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(d.run_json()["replay"]["synced_files"], json!(1));
}

/// Issue 14 audit: a newline in a recorded tool name or call id ended the
/// comment it was written in, and what followed became YAML of the
/// scenario (a `timeout:` key). Every text in a comment is escaped.
#[test]
fn control_characters_in_names_and_ids_stay_inside_the_comments() {
    let d = Dirs::new();
    for (format, session) in [
        ("pi", "pi-control-chars"),
        ("claude", "claude-control-chars"),
    ] {
        let (code, _, _) = d.run(&[
            "import",
            format,
            &fixture(&format!("{session}.jsonl")),
            "-o",
            "imported",
        ]);
        assert_eq!(code, 0);
        let text = d.read(&format!("imported/{session}.yaml"));
        let header: String = text
            .lines()
            .take_while(|l| !l.is_empty())
            .map(|l| format!("{l}\n"))
            .collect();
        assert_snapshot!(format!("{}_header", session.replace('-', "_")), header);
        // Nothing but the comment block comes before the scenario's keys.
        let after = &text[header.len()..];
        assert!(after.starts_with("\nname: imported "), "{after}");
    }
    let (code, stdout, stderr) = d.run(&["check", "imported"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (0, "2 scenarios OK\n", "")
    );
}

/// Issue 14 audit: a pi session without its header (so without `cwd`),
/// or a file given in the other format, was imported silently as a
/// scenario with no paths mapped or no call at all.
#[test]
fn a_missing_header_or_the_wrong_format_is_said() {
    let d = Dirs::new();
    let (code, stdout, stderr) =
        d.run(&["import", "pi", &fixture("pi-no-header.jsonl"), "-o", "a"]);
    assert_eq!(code, 0);
    assert_eq!(
        (stdout.as_str(), redact(&stderr).as_str()),
        (
            "wrote 1 scenario to a: 1 call replayed, 0 not replayed, 1 problem in the session \
             (above)\ncalls in file: 1 = replayed 1 + listed 0\n",
            "FIXTURES/pi-no-header.jsonl:1: no `session` header line: the session's working \
             directory is unknown, so no path becomes `${workspace}/…` and absolute paths are \
             replayed as recorded\n"
        )
    );
    // Issue 25 item 9: a file of the other JSONL format, in which no call
    // was found, was imported as an empty scenario with exit 0. It is
    // refused, names the importer it belongs to, and writes nothing.
    let (code, stdout, stderr) =
        d.run(&["import", "pi", &fixture("claude-session.jsonl"), "-o", "b"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_snapshot!("wrong_format_claude_as_pi", redact(&stderr));
    let (code, stdout, stderr) =
        d.run(&["import", "claude", &fixture("pi-session.jsonl"), "-o", "c"]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_snapshot!("wrong_format_pi_as_claude", redact(&stderr));
    assert!(!d.work().join("b").exists());
    assert!(!d.work().join("c").exists());
}

/// Issue 25 item 9: a session file that is not there was "not a session
/// file"; it is "no such file", and a directory or a FIFO says what it is.
#[test]
fn a_missing_session_file_is_no_such_file() {
    let d = Dirs::new();
    std::fs::create_dir(d.work().join("dir")).unwrap();
    let fifo = d.work().join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    let errors: Vec<(i32, String)> = ["missing.jsonl", "dir", "fifo"]
        .iter()
        .map(|name| {
            let (code, _, stderr) = d.run(&["import", "pi", name, "-o", "out"]);
            (code, stderr)
        })
        .collect();
    assert_eq!(
        errors,
        [
            (2, "error: missing.jsonl: no such file\n".to_owned()),
            (
                2,
                "error: dir is a directory, not a session file\n".to_owned()
            ),
            (
                2,
                "error: fifo is a FIFO (named pipe), not a session file\n".to_owned()
            ),
        ]
    );
    assert!(!d.work().join("out").exists());
}

/// Every file below `dir` with its bytes, by path relative to it.
fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A pi session of three calls (one batch each) whose first result is
/// long enough for a sidecar file.
fn three_call_session() -> String {
    let long = "a line of the file\\n".repeat(300);
    let call = |n: usize, parent: &str, tool: &str, args: &str, text: &str| {
        format!(
            "{{\"type\":\"message\",\"id\":\"q{n}\",\"parentId\":{parent},\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"toolCall\",\"id\":\"c{n}\",\"name\":\"{tool}\",\"arguments\":{args}}}]}}}}\n\
             {{\"type\":\"message\",\"id\":\"r{n}\",\"parentId\":\"q{n}\",\"message\":{{\"role\":\"toolResult\",\"toolCallId\":\"c{n}\",\"toolName\":\"{tool}\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"isError\":false}}}}\n"
        )
    };
    [
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"cwd\":\"/p\"}\n".to_owned(),
        call(1, "null", "read", "{\"path\":\"/p/a.txt\"}", &long),
        call(2, "\"r1\"", "ls", "{\"path\":\"/p\"}", "a.txt"),
        call(3, "\"r2\"", "bash", "{\"command\":\"echo hi\"}", "hi\\n"),
    ]
    .concat()
}

/// Issue 25 item 9: importing a session again overwrote the scenario (with
/// the checks added to it), its sidecars and its fixture without a word.
/// It is refused, naming each file and `--force`; `--force` replaces the
/// earlier import and removes its parts it does not write again; a file
/// only known once the session is read (another session's scenario of the
/// same name) is refused too, and the sidecars already written are taken
/// back; a failed `--force` import leaves the earlier one as it was.
#[test]
fn importing_again_refuses_to_overwrite_and_force_replaces() {
    let d = Dirs::new();
    std::fs::write(d.work().join("s1.jsonl"), three_call_session()).unwrap();
    std::fs::create_dir(d.work().join("ws")).unwrap();
    std::fs::write(
        d.work().join("ws/a.txt"),
        "a line of the file\n".repeat(300),
    )
    .unwrap();
    let import = |extra: &[&str]| {
        let mut args = vec![
            "import",
            "pi",
            "s1.jsonl",
            "-o",
            "replays",
            "--workspace",
            "ws",
        ];
        args.extend_from_slice(extra);
        d.run(&args)
    };
    let (code, stdout, stderr) = import(&[]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "wrote 1 scenario to replays: 3 calls replayed, 0 not replayed, 1 recorded text in a \
             sidecar file\ncalls in file: 3 = replayed 3 + listed 0\n",
            ""
        )
    );
    let scenario = d.work().join("replays/s1.yaml");
    let edited = format!("{}  # a check added by hand\n", d.read("replays/s1.yaml"));
    std::fs::write(&scenario, &edited).unwrap();
    let before = tree(&d.work().join("replays"));

    let (code, stdout, stderr) = import(&[]);
    assert_eq!((code, stdout.as_str()), (2, ""));
    assert_snapshot!("rerun_refused", stderr);
    let (code, _, stderr_split) = import(&["--split", "1"]);
    assert_eq!((code, stderr_split), (2, stderr));
    // A --force import that fails keeps the earlier import whole.
    let (code, _, stderr) = d.run(&["import", "claude", "s1.jsonl", "-o", "replays", "--force"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: s1.jsonl: no call was found, and 7 lines look like a pi session (entries of \
             type `session` and `message`); import it with `harness import pi`\n"
        )
    );
    assert_eq!(tree(&d.work().join("replays")), before);

    let (code, stdout, stderr) = import(&["--split", "1", "--force"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert_snapshot!("rerun_forced_split", stdout);
    let names: Vec<String> = tree(&d.work().join("replays")).into_keys().collect();
    assert_eq!(
        names,
        [
            "fixtures/s1/a.txt",
            "harness.yaml",
            "s1-1.yaml",
            "s1-2.yaml",
            "s1-3.yaml",
            "s1.recorded/1.txt"
        ]
    );
    let (code, stdout, stderr) = d.run(&["check", "replays"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let (code, stdout, _) = import(&["--force"]);
    assert_eq!(code, 0);
    assert_snapshot!("rerun_forced_whole", stdout);
    assert_eq!(
        tree(&d.work().join("replays"))
            .into_keys()
            .collect::<Vec<_>>(),
        [
            "fixtures/s1/a.txt",
            "harness.yaml",
            "s1.recorded/1.txt",
            "s1.yaml"
        ]
    );

    // Another session named like a part: known only once s1 is read.
    std::fs::copy(d.work().join("s1.jsonl"), d.work().join("s1-2.jsonl")).unwrap();
    let (code, _, _) = d.run(&["import", "pi", "s1-2.jsonl", "-o", "other"]);
    assert_eq!(code, 0);
    let other = tree(&d.work().join("other"));
    let (code, stdout, stderr) =
        d.run(&["import", "pi", "s1.jsonl", "-o", "other", "--split", "1"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            "error: other/s1-2.yaml already exists, and importing would overwrite it (and any \
             check added to it since); give --force to replace it, or choose another -o\n"
        )
    );
    assert_eq!(tree(&d.work().join("other")), other);
}

/// Issue 25 item 9: docs/replay.md shows the smallest pi session and
/// Claude Code transcript; both import as written there, and replay.
#[test]
fn the_minimal_sessions_of_the_docs_import_and_replay() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/replay.md"))
        .unwrap();
    let d = Dirs::new();
    std::fs::create_dir_all(d.work().join("proj/src")).unwrap();
    std::fs::write(d.work().join("proj/src/app.ts"), "export {};\n").unwrap();
    for format in ["pi", "claude"] {
        let fence = format!("```jsonl {format}\n");
        let block = doc
            .split_once(&fence)
            .and_then(|(_, rest)| rest.split_once("```\n"))
            .map(|(block, _)| block)
            .unwrap_or_else(|| panic!("docs/replay.md has no {fence:?} block"));
        let session = format!("{format}.jsonl");
        std::fs::write(d.work().join(&session), block).unwrap();
        let (code, stdout, stderr) = d.run(&[
            "import",
            format,
            &session,
            "-o",
            "replays",
            "--workspace",
            "proj",
        ]);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (
                0,
                "wrote 1 scenario to replays: 1 call replayed, 0 not replayed\ncalls in file: 1 = replayed 1 + listed 0\n",
                ""
            ),
            "{format}"
        );
        assert_snapshot!(
            format!("docs_minimal_{format}_yaml"),
            d.read(&format!("replays/{format}.yaml"))
        );
    }
    let (code, stdout, _) = d.run(&["run", "replays", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let classes: Vec<(&str, &str)> = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["calls"][0]["agreement"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        classes,
        [
            ("imported claude session claude", "presentation"),
            ("imported pi session pi", "same")
        ]
    );
}

/// Issue 14 audit: an imported scenario that timed out lost its whole
/// comparison (`replay: null`). The calls answered before the timeout keep
/// theirs; the recorded calls the run never reached are `not_replayed`.
#[test]
fn a_replay_that_times_out_keeps_the_calls_answered_before() {
    let d = Dirs::new();
    std::fs::write(
        d.work().join("cut.yaml"),
        "name: cut short\n\
         replay: { cwd: /home/dev/proj, timeout: 1 }\n\
         workspace:\n  files:\n    a.txt: \"a\\n\"\n\
         model:\n\
         \x20 - call: read\n    id: k1\n    args: { path: a.txt }\n    recorded: { is_error: false, text: \"a\\n\" }\n\
         \x20 - call: ls\n    id: k2\n    args: { path: . }\n    recorded: { is_error: true, text: \"a.txt\" }\n\
         \x20 - call: bash\n    id: k3\n    args: { command: sleep 30, timeout: 60 }\n    recorded: { is_error: false, text: \"\" }\n\
         \x20 - call: ls\n    id: k4\n    args: { path: . }\n    recorded: { is_error: false, text: a.txt }\n",
    )
    .unwrap();
    let (code, stdout, _) = d.run(&["run", "cut.yaml", "--report", "out"]);
    assert_eq!(code, 1, "{stdout}");
    let scenario = &d.run_json()["scenarios"][0];
    let checks: Vec<&str> = scenario["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(checks, ["timeout", "replay.is_error"]);
    assert_eq!(
        scenario["replay"],
        json!({
            "calls": 2, "error_agree": 1, "error_disagree": 1,
            "same": 2, "paths": 0, "presentation": 0, "differs": 0,
            "recorded_tokens": 4, "current_tokens": 4,
            "skipped": 0, "unrecorded": 0, "not_replayed": 2, "synced_files": 0,
            "token_ratio": 1.0,
            "tools": {
                "ls": {"calls": 1, "error_agree": 0, "error_disagree": 1, "same": 1, "paths": 0, "presentation": 0, "differs": 0, "recorded_tokens": 2, "current_tokens": 2},
                "read": {"calls": 1, "error_agree": 1, "error_disagree": 0, "same": 1, "paths": 0, "presentation": 0, "differs": 0, "recorded_tokens": 2, "current_tokens": 2}
            }
        })
    );
    let replay_line = stdout.lines().find(|l| l.starts_with("replay: ")).unwrap();
    assert_eq!(
        replay_line,
        "replay: 2 calls compared (0 skipped at import, 2 not reached) · is_error agrees on 1 · \
         text same 2, paths 0, presentation 0, differs 0 · result tokens 4 recorded, 4 now (1x)"
    );
}

/// Issue 22 items 2 and 3: a transcript as Claude Code 2.1 writes it
/// (tests/fixtures/import/claude-parallel.jsonl): each call of a message
/// its own entry, results on side branches, a call whose entry is itself
/// on a side branch, a compaction boundary naming an entry the file does
/// not hold, a copied entry, a sub-agent's side chain, `cd` carried over,
/// Grep's modes and context, an absolute Glob, `replace_all` and
/// dependent MultiEdit edits refined from the recorded original, and the
/// results no tool produced. Every call is replayed or listed with its
/// reason; only the call with no result anywhere is "never answered".
#[test]
fn claude_code_as_written_today_has_every_call_replayed_or_listed() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("claude-parallel.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("claude-ws"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 16 calls replayed, 8 not replayed, 4 problems in the \
         session (above); 1 side chain (2 calls) not imported (--sidechains imports them)\n\
         calls in file: 26 = replayed 16 + listed 8 + on other branches 2 (2 in side chains \
         not imported)\n"
    );
    assert_snapshot!("claude_parallel_stderr", redact(&stderr));
    assert_snapshot!(
        "claude_parallel_yaml",
        d.read("imported/claude-parallel.yaml")
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let calls: Vec<(String, String, bool)> = run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["tool"].as_str().unwrap().to_owned(),
                c["is_error"].as_bool().unwrap(),
            )
        })
        .collect();
    let want = [
        ("t1", "read", false),
        ("t2", "grep", false),
        ("t3", "find", false),
        ("t4", "edit", false),
        ("t5", "bash", false),
        ("t6", "bash", false),
        ("t7", "grep", false),
        ("t8", "bash", false),
        ("t9", "grep", false),
        ("t10", "bash", true),
        ("t18", "edit", false),
        ("t19", "ls", false),
        ("t20", "read", false),
        ("t21", "edit", false),
        ("t22", "edit", true),
        ("t23", "read", false),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c));
    assert_eq!(calls, want);
    assert_eq!(
        [
            &run["replay"]["calls"],
            &run["replay"]["error_agree"],
            &run["replay"]["skipped"]
        ],
        [&json!(16), &json!(16), &json!(8)]
    );

    // With --sidechains the sub-agent's calls are a scenario of their own.
    let (code, stdout, _) = d.run(&[
        "import",
        "claude",
        &fixture("claude-parallel.jsonl"),
        "-o",
        "sides",
        "--sidechains",
    ]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "wrote 1 scenario to sides: 16 calls replayed, 8 not replayed, 4 problems in the session \
         (above); 1 side chain as scenarios of their own: 2 calls replayed, 0 not replayed\n\
         calls in file: 26 = replayed 18 + listed 8\n"
    );
    assert_snapshot!(
        "claude_parallel_side_yaml",
        d.read("sides/claude-parallel-side-1.yaml")
    );
    let (code, stdout, stderr) = d.run(&["check", "sides"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (0, "2 scenarios OK\n", "")
    );
}

/// Issue 22 item 5: Gemini CLI's session files (one JSON document; the
/// working directory found from `projectHash`), and files given to the
/// importer of another kind of file.
#[test]
fn a_gemini_cli_session_is_imported_and_formats_are_told_apart() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "gemini",
        &fixture("gemini-session.json"),
        "-o",
        "imported",
        "--workspace",
        &fixture("claude-ws"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (stdout.as_str(), redact(&stderr).as_str()),
        (
            "wrote 1 scenario to imported: 10 calls replayed, 2 not replayed, 1 problem in the \
             session (above)\ncalls in file: 12 = replayed 10 + listed 2\n",
            "FIXTURES/gemini-session.json:367: Gemini CLI's `google_web_search` reaches the web; \
             its call is skipped\n"
        )
    );
    assert_snapshot!(
        "gemini_session_yaml",
        d.read("imported/gemini-session.yaml")
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let tools: Vec<&str> = run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read", "ls", "find", "grep", "edit", "bash", "bash", "write", "read", "read"
        ]
    );
    assert_eq!(
        [&run["replay"]["error_agree"], &run["replay"]["same"]],
        [&json!(10), &json!(1)]
    );
    // The JSON-lines layout of newer versions (metadata, then a message a
    // line), with a rewind: the call made after the message the user
    // rewound to is left out, and said.
    let (code, stdout, stderr) = d.run(&[
        "import",
        "gemini",
        &fixture("gemini-lines.jsonl"),
        "-o",
        "lines",
        "--workspace",
        &fixture("claude-ws"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (stdout.as_str(), redact(&stderr).as_str()),
        (
            "wrote 1 scenario to lines: 10 calls replayed, 2 not replayed, 2 problems in the \
             session (above)\ncalls in file: 13 = replayed 10 + listed 2 + on other branches 1 (1 \
             on branches the session left)\n",
            "FIXTURES/gemini-lines.jsonl:8: the session was rewound to message `m3`: the 1 call \
             made after it is left out\n\
             FIXTURES/gemini-lines.jsonl:13: Gemini CLI's `google_web_search` reaches the web; \
             its call is skipped\n"
        )
    );
    let body = |text: String| text[text.find("\nname: ").unwrap()..].to_owned();
    assert_eq!(
        body(d.read("lines/gemini-lines.yaml"))
            .replace("gemini-lines.jsonl", "gemini-session.json")
            .replace("gemini-lines", "gemini-session"),
        body(d.read("imported/gemini-session.yaml"))
    );
    // The wrong importer says which one the file belongs to, and writes
    // nothing.
    let (code, stdout, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("gemini-session.json"),
        "-o",
        "x",
    ]);
    assert_eq!(
        (code, stdout.as_str(), redact(&stderr).as_str()),
        (
            2,
            "",
            "error: FIXTURES/gemini-session.json looks like a Gemini CLI session (one JSON object \
             with `messages`, or its JSON lines: metadata, then messages); import it with \
             `harness import gemini`\n"
        )
    );
    let (code, _, stderr) = d.run(&["import", "gemini", &fixture("pi-session.jsonl"), "-o", "x"]);
    assert_eq!(
        (code, redact(&stderr).as_str()),
        (
            2,
            "error: FIXTURES/pi-session.jsonl looks like a pi session (JSON lines); import it \
             with `harness import pi`\n"
        )
    );
    let (code, _, stderr) = d.run(&[
        "import",
        "gemini",
        &fixture("claude-parallel.jsonl"),
        "-o",
        "x",
    ]);
    assert_eq!(
        (code, redact(&stderr).as_str()),
        (
            2,
            "error: FIXTURES/claude-parallel.jsonl looks like a Claude Code transcript (JSON \
             lines); import it with `harness import claude`\n"
        )
    );
    assert!(!d.work().join("x").exists());
}

/// Issue 42 item 10: one message nested deeper than a JSON reader goes
/// (here a call's arguments, 200 levels) made `import gemini` call the
/// whole session "not a Gemini CLI session". That message is a problem at
/// its line, and the others are imported, in both layouts.
#[test]
fn an_over_deep_gemini_message_is_one_problem_and_the_rest_is_imported() {
    let d = Dirs::new();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let call = |id: &str, args: &str| {
        format!(
            "{{\"id\": \"{id}\", \"name\": \"list_directory\", \"args\": {args}, \
             \"status\": \"success\", \"result\": [{{\"functionResponse\": {{\"response\": \
             {{\"output\": \"a\"}}}}}}]}}"
        )
    };
    let message = |id: &str, args: &str| {
        format!(
            "{{\"id\": \"m{id}\", \"type\": \"gemini\", \"timestamp\": \
             \"2026-01-01T00:00:00Z\", \"toolCalls\": [{}]}}",
            call(id, args)
        )
    };
    let messages = [
        message("1", r#"{"path": "/p/a"}"#),
        message("2", &format!(r#"{{"path": {deep}}}"#)),
        message("3", r#"{"path": "/p/b"}"#),
    ];
    std::fs::write(
        d.work().join("doc.json"),
        format!(
            "{{\"sessionId\": \"s\", \"projectHash\": \"0\", \"messages\": [\n{}\n]}}\n",
            messages.join(",\n")
        ),
    )
    .unwrap();
    std::fs::write(
        d.work().join("lines.jsonl"),
        format!(
            "{{\"sessionId\": \"s\", \"projectHash\": \"0\"}}\n{}\n",
            messages.join("\n")
        ),
    )
    .unwrap();
    for (file, out) in [("doc.json", "doc"), ("lines.jsonl", "lines")] {
        let (code, stdout, stderr) = d.run(&["import", "gemini", file, "-o", out]);
        assert_eq!(
            (code, stdout, stderr),
            (
                0,
                format!(
                    "wrote 1 scenario to {out}: 2 calls replayed, 0 not replayed, 2 problems in \
                     the session (above)\ncalls in file: 2 = replayed 2 + listed 0\n"
                ),
                format!(
                    "{file}:1: the session records its project only as a hash (`projectHash`), \
                     and no directory of the calls' paths has that hash: the working directory \
                     is unknown, so no path becomes `${{workspace}}/…` and absolute paths are \
                     replayed as recorded\n\
                     {file}:3: this message cannot be read (recursion limit exceeded); its calls \
                     are skipped\n"
                )
            ),
            "{file}"
        );
        let (code, stdout, stderr) = d.run(&["check", out]);
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (0, "1 scenario OK\n", "")
        );
    }
}

proptest::proptest! {
    #![proptest_config(crate::test_helpers::cases(12))]

    /// Issue 21 item 10: what `harness import` writes always loads, and
    /// every recorded string survives exactly (control characters, U+2028,
    /// U+0085, `${…}` and all): a write's content reaches the file byte for
    /// byte when the session is replayed, so does a read's recorded text
    /// (`--sync-reads` writes it into the file), and a recorded timeout no
    /// call can have gives a scenario the loader takes.
    #[test]
    fn any_recorded_string_round_trips_through_import_and_replay(
        content in "(\\PC|[\\x00-\\x1f\\x7f\\u{85}\\u{2028}\\u{2029}\\u{feff}]|\\$\\{x\\}|\\$\\$\\{|\\n| ){0,40}",
        timeout in proptest::prop_oneof![
            proptest::strategy::Just(-1_000_000.0f64),
            proptest::strategy::Just(0.0),
            proptest::strategy::Just(1e300),
            -1e9f64..1e9
        ],
    ) {
        let d = Dirs::new();
        let session = d.root.path().join("s.jsonl");
        let lines = [
            json!({"type": "session", "version": 3, "id": "s", "cwd": "/p"}),
            json!({"type": "message", "id": "a", "parentId": null, "message": {"role": "assistant",
                "content": [{"type": "toolCall", "id": "w", "name": "write",
                    "arguments": {"path": "/p/out.txt", "content": content}}]}}),
            json!({"type": "message", "id": "b", "parentId": "a", "message": {"role": "toolResult",
                "toolCallId": "w", "toolName": "write", "content": [{"type": "text", "text": content}],
                "isError": false}}),
            json!({"type": "message", "id": "b2", "parentId": "b", "message": {"role": "assistant",
                "content": [{"type": "toolCall", "id": "r", "name": "read",
                    "arguments": {"path": "/p/in.txt"}}]}}),
            json!({"type": "message", "id": "b3", "parentId": "b2", "message": {"role": "toolResult",
                "toolCallId": "r", "toolName": "read", "content": [{"type": "text", "text": content}],
                "isError": false}}),
            json!({"type": "message", "id": "c", "parentId": "b3", "message": {"role": "assistant",
                "content": [{"type": "toolCall", "id": "k", "name": "bash",
                    "arguments": {"command": "true", "timeout": timeout}}]}}),
            json!({"type": "message", "id": "e", "parentId": "c", "message": {"role": "toolResult",
                "toolCallId": "k", "toolName": "bash", "content": [{"type": "text", "text": ""}],
                "isError": false}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&session, text).unwrap();
        let (code, _, stderr) = d.run(&[
            "import", "pi", session.to_str().unwrap(), "-o", "imported", "--sync-reads",
        ]);
        proptest::prop_assert_eq!(code, 0, "{}", stderr);
        // It loads and runs (a read of a file holding a NUL is an error
        // here, so the run may fail on is_error; that is drift, not loss).
        let (code, stdout, stderr) = d.run(&["run", "imported", "--keep-workspaces"]);
        proptest::prop_assert!(code == 0 || code == 1, "{}{}", stdout, stderr);
        proptest::prop_assert!(stdout.contains("imported pi session s"), "{}", stdout);
        let ws = stdout
            .lines()
            .find_map(|l| l.split_once(": ").filter(|(a, _)| a.starts_with("workspace of ")))
            .map(|(_, ws)| PathBuf::from(ws))
            .unwrap();
        let written = std::fs::read(ws.join("out.txt")).unwrap();
        let synced = std::fs::read(ws.join("in.txt")).unwrap();
        let _ = std::fs::remove_dir_all(&ws);
        proptest::prop_assert_eq!(written, content.as_bytes().to_vec());
        proptest::prop_assert_eq!(synced, content.as_bytes().to_vec());
    }
}

/// Issue 21 item 6: a link planted in the import's output directory made
/// it write outside (the scenario, its `.recorded/` sidecars, the
/// `--workspace` copy, `harness.yaml`); and a `recorded: { file }`, a
/// fixture or a pending `.snap.yaml.new` that is a link leading out of
/// the suite was followed.
#[test]
fn no_link_leads_the_importer_or_the_loader_out() {
    use std::os::unix::fs::symlink;
    let d = Dirs::new();
    let outside = d.root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret\n").unwrap();
    let session = d.root.path().join("s.jsonl");
    let big = "y".repeat(5000);
    std::fs::write(
        &session,
        format!(
            "{}\n{}\n{}\n",
            json!({"type": "session", "version": 3, "id": "s", "cwd": "/p"}),
            json!({"type": "message", "id": "a", "parentId": null, "message": {"role": "assistant",
                "content": [{"type": "toolCall", "id": "k", "name": "read", "arguments": {"path": "/p/a.txt"}}]}}),
            json!({"type": "message", "id": "b", "parentId": "a", "message": {"role": "toolResult",
                "toolCallId": "k", "toolName": "read", "content": [{"type": "text", "text": big}], "isError": false}}),
        ),
    )
    .unwrap();
    let out = d.work().join("imported");
    std::fs::create_dir_all(&out).unwrap();
    symlink(outside.join("s.yaml"), out.join("s.yaml")).unwrap();
    symlink(&outside, out.join("s.recorded")).unwrap();
    symlink(outside.join("harness.yaml"), out.join("harness.yaml")).unwrap();
    // Names an import writes are in the way (issue 25 item 9): refused
    // without --force; with it, the links are replaced, never followed.
    let (code, _, stderr) = d.run(&["import", "pi", session.to_str().unwrap(), "-o", "imported"]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            2,
            "error: 1 file and 1 folder of an earlier import already exist, and importing would \
             overwrite them (and any check added to them since): imported/s.recorded/, \
             imported/s.yaml; give --force to replace them, or choose another -o\n"
        )
    );
    let (code, stdout, stderr) = d.run(&[
        "import",
        "pi",
        session.to_str().unwrap(),
        "-o",
        "imported",
        "--force",
    ]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            0,
            "wrote 1 scenario to imported: 1 call replayed, 0 not replayed, 1 recorded text in a \
             sidecar file; --force: replaced 1 file and 1 folder of an earlier import\ncalls in file: 1 = replayed 1 + listed 0\n",
            ""
        )
    );
    assert!(!out.join("s.yaml").is_symlink());
    assert!(!out.join("s.recorded").is_symlink());
    assert_eq!(
        std::fs::read_to_string(out.join("s.recorded/1.txt")).unwrap(),
        big
    );
    // With --workspace, a link where the fixture goes stops the import.
    symlink(&outside, out.join("fixtures")).unwrap();
    std::fs::create_dir_all(d.work().join("ws")).unwrap();
    std::fs::write(d.work().join("ws/a.txt"), "a\n").unwrap();
    let (code, _, stderr) = d.run(&[
        "import",
        "pi",
        session.to_str().unwrap(),
        "-o",
        "imported",
        "--workspace",
        "ws",
        "--force",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.ends_with(
            "imported/fixtures is a symlink; the importer does not write through links (remove \
             it, or choose another -o)\n"
        ),
        "{stderr}"
    );
    let left: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["secret.txt"]);

    // The loader: a sidecar or a fixture that leads out is refused.
    let suite = d.work().join("suite");
    std::fs::create_dir_all(suite.join("fixtures")).unwrap();
    symlink(outside.join("secret.txt"), suite.join("leak.txt")).unwrap();
    symlink(&outside, suite.join("fixtures/evil")).unwrap();
    std::fs::write(suite.join("harness.yaml"), "fixtures: fixtures\n").unwrap();
    std::fs::write(
        suite.join("a.yaml"),
        "model:\n  - call: ls\n    recorded: { is_error: false, file: leak.txt }\n",
    )
    .unwrap();
    std::fs::write(
        suite.join("b.yaml"),
        "workspace: { fixture: evil }\nmodel:\n  - call: ls\n",
    )
    .unwrap();
    let (code, stdout, _) = d.run(&["check", "suite"]);
    assert_eq!(code, 2);
    let work = d.work().display().to_string();
    assert_eq!(
        stdout.replace(&work, "WORK"),
        "suite/a.yaml:3:40: model[0].recorded.file: step 1 (ls): the recorded text file \
         suite/leak.txt is a symlink that leads out of the scenario's directory; it is not \
         followed\n\
         suite/b.yaml:1:23: workspace.fixture: fixture `evil` is a symlink that leads out of \
         the fixtures directory WORK/suite/fixtures; it is not followed (copy the directory there \
         instead)\n\
         2 problems found (0 valid scenarios)\n"
    );

    // A pending snapshot file that is a link is replaced, not written
    // through.
    let snap = d.work().join("snap");
    std::fs::create_dir_all(&snap).unwrap();
    std::fs::write(
        snap.join("s.yaml"),
        "model:\n  - call: ls\n    expect: { snapshot: true }\n",
    )
    .unwrap();
    symlink(outside.join("new.yaml"), snap.join("s.snap.yaml.new")).unwrap();
    let (code, _, _) = d.run(&["run", "snap"]);
    assert_eq!(code, 1);
    assert!(!snap.join("s.snap.yaml.new").is_symlink());
    assert!(!outside.join("new.yaml").exists());
}

/// Issue 22, real sessions: Claude Code writes a resumed conversation
/// again (new uuids, the same message ids, call ids, tools and arguments,
/// dropping the calls its chain does not hold); each call is replayed once
/// and the copies are said once, while a call of another message that
/// reuses an id is still listed. A Read with `offset: 0` reads from line 1.
#[test]
fn a_resumed_claude_code_conversation_replays_each_call_once() {
    let d = Dirs::new();
    let (code, stdout, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("claude-resumed.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("claude-ws"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "wrote 1 scenario to imported: 2 calls replayed, 1 not replayed, 2 problems in the \
         session (above)\ncalls in file: 2 = replayed 2 + listed 0; 1 more listed under an id \
         used before\n"
    );
    assert_eq!(
        redact(&stderr),
        "FIXTURES/claude-resumed.jsonl:8: 1 call from line 8 to line 8 is written again, with \
         the id, tool and arguments of a call before it (a copy of the conversation, as Claude \
         Code writes one when a session is resumed); each call is replayed once, and a copy's \
         result is passed over\n\
         FIXTURES/claude-resumed.jsonl:11: call id `t2` was already used on line 3; this call is \
         skipped\n"
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let calls = agreements(&run);
    assert_eq!(
        calls,
        [
            ("t1", "read", false, "presentation"),
            ("t2", "bash", false, "presentation")
        ]
        .map(|(a, b, c, e)| (a.to_owned(), b.to_owned(), c, e.to_owned()))
    );
}

/// The first scenario's calls as (id, tool, is_error, agreement).
fn agreements(run: &Value) -> Vec<(String, String, bool, String)> {
    run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["tool"].as_str().unwrap().to_owned(),
                c["is_error"].as_bool().unwrap(),
                c["agreement"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `git ARGS` in `repo` with its author and commit dates set to `date`;
/// its output, trimmed.
fn dated_git(repo: &Path, args: &[&str], date: &str) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A session as published from a Claude Code worktree
/// (tests/fixtures/import/claude-worktree.jsonl): recorded on Windows in
/// `~/.claude-worktrees/app/calm-otter` on the branch `calm-otter`, its
/// calls' paths redacted to `/c/Users/[USER]/…` where the working
/// directory kept the user's name, and a `grep` finding nothing that
/// Claude Code did not count as an error (`returnCodeInterpretation`).
/// `--git` without `--rev` starts from the branch's last commit before
/// the session, not `HEAD`'s, nor the commit the session made.
#[test]
fn a_worktree_session_starts_from_its_branch_and_its_redacted_paths_map() {
    let d = Dirs::new();
    let repo = d.root.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let git = |args: &[&str], date: &str| dated_git(&repo, args, date);
    let commit = |text: &str, date: &str| {
        std::fs::write(repo.join("src/app.ts"), text).unwrap();
        git(&["add", "."], date);
        git(&["commit", "--quiet", "-m", text], date);
        git(&["rev-parse", "HEAD"], date)
    };
    git(
        &["init", "--quiet", "--initial-branch=main"],
        "2026-11-28T10:00:00Z",
    );
    commit(
        "export const greeting = \"hello\";\n",
        "2026-11-28T10:00:00Z",
    );
    git(
        &["checkout", "--quiet", "-b", "calm-otter"],
        "2026-11-28T10:00:00Z",
    );
    let start = commit(
        "export const greeting = \"hello from the branch\";\n",
        "2026-11-29T10:00:00Z",
    );
    commit("made by the session\n", "2026-11-30T10:30:00Z");
    git(&["checkout", "--quiet", "main"], "2026-11-30T09:00:00Z");
    commit(
        "export const greeting = \"main, later\";\n",
        "2026-11-30T09:00:00Z",
    );
    let (code, stdout, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("claude-worktree.jsonl"),
        "-o",
        "imported",
        "--git",
        repo.to_str().unwrap(),
    ]);
    assert_eq!(
        (code, stdout.as_str(), stderr),
        (
            0,
            "wrote 1 scenario to imported: 2 calls replayed, 0 not replayed\ncalls in file: 2 = \
             replayed 2 + listed 0\n",
            format!(
                "--rev: {start}, the last commit on refs/heads/calm-otter before the session \
                 began (2026-11-30T10:00:00.000Z)\n"
            )
        )
    );
    let scenario = d.read("imported/claude-worktree.yaml");
    assert!(
        scenario.contains(&format!("\n    rev: \"{start}\"\n")),
        "{scenario}"
    );
    assert!(
        scenario.contains("\n      path: ${workspace}/src/app.ts\n"),
        "{scenario}"
    );
    assert!(
        scenario.contains("\n      nonzero_exit: No matches found\n"),
        "{scenario}"
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let calls: Vec<Value> = run["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            json!([
                c["id"],
                c["tool"],
                c["is_error"],
                c["recorded_is_error"],
                c["agreement"]
            ])
        })
        .collect();
    assert_eq!(
        calls,
        [
            json!(["t1", "read", false, false, "presentation"]),
            json!(["t2", "bash", true, false, "presentation"]),
        ]
    );
    assert_eq!(
        [
            &run["replay"]["error_agree"],
            &run["replay"]["error_disagree"]
        ],
        [&json!(2), &json!(0)]
    );
}

/// A pi session branched from another (tests/fixtures/import/
/// pi-branched.jsonl) has a header written when it branched, two hours
/// after the messages it carries: `--git` without `--rev` starts from the
/// commit before its first message, not the one the session made later.
#[test]
fn a_branched_pi_session_starts_before_its_first_message() {
    let d = Dirs::new();
    let repo = d.root.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str], date: &str| dated_git(&repo, args, date);
    git(
        &["init", "--quiet", "--initial-branch=main"],
        "2026-11-30T09:00:00Z",
    );
    let mut commits = Vec::new();
    for (text, date) in [
        (
            "export const greeting = \"hello\";\n",
            "2026-11-30T09:00:00Z",
        ),
        ("export const greeting = \"hi\";\n", "2026-11-30T11:00:00Z"),
    ] {
        std::fs::write(repo.join("app.ts"), text).unwrap();
        git(&["add", "."], date);
        git(&["commit", "--quiet", "-m", text], date);
        commits.push(git(&["rev-parse", "HEAD"], date));
    }
    let (code, _, stderr) = d.run(&[
        "import",
        "pi",
        &fixture("pi-branched.jsonl"),
        "-o",
        "imported",
        "--git",
        repo.to_str().unwrap(),
    ]);
    assert_eq!(
        (code, stderr),
        (
            0,
            format!(
                "--rev: {}, the last commit on HEAD before the session began \
                 (2026-11-30T10:00:00.000Z)\n",
                commits[0]
            )
        )
    );
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(
        d.run_json()["scenarios"][0]["calls"][0]["agreement"],
        json!("same")
    );
}

/// Claude Code's conventions that are presentation
/// (tests/fixtures/import/claude-conventions.jsonl, on claude-crlf-ws):
/// its Read shows a CRLF file's lines without their `\r`, and its Glob
/// lists files only, where today's find lists the directory too.
#[test]
fn claude_code_s_line_endings_and_file_only_globs_are_presentation() {
    let d = Dirs::new();
    let (code, _, stderr) = d.run(&[
        "import",
        "claude",
        &fixture("claude-conventions.jsonl"),
        "-o",
        "imported",
        "--workspace",
        &fixture("claude-crlf-ws"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = d.run(&["run", "imported", "--report", "out"]);
    assert_eq!(code, 0, "{stdout}");
    let run = d.run_json();
    let calls = agreements(&run);
    assert_eq!(
        calls,
        [
            ("r1", "read", false, "presentation"),
            ("g1", "find", false, "presentation")
        ]
        .map(|(a, b, c, e)| (a.to_owned(), b.to_owned(), c, e.to_owned()))
    );
}

/// Issue 43 item 5: a session begun in a subdirectory of its repository
/// (`/home/dev/proj/app`, the repository a clone called `proj` with an
/// `app` directory) replays from that subdirectory of the workspace: the
/// shell starts there, relative paths are below it and absolute ones map
/// with the prefix; Claude Code's transcript and pi's session alike.
#[test]
fn a_session_begun_in_a_subdirectory_replays_from_there() {
    let d = Dirs::new();
    let repo = d.root.path().join("proj");
    std::fs::create_dir_all(repo.join("app")).unwrap();
    std::fs::write(repo.join("app/notes.txt"), "hello\n").unwrap();
    std::fs::write(repo.join("top.txt"), "top\n").unwrap();
    let git = |args: &[&str]| dated_git(&repo, args, "2026-11-28T10:00:00Z");
    git(&["init", "--quiet", "--initial-branch=main"]);
    git(&["add", "."]);
    git(&["commit", "--quiet", "-m", "start"]);
    let cwd = "/home/dev/proj/app";
    let entry = |uuid: &str, parent: Option<&str>, body: Value| {
        let mut entry = serde_json::json!({"uuid": uuid, "parentUuid": parent, "cwd": cwd,
            "sessionId": "s", "timestamp": "2026-11-30T10:00:00.000Z"});
        entry
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        entry.to_string()
    };
    let call = |n: usize, name: &str, input: Value| {
        serde_json::json!({"type": "assistant", "message": {"id": format!("m{n}"),
            "role": "assistant", "content": [{"type": "tool_use", "id": format!("t{n}"),
            "name": name, "input": input}]}})
    };
    let result = |n: usize, text: &str| {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": format!("t{n}"), "content": text}]}})
    };
    let claude = [
        entry(
            "u0",
            None,
            serde_json::json!({"type": "user",
            "message": {"role": "user", "content": "look"}}),
        ),
        entry(
            "a1",
            Some("u0"),
            call(
                1,
                "Read",
                serde_json::json!({
            "file_path": format!("{cwd}/notes.txt")}),
            ),
        ),
        entry("r1", Some("a1"), result(1, "     1→hello\n")),
        entry(
            "a2",
            Some("r1"),
            call(2, "Bash", serde_json::json!({"command": "cat notes.txt"})),
        ),
        entry("r2", Some("a2"), result(2, "hello")),
        entry(
            "a3",
            Some("r2"),
            call(
                3,
                "Read",
                serde_json::json!({
            "file_path": "/home/dev/proj/top.txt"}),
            ),
        ),
        entry("r3", Some("a3"), result(3, "     1→top\n")),
    ]
    .join("\n");
    std::fs::write(d.work().join("claude.jsonl"), claude + "\n").unwrap();
    let pi = [
        serde_json::json!({"type": "session", "id": "s", "cwd": cwd,
            "timestamp": "2026-11-30T10:00:00.000Z"}),
        serde_json::json!({"type": "message", "id": "p1", "parentId": null, "message": {
            "role": "assistant", "content": [
                {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "notes.txt"}},
                {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "cat notes.txt"}},
                {"type": "toolCall", "id": "c3", "name": "ls", "arguments": {}}]}}),
        serde_json::json!({"type": "message", "id": "p2", "parentId": "p1", "message": {
            "role": "toolResult", "toolCallId": "c1", "content": [{"type": "text", "text": "hello\n"}]}}),
        serde_json::json!({"type": "message", "id": "p3", "parentId": "p2", "message": {
            "role": "toolResult", "toolCallId": "c2", "content": [{"type": "text", "text": "hello\n"}]}}),
        serde_json::json!({"type": "message", "id": "p4", "parentId": "p3", "message": {
            "role": "toolResult", "toolCallId": "c3", "content": [{"type": "text", "text": "notes.txt"}]}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    std::fs::write(d.work().join("pi.jsonl"), pi + "\n").unwrap();
    for (format, file, args) in [
        (
            "claude",
            "claude.jsonl",
            [
                "path: ${workspace}/app/notes.txt",
                "command: cd ${workspace}/app && cat notes.txt",
                "path: ${workspace}/top.txt",
            ],
        ),
        (
            "pi",
            "pi.jsonl",
            [
                "path: ${workspace}/app/notes.txt",
                "command: cd ${workspace}/app && cat notes.txt",
                "path: ${workspace}/app",
            ],
        ),
    ] {
        let (code, stdout, stderr) = d.run(&[
            "import",
            format,
            file,
            "-o",
            format,
            "--git",
            repo.to_str().unwrap(),
            "--rev",
            "main",
        ]);
        assert_eq!(
            (code, stdout, stderr),
            (
                0,
                format!(
                    "wrote 1 scenario to {format}: 3 calls replayed, 0 not replayed\ncalls in \
                     file: 3 = replayed 3 + listed 0\n"
                ),
                "the session began in `app`, a directory of the repository (its top was \
                 recorded as /home/dev/proj): the replay starts there\n"
                    .to_owned()
            ),
            "{format}"
        );
        let scenario = d.read(&format!("{format}/{format}.yaml"));
        let written: Vec<&str> = scenario
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("path: ") || l.starts_with("command: "))
            .collect();
        assert_eq!(written, args, "{format}: {scenario}");
        let (code, stdout, stderr) = d.run(&["run", format]);
        assert_eq!(code, 0, "{format}: {stdout}{stderr}");
    }
}

/// Issue 43 item 1: a real session lost 144 of its 221 calls without a
/// word: its compaction boundary names an entry that is not in the file,
/// and the entry written just before the boundary hangs from a parent
/// that is not in the file either. The branch goes on through the last
/// entry that reaches the session's root, so the calls before the
/// boundary are replayed, and the accounting line counts them all.
#[test]
fn calls_before_a_compaction_with_missing_parents_are_kept_and_counted() {
    let d = Dirs::new();
    let cwd = "/home/dev/proj";
    let entry = |uuid: &str, parent: Option<&str>, body: Value| {
        let mut entry = serde_json::json!({"uuid": uuid, "parentUuid": parent, "cwd": cwd,
            "sessionId": "s", "timestamp": "2026-11-30T10:00:00.000Z"});
        entry
            .as_object_mut()
            .unwrap()
            .extend(body.as_object().unwrap().clone());
        entry.to_string()
    };
    let call = |n: usize, name: &str, input: Value| {
        serde_json::json!({"type": "assistant", "message": {"id": format!("m{n}"),
            "role": "assistant", "content": [{"type": "tool_use", "id": format!("t{n}"),
            "name": name, "input": input}]}})
    };
    let result = |n: usize, text: &str| {
        serde_json::json!({"type": "user", "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": format!("t{n}"), "content": text}]}})
    };
    let session = [
        entry(
            "u0",
            None,
            serde_json::json!({"type": "user", "message": {"role": "user", "content": "go"}}),
        ),
        entry(
            "a1",
            Some("u0"),
            call(1, "Bash", serde_json::json!({"command": "echo one"})),
        ),
        entry("r1", Some("a1"), result(1, "one")),
        entry(
            "a2",
            Some("r1"),
            call(2, "Bash", serde_json::json!({"command": "echo two"})),
        ),
        entry("r2", Some("a2"), result(2, "two")),
        entry(
            "x",
            Some("not-in-the-file"),
            serde_json::json!({"type": "system", "subtype": "stop_hook_summary"}),
        ),
        entry(
            "k",
            None,
            serde_json::json!({"type": "system", "subtype": "compact_boundary",
                "logicalParentUuid": "also-not-in-the-file"}),
        ),
        entry(
            "a3",
            Some("k"),
            call(3, "Bash", serde_json::json!({"command": "echo three"})),
        ),
        entry("r3", Some("a3"), result(3, "three")),
    ]
    .join("\n");
    std::fs::write(d.work().join("compacted.jsonl"), session + "\n").unwrap();
    let (code, stdout, stderr) = d.run(&["import", "claude", "compacted.jsonl", "-o", "imported"]);
    assert_eq!(
        (code, stdout, stderr),
        (
            0,
            "wrote 1 scenario to imported: 3 calls replayed, 0 not replayed, 1 problem in the \
             session (above)\ncalls in file: 3 = replayed 3 + listed 0\n"
                .to_owned(),
            "compacted.jsonl:7: the compaction boundary names `also-not-in-the-file` as the \
             entry before it, which is not in the file; the branch is assumed to go on through \
             the last entry before it that reaches the session's first entry (`r2`, line 5)\n"
                .to_owned()
        )
    );
    let (code, stdout, stderr) = d.run(&["run", "imported"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}
