//! `harness fuzz --mcp CMD` against the fixture server
//! (tests/fixtures/mcp_fixture.rs): a server that answers every call
//! passes, one that exits during a call fails with each crash named and
//! is restarted; and the `fuzz` step of a scenario run by `harness run`.

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

// ---------------------------------------------------------------------------
// The `fuzz` step of a scenario (`harness run`): the same generator and
// sorting, the result a summary that is the same on every run, a failing
// fuzz failing the scenario with each failure listed.

/// Runs `text` (servers as `["${harness}", mcp-fixture, …]`) with `flags`;
/// the exit code and run.json.
fn run_scenarios(text: &str, flags: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, super::test_helpers::with_mcp_fixture(text)).unwrap();
    let json = dir.path().join("run.json");
    let out = std::process::Command::new(HARNESS)
        .arg("run")
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .args(flags)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (out.status.code().unwrap_or(-1), report)
}

/// Each failure of the run as `scenario: step: actual`.
fn failures(report: &Value) -> Vec<String> {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            s["failures"].as_array().unwrap().iter().map(move |f| {
                format!(
                    "{}: {}: {}",
                    s["name"].as_str().unwrap(),
                    f["step"].as_str().unwrap_or("scenario"),
                    f["actual"].as_str().unwrap()
                )
            })
        })
        .collect()
}

