//! The checks of issue 12 (details_at, image/images, updates, exact-byte,
//! digest and symlink file checks, generated files): each can fail, with
//! a failure that says what was expected and what was found, and each
//! problem in them is placed at its node when the file loads.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;

use insta::assert_snapshot;

use super::test_helpers::printed_run;
use super::test_helpers::redacting;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn harness(tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(root())
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1")
        .env(
            "HARNESS_STATE_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/harness-state-checks"),
        )
        .output()
        .unwrap()
}

#[test]
fn every_new_check_can_fail_and_says_what_it_found() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness(
        tmp.path(),
        &["run", "tests/fixtures/suites/new_checks", "--jobs", "1"],
    );
    assert_eq!(out.status.code(), Some(1));
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("run_new_checks", printed_run(&out)));
}

#[test]
fn the_shipped_scenarios_of_the_new_checks_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness(tmp.path(), &["run", "scenarios/checks"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
}

#[test]
fn problems_in_the_new_keys_are_placed_at_their_nodes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness(
        tmp.path(),
        &[
            "check",
            "tests/fixtures/loading/broken/new_checks.yaml",
            "tests/fixtures/loading/broken/new_checks_shapes.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!(
        "check_new_checks",
        String::from_utf8_lossy(&out.stdout).into_owned()
    );
}

#[test]
fn failures_are_listed_in_step_order_past_step_nine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut steps = String::new();
    for n in 1..=11 {
        let expect = if matches!(n, 2 | 7 | 10) {
            "nope"
        } else {
            "ok"
        };
        steps.push_str(&format!(
            "  - call: bash\n    args: {{ command: echo ok }}\n    expect: {{ contains: {expect} }}\n"
        ));
    }
    let file = dir.path().join("steps.yaml");
    std::fs::write(
        &file,
        format!("name: eleven steps\ntools: [bash]\nmodel:\n{steps}"),
    )
    .unwrap();
    let out = harness(tmp.path(), &["run", file.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let steps: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("step "))
        .filter_map(|l| l.split(|c: char| !c.is_ascii_digit()).next())
        .collect();
    assert_eq!(steps, ["2", "7", "10"], "{text}");
}
