//! The tool-design lab: `harness run --repeat N --min-pass K` (pass
//! counts, flaky and nondeterministic scenarios, pass@k and pass^k) and
//! `--variant NAME=FILE` (the same scenarios under other suite files, side
//! by side), end to end.

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::cli_support::bash_scenario;
use super::cli_support::harness;
use super::cli_support::output_within;
use super::cli_support::texts;
use super::cli_support::write_files;

const LIMIT: Duration = Duration::from_secs(300);

/// A bash command that passes on odd calls and fails on even ones, by a
/// counter in `counter` (outside the workspace, in the test's temp dir),
/// so the scenario fails exactly every other run.
fn alternating(counter: &Path) -> String {
    let file = counter.display();
    format!("n=$(cat {file} 2>/dev/null || echo 0); echo $((n + 1)) > {file}; [ $((n % 2)) -eq 0 ]")
}

fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let tmp = dir.join("tmp");
    let state = dir.join("state");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = harness(dir, &tmp, &state);
    cmd.args(args);
    let out = output_within(cmd, LIMIT);
    let (stdout, stderr) = texts(&out);
    (out.status.code().unwrap_or(-1), stdout, stderr)
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn a_scenario_that_fails_every_other_run_is_flaky_and_min_pass_decides() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("counter");
    write_files(
        dir.path(),
        &[(
            "suite/coin.yaml",
            // Without the sandbox: the counter is outside the workspace.
            &format!(
                "sandbox: off\n{}",
                bash_scenario("coin", &alternating(&counter))
            ),
        )],
    );
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--repeat",
            "20",
            "--min-pass",
            "20",
            "--jobs",
            "1",
            "--json",
            "strict.json",
        ],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let flaky: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("flaky"))
        .take(5)
        .collect();
    assert_eq!(
        flaky,
        [
            "flaky (1):",
            "  coin: passed 10 of 20 runs",
            "    run 2 failed: step 1 (bash): ok",
            "    run 4 failed: step 1 (bash): ok",
            "    run 6 failed: step 1 (bash): ok",
        ]
    );
    assert!(
        stdout.contains(
            "pass@20: 1 of 1 scenarios passed at least once; pass^20: 0 passed every run"
        ),
        "{stdout}"
    );
    let report = json(&dir.path().join("strict.json"));
    let coin = &report["scenarios"][0];
    assert_eq!(coin["status"], "failed");
    assert_eq!(coin["failures"][0]["check"], "repeat");
    assert_eq!(
        coin["failures"][0]["actual"],
        "10 of 20 runs passed; failed: runs 2, 4, 6, 8, 10, 12, 14, 16, 18, 20; the checks \
         below are those of run 2"
    );
    let repeats = &coin["repeats"];
    assert_eq!(
        (
            &repeats["runs"],
            &repeats["passed"],
            &repeats["flaky"],
            &repeats["pass_at_k"],
            &repeats["pass_hat_k"]
        ),
        (
            &Value::from(20),
            &Value::from(10),
            &Value::Bool(true),
            &Value::Bool(true),
            &Value::Bool(false)
        )
    );
    let failed: Vec<u64> = repeats["failed_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_u64().unwrap())
        .collect();
    assert_eq!(failed, (1..=10).map(|i| i * 2).collect::<Vec<u64>>());
    assert_eq!(report["repeat"]["flaky"], serde_json::json!(["coin"]));
    assert_eq!(
        (
            &report["repeat"]["pass_at_k"],
            &report["repeat"]["pass_hat_k"]
        ),
        (&Value::from(1), &Value::from(0))
    );

    std::fs::remove_file(&counter).unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--repeat",
            "20",
            "--min-pass",
            "1",
            "--jobs",
            "1",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("  coin: passed 10 of 20 runs\n"),
        "{stdout}"
    );
}

