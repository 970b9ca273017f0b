//! `harness run`, `check`, `list` and `schema` end to end on the suites in
//! tests/fixtures/suites.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

use insta::assert_snapshot;

use super::test_helpers::file_text;
use super::test_helpers::printed;
use super::test_helpers::printed_run;
use super::test_helpers::redacting;

/// Where the runs of these tests record their last run (never the source
/// tree).
const STATE_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/harness-state");

fn suites() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suites")
}

/// Runs `harness ARGS` in `dir` with a private temp dir, so tests can see
/// what a run leaves behind.
fn harness_in(dir: &Path, tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        .env("HARNESS_STATE_DIR", STATE_DIR)
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn copy_suite(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(suites().join(name)).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

#[test]
fn a_passing_suite_exits_zero_and_removes_its_workspaces() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["run", "passing"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_passing", printed_run(&out)));
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "workspaces left behind: {left:?}");
}

#[test]
fn a_wrong_expectation_fails_the_run_with_expected_and_actual() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["run", "failing"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_failing", printed_run(&out)));
}

#[test]
fn broken_files_are_reported_with_locations_and_valid_ones_still_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["run", "broken"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_broken", printed_run(&out)));
}

#[test]
fn check_lists_every_problem_and_exits_two() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["check", "broken"]);
    assert_eq!(out.status.code(), Some(2));
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("check_broken", printed(&out)));
    let out = harness_in(&suites(), tmp.path(), &["check", "passing"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out).0, "2 scenarios OK\n");
}

#[test]
fn list_filter_and_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["list", "passing"]);
    assert_eq!(
        text(&out).0,
        "read a file  (passing/read.yaml)  [read]\nwrite then read back  (passing/write.yaml)  [write]\n"
    );
    let out = harness_in(
        &suites(),
        tmp.path(),
        &["list", "passing", "--tag", "write"],
    );
    assert_eq!(
        text(&out).0,
        "write then read back  (passing/write.yaml)  [write]\n"
    );
    let out = harness_in(
        &suites(),
        tmp.path(),
        &["run", "passing", "--filter", "^read"],
    );
    assert_eq!(out.status.code(), Some(0));
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_filter", printed_run(&out)));
}

