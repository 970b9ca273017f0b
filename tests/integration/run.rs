//! `harness run`, `check`, `list` and `schema` end to end on the suites in
//! tests/fixtures/suites.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

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
    assert!(stdout.contains("PASS  read a file"), "{stdout}");
    assert!(stdout.contains("PASS  write then read back"), "{stdout}");
    assert!(
        stdout.contains("2 scenarios: 2 passed, 0 failed, 0 skipped"),
        "{stdout}"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "workspaces left behind: {left:?}");
}

#[test]
fn a_wrong_expectation_fails_the_run_with_expected_and_actual() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["run", "failing"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("PASS  a right expectation"), "{stdout}");
    assert!(stdout.contains("FAIL  a wrong expectation"), "{stdout}");
    assert!(
        stdout.contains(
            "  step 1 (read) · contains\n    expected: text containing \"gamma\"\n    actual:   alpha\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 scenarios: 1 passed, 1 failed, 0 skipped"),
        "{stdout}"
    );
}

#[test]
fn broken_files_are_reported_with_locations_and_valid_ones_still_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["run", "broken"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stdout.contains("PASS  still runs"), "{stdout}");
    assert!(
        stderr.contains("broken/syntax.yaml:5:1: YAML syntax error"),
        "{stderr}"
    );
    assert!(
        stderr.contains("broken/unknown_key.yaml:5:15: model[0].expect: unknown field `contians`"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `contains`?"), "{stderr}");
    assert!(
        stderr.contains("broken/semantic.yaml:3:3: fixture `does-not-exist` not found"),
        "{stderr}"
    );
    assert!(
        stderr.contains("broken/semantic.yaml:5:5: workspace file `../outside.txt`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("broken/semantic.yaml:7:5: unknown tool `raed`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "broken/semantic.yaml:8:20: step 1 (raed): `${undefined}` is used before it is captured"
        ),
        "{stderr}"
    );
}

#[test]
fn check_lists_every_problem_and_exits_two() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["check", "broken"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("broken/")).count(),
        6,
        "{stdout}"
    );
    assert!(
        stdout.ends_with("6 problems found (1 valid scenario)\n"),
        "{stdout}"
    );
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
    let (stdout, _) = text(&out);
    assert!(stdout.contains("1 scenario: 1 passed"), "{stdout}");
}

#[test]
fn snapshots_are_written_as_new_then_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = copy_suite("snapshots");
    let out = harness_in(suite.path(), tmp.path(), &["run", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out).0);
    assert!(
        text(&out)
            .0
            .contains("none yet; run with --update-snapshots to accept")
    );
    let new = std::fs::read_to_string(suite.path().join("snap.snap.yaml.new")).unwrap();
    assert!(new.contains("the-read:"), "{new}");
    assert!(new.contains("text: |\n    snap me\n"), "{new}");
    assert!(!suite.path().join("snap.snap.yaml").exists());

    let out = harness_in(
        suite.path(),
        tmp.path(),
        &["run", ".", "--update-snapshots"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).0);
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
    assert!(text(&out).0.contains("· snapshot"), "{}", text(&out).0);
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
    let (stdout, _) = text(&out);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("workspace of read a file: "))
        .unwrap();
    let path = line.trim_start_matches("workspace of read a file: ");
    assert_eq!(
        std::fs::read_to_string(Path::new(path).join("a.txt")).unwrap(),
        "alpha\nbeta\n"
    );
}

#[test]
fn schema_is_json_with_the_top_level_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(&suites(), tmp.path(), &["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "name",
        "tags",
        "tools",
        "limits",
        "confine",
        "system",
        "workspace",
        "model",
        "expect",
        "skip",
    ] {
        assert!(schema["properties"].get(key).is_some(), "missing {key}");
    }
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["required"], serde_json::json!(["model"]));
}

#[test]
fn no_scenarios_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness_in(tmp.path(), tmp.path(), &["run", "."]);
    assert_eq!(out.status.code(), Some(2));
    let out = harness_in(tmp.path(), tmp.path(), &["run", "missing-dir"]);
    assert_eq!(out.status.code(), Some(2));
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
    assert!(stdout.contains(" 0 failed"), "{stdout}");

    let basic = copy.path().join("scenarios/read/basic.yaml");
    let text_before = std::fs::read_to_string(&basic).unwrap();
    let wrong = text_before.replace(
        "equals: \"# Notes\\n\\n- one\\n- two\\n\"",
        "equals: \"# Notes\\n\\n- one\\n- three\\n\"",
    );
    assert_ne!(wrong, text_before);
    std::fs::write(&basic, wrong).unwrap();
    let out = harness_in(copy.path(), tmp.path(), &["run", "scenarios/read"]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL  read returns a small file unchanged"),
        "{stdout}"
    );
    assert!(stdout.contains("step 1 (read) · equals"), "{stdout}");
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
    assert!(stdout.contains("PASS  a quick scenario"), "{stdout}");
    assert!(
        stdout.contains("  scenario · timeout\n    expected: the scenario finishes within 1.0 s\n"),
        "{stdout}"
    );
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
    assert!(stdout.contains("1 passed, 1 failed"), "{stdout}");
}

#[test]
fn ctrl_c_stops_the_run_and_removes_workspaces() {
    let tmp = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "slow", "--jobs", "1", "--tokenizer", "chars4"])
        .current_dir(suites())
        .env("TMPDIR", tmp.path())
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
    assert!(stdout.contains("(interrupted)"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("harness-ws-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
