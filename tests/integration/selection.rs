//! Predictable selection and order: `--jobs 1` runs in discovery order,
//! `--fail-fast` starts nothing after a failure, `--filter` (repeatable
//! regexes), `--exact`, `--exclude`/`--skip`, `--tag`, `--last-failed`, a
//! baseline that shares no scenario, and `--quiet`/`--verbose`.

use std::path::Path;
use std::time::Duration;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;

use super::cli_support::bash_scenario;
use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::cli_support::write_files;
use super::test_helpers::printed;
use super::test_helpers::redacting;

const LIMIT: Duration = Duration::from_secs(120);

/// Runs `harness ARGS` in `dir` (temp files and state in `state`).
fn harness_out(dir: &Path, state: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = harness(dir, state, state);
    cmd.args(args);
    output_within(cmd, LIMIT)
}

/// Six scenarios `a` … `f` that log their name when they run; `c` fails.
fn logging_suite(dir: &Path) {
    let files: Vec<(String, String)> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|name| {
            let exit = if *name == "c" { "; exit 1" } else { "" };
            let command = format!("echo {name} >> \"$HARNESS_TEST_LOG\"{exit}");
            // Without the sandbox: the log is outside the workspace.
            (
                format!("s/{name}.yaml"),
                format!("sandbox: off\n{}", bash_scenario(name, &command)),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    write_files(dir, &files);
}

#[test]
fn jobs_one_follows_discovery_order_and_fail_fast_starts_nothing_after_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    logging_suite(dir.path());
    let log = dir.path().join("log");
    let _guard = redacting(&[dir.path(), state.path()]).bind_to_scope();
    let run = |flags: &[&str]| {
        let _ = std::fs::remove_file(&log);
        let mut cmd = harness(dir.path(), state.path(), state.path());
        cmd.args(["run", "s", "--jobs", "1", "--tokenizer", "chars4"])
            .args(flags)
            .env("HARNESS_TEST_LOG", &log);
        let out = output_within(cmd, LIMIT);
        let ran = std::fs::read_to_string(&log).unwrap();
        (out, ran)
    };
    let (out, ran) = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(ran, "a\nb\nc\nd\ne\nf\n");
    // The lines as printed, not sorted: with one job they come in
    // discovery order.
    assert_snapshot!("run_jobs_one_in_order", printed(&out));
    // The race this replaces started another scenario after the failure in
    // most runs; every run must stop at the same place.
    for _ in 0..4 {
        let (out, ran) = run(&["--fail-fast"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(ran, "a\nb\nc\n");
        assert_snapshot!("run_jobs_one_fail_fast", printed(&out));
    }
}

#[test]
fn filters_are_regexes_exact_names_are_whole_and_exclude_deselects() {
    let dir = tempfile::tempdir().unwrap();
    let scenario =
        |name: &str, tag: &str| format!("name: {name}\ntags: [{tag}]\nmodel:\n  - say: done\n");
    write_files(
        dir.path(),
        &[
            ("s/d2.yaml", &scenario("read a file (D2)", "read")),
            ("s/d20.yaml", &scenario("read more (D20)", "read")),
            ("s/other.yaml", &scenario("write it", "write")),
        ],
    );
    let cases: [&[&str]; 13] = [
        &["list", "s"],
        &["list", "s", "--filter", "(D2)"],
        &["list", "s", "--filter", r"\(D2\)"],
        &["list", "s", "--exact", "read a file (D2)"],
        &["list", "s", "--exact", "read a file"],
        &["list", "s", "--filter", "D20", "--filter", "^write"],
        &["list", "s", "--filter", "D20", "--exact", "write it"],
        &["list", "s", "--exclude", "D20"],
        &["list", "s", "--skip", r"\(D2", "--tag", "read"],
        &["list", "s", "--filter", "other.yaml"],
        &["list", "s", "--tag", "nosuch"],
        &["list", "s", "--filter", "(D2"],
        &["run", "s", "--exclude", "[z-a]"],
    ];
    let mut shown = String::new();
    for args in cases {
        let out = harness_out(dir.path(), dir.path(), args);
        let (stdout, stderr) = texts(&out);
        shown.push_str(&format!(
            "$ harness {}\n{stdout}{stderr}(exit {})\n\n",
            args.join(" "),
            out.status.code().unwrap()
        ));
    }
    assert_snapshot!("selection_flags", shown);
}

#[test]
fn a_baseline_that_shares_no_scenario_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("one/a.yaml", &bash_scenario("first suite", "echo one")),
            ("two/b.yaml", &bash_scenario("second suite", "echo two")),
        ],
    );
    let _guard = redacting(&[dir.path(), state.path()]).bind_to_scope();
    let out = harness_out(
        dir.path(),
        state.path(),
        &[
            "run",
            "one",
            "--save-baseline",
            "base.json",
            "--tokenizer",
            "chars4",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
    let out = harness_out(
        dir.path(),
        state.path(),
        &[
            "run",
            "two",
            "--baseline",
            "base.json",
            "--report",
            "rep",
            "--tokenizer",
            "chars4",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_snapshot!("run_baseline_shares_nothing", printed(&out));
    // Refused before anything ran: no report at all.
    assert!(!dir.path().join("rep").exists());
    // The same for a merge, which says why in summary.md.
    let out = harness_out(
        dir.path(),
        state.path(),
        &["run", "two", "--json", "two.json", "--tokenizer", "chars4"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
    let out = harness_out(
        dir.path(),
        state.path(),
        &[
            "report",
            "merge",
            "two.json",
            "--baseline",
            "base.json",
            "--report",
            "merged",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
    assert_snapshot!("merge_baseline_shares_nothing", printed(&out));
    let names: Vec<String> = std::fs::read_dir(dir.path().join("merged"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["summary.md"]);
    assert_snapshot!(
        "merge_baseline_shares_nothing_summary.md",
        std::fs::read_to_string(dir.path().join("merged/summary.md")).unwrap()
    );
}

#[test]
fn last_failed_reruns_what_failed_in_the_last_run() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("s/a.yaml", &bash_scenario("passes", "echo ok")),
            ("s/b.yaml", &bash_scenario("fails", "exit 1")),
            ("s/c.yaml", &bash_scenario("also passes", "echo ok")),
        ],
    );
    let _guard = redacting(&[dir.path(), state.path()]).bind_to_scope();
    let run = |flags: &[&str]| {
        let mut args = vec!["run", "s", "--jobs", "1", "--tokenizer", "chars4"];
        args.extend(flags);
        harness_out(dir.path(), state.path(), &args)
    };
    let out = run(&["--last-failed"]);
    assert_eq!(out.status.code(), Some(2));
    let mut shown = format!(
        "$ harness run s --last-failed  # nothing recorded yet\n{}",
        printed(&out)
    );
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    // The last run is recorded as a run.json.
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.path().join("last-run.json")).unwrap())
            .unwrap();
    assert_eq!(recorded["counts"]["failed"], 1);
    let out = run(&["--last-failed"]);
    assert_eq!(out.status.code(), Some(1));
    shown.push_str(&format!("$ harness run s --last-failed\n{}", printed(&out)));
    write_files(
        dir.path(),
        &[("s/b.yaml", &bash_scenario("fails", "echo fixed"))],
    );
    let out = run(&["--last-failed"]);
    assert_eq!(out.status.code(), Some(0));
    shown.push_str(&format!(
        "$ harness run s --last-failed  # fixed\n{}",
        printed(&out)
    ));
    let out = run(&["--last-failed"]);
    assert_eq!(out.status.code(), Some(0));
    shown.push_str(&format!(
        "$ harness run s --last-failed  # again\n{}",
        printed(&out)
    ));
    assert_snapshot!("run_last_failed", shown);
}

#[test]
fn last_failed_without_paths_runs_what_failed_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("scenarios/a.yaml", &bash_scenario("passes", "echo ok")),
            ("mistakes/b.yml", &bash_scenario("fails", "exit 1")),
            ("mistakes/c.yaml", &bash_scenario("also passes", "echo ok")),
        ],
    );
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--jobs", "1", "--tokenizer", "chars4"];
        all.extend(args);
        harness_out(dir.path(), state.path(), &all)
    };
    assert_eq!(run(&["mistakes"]).status.code(), Some(1));
    let out = run(&["--last-failed"]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.path().join("last-run.json")).unwrap())
            .unwrap();
    let ran: Vec<(&str, &str)> = recorded["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["file"].as_str().unwrap()))
        .collect();
    assert_eq!(ran, [("fails", "mistakes/b.yml")]);
}

