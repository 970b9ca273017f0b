//! Every YAML and JSON file the harness reads beside scenario files
//! (snapshots, baselines, the last run, run.json for merge) gets the
//! scenario files' limits and a problem located at `file:line:col`.
//! A snapshot of 100,000 nested flow sequences used to take 85 s here.

use std::path::Path;
use std::time::Duration;

use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::cli_support::write_files;

fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = harness(dir, tmp.path(), &state.path().join("state"));
    cmd.args(args).env("NO_COLOR", "1");
    let out = output_within(cmd, Duration::from_secs(60));
    let (stdout, stderr) = texts(&out);
    (out.status.code(), stdout, stderr)
}

const SCENARIO: &str = "name: a\nworkspace: { files: { x.txt: \"hi\\n\" } }\nmodel:\n  - call: read\n    id: r\n    args: { path: x.txt }\n    expect: { snapshot: true }\n";

#[test]
fn a_snapshot_file_nested_too_deep_is_refused_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let nested = format!("r: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    write_files(
        dir.path(),
        &[("s/a.yaml", SCENARIO), ("s/a.snap.yaml", &nested)],
    );
    let (code, stdout, stderr) = run_in(dir.path(), &["run", "s"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let actual: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("cannot read this snapshot file"))
        .collect();
    assert_eq!(actual.len(), 1, "{stdout}");
    assert!(
        actual[0].starts_with("    actual:   s/a.snap.yaml:1:")
            && actual[0].ends_with(
                ": cannot read this snapshot file: the YAML nests deeper than 128 levels; a \
                 scenario never needs that much"
            ),
        "{stdout}"
    );
}

#[test]
fn a_snapshot_file_with_an_alias_bomb_is_refused_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n".to_owned();
    for i in 1..8 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    write_files(
        dir.path(),
        &[("s/a.yaml", SCENARIO), ("s/a.snap.yaml", &bomb)],
    );
    let (code, stdout, stderr) = run_in(dir.path(), &["run", "s"]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(
            "    actual:   s/a.snap.yaml:5:45: cannot read this snapshot file: a4[7]: aliases \
             expand to more than 100000 nodes in this document; write the values out or use \
             fewer aliases"
        ),
        "{stdout}"
    );
}

#[test]
fn json_files_name_the_place_of_their_problem() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("s/a.yaml", SCENARIO),
            (
                "cut.json",
                "{\"schema_version\": 1,\n \"scenarios\": [1, 2\n",
            ),
            ("deep.json", &"[".repeat(200_000)),
            (
                "shape.json",
                "{\"kind\": \"harness-baseline\", \"schema_version\": 1,\n  \"tokenizer\": 5}\n",
            ),
            (
                "field.json",
                "{\"schema_version\": 1,\n \"scenarios\": 7}\n",
            ),
        ],
    );
    let error_of = |args: &[&str]| {
        let (code, stdout, stderr) = run_in(dir.path(), args);
        assert_eq!(code, Some(2), "{stdout}{stderr}");
        stderr
    };
    assert_eq!(
        error_of(&["report", "merge", "cut.json"]),
        "error: cut.json:3:1: not valid JSON: EOF while parsing a list\n"
    );
    assert_eq!(
        error_of(&["report", "merge", "deep.json"]),
        "error: deep.json:1:128: not valid JSON: recursion limit exceeded\n"
    );
    assert_eq!(
        error_of(&["report", "merge", "field.json"]),
        "error: field.json:2:15: invalid run report: invalid type: integer `7`, expected a sequence\n"
    );
    assert_eq!(
        error_of(&["run", "s", "--baseline", "shape.json"]),
        "error: baseline shape.json:2:16: not a baseline: invalid type: integer `5`, expected a string\n"
    );
    assert_eq!(
        error_of(&["run", "s", "--baseline", "cut.json"]),
        "error: baseline cut.json:3:1: not valid JSON: EOF while parsing a list\n"
    );
}
