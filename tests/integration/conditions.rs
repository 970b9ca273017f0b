//! Faults, bash configuration and scripted cancellation end to end: each
//! new check fails when what it says does not hold
//! (tests/fixtures/suites/conditions_failing).

use std::path::Path;
use std::process::Command;

use insta::assert_snapshot;

use super::test_helpers::printed_run;
use super::test_helpers::redacting;

const STATE_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/harness-state");

#[test]
fn each_condition_check_fails_when_it_does_not_hold() {
    let suites = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suites");
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "conditions_failing", "--jobs", "1"])
        .current_dir(&suites)
        .env("TMPDIR", tmp.path())
        .env("HARNESS_STATE_DIR", STATE_DIR)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("conditions_failing", printed_run(&out)));
}

#[test]
fn a_failed_clean_up_names_the_temporary_file_left_behind() {
    // The scenario checks the words (the random name by a regex) and that
    // the file left holds the new contents while the old file is whole.
    let suites = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suites");
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "faults_passing", "--quiet"])
        .current_dir(&suites)
        .env("TMPDIR", tmp.path())
        .env("HARNESS_STATE_DIR", STATE_DIR)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("faults_passing", printed_run(&out)));
}

#[test]
fn a_stall_ends_when_the_scenario_s_time_is_up() {
    // The path check of the write, on the loop's own thread, stalls for ten
    // minutes; the one-second budget still ends the scenario.
    let suites = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suites");
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "conditions_stall", "--timeout", "1"])
        .current_dir(&suites)
        .env("TMPDIR", tmp.path())
        .env("HARNESS_STATE_DIR", STATE_DIR)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("conditions_stall", printed_run(&out)));
}
