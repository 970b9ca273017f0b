//! Reports, baselines, gates, partitions and merge, end to end on the suite
//! in tests/fixtures/reports/suite.
//!
//! Report files and console output are compared whole with insta
//! snapshots in tests/integration/snapshots/, after timings, temporary
//! paths and the harness version are redacted (see
//! [`redacting`](super::test_helpers::redacting)). After an intended
//! change, review and accept the new snapshots with `cargo insta review`,
//! or with `INSTA_UPDATE=always cargo test --test integration reports::`
//! and a look at the diff.

use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::test_helpers::file_text;
use super::test_helpers::printed;
use super::test_helpers::printed_run;
use super::test_helpers::redacting;
use super::xsd::Schema;

const FILES: [&str; 5] = [
    "run.json",
    "junit.xml",
    "scenarios.csv",
    "calls.csv",
    "summary.md",
];

/// The scenarios of the suite that pass.
const PASSING: &str = "a_read|b_retry|c_truncated";

/// Where the runs of these tests record their last run (never the source
/// tree).
const STATE_DIR: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/harness-state");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports")
}

/// Runs `harness ARGS` in tests/fixtures/reports, with a private temp dir.
fn harness(tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(fixtures())
        .env("TMPDIR", tmp)
        .env("HARNESS_STATE_DIR", STATE_DIR)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn show(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A report file's text for a snapshot. The CSVs' `duration_ms` column is
/// replaced by `[ms]` here (a column is not something a regex filter can
/// find reliably); the other formats' timings are redacted by the filters
/// of [`redacting`].
fn report_text(dir: &Path, file: &str) -> String {
    let text = std::fs::read_to_string(dir.join(file))
        .unwrap_or_else(|err| panic!("{}: {err}", dir.join(file).display()));
    if !file.ends_with(".csv") {
        return file_text(&text);
    }
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = headers.iter().position(|h| h == "duration_ms").unwrap();
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(&headers).unwrap();
    for record in reader.records() {
        let record = record.unwrap();
        let fields: Vec<&str> = record
            .iter()
            .enumerate()
            .map(|(i, f)| if i == column { "[ms]" } else { f })
            .collect();
        writer.write_record(fields).unwrap();
    }
    let redacted = String::from_utf8(writer.into_inner().unwrap()).unwrap();
    // The rewrite must give back the file itself apart from that column
    // (quoting and line endings included).
    assert_eq!(
        redacted.lines().count(),
        text.lines().count(),
        "{file}:\n{text}"
    );
    file_text(&redacted)
}

fn names_in(run_json: &Path) -> Vec<String> {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(run_json).unwrap()).unwrap();
    value["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_report_format_matches_its_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let out_dir = tmp.path().join("out");
    let out = harness(tmp.path(), &["run", "suite", "--report", path(&out_dir)]);
    // A scenario fails, and the reports are written all the same.
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_snapshot!("plain_console", printed_run(&out));
    for file in FILES {
        assert_snapshot!(format!("plain_{file}"), report_text(&out_dir, file));
    }
}

#[test]
fn reports_with_a_baseline_match_their_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let out_dir = tmp.path().join("out");
    let out = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--report",
            path(&out_dir),
            "--baseline",
            "baseline.json",
            "--gate",
            "errors=+0",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_snapshot!("baseline_console", printed_run(&out));
    for file in FILES {
        assert_snapshot!(format!("baseline_{file}"), report_text(&out_dir, file));
    }
}

fn xsd() -> Schema {
    Schema::parse(&std::fs::read_to_string(fixtures().join("junit.xsd")).unwrap())
}

/// JUnit files of three runs: plain, with a baseline, and with scenario
/// files that do not load.
fn junit_files(tmp: &Path) -> Vec<PathBuf> {
    let plain = tmp.join("plain.xml");
    let out = harness(tmp, &["run", "suite", "--junit", path(&plain)]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let gated = tmp.join("gated.xml");
    let out = harness(
        tmp,
        &[
            "run",
            "suite",
            "--junit",
            path(&gated),
            "--baseline",
            "baseline.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let broken = tmp.join("broken.xml");
    let out = harness(tmp, &["run", "../suites/broken", "--junit", path(&broken)]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    vec![plain, gated, broken]
}

#[test]
fn junit_files_are_valid_against_the_xsd() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = xsd();
    for file in junit_files(tmp.path()) {
        let xml = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            schema.validate(&xml),
            Vec::<String>::new(),
            "{}:\n{xml}",
            file.display()
        );
    }
    let broken = std::fs::read_to_string(tmp.path().join("broken.xml")).unwrap();
    redacting(&[tmp.path()]).bind(|| assert_snapshot!("broken_junit.xml", file_text(&broken)));
}

#[test]
fn the_xsd_validator_refuses_what_the_schema_does_not_allow() {
    let schema = xsd();
    assert_eq!(
        schema.validate(
            r#"<testsuites><testsuite name="x" tests="a"><testcase classname="c"><failure/><skipped/></testcase><bogus/></testsuite></testsuites>"#
        ),
        [
            "/testsuites/testsuite@tests: `a` is not xs:nonNegativeInteger",
            "/testsuites/testsuite/testcase: missing required attribute `name`",
            "/testsuites/testsuite/testcase: <skipped> not allowed here",
            "/testsuites/testsuite: <bogus> not allowed here",
        ]
    );
}

/// Runs xmllint on the JUnit files. CI must have it (Debian package
/// `libxml2-utils`): there a missing xmllint fails the test; elsewhere it
/// says so on stderr and the Rust-side validation above still applies.
#[test]
fn junit_files_pass_xmllint() {
    let available = Command::new("xmllint")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        assert!(
            std::env::var_os("CI").is_none(),
            "xmllint is missing: install it (apt-get install libxml2-utils) so that junit.xml \
             is checked against tests/fixtures/reports/junit.xsd"
        );
        eprintln!(
            "NOTE: xmllint not installed (apt-get install libxml2-utils); junit.xml was checked \
             by the Rust-side validator only"
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for file in junit_files(tmp.path()) {
        let out = Command::new("xmllint")
            .args(["--noout", "--schema"])
            .arg(fixtures().join("junit.xsd"))
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn partitions_cover_the_suite_once_and_merge_reproduces_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let whole = tmp.path().join("whole");
    let out = harness(tmp.path(), &["run", "suite", "--report", path(&whole)]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    for file in FILES {
        assert_snapshot!(format!("plain_{file}"), report_text(&whole, file));
    }
    let all: Vec<String> = names_in(&whole.join("run.json"));
    assert_eq!(all.len(), 5);
    for (kind, count) in [("hash", 2), ("hash", 3), ("slice", 2)] {
        let mut seen = Vec::new();
        let mut parts = Vec::new();
        for k in 1..=count {
            let file = tmp.path().join(format!("{kind}-{k}-{count}.json"));
            let spec = format!("{kind}:{k}/{count}");
            let out = harness(
                tmp.path(),
                &["run", "suite", "--partition", &spec, "--json", path(&file)],
            );
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{spec}: {}",
                show(&out)
            );
            seen.extend(names_in(&file));
            parts.push(file);
        }
        let unique: BTreeSet<&String> = seen.iter().collect();
        assert_eq!(
            unique.len(),
            seen.len(),
            "{kind}/{count}: overlap in {seen:?}"
        );
        assert_eq!(
            unique,
            all.iter().collect::<BTreeSet<_>>(),
            "{kind}/{count}: the partitions are not the whole suite"
        );
        // Merge in reverse order: the merged report still has the
        // discovery order.
        parts.reverse();
        let merged = tmp.path().join(format!("merged-{kind}-{count}"));
        let mut args = vec!["report", "merge"];
        args.extend(parts.iter().map(|p| path(p)));
        args.extend(["--report", path(&merged)]);
        let out = harness(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(1), "{}", show(&out));
        // The merged reports are those of the whole run: the same
        // snapshots.
        for file in FILES {
            assert_snapshot!(format!("plain_{file}"), report_text(&merged, file));
        }
    }
}

#[test]
fn merge_refuses_missing_partitions_and_duplicates() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let one = tmp.path().join("one.json");
    let out = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--partition",
            "slice:1/2",
            "--json",
            path(&one),
        ],
    );
    // Positions 0, 2 and 4: two passing scenarios and the skipped one.
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(names_in(&one).len(), 3);
    let merged = tmp.path().join("merged");
    let out = harness(
        tmp.path(),
        &["report", "merge", path(&one), "--report", path(&merged)],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("merge_missing_partition", printed(&out));
    // A refusal writes summary.md saying why, and nothing else, so that a
    // CI step that publishes the summary still has one.
    let written: Vec<String> = std::fs::read_dir(&merged)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(written, ["summary.md"]);
    assert_snapshot!(
        "merge_missing_partition_summary.md",
        report_text(&merged, "summary.md")
    );
    let out = harness(tmp.path(), &["report", "merge", path(&one), path(&one)]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("merge_duplicate_partition", printed(&out));
    let not_json = tmp.path().join("x.json");
    std::fs::write(&not_json, "{}").unwrap();
    let out = harness(tmp.path(), &["report", "merge", path(&not_json)]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("merge_not_a_report", printed(&out));
}

#[test]
fn merge_refuses_partitions_of_different_selections() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    // Two selections of four scenarios each: partition 1/2 of one and 2/2
    // of the other hold four different scenarios, as many as either
    // selection, so only the suite fingerprint tells them apart.
    let one = tmp.path().join("one.json");
    let two = tmp.path().join("two.json");
    for (file, exclude, spec) in [
        (&one, "a_read", "slice:1/2"),
        (&two, "b_retry", "slice:2/2"),
    ] {
        let out = harness(
            tmp.path(),
            &[
                "run",
                "suite",
                "--exclude",
                exclude,
                "--partition",
                spec,
                "--json",
                path(file),
            ],
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
    }
    let mut names = names_in(&one);
    names.extend(names_in(&two));
    assert_eq!(names.len(), 4, "{names:?}");
    let merged = tmp.path().join("merged");
    let out = harness(
        tmp.path(),
        &[
            "report",
            "merge",
            path(&one),
            path(&two),
            "--report",
            path(&merged),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("merge_different_selections", printed(&out));
    assert_snapshot!(
        "merge_different_selections_summary.md",
        report_text(&merged, "summary.md")
    );
    assert!(!merged.join("run.json").exists());
    // Each partition records the fingerprint of its selection.
    let fingerprint = |file: &Path| -> String {
        let report: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        report["partition"]["suite_fingerprint"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_ne!(fingerprint(&one), fingerprint(&two));
    assert!(
        fingerprint(&one).starts_with("fnv1a64:"),
        "{}",
        fingerprint(&one)
    );
}

#[test]
fn merged_totals_saturate_instead_of_wrapping() {
    let tmp = tempfile::tempdir().unwrap();
    let mut parts = Vec::new();
    for k in 1..=2 {
        let file = tmp.path().join(format!("{k}.json"));
        let spec = format!("slice:{k}/2");
        let out = harness(
            tmp.path(),
            &["run", "suite", "--partition", &spec, "--json", path(&file)],
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
        // Every figure of every scenario and call as large as it can be.
        let mut report: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for scenario in report["scenarios"].as_array_mut().unwrap() {
            for value in scenario["stats"].as_object_mut().unwrap().values_mut() {
                *value = Value::from(u64::MAX);
            }
            for call in scenario["calls"].as_array_mut().unwrap() {
                for key in ["args_tokens", "result_tokens", "duration_ms"] {
                    call[key] = Value::from(u64::MAX);
                }
            }
        }
        std::fs::write(&file, serde_json::to_vec(&report).unwrap()).unwrap();
        parts.push(file);
    }
    let merged = tmp.path().join("merged.json");
    let out = harness(
        tmp.path(),
        &[
            "report",
            "merge",
            path(&parts[0]),
            path(&parts[1]),
            "--json",
            path(&merged),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    for (key, value) in report["totals"].as_object().unwrap() {
        assert_eq!(value, &Value::from(u64::MAX), "totals.{key}");
    }
    for tool in report["tools"].as_array().unwrap() {
        for key in ["args_tokens", "result_tokens", "duration_ms"] {
            assert_eq!(tool[key], Value::from(u64::MAX), "{} {key}", tool["tool"]);
        }
    }
}

#[test]
fn a_schema_version_of_the_wrong_type_is_reported_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let run = tmp.path().join("run.json");
    let out = harness(tmp.path(), &["run", "suite", "--json", path(&run)]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = std::fs::read_to_string(&run).unwrap();
    let quoted = tmp.path().join("quoted.json");
    std::fs::write(
        &quoted,
        text.replacen("\"schema_version\": 1", "\"schema_version\": \"1\"", 1),
    )
    .unwrap();
    let baseline = std::fs::read_to_string(fixtures().join("baseline.json")).unwrap();
    let quoted_baseline = tmp.path().join("quoted-baseline.json");
    std::fs::write(
        &quoted_baseline,
        baseline.replacen("\"schema_version\": 1", "\"schema_version\": \"1\"", 1),
    )
    .unwrap();
    let mut shown = String::new();
    for args in [
        vec!["report", "merge", path(&quoted)],
        vec!["run", "suite", "--baseline", path(&quoted)],
        vec!["run", "suite", "--baseline", path(&quoted_baseline)],
    ] {
        let out = harness(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{}", show(&out));
        shown.push_str(&format!("$ harness {}\n{}", args.join(" "), printed(&out)));
    }
    assert_snapshot!("schema_version_as_a_string", shown);
}

#[test]
fn an_empty_partition_is_a_passing_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut held = 0;
    for k in 1..=6 {
        let file = tmp.path().join(format!("{k}.json"));
        let spec = format!("hash:{k}/6");
        let out = harness(
            tmp.path(),
            &[
                "run",
                "suite",
                "--filter",
                "a_read",
                "--partition",
                &spec,
                "--json",
                path(&file),
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        held += names_in(&file).len();
    }
    assert_eq!(held, 1);
}

/// Writes a copy of `baseline` with one figure of one scenario changed.
fn crafted(baseline: &Path, dir: &Path, scenario: &str, key: &str, value: u64) -> PathBuf {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(baseline).unwrap()).unwrap();
    doc["scenarios"][scenario][key] = Value::from(value);
    let file = dir.join(format!("{key}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    file
}

#[test]
fn each_gate_fails_on_a_crafted_regression_and_holds_without_one() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let base = tmp.path().join("base.json");
    let out = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--filter",
            PASSING,
            "--save-baseline",
            path(&base),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    assert_eq!(saved["kind"], "harness-baseline");
    assert_eq!(
        saved["scenarios"]["a wrong path, then the right one"]["retries"],
        1
    );
    let run = |baseline: &Path, gates: &[&str]| {
        let mut args = vec![
            "run",
            "suite",
            "--filter",
            PASSING,
            "--baseline",
            path(baseline),
        ];
        for gate in gates {
            args.extend(["--gate", gate]);
        }
        harness(tmp.path(), &args)
    };

    // Without a regression every gate holds (tokens=+5% and retries=+0
    // come from harness.yaml).
    let out = run(&base, &["errors=+0"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_snapshot!("gates_held", printed_run(&out));

    let read_tokens = saved["scenarios"]["read a small file"]["result_tokens"]
        .as_u64()
        .unwrap();
    let cases = [
        (
            "read a small file",
            "result_tokens",
            read_tokens * 90 / 100,
            "tokens=+5%",
        ),
        (
            "a wrong path, then the right one",
            "retries",
            0,
            "retries=+0",
        ),
        ("a wrong path, then the right one", "errors", 0, "errors=+0"),
    ];
    for (scenario, key, value, gate) in cases {
        let file = crafted(&base, tmp.path(), scenario, key, value);
        let out = run(&file, &["errors=+0"]);
        assert_eq!(out.status.code(), Some(1), "{gate}: {}", show(&out));
        assert_snapshot!(format!("gate_breached_{key}"), printed_run(&out));
        // A looser limit on the command line overrides harness.yaml.
        let key_of_gate = gate.split('=').next().unwrap();
        let loose = format!("{key_of_gate}=+1000");
        let out = run(&file, &["errors=+0", &loose]);
        assert_eq!(out.status.code(), Some(0), "{loose}: {}", show(&out));
    }
}

#[test]
fn baseline_and_gate_misuse_exit_two() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let out = harness(tmp.path(), &["run", "suite", "--gate", "tokens=+5%"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("gate_without_baseline", printed(&out));
    let out = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--baseline",
            "baseline.json",
            "--gate",
            "speed=+1",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("gate_unknown", printed(&out));
    let out = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--baseline",
            "baseline.json",
            "--tokenizer",
            "cl100k",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("baseline_of_another_tokenizer", printed(&out));
    let out = harness(tmp.path(), &["run", "suite", "--baseline", "missing.json"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("baseline_missing", printed(&out));

    let suite = tmp.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    std::fs::write(suite.join("harness.yaml"), "gates: { tokens: \"-5%\" }\n").unwrap();
    std::fs::copy(fixtures().join("suite/a_read.yaml"), suite.join("a.yaml")).unwrap();
    let out = harness(tmp.path(), &["run", path(&suite)]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("gate_invalid_limit_in_harness_yaml", printed(&out));
}

#[test]
fn an_unusable_report_path_exits_two_and_never_hides_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    // A report directory that cannot be created fails before anything runs.
    let out = harness(
        tmp.path(),
        &["run", "suite", "--report", path(&file.join("out"))],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("report_dir_not_creatable", printed(&out));

    // A report file that cannot be written after the run: the run's result
    // is still shown, the other reports are still written, and the exit
    // code is 2.
    let dir = tmp.path().join("a-dir");
    std::fs::create_dir(&dir).unwrap();
    let md = tmp.path().join("summary.md");
    let out = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--json",
            path(&dir),
            "--markdown",
            path(&md),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("report_file_not_writable", printed_run(&out));
    // The summary written is the same as in a run that writes every report.
    assert_snapshot!(
        "plain_summary.md",
        file_text(&std::fs::read_to_string(&md).unwrap())
    );
}

#[test]
fn tokens_counts_a_file_or_stdin_like_the_reference_tokenizer() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.txt");
    std::fs::write(&file, "Successfully wrote 11 bytes to a.txt").unwrap();
    let out = harness(tmp.path(), &["tokens", path(&file)]);
    assert_eq!(
        (out.status.code(), stdout(&out)),
        (Some(0), "8\n".to_owned()),
        "{}",
        show(&out)
    );
    let out = harness(
        tmp.path(),
        &["tokens", path(&file), "--tokenizer", "chars4"],
    );
    assert_eq!(stdout(&out), "9\n", "{}", show(&out));

    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tokens", "--tokenizer", "cl100k"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all("日本語のテキストとемодзи 🙂🚀 and Ελληνικά".as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(stdout(&out), "27\n");

    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    std::fs::write(&file, [0x66, 0xff, 0x6f]).unwrap();
    let out = harness(tmp.path(), &["tokens", path(&file)]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("tokens_not_utf8", printed(&out));
    let out = harness(tmp.path(), &["tokens", path(&file), "--tokenizer", "gpt2"]);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    assert_snapshot!("tokens_unknown_tokenizer", printed(&out));
}

#[test]
fn tools_tokens_prices_each_definition_and_the_tool_section() {
    let tmp = tempfile::tempdir().unwrap();
    let out = harness(
        tmp.path(),
        &["tools", "--tokens", "--json", "--tools", "read,grep"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // It is JSON, and the snapshot holds it byte for byte.
    let _: Value = serde_json::from_slice(&out.stdout).unwrap();
    let _guard = redacting(&[tmp.path()]).bind_to_scope();
    assert_snapshot!("tools_tokens_json", printed(&out));

    let out = harness(tmp.path(), &["tools", "--tokens", "--tokenizer", "cl100k"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_snapshot!("tools_tokens_table", printed(&out));
}

// ---------------------------------------------------------------------------
// The JSON Schema of run.json (`harness schema --report`)

/// `harness schema --report`, made strict: every object that lists its
/// properties allows no others, so a field the report writes but the
/// schema does not describe fails validation.
fn strict_report_schema(tmp: &Path) -> Value {
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
    let out = harness(tmp, &["schema", "--report"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let mut schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    close(&mut schema);
    schema
}

fn schema_errors(validator: &jsonschema::Validator, report: &Value) -> Vec<String> {
    validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

#[test]
fn every_run_report_validates_against_the_report_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let validator = jsonschema::validator_for(&strict_report_schema(tmp.path())).unwrap();
    let file = |name: &str| tmp.path().join(name);
    let runs: Vec<(&str, Vec<String>, Option<i32>)> = vec![
        ("plain.json", vec!["run".into(), "suite".into()], Some(1)),
        (
            "baseline.json",
            vec![
                "run".into(),
                "suite".into(),
                "--baseline".into(),
                "baseline.json".into(),
            ],
            Some(1),
        ),
        (
            "broken.json",
            vec!["run".into(), "../suites/broken".into()],
            Some(2),
        ),
        (
            "long.json",
            vec!["run".into(), "../suites/long_failures".into()],
            Some(1),
        ),
        (
            "coverage.json",
            vec!["run".into(), "suite".into(), "--coverage".into()],
            Some(1),
        ),
        (
            "part1.json",
            vec![
                "run".into(),
                "suite".into(),
                "--partition".into(),
                "hash:1/2".into(),
            ],
            None,
        ),
        (
            "part2.json",
            vec![
                "run".into(),
                "suite".into(),
                "--partition".into(),
                "hash:2/2".into(),
                "--keep-workspaces".into(),
            ],
            None,
        ),
        (
            "repeat.json",
            vec![
                "run".into(),
                "suite".into(),
                "--repeat".into(),
                "2".into(),
                "--min-pass".into(),
                "1".into(),
            ],
            None,
        ),
        (
            "variants.json",
            vec![
                "run".into(),
                "suite".into(),
                "--variant".into(),
                "plain=variants/plain.yaml".into(),
                "--variant".into(),
                "tight=variants/tight.yaml".into(),
                "--repeat".into(),
                "2".into(),
                "--save-baseline".into(),
                file("vbase.json").display().to_string(),
            ],
            Some(1),
        ),
        // Each variant compared with its own baseline.
        (
            "variants-compared.json",
            vec![
                "run".into(),
                "suite".into(),
                "--variant".into(),
                "plain=variants/plain.yaml".into(),
                "--variant".into(),
                "tight=variants/tight.yaml".into(),
                "--baseline".into(),
                file("vbase.json").display().to_string(),
            ],
            Some(1),
        ),
        (
            "vpart1.json",
            vec![
                "run".into(),
                "suite".into(),
                "--variant".into(),
                "plain=variants/plain.yaml".into(),
                "--variant".into(),
                "tight=variants/tight.yaml".into(),
                "--partition".into(),
                "slice:1/2".into(),
            ],
            None,
        ),
        (
            "vpart2.json",
            vec![
                "run".into(),
                "suite".into(),
                "--variant".into(),
                "plain=variants/plain.yaml".into(),
                "--variant".into(),
                "tight=variants/tight.yaml".into(),
                "--partition".into(),
                "slice:2/2".into(),
            ],
            None,
        ),
    ];
    for (name, args, code) in &runs {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        let target = file(name);
        args.extend(["--json", path(&target)]);
        let out = harness(tmp.path(), &args);
        if let Some(code) = code {
            assert_eq!(out.status.code(), Some(*code), "{}", show(&out));
        }
    }
    let merged = file("merged.json");
    let out = harness(
        tmp.path(),
        &[
            "report",
            "merge",
            path(&file("part1.json")),
            path(&file("part2.json")),
            "--json",
            path(&merged),
        ],
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
    // Partitions of a run of variants merge variant by variant.
    let vmerged = file("vmerged.json");
    let out = harness(
        tmp.path(),
        &[
            "report",
            "merge",
            path(&file("vpart1.json")),
            path(&file("vpart2.json")),
            "--json",
            path(&vmerged),
        ],
    );
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", show(&out));
    let whole: Value =
        serde_json::from_str(&std::fs::read_to_string(file("variants-compared.json")).unwrap())
            .unwrap();
    let merged_variants: Value =
        serde_json::from_str(&std::fs::read_to_string(&vmerged).unwrap()).unwrap();
    let names_and_counts = |report: &Value| -> Vec<(Value, Value)> {
        report["variants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| (v["name"].clone(), v["counts"].clone()))
            .collect()
    };
    assert_eq!(names_and_counts(&merged_variants), names_and_counts(&whole));
    let mut seen = BTreeSet::new();
    for name in runs
        .iter()
        .map(|r| r.0)
        .chain(["merged.json", "vmerged.json"])
    {
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(file(name)).unwrap()).unwrap();
        assert_eq!(
            schema_errors(&validator, &report),
            Vec::<String>::new(),
            "{name}"
        );
        // Which optional parts these reports exercised.
        if !report["comparison"].is_null() {
            seen.insert("comparison");
        }
        if !report["partition"].is_null() {
            seen.insert("partition");
        }
        if !report["load_errors"].as_array().unwrap().is_empty() {
            seen.insert("load_errors");
        }
        if report.get("coverage").is_some() {
            seen.insert("coverage");
        }
        if report.get("repeat").is_some() {
            seen.insert("repeat");
        }
        if let Some(variants) = report.get("variants") {
            seen.insert("variants");
            if variants[1].get("comparison").is_some() {
                seen.insert("variants[].comparison");
            }
        }
        for scenario in report["scenarios"].as_array().unwrap() {
            if scenario.get("workspace").is_some() {
                seen.insert("workspace");
            }
            if scenario.get("skip_reason").is_some() {
                seen.insert("skip_reason");
            }
            for failure in scenario["failures"].as_array().unwrap() {
                if failure.get("focus").is_some() {
                    seen.insert("focus");
                }
            }
        }
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        [
            "comparison",
            "coverage",
            "focus",
            "load_errors",
            "partition",
            "repeat",
            "skip_reason",
            "variants",
            "variants[].comparison",
            "workspace"
        ]
    );
}

#[test]
fn the_report_schema_refuses_what_a_report_never_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let validator = jsonschema::validator_for(&strict_report_schema(tmp.path())).unwrap();
    let run = tmp.path().join("run.json");
    let out = harness(tmp.path(), &["run", "suite", "--json", path(&run)]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut copy = report.clone();
        edit(&mut copy);
        schema_errors(&validator, &copy)
    };
    type Edit<'a> = (&'a str, &'a dyn Fn(&mut Value));
    let edits: [Edit; 5] = [
        ("another version", &|r| r["schema_version"] = Value::from(2)),
        ("an unknown status", &|r| {
            r["scenarios"][0]["status"] = Value::from("flaky")
        }),
        ("a negative figure", &|r| {
            r["totals"]["calls"] = Value::from(-1)
        }),
        (
            "a partition not in the K/N form",
            &|r| r["partition"] = serde_json::json!({"spec": "hash:1of2", "suite_scenarios": 4}),
        ),
        ("a field the format does not have", &|r| {
            r["scenarios"][0]["stats"]["surprise"] = Value::from(1)
        }),
    ];
    let mut shown = String::new();
    for (what, edit) in edits {
        shown.push_str(&format!("{what}:\n"));
        for error in broken(edit) {
            shown.push_str(&format!("  {error}\n"));
        }
    }
    assert_snapshot!("report_schema_refusals", shown);
}
