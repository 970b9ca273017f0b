//! `harness fuzz --mcp CMD` against the fixture server
//! (tests/fixtures/mcp_fixture.rs): a server that answers every call
//! passes, one that exits during a call fails with each crash named and
//! is restarted.

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::test_helpers::mcp_fixture;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

fn fuzz(flags: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("fuzz.json");
    let output = std::process::Command::new(HARNESS)
        .arg("fuzz")
        .args(flags)
        .arg("--json")
        .arg(&report)
        .arg("--mcp")
        .arg(mcp_fixture())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    // Wall time is not deterministic.
    value["elapsed_ms"] = json!(0);
    (
        output.status.code().unwrap_or(-1),
        value,
        String::from_utf8(output.stdout).unwrap(),
    )
}

fn tally(name: &str, calls: usize, answers: &[(&str, usize)]) -> Value {
    let mut all = json!({
        "result_ok": 0, "result_is_error": 0, "invalid_params": 0, "internal_error": 0,
        "other_error": 0, "timeout": 0, "crash": 0, "malformed": 0, "unresponsive": 0,
    });
    for (key, n) in answers {
        all[*key] = json!(n);
    }
    json!({ "name": name, "calls": calls, "answers": all })
}

#[test]
fn a_server_that_answers_every_call_passes() {
    let (code, report, out) = fuzz(&["--cases", "5", "--tool", "fail", "--tool", "rpc_error"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        report,
        json!({
            "server": "mcp_fixture",
            "seed": 0,
            "cases_per_tool": 5,
            "timeout_ms": 10_000,
            "passed": true,
            "tools": [
                tally("fail", 5, &[("result_is_error", 5)]),
                tally("rpc_error", 5, &[("other_error", 5)]),
            ],
            "failures": [],
            "internal_errors_on_plausible_input": [],
            "restarts": 0,
            "stopped_early": null,
            "calls": 10,
            "pings": 10,
            "elapsed_ms": 0,
        })
    );
}

#[test]
fn a_server_that_exits_during_calls_fails_and_is_restarted() {
    let (code, report, out) = fuzz(&["--cases", "3", "--tool", "exit"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(report["tools"], json!([tally("exit", 3, &[("crash", 3)])]));
    assert_eq!(report["restarts"], json!(2));
    let kinds: Vec<&str> = report["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["crash", "crash", "crash"]);
    assert!(out.contains("FAILED: 3 failing call(s)"), "{out}");
    assert!(
        out.contains("fixture: exiting with status"),
        "the crash names the server's stderr: {out}"
    );
}
