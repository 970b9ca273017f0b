//! `definition_tokens` end to end (issue 45 item 5): what a scenario's tool
//! definitions cost, in total and per MCP server, in `run.json` and the
//! baseline, and its gate failing when a server's description grows,
//! against the test server (tests/fixtures/mcp_fixture.rs, whose `wordy`
//! mode gives `echo` a longer description). A baseline written before the
//! figure existed still loads, and the gate says it could not compare.

use std::path::Path;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::test_helpers::mcp_fixture;
use super::test_helpers::with_mcp_fixture;

/// A built-in tool and every tool of the test server, whose arguments
/// (`MODES`) the test fills in.
const SCENARIO: &str = "name: echo through the fixture\n\
servers:\n  fx:\n    command: [\"${harness}\", mcp-fixture MODES]\n\
tools: [read, fx]\n\
model:\n  - call: echo\n    args: { text: hi }\n    expect: { contains: hi }\n";

const GATE: &str = "definition_tokens=+0";

/// Runs the scenario with the server in `modes` (`""` or `, wordy`) and
/// `args`; the output and run.json.
fn run(dir: &Path, modes: &str, args: &[&str]) -> (Output, Value) {
    let file = dir.join("s.yaml");
    let text =
        with_mcp_fixture(&SCENARIO.replace("mcp-fixture MODES", &format!("mcp-fixture{modes}")));
    std::fs::write(&file, text).unwrap();
    let json = dir.join("run.json");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ])
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (out, report)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The lines of the console about gates: each `gate …` line and the
/// indented lines under it.
fn gate_lines(out: &Output) -> String {
    stdout(out)
        .lines()
        .skip_while(|line| !line.starts_with("gate "))
        .take_while(|line| line.starts_with("gate ") || line.starts_with("  "))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// What `harness tools --tokens --json --mcp FIXTURE MODES` says the
/// server's tool section costs.
fn tools_total(modes: &[&str]) -> u64 {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tools", "--tokens", "--json", "--mcp", &mcp_fixture()])
        .args(modes)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let costs: Value = serde_json::from_slice(&out.stdout).unwrap();
    costs["total_tokens"].as_u64().unwrap()
}

#[test]
fn a_longer_description_breaches_the_definition_tokens_gate() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let (out, report) = run(
        dir.path(),
        "",
        &["--save-baseline", baseline.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let scenario = &report["scenarios"][0];
    // The whole tool section (read and the server's twelve tools), and
    // the server's own, which is what `harness tools --tokens` prices.
    assert_eq!(scenario["stats"]["definition_tokens"], 561);
    assert_eq!(scenario["servers"][0]["definition_tokens"], 387);
    assert_eq!(tools_total(&[]), 387);
    assert_eq!(report["totals"]["definition_tokens"], 561);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    assert_eq!(
        saved["scenarios"]["echo through the fixture"]["definition_tokens"],
        561
    );

    // The same server holds the gate.
    let (out, _) = run(
        dir.path(),
        "",
        &["--baseline", baseline.to_str().unwrap(), "--gate", GATE],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(gate_lines(&out), "gate definition_tokens=+0: held\n");

    // A sentence more in one description breaches it, per scenario and in
    // total, naming the figure.
    let (out, report) = run(
        dir.path(),
        ", wordy",
        &["--baseline", baseline.to_str().unwrap(), "--gate", GATE],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert_eq!(
        gate_lines(&out),
        "gate definition_tokens=+0: BREACHED (2)\n  \
         `echo through the fixture` definition_tokens 561 → 571 (+1.8%)\n  \
         total definition_tokens 561 → 571 (+1.8%)\n"
    );
    assert_eq!(
        report["scenarios"][0]["servers"][0]["definition_tokens"],
        397
    );
    assert_eq!(tools_total(&["wordy"]), 397);
    assert_eq!(
        report["comparison"]["gates"],
        json!([{
            "gate": GATE,
            "held": false,
            "breaches": [
                {"scenario": "echo through the fixture", "metric": "definition_tokens", "baseline": 561, "current": 571},
                {"scenario": null, "metric": "definition_tokens", "baseline": 561, "current": 571},
            ],
        }])
    );
    // input_tokens moved too, but its gate is not the one asked for.
    let (out, _) = run(
        dir.path(),
        ", wordy",
        &[
            "--baseline",
            baseline.to_str().unwrap(),
            "--gate",
            "definition_tokens=+2%",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn a_baseline_from_before_definition_tokens_loads_and_is_not_compared_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = dir.path().join("baseline.json");
    let (out, _) = run(
        dir.path(),
        "",
        &["--save-baseline", baseline.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    // The same file as a harness before the figure wrote it.
    let mut old: Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    for scenario in old["scenarios"].as_object_mut().unwrap().values_mut() {
        scenario
            .as_object_mut()
            .unwrap()
            .remove("definition_tokens")
            .unwrap();
    }
    std::fs::write(&baseline, serde_json::to_string_pretty(&old).unwrap()).unwrap();

    let (out, report) = run(
        dir.path(),
        ", wordy",
        &[
            "--baseline",
            baseline.to_str().unwrap(),
            "--gate",
            GATE,
            "--gate",
            "calls=+0",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(
        gate_lines(&out),
        "gate calls=+0: held\n\
         gate definition_tokens=+0: not compared: the baseline has no definition_tokens \
         (written before that figure existed); save a new baseline to gate on it\n"
    );
    assert_eq!(
        report["comparison"]["gates"],
        json!([
            {"gate": "calls=+0", "held": true, "breaches": []},
            {"gate": GATE, "held": true, "breaches": [], "not_compared": ["definition_tokens"]},
        ])
    );
    // The baseline's figure reads as 0; the run's is there.
    let change = &report["comparison"]["scenarios"][0];
    assert_eq!(change["baseline"]["definition_tokens"], 0);
    assert_eq!(change["current"]["definition_tokens"], 571);

    // A new baseline records it, and the gate compares again.
    let (out, _) = run(
        dir.path(),
        ", wordy",
        &["--save-baseline", baseline.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let (out, _) = run(
        dir.path(),
        "",
        &["--baseline", baseline.to_str().unwrap(), "--gate", GATE],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(gate_lines(&out), "gate definition_tokens=+0: held\n");
}