#[test]
fn the_last_run_is_kept_beside_the_suite_file_not_in_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (".git/HEAD", "ref: refs/heads/main\n"),
            ("tests/harness/harness.yaml", "jobs: 1\n"),
            (
                "tests/harness/ok/a.yaml",
                &bash_scenario("passes", "echo ok"),
            ),
            ("tests/harness/b.yaml", &bash_scenario("fails", "exit 1")),
        ],
    );
    // No HARNESS_STATE_DIR: the default.
    let run = |cwd: &Path, args: &[&str]| {
        let mut cmd = harness(cwd, tmp.path(), tmp.path());
        cmd.env_remove("HARNESS_STATE_DIR")
            .args(["run", "--tokenizer", "chars4"])
            .args(args);
        output_within(cmd, LIMIT)
    };
    assert_eq!(run(dir.path(), &["tests/harness"]).status.code(), Some(1));
    let state = dir.path().join("tests/harness/.harness");
    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("last-run.json")).unwrap())
            .unwrap();
    assert_eq!(recorded["counts"]["failed"], 1);
    assert_eq!(
        std::fs::read_to_string(state.join(".gitignore")).unwrap(),
        "# written by harness run: its state, not to commit\n*\n"
    );
    assert!(!dir.path().join("target").exists());
    assert!(!dir.path().join(".harness").exists());
    // A run of one file of the suite, from another directory, finds the
    // same state: the suite file decides, not the current directory.
    let elsewhere = dir.path().join("tests");
    let out = run(&elsewhere, &["harness/b.yaml", "--last-failed"]);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    let ran: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("last-run.json")).unwrap())
            .unwrap();
    assert_eq!(ran["scenarios"][0]["name"], "fails");
    assert_eq!(ran["counts"]["scenarios"], 1);
    assert!(!elsewhere.join(".harness").exists());
    assert!(!elsewhere.join("harness/ok/.harness").exists());
    assert!(!dir.path().join("tests/harness/ok/.harness").exists());
}

