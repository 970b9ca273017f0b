//! Replays of what real published transcripts hold (issue 43): a Claude
//! Code session recorded on Windows, as Entire's checkpoints keep it, with
//! its bare `REDACTED` markers (tests/fixtures/import/claude-windows.jsonl,
//! on claude-crlf-ws).

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

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

/// `harness ARGS` in `root/work`: exit code, stdout, stderr.
fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = harness(&root.join("work"), &root.join("tmp"), &root.join("state"));
    cmd.args(args);
    let out = output_within(cmd, LIMIT);
    let (stdout, stderr) = texts(&out);
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

#[test]
fn a_windows_session_s_paths_and_entire_s_redactions_replay_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for d in ["work", "tmp", "state"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    let (code, _, stderr) = run(
        root,
        &[
            "import",
            "claude",
            &fixture("claude-windows.jsonl"),
            "-o",
            "imported",
            "--workspace",
            &fixture("claude-crlf-ws"),
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    // A Grep path on the drive is the workspace's, and so is the one a
    // Grep without a path searches after `cd docs`.
    let scenario = std::fs::read_to_string(root.join("work/imported/claude-windows.yaml")).unwrap();
    let doc: Value = serde_yaml::from_str(&scenario).unwrap();
    let args: Vec<(String, Value)> = doc["model"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["call"].as_str().unwrap().to_owned(), s["args"].clone()))
        .collect();
    assert_eq!(
        args,
        [
            (
                "grep",
                serde_json::json!({"pattern": "Ship", "path": "${workspace}/docs"})
            ),
            (
                "bash",
                serde_json::json!({"command": "cd docs", "timeout": 30.0})
            ),
            (
                "grep",
                serde_json::json!({"pattern": "Ship", "path": "${workspace}/docs"})
            ),
            (
                "read",
                serde_json::json!({"path": "${workspace}/docs/plan.md"})
            ),
        ]
        .map(|(t, a)| (t.to_owned(), a))
    );
    let (code, stdout, _) = run(root, &["run", "imported", "--json", "run.json"]);
    assert_eq!(code, 0, "{stdout}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("work/run.json")).unwrap())
            .unwrap();
    let calls: Vec<(String, bool, String)> = report["scenarios"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_owned(),
                c["is_error"].as_bool().unwrap(),
                c["agreement"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("g1", false, "presentation"),
            ("b1", false, "presentation"),
            ("g2", false, "presentation"),
            ("rd1", false, "presentation"),
        ]
        .map(|(a, b, c)| (a.to_owned(), b, c.to_owned()))
    );
}