#[test]
fn a_deterministic_suite_repeated_has_no_nondeterministic_figure() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            ("suite/a.yaml", &bash_scenario("echo", "echo hello")),
            (
                "suite/b.yaml",
                "name: read\nworkspace:\n  files:\n    a.txt: \"one\\ntwo\\n\"\nmodel:\n  - call: read\n    args: { path: a.txt }\n    expect: { ok: true }\n",
            ),
        ],
    );
    let (code, stdout, stderr) = run(
        dir.path(),
        &["run", "suite", "--repeat", "5", "--json", "run.json"],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("\nnondeterministic figures: none\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\nflaky: none\n"), "{stdout}");
    let report = json(&dir.path().join("run.json"));
    assert_eq!(report["repeat"]["nondeterministic"], serde_json::json!([]));
    assert_eq!(report["repeat"]["pass_hat_k"], 2);
    assert_eq!(report["counts"]["scenarios"], 2);
    for scenario in report["scenarios"].as_array().unwrap() {
        assert_eq!(scenario["repeats"]["runs"], 5);
    }
}

#[test]
fn repeat_counts_are_checked_and_without_repeat_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[("suite/a.yaml", &bash_scenario("echo", "echo hi"))],
    );
    let (code, _, stderr) = run(dir.path(), &["run", "suite", "--repeat", "0"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--repeat: 0 is not between 1 and 1000 (runs of each scenario)"),
        "{stderr}"
    );
    let (code, _, stderr) = run(
        dir.path(),
        &["run", "suite", "--repeat", "3", "--min-pass", "4"],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--min-pass: 4 is not between 1 and 3"),
        "{stderr}"
    );
    let (code, stdout, _) = run(dir.path(), &["run", "suite", "--json", "plain.json"]);
    assert_eq!(code, 0);
    assert!(!stdout.contains("repeats:"), "{stdout}");
    let report = json(&dir.path().join("plain.json"));
    assert!(report.get("repeat").is_none());
    assert!(report.get("variants").is_none());
    assert!(report["scenarios"][0].get("repeats").is_none());
}

/// A suite of a long read (cut by `max_lines`), a short one, and a
/// scenario that sets its own `max_lines`, which wins over any variant.
fn variant_suite(dir: &Path) {
    let long: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    let long = serde_json::to_string(&long).unwrap();
    write_files(
        dir,
        &[
            (
                "suite/long.yaml",
                &format!(
                    "name: long\nworkspace:\n  files:\n    a.txt: {long}\nmodel:\n  - call: read\n    args: {{ path: a.txt }}\n"
                ),
            ),
            (
                "suite/own.yaml",
                &format!(
                    "name: own limits\nlimits: {{ max_lines: 50 }}\nworkspace:\n  files:\n    a.txt: {long}\nmodel:\n  - call: read\n    args: {{ path: a.txt }}\n    expect: {{ truncated: lines, contains: \"line 50\\n\" }}\n"
                ),
            ),
            (
                "suite/short.yaml",
                "name: short\nworkspace:\n  files:\n    a.txt: \"one\\n\"\nmodel:\n  - call: read\n    args: { path: a.txt }\n    expect: { equals: \"one\\n\" }\n",
            ),
            ("suite/harness.yaml", "limits: { max_lines: 5 }\n"),
            ("wide.yaml", "tokenizer: chars4\n"),
            (
                "tight.yaml",
                "tokenizer: chars4\nlimits: { max_lines: 20 }\n",
            ),
            (
                "strict.yaml",
                "tokenizer: chars4\nlimits: { max_bytes: 2 }\n",
            ),
        ],
    );
}