#[test]
fn snapshots_are_written_as_new_then_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = copy_suite("snapshots");
    let _guard = redacting(&[tmp.path(), suite.path()]).bind_to_scope();
    let out = harness_in(suite.path(), tmp.path(), &["run", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out).0);
    assert_snapshot!("run_snapshots_none_yet", printed_run(&out));
    let new = std::fs::read_to_string(suite.path().join("snap.snap.yaml.new")).unwrap();
    assert_snapshot!("run_snapshots_new_file", file_text(&new));
    assert!(!suite.path().join("snap.snap.yaml").exists());

    let out = harness_in(
        suite.path(),
        tmp.path(),
        &["run", ".", "--update-snapshots"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).0);
    assert_snapshot!("run_snapshots_update", printed_run(&out));
    assert!(!suite.path().join("snap.snap.yaml.new").exists());
    let stored = std::fs::read_to_string(suite.path().join("snap.snap.yaml")).unwrap();
    assert_eq!(stored, new);

    let out = harness_in(suite.path(), tmp.path(), &["run", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).0);

    // A changed result fails against the stored snapshot.
    std::fs::write(
        suite.path().join("snap.yaml"),
        std::fs::read_to_string(suite.path().join("snap.yaml"))
            .unwrap()
            .replace("snap me", "changed"),
    )
    .unwrap();
    let out = harness_in(suite.path(), tmp.path(), &["run", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert_snapshot!("run_snapshots_changed", printed_run(&out));
}

#[test]
fn keep_workspaces_prints_where_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(
        &suites(),
        tmp.path(),
        &[
            "run",
            "passing",
            "--keep-workspaces",
            "--filter",
            "read a file",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    // The one workspace left in the temp dir is the one printed, with its
    // logs directory next to it.
    let mut kept: Vec<PathBuf> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    kept.sort();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert_eq!(
        kept[1].file_name().unwrap().to_str().unwrap(),
        format!("{}-logs", kept[0].file_name().unwrap().to_str().unwrap())
    );
    assert_eq!(
        std::fs::read_to_string(kept[0].join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
    let mut settings = redacting(&[tmp.path()]);
    let name = kept[0].file_name().unwrap().to_str().unwrap();
    settings.add_filter(&regex::escape(&format!("[tmp]/{name}")), "[workspace]");
    settings.bind(|| assert_snapshot!("run_keep_workspaces", printed_run(&out)));
}

#[test]
fn schema_is_json_with_the_top_level_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["schema"]);
    assert_eq!(out.status.code(), Some(0));
    // It is JSON, and the snapshot holds it byte for byte.
    let _: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("schema", printed(&out)));
}

#[test]
fn no_scenarios_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let out = harness_in(tmp.path(), tmp.path(), &["run", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!("run_no_scenarios", printed(&out));
    let out = harness_in(tmp.path(), tmp.path(), &["run", "missing-dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!("run_missing_dir", printed(&out));
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn the_shipped_suite_passes_and_fails_when_an_expectation_is_made_wrong() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&repo.join("scenarios"), &copy.path().join("scenarios"));
    std::os::unix::fs::symlink(repo.join("fixtures"), copy.path().join("fixtures")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(
        copy.path(),
        tmp.path(),
        &["run", "scenarios", "--tokenizer", "chars4"],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // Only the count of failures: the suite grows, and its console output
    // is not snapshotted here (the CI step runs it against its baseline).
    assert!(stdout.contains(" 0 failed"), "{stdout}");

    let basic = copy.path().join("scenarios/read/basic.yaml");
    let text_before = std::fs::read_to_string(&basic).unwrap();
    let wrong = text_before.replace(
        "equals: \"# Notes\\n\\n- one\\n- two\\n\"",
        "equals: \"# Notes\\n\\n- one\\n- three\\n\"",
    );
    assert_ne!(wrong, text_before);
    std::fs::write(&basic, wrong).unwrap();
    let out = harness_in(
        copy.path(),
        tmp.path(),
        &[
            "run",
            "scenarios/read",
            "--filter",
            "read returns a small file unchanged",
            "--tokenizer",
            "chars4",
        ],
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    redacting(&[tmp.path(), copy.path()]).bind(|| {
        assert_snapshot!("run_shipped_expectation_made_wrong", printed_run(&out));
    });
}

#[test]
fn a_scenario_over_its_time_budget_fails_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(
        &suites(),
        tmp.path(),
        &["run", "slow", "--timeout", "1", "--tokenizer", "chars4"],
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_timeout", printed_run(&out)));
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn fail_fast_stops_starting_scenarios() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(
        &suites(),
        tmp.path(),
        &[
            "run",
            "failing",
            "--fail-fast",
            "--jobs",
            "1",
            "--tokenizer",
            "chars4",
        ],
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // failing/right.yaml runs first and passes; wrong.yaml fails; nothing after.
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_fail_fast", printed_run(&out)));
}

#[test]
fn ctrl_c_stops_the_run_and_removes_workspaces() {
    let tmp = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "slow", "--jobs", "1", "--tokenizer", "chars4"])
        .current_dir(suites())
        .env("TMPDIR", tmp.path())
        .env("HARNESS_STATE_DIR", STATE_DIR)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first scenario's workspace exists (bounded).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_dir(tmp.path()).unwrap().next().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        std::thread::yield_now();
    }
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    // Where the run stops depends on when the signal lands, so only the
    // summary's mark is checked, not the whole output.
    assert!(stdout.contains("(interrupted)"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("harness-ws-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn failures_on_long_texts_show_where_they_went_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("summary.md");
    let out = harness_in(
        &suites(),
        tmp.path(),
        &[
            "run",
            "long_failures",
            "--tokenizer",
            "chars4",
            "--markdown",
            summary.to_str().unwrap(),
        ],
    );
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    redacting(&[tmp.path()]).bind(|| {
        assert_snapshot!("run_long_failures", printed_run(&out));
        assert_snapshot!(
            "run_long_failures_summary.md",
            file_text(&std::fs::read_to_string(&summary).unwrap())
        );
    });
}

#[test]
fn failure_diffs_are_coloured_only_when_the_terminal_wants_it() {
    let run = |env: &[(&str, &str)]| {
        let tmp = tempfile::tempdir().unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
        command
            .args(["run", "long_failures", "--tokenizer", "chars4"])
            .current_dir(suites())
            .env("TMPDIR", tmp.path())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CLICOLOR");
        for (key, value) in env {
            command.env(key, value);
        }
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        // Only the lines after the per-scenario ones, whose order varies.
        let stdout = String::from_utf8(out.stdout).unwrap();
        let details = stdout.find("failures:").unwrap();
        let summary = stdout.rfind("\n7 scenarios").unwrap();
        stdout[details..summary].to_owned()
    };
    // Standard output is a pipe here: no colour, unless forced.
    let plain = run(&[]);
    assert!(!plain.contains('\u{1b}'), "{plain}");
    assert_eq!(run(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]), plain);
    // CLICOLOR_FORCE=0 forces nothing (and is not `NO_COLOR` either).
    assert_eq!(run(&[("CLICOLOR_FORCE", "0")]), plain);
    let forced = run(&[("CLICOLOR_FORCE", "1")]);
    // The escapes shown as text, so the snapshot is readable.
    insta::assert_snapshot!("forced_colour", forced.replace('\u{1b}', "<ESC>"));
    let escapes = regex::Regex::new("\u{1b}\\[[0-9;]*m").unwrap();
    assert_eq!(escapes.replace_all(&forced, ""), plain);
}

/// Issue 22 item 1: the agent loop stopped every scenario after 200
/// turns, a limit written nowhere. A scripted model now runs to the end
/// of its script; `max_turns` (scenario or suite) stops it earlier, and
/// the failure says why the run ended.
#[test]
fn a_script_runs_to_its_end_unless_max_turns_says_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let steps: String = (0..250)
        .map(|i| format!("  - call: ls\n    id: c{i}\n"))
        .collect();
    std::fs::write(dir.path().join("long.yaml"), format!("model:\n{steps}")).unwrap();
    let out = harness_in(dir.path(), tmp.path(), &["run", ".", "--report", "out"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["scenarios"][0]["stats"]["calls"], 250);

    std::fs::write(dir.path().join("harness.yaml"), "max_turns: 7\n").unwrap();
    std::fs::write(
        dir.path().join("short.yaml"),
        format!("max_turns: 3\nmodel:\n{steps}"),
    )
    .unwrap();
    let out = harness_in(dir.path(), tmp.path(), &["run", ".", "--report", "out"]);
    assert_eq!(out.status.code(), Some(1));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/run.json")).unwrap())
            .unwrap();
    let got: Vec<(String, u64, serde_json::Value)> = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["stats"]["calls"].as_u64().unwrap(),
                s["failures"].clone(),
            )
        })
        .collect();
    let failure = |n: u64| {
        serde_json::json!([{
            "step": "loop contract",
            "check": "run",
            "expected": "the run ends normally",
            "actual": format!("the model kept calling tools after {n} turns (max_turns); the loop stopped it"),
        }])
    };
    assert_eq!(
        got,
        [
            ("./long".to_owned(), 7, failure(7)),
            ("./short".to_owned(), 3, failure(3))
        ]
    );
    std::fs::write(dir.path().join("harness.yaml"), "max_turns: 0\n").unwrap();
    let out = harness_in(dir.path(), tmp.path(), &["check", "."]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stdout.contains(
            "harness.yaml:1:12: max_turns: must be a whole number from 1 to 1000000000 (it is 0)"
        ),
        "{stdout}"
    );
}

#[test]
fn a_timed_out_scenario_keeps_the_transcript_of_its_partial_run() {
    // The first batch is answered; in the second, the read ends but bash
    // is still running (it has streamed) when the budget runs out, so
    // neither result reached the conversation.
    let suite = tempfile::tempdir().unwrap();
    std::fs::write(
        suite.path().join("partial.yaml"),
        "name: a run cut short in its second batch\n\
         workspace:\n  files:\n    a.txt: \"alpha\\n\"\n\
         model:\n\
         \x20 - call: read\n    args: { path: a.txt }\n\
         \x20 - parallel:\n\
         \x20     - call: read\n        args: { path: a.txt }\n\
         \x20     - call: bash\n        args: { command: \"echo started; sleep 30\" }\n",
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let report = suite.path().join("run.json");
    let out = harness_in(
        suite.path(),
        tmp.path(),
        &[
            "run",
            "partial.yaml",
            "--timeout",
            "1",
            "--tokenizer",
            "chars4",
            "--json",
            report.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let scenario = &run["scenarios"][0];
    assert_eq!(scenario["failures"][0]["check"], "timeout");
    assert_snapshot!(
        "run_timeout_partial_transcript",
        serde_json::to_string_pretty(&scenario["transcript"]).unwrap()
    );
}