#[test]
fn a_run_from_a_subdirectory_uses_the_suite_file_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (".git/HEAD", "ref: refs/heads/main\n"),
            ("scenarios/harness.yaml", "fixtures: shared\n"),
            ("scenarios/shared/greeting/hello.txt", "hello\n"),
            (
                "scenarios/read/a.yaml",
                "name: a\nworkspace: { fixture: greeting }\nmodel:\n  - call: read\n    args: { path: hello.txt }\n    expect: { equals: \"hello\\n\" }\n",
            ),
        ],
    );
    let sub = dir.path().join("scenarios/read");
    let out = harness_out(&sub, state.path(), &["run", ".", "--tokenizer", "chars4"]);
    assert_eq!(out.status.code(), Some(0), "{}", printed(&out));
    // Outside a repository the current directory stays the top.
    std::fs::remove_dir_all(dir.path().join(".git")).unwrap();
    let out = harness_out(&sub, state.path(), &["run", ".", "--tokenizer", "chars4"]);
    assert_eq!(out.status.code(), Some(2), "{}", printed(&out));
}

#[test]
fn quiet_prints_only_the_end_and_verbose_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "s/a.yaml",
                "name: passes\nmodel:\n  - call: ls\n    args: {}\n  - call: read\n    args: { path: missing.txt }\n    expect: { error: true }\n",
            ),
            ("s/b.yaml", &bash_scenario("fails", "exit 1")),
            (
                "s/c.yaml",
                "name: later\nskip: not ready\nmodel:\n  - say: hi\n",
            ),
        ],
    );
    let mut settings = redacting(&[dir.path(), state.path()]);
    // The duration of each call in --verbose lines.
    settings.add_filter(r", \d+ ms\n", ", [ms] ms\n");
    let _guard = settings.bind_to_scope();
    let mut shown = String::new();
    for flag in ["--quiet", "--verbose"] {
        let out = harness_out(
            dir.path(),
            state.path(),
            &[
                "run",
                "s",
                "--jobs",
                "1",
                "--tokenizer",
                "chars4",
                "--report",
                "rep",
                flag,
            ],
        );
        assert_eq!(out.status.code(), Some(1));
        shown.push_str(&format!("$ harness run s {flag}\n{}", printed(&out)));
    }
    let out = harness_out(dir.path(), state.path(), &["run", "s", "-q", "-v"]);
    assert_eq!(out.status.code(), Some(2));
    shown.push_str(&format!("$ harness run s -q -v\n{}", printed(&out)));
    assert_snapshot!("run_quiet_and_verbose", shown);
}