/// The text of every call's result in scenario `name`, in order.
fn results(report: &Value, name: &str) -> Vec<(String, bool, String)> {
    let scenario = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap();
    scenario["transcript"]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["calls"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            (
                c["tool"].as_str().unwrap().to_owned(),
                c["is_error"].as_bool().unwrap(),
                c["content"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

/// What the fuzz of the `unchecked` fixture's `lookup` (and `echo`) finds
/// with 5 cases each: every case `lookup` gets is one the schema refuses,
/// and each is answered with -32603.
const UNCHECKED_FUZZ: &str = "fuzz of MCP server `fx`: 2 tool(s), at most 5 call(s) each, seed 0, timeout 10 s
  echo: 5 calls: result_ok 3, invalid_params 2
  lookup: 5 calls: internal_error 5
    FAIL lookup #0 (arguments_null): internal error on invalid input: JSON-RPC error -32603: Internal error: cannot read `key`
      arguments: null
    FAIL lookup #1 (arguments_not_object): internal error on invalid input: JSON-RPC error -32603: Internal error: cannot read `key`
      arguments: []
    FAIL lookup #2 (missing_required `key`): internal error on invalid input: JSON-RPC error -32603: Internal error: cannot read `key`
      arguments: {}
    FAIL lookup #3 (wrong_type `key`): internal error on invalid input: JSON-RPC error -32603: Internal error: cannot read `key`
      arguments: {\"key\":1.5}
    FAIL lookup #4 (null_value `key`): internal error on invalid input: JSON-RPC error -32603: Internal error: cannot read `key`
      arguments: {\"key\":null}
10 call(s) and 10 ping(s)
FAILED: 5 failing call(s)";

#[test]
fn a_fuzz_step_fails_its_scenario_listing_each_failure_and_a_clean_one_passes() {
    let (code, report) = run_scenarios(
        "name: unchecked\n\
         servers:\n  fx: { command: [\"${harness}\", mcp-fixture, unchecked] }\n\
         tools: [fx]\n\
         model:\n  \
         - fuzz: { server: fx, tools: [lookup, echo], cases: 5 }\n  \
         - call: echo\n    args: { text: still up }\n    expect: { equals: still up }\n\
         ---\n\
         name: clean\n\
         servers:\n  fx: { command: [\"${harness}\", mcp-fixture] }\n\
         model:\n  \
         - fuzz: { server: fx, tools: [echo, fail], cases: 5, seed: 3 }\n",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failures(&report),
        [format!(
            "unchecked: step 1 (fuzz fx): an error result: {UNCHECKED_FUZZ}"
        )]
    );
    assert_eq!(
        results(&report, "clean"),
        [(
            "mcp:fuzz".to_owned(),
            false,
            "fuzz of MCP server `fx`: 2 tool(s), at most 5 call(s) each, seed 3, timeout 10 s
  echo: 5 calls: result_ok 3, invalid_params 2
  fail: 5 calls: result_is_error 5
10 call(s) and 10 ping(s)
passed: every call was answered and the server stayed up"
                .to_owned()
        )]
    );
}

#[test]
fn a_server_that_exits_during_a_fuzz_step_is_ended_for_the_steps_after_it() {
    let (code, report) = run_scenarios(
        "name: crash\n\
         servers:\n  fx: { command: [\"${harness}\", mcp-fixture] }\n\
         tools: [fx]\n\
         model:\n  \
         - fuzz: { server: fx, tools: [exit, echo], cases: 3 }\n  \
         - call: echo\n    args: { text: after }\n",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failures(&report),
        ["crash: step 1 (fuzz fx): an error result: fuzz of MCP server `fx`: 2 tool(s), at most 3 call(s) each, seed 0, timeout 10 s
  echo: 3 calls: result_ok 1, invalid_params 2
  exit: 1 calls: crash 1
    FAIL exit #0 (arguments_null): crash: the server ended (exit status 0); its last stderr lines: fixture: exiting with status 0 during a call, as asked
      arguments: null
stopped early: the server went down, so the calls after that one were not sent
4 call(s) and 3 ping(s)
MCP server `fx` went down during the fuzz and is not restarted: the steps after this one find it ended
FAILED: 1 failing call(s)"]
    );
    let after = &results(&report, "crash")[1];
    assert_eq!((after.0.as_str(), after.1), ("echo", true), "{after:?}");
    let server = &report["scenarios"][0]["servers"][0];
    assert_eq!(
        (&server["ended_early"], &server["exit_status"]),
        (&json!(true), &json!("exit status 0"))
    );
}

#[test]
fn a_fuzz_step_naming_a_tool_the_server_lacks_fails_the_start_naming_its_tools() {
    let (code, report) = run_scenarios(
        "name: nope\n\
         servers:\n  fx: { command: [\"${harness}\", mcp-fixture] }\n\
         model:\n  \
         - call: echo\n    args: { text: never sent }\n    expect: { error: true }\n  \
         - fuzz: { server: fx, tools: [echo, lokup] }\n",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failures(&report),
        [
            "nope: step 2 (fuzz fx): MCP server `fx` has no tool `lokup`; its tools are echo, \
          sleep, fail, rpc_error, structured, blocks, exit, read_file, cwd, env, \
          grandchild_pid, calls"
        ]
    );
    // It never reached its model loop: not even the first step was sent.
    assert_eq!(report["scenarios"][0]["transcript"], Value::Null);
}

#[test]
fn a_shared_server_is_fuzzed_with_the_same_result_in_every_scenario_and_job() {
    let scenario = |name: &str| {
        format!(
            "name: {name}\n\
             servers:\n  fx: {{ command: [\"${{harness}}\", mcp-fixture, unchecked], share: run }}\n\
             model:\n  \
             - fuzz: {{ server: fx, tools: [lookup, echo], cases: 5 }}\n    \
               expect: {{ error: true }}\n"
        )
    };
    let text = [scenario("one"), scenario("two"), scenario("three")].join("---\n");
    for jobs in ["1", "3"] {
        let (code, report) = run_scenarios(&text, &["--jobs", jobs]);
        assert_eq!((code, failures(&report)), (0, Vec::<String>::new()));
        for name in ["one", "two", "three"] {
            assert_eq!(
                results(&report, name),
                [("mcp:fuzz".to_owned(), true, UNCHECKED_FUZZ.to_owned())],
                "{name} with --jobs {jobs}"
            );
        }
    }
}
