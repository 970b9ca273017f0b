//! `harness run --coverage` end to end: the coverage section of run.json,
//! summary.md and the console; the same on every run whatever `--jobs` and
//! the temp directory; kept by a merge of partitions; absent without the
//! flag.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

const SUITE: &str = "tests/fixtures/suites/coverage";

fn harness(tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(root())
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1")
        .env(
            "HARNESS_STATE_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/harness-state-coverage"),
        )
        .output()
        .unwrap()
}

/// Runs the suite with `extra` flags and a report directory in a fresh
/// temp dir; the run.json and summary.md it wrote, and its stdout.
fn run(extra: &[&str]) -> (Value, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report");
    let mut args = vec!["run", SUITE, "--report", report.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = harness(tmp.path(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let json = std::fs::read_to_string(report.join("run.json")).unwrap();
    let md = std::fs::read_to_string(report.join("summary.md")).unwrap();
    (serde_json::from_str(&json).unwrap(), md, stdout)
}

/// From the line that starts with `start` to the end.
fn from(text: &str, start: &str) -> String {
    let at = text.find(start).unwrap_or(text.len());
    text[at..].to_owned()
}

#[test]
fn coverage_is_reported_in_every_format_and_the_same_on_every_run() {
    let (one, md, stdout) = run(&["--coverage", "--jobs", "1"]);
    let (four, _, _) = run(&["--coverage", "--jobs", "4"]);
    assert_eq!(one["coverage"], four["coverage"]);
    let coverage = &one["coverage"];
    assert_eq!(
        (
            &coverage["scenarios"],
            &coverage["known"],
            &coverage["exercised"]
        ),
        (&Value::from(3), &Value::from(117), &Value::from(21))
    );
    let console = from(&stdout, "\ncoverage:");
    let console = &console[..console.find("wrote ").unwrap_or(console.len())];
    assert_snapshot!("coverage_console", console);
    assert_snapshot!("coverage_summary.md", from(&md, "### Coverage"));
    let edit = coverage["areas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["area"] == "edit")
        .unwrap();
    let seen: Vec<(&str, u64)> = edit["behaviours"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["calls"].as_u64() != Some(0))
        .map(|b| {
            (
                b["behaviour"].as_str().unwrap(),
                b["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("exact match", 1),
            ("legacy oldText/newText", 1),
            ("error: old text found more than once", 1)
        ]
    );
    // Each scenario records its own behaviours, which merges and scripts
    // can use.
    assert_eq!(
        one["scenarios"][2]["coverage"]["loop"],
        serde_json::json!({
            "one call in a message": 2,
            "parallel batch": 1,
            "retry sent": 1,
            "retry that succeeded": 1
        })
    );
}

#[test]
fn a_merge_of_partitions_has_the_coverage_of_the_whole_run() {
    let (whole, _, _) = run(&["--coverage"]);
    let tmp = tempfile::tempdir().unwrap();
    let mut parts = Vec::new();
    for k in 1..=2 {
        let dir = tmp.path().join(format!("part-{k}"));
        let spec = format!("slice:{k}/2");
        let out = harness(
            tmp.path(),
            &[
                "run",
                SUITE,
                "--coverage",
                "--partition",
                &spec,
                "--report",
                dir.to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(0));
        parts.push(dir.join("run.json").display().to_string());
    }
    let merged = tmp.path().join("merged");
    let mut args = vec!["report", "merge"];
    args.extend(parts.iter().map(String::as_str));
    args.extend(["--report", merged.to_str().unwrap()]);
    let out = harness(tmp.path(), &args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("run.json")).unwrap()).unwrap();
    assert_eq!(json["coverage"], whole["coverage"]);
}

#[test]
fn without_the_flag_there_is_no_coverage() {
    let (json, md, stdout) = run(&[]);
    assert_eq!(json.get("coverage"), None);
    assert!(
        json["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("coverage").is_none())
    );
    assert_eq!(md.find("### Coverage"), None);
    assert_eq!(stdout.find("coverage:"), None);
}

#[test]
fn a_server_only_suite_shows_its_server_first_and_no_built_in_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("harness.yaml"),
        "servers:\n  h:\n    command: [\"${harness}\", mcp, --cwd, \"${workspace}\"]\n    prefix: h_\n",
    )
    .unwrap();
    std::fs::write(
        suite.join("ls.yaml"),
        "name: server ls\ntools: [h]\nmodel:\n  - call: h_ls\n    args: { path: . }\n",
    )
    .unwrap();
    let report = tmp.path().join("report");
    let out = harness(
        tmp.path(),
        &[
            "run",
            suite.to_str().unwrap(),
            "--coverage",
            "--report",
            report.to_str().unwrap(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("run.json")).unwrap()).unwrap();
    let areas: Vec<(&str, u64, u64)> = json["coverage"]["areas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["area"].as_str().unwrap(),
                a["exercised"].as_u64().unwrap(),
                a["known"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(areas[0], ("server h", 1, 7));
    assert_eq!(
        areas.iter().map(|a| a.0).collect::<Vec<_>>(),
        ["server h", "loop"]
    );
}