#[test]
fn variants_run_side_by_side_and_the_scenario_still_wins() {
    let dir = tempfile::tempdir().unwrap();
    variant_suite(dir.path());
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "wide=wide.yaml",
            "--variant",
            "tight=tight.yaml",
            "--report",
            "out",
            "--save-baseline",
            "base.json",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let report = json(&dir.path().join("out/run.json"));
    let variants = report["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["wide", "tight"]);
    let tokens = |v: &Value, name: &str| {
        v["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()["stats"]["result_tokens"]
            .as_u64()
            .unwrap()
    };
    // The variant takes the place of suite/harness.yaml (max_lines 5):
    // wide reads all 300 lines, tight 20; the scenario's own 50 wins in both.
    assert!(tokens(&variants[1], "long") < tokens(&variants[0], "long"));
    assert_eq!(
        tokens(&variants[1], "own limits"),
        tokens(&variants[0], "own limits")
    );
    assert_eq!(tokens(&variants[1], "short"), tokens(&variants[0], "short"));
    assert_eq!(report["scenarios"], variants[0]["scenarios"]);
    let moved: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("scenarios that moved most"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    // The tool descriptions name max_lines, so every input moves a little.
    assert_eq!(
        moved,
        [
            "  long [tight]: result_tokens 648 → 52 (-596), input_tokens 4372 → 3773 (-599), \
             truncations 0 → 1 (+1)",
            "  short [tight]: input_tokens 3725 → 3723 (-2)",
        ],
        "{stdout}"
    );
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    let cases: Vec<&str> = junit
        .lines()
        .filter_map(|l| l.trim().strip_prefix("<testcase name=\""))
        .map(|l| l.split('"').next().unwrap())
        .collect();
    assert_eq!(
        cases,
        [
            "long [variant wide]",
            "own limits [variant wide]",
            "short [variant wide]",
            "long [variant tight]",
            "own limits [variant tight]",
            "short [variant tight]",
        ]
    );
    let md = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(md.contains("\n### Variants\n"), "{md}");
    for (file, variant) in [("base.wide.json", "wide"), ("base.tight.json", "tight")] {
        assert_eq!(json(&dir.path().join(file))["variant"], variant);
    }

    // Each variant is compared with its own baseline; one recorded for
    // another variant is refused.
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "wide=wide.yaml",
            "--variant",
            "tight=tight.yaml",
            "--baseline",
            "base.json",
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    std::fs::copy(
        dir.path().join("base.wide.json"),
        dir.path().join("base.tight.json"),
    )
    .unwrap();
    let (code, _, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "wide=wide.yaml",
            "--variant",
            "tight=tight.yaml",
            "--baseline",
            "base.json",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the baseline base.tight.json records variant `wide`, not `tight`"),
        "{stderr}"
    );
}

#[test]
fn a_variant_that_fails_a_check_fails_the_run_grouped_by_variant() {
    let dir = tempfile::tempdir().unwrap();
    variant_suite(dir.path());
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "wide=wide.yaml",
            "--variant",
            "strict=strict.yaml",
        ],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let headers: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("== variant"))
        .collect();
    assert_eq!(
        headers,
        [
            "== variant wide (wide.yaml) ==",
            "== variant strict (strict.yaml) =="
        ]
    );
    let (wide, strict) = stdout
        .split_once("== variant wide")
        .unwrap()
        .1
        .split_once("== variant strict")
        .unwrap();
    assert!(
        strict.contains("\nFAIL short  (suite/short.yaml)\n"),
        "{stdout}"
    );
    assert!(wide.contains("3 scenarios: 3 passed, 0 failed"), "{stdout}");
    assert!(!wide.contains("FAIL"), "{stdout}");
    // --last-failed takes what failed in any variant.
    let (code, stdout, stderr) = run(dir.path(), &["run", "--last-failed", "--json", "last.json"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let last = json(&dir.path().join("last.json"));
    let names: Vec<&str> = last["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["own limits", "short"]);

    let (code, _, stderr) = run(dir.path(), &["run", "suite", "--variant", "wide=wide.yaml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("give at least two variants"), "{stderr}");
    std::fs::write(dir.path().join("bad.yaml"), "limits: { max_lines: 0 }\n").unwrap();
    let (code, _, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "wide=wide.yaml",
            "--variant",
            "bad=bad.yaml",
        ],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("--variant bad: bad.yaml:1:"), "{stderr}");
}

#[test]
fn each_variant_is_compared_with_its_baseline_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    variant_suite(dir.path());
    let variants = [
        "--variant",
        "wide=wide.yaml",
        "--variant",
        "tight=tight.yaml",
    ];
    let args = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut all = vec!["run", "suite"];
        all.extend(variants);
        all.extend(extra);
        all
    };
    let (code, stdout, stderr) = run(dir.path(), &args(&["--save-baseline", "base.json"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // tight now reads 100 lines: its `long` takes more tokens than its
    // baseline, which breaches the gate in tight alone.
    std::fs::write(
        dir.path().join("tight.yaml"),
        "tokenizer: chars4\nlimits: { max_lines: 100 }\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(
        dir.path(),
        &args(&[
            "--baseline",
            "base.json",
            "--gate",
            "tokens=+0%",
            "--report",
            "out",
        ]),
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let out = dir.path().join("out");
    let report = json(&out.join("run.json"));
    let passed: Vec<&Value> = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["comparison"]["passed"])
        .collect();
    assert_eq!(passed, [&Value::Bool(true), &Value::Bool(false)]);
    assert_eq!(report["comparison"], report["variants"][0]["comparison"]);

    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    let suites: Vec<&str> = junit
        .lines()
        .filter_map(|l| l.trim().strip_prefix("<testsuite name=\""))
        .map(|l| l.split_once("\" time").map_or(l, |(head, _)| head))
        .collect();
    assert_eq!(
        suites,
        [
            "harness\" tests=\"6\" failures=\"0\" errors=\"0\" skipped=\"0",
            "harness gates [variant wide]\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"0",
            "harness gates [variant tight]\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0",
        ]
    );

    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.starts_with("## harness: ❌ failed\n"), "{md}");
    let baselines: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("### Baseline"))
        .collect();
    assert_eq!(
        baselines,
        ["### Baseline, variant wide", "### Baseline, variant tight"]
    );
    assert!(md.contains("| `tokens=+0%` | ❌ breached | "), "{md}");

    // The CSV files: a row per scenario and variant, the variant last.
    let csv = std::fs::read_to_string(out.join("scenarios.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let breaches = header.iter().position(|c| *c == "gate_breaches").unwrap();
    assert_eq!(header.last(), Some(&"variant"));
    let rows: Vec<(String, String, String)> = csv
        .lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (
                cells[0].to_owned(),
                cells[breaches].to_owned(),
                cells[cells.len() - 1].to_owned(),
            )
        })
        .collect();
    let row = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
    assert_eq!(
        rows,
        [
            row("name", "gate_breaches", "variant"),
            row("long", "", "wide"),
            row("own limits", "", "wide"),
            row("short", "", "wide"),
            row("long", "tokens=+0%", "tight"),
            row("own limits", "", "tight"),
            row("short", "", "tight"),
        ]
    );
    let calls = std::fs::read_to_string(out.join("calls.csv")).unwrap();
    let variant_of: Vec<&str> = calls
        .lines()
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    assert_eq!(
        variant_of,
        ["variant", "wide", "wide", "wide", "tight", "tight", "tight"]
    );
}

#[test]
fn a_variant_sets_bash_and_the_system_prompt_and_snapshot_updates_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_files(
        dir.path(),
        &[
            (
                "suite/greet.yaml",
                "name: greet\nmodel:\n  - call: bash\n    args: { command: \"echo $GREETING\" }\n    expect: { contains: hi }\n",
            ),
            (
                "hi.yaml",
                "tokenizer: chars4\nbash: { env: { GREETING: hi } }\n",
            ),
            (
                "bye.yaml",
                "tokenizer: chars4\nsystem: A shorter prompt.\nbash: { env: { GREETING: bye } }\n",
            ),
        ],
    );
    let (code, stdout, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "hi=hi.yaml",
            "--variant",
            "bye=bye.yaml",
            "--json",
            "run.json",
        ],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let report = json(&dir.path().join("run.json"));
    let status: Vec<&Value> = report["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["scenarios"][0]["status"])
        .collect();
    assert_eq!(status, ["passed", "failed"]);
    let input = |i: usize| {
        report["variants"][i]["scenarios"][0]["stats"]["input_tokens"]
            .as_u64()
            .unwrap()
    };
    assert!(input(1) < input(0), "the shorter system prompt of bye");

    let (code, _, stderr) = run(
        dir.path(),
        &[
            "run",
            "suite",
            "--variant",
            "hi=hi.yaml",
            "--variant",
            "bye=bye.yaml",
            "--update-snapshots",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: --update-snapshots cannot be combined with --variant: a scenario has one \
             snapshot file"
        ),
        "{stderr}"
    );
}
