//! Scenarios against MCP servers, end to end through `harness run`: what
//! fails a scenario on purpose (a server that does not start, two tools
//! with one name, a call no server has), `share: run`, the reports that
//! name each server, and the round trip of scenarios/mcp/ through
//! `harness mcp` giving the figures of the built-in tools.

use std::path::Path;
use std::process::Command;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::test_helpers::with_mcp_fixture;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

fn run(args: &[&str]) -> Output {
    Command::new(HARNESS)
        .args(args)
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// Runs `text` as one scenario file; the exit code, stdout and run.json.
fn run_scenario(text: &str, extra: &[&str]) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, with_mcp_fixture(text)).unwrap();
    let json = dir.path().join("run.json");
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(extra);
    let out = run(&args);
    let report = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        report,
    )
}

fn failure_actuals(report: &Value) -> Vec<String> {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["failures"].as_array().unwrap().iter())
        .map(|f| f["actual"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_server_that_crashes_at_start_fails_its_scenario_naming_it() {
    let (code, stdout, report) = run_scenario(
        "name: crash at start\nservers:\n  fx:\n    command: [\"${harness}\", mcp-fixture, crash]\ntools: [fx]\nmodel:\n  - call: echo\n",
        &[],
    );
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        failure_actuals(&report),
        [
            "MCP server `fx` did not start: it closed the connection before it answered \
          `initialize` (it ended: exit status 3); its last stderr lines:\n  fixture: crashing \
          on purpose before initialize"
        ]
    );
    let server = &report["scenarios"][0]["servers"][0];
    assert_eq!(
        (
            &server["name"],
            &server["transport"],
            &server["exit_status"],
            &server["stderr_tail"]
        ),
        (
            &Value::from("fx"),
            &Value::from("stdio"),
            &Value::from("exit status 3"),
            &Value::from("fixture: crashing on purpose before initialize")
        )
    );
    assert!(
        stdout.contains(
            "  server fx: stdio, did not start: it closed the connection before it answered \
             `initialize`, exit status 3\n    its last stderr lines:\n      fixture: crashing on \
             purpose before initialize\n"
        ),
        "{stdout}"
    );
}

#[test]
fn a_server_that_never_answers_fails_within_its_startup_timeout() {
    let (code, _, report) = run_scenario(
        "name: no answer\nservers:\n  fx:\n    command: [\"${harness}\", mcp-fixture, no-init]\n    startup_timeout: 0.5\ntools: [fx]\nmodel:\n  - call: echo\n",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failure_actuals(&report),
        ["MCP server `fx` did not start: it did not answer `initialize` within 0.5 s"]
    );
    let (code, _, report) = run_scenario(
        "name: no program\nservers:\n  fx:\n    command: [no-such-mcp-server-here]\n    env: { PATH: /nonexistent }\ntools: [fx]\nmodel:\n  - call: echo\n",
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failure_actuals(&report),
        [
            "MCP server `fx` did not start: program `no-such-mcp-server-here` not found on PATH \
          (/nonexistent)"
        ]
    );
}

#[test]
fn two_active_tools_with_one_name_and_unknown_calls_fail_before_the_first_call() {
    let server = "servers:\n  h:\n    command: [\"${harness}\", mcp, --cwd, \"${workspace}\", --tools, readonly]\n  fx:\n    command: [\"${harness}\", mcp-fixture]\n";
    let (code, _, report) = run_scenario(
        &format!(
            "name: dup\n{server}tools: [read, h]\nmodel:\n  - call: read\n    args: {{ path: x }}\n"
        ),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failure_actuals(&report),
        [
            "two active tools are named `read`: the built-in tool `read` and `read` of server `h`; \
          give the server a `prefix` (e.g. `prefix: srv_`) or activate only one of them"
        ]
    );
    assert_eq!(report["scenarios"][0]["calls"], Value::Array(vec![]));
    let (code, _, report) = run_scenario(
        &format!(
            "name: unknown\n{server}tools: [fx]\nmodel:\n  - call: ech\n    args: {{ text: x }}\n"
        ),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failure_actuals(&report),
        [
            "no active tool is named `ech`; the active tools are echo, sleep, fail, rpc_error, \
          structured, blocks, exit, read_file, cwd, env, grandchild_pid, calls (to test the \
          error for an unknown tool on purpose, add `expect: { error: true }` to the call)"
        ]
    );
    let (code, _, report) = run_scenario(
        &format!("name: missing tool\n{server}tools: [fx/nope]\nmodel:\n  - call: nope\n"),
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(
        failure_actuals(&report),
        [
            "it has no tool `nope`; its tools are echo, sleep, fail, rpc_error, structured, \
          blocks, exit, read_file, cwd, env, grandchild_pid, calls"
        ]
    );
    // A prefix resolves the clash.
    let (code, stdout, _) = run_scenario(
        "name: prefixed\nservers:\n  h:\n    command: [\"${harness}\", mcp, --cwd, \"${workspace}\"]\n    prefix: h_\ntools: [read, h/read]\nworkspace:\n  files:\n    a.txt: hi\nmodel:\n  - call: read\n    args: { path: a.txt }\n    expect: { equals: hi }\n  - call: h_read\n    args: { path: a.txt }\n    expect: { equals: hi }\n",
        &[],
    );
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn a_shared_server_serves_every_scenario_of_a_worker() {
    let scenario = |n: usize, share: &str| {
        format!(
            "name: count {n}\nservers:\n  fx:\n    command: [\"${{harness}}\", mcp-fixture]\n    share: {share}\ntools: [fx]\nmodel:\n  - call: calls\n    expect: {{ equals: \"{}\" }}\n",
            if share == "run" { n } else { 1 }
        )
    };
    for share in ["run", "scenario"] {
        let text: Vec<String> = (1..=3).map(|n| scenario(n, share)).collect();
        let (code, stdout, report) = run_scenario(&text.join("---\n"), &["--jobs", "1"]);
        assert_eq!(code, 0, "share: {share}\n{stdout}");
        let shared: Vec<&Value> = report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["servers"][0]["shared"])
            .collect();
        assert_eq!(shared, [&Value::Bool(share == "run"); 3]);
    }
}

fn calls_of(report: &Value, name: &str) -> Vec<Value> {
    let scenario = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap();
    scenario["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            serde_json::json!([
                c["tool"],
                c["is_error"],
                c["truncated"],
                c["args_tokens"],
                c["result_tokens"]
            ])
        })
        .collect()
}

/// The shipped round trip: the chain built in and through `harness mcp`
/// has the same per-call tools, errors, truncation and tokens.
#[test]
fn the_round_trip_through_harness_mcp_has_the_figures_of_the_built_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = run(&[
        "run",
        root.join("scenarios/mcp/roundtrip_builtin.yaml")
            .to_str()
            .unwrap(),
        root.join("scenarios/mcp/roundtrip_server.yaml")
            .to_str()
            .unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let built_in = calls_of(&report, "the round trip, built in");
    let served = calls_of(&report, "the round trip through harness mcp");
    assert_eq!(built_in.len(), 9);
    assert_eq!(served, built_in);
    let errors = built_in
        .iter()
        .filter(|c| c[1] == Value::Bool(true))
        .count();
    let truncated = built_in
        .iter()
        .filter(|c| c[2] == Value::Bool(true))
        .count();
    assert_eq!((errors, truncated), (3, 1));
}

#[test]
fn junit_and_verbose_output_name_each_server() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        with_mcp_fixture(
            "name: named\nservers:\n  fx:\n    command: [\"${harness}\", mcp-fixture, junk]\ntools: [fx]\nmodel:\n  - call: echo\n    args: { text: x }\n",
        ),
    )
    .unwrap();
    let junit = dir.path().join("junit.xml");
    let out = run(&[
        "run",
        file.to_str().unwrap(),
        "-v",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let line = format!(
        "server fx: stdio, harness-fixture {}, protocol 2025-11-25, started in ",
        env!("CARGO_PKG_VERSION")
    );
    assert!(stdout.contains(&format!("    {line}")), "{stdout}");
    assert!(
        stdout
            .contains(" ms, exit status 0, 4 junk lines on stdout, tool definitions 387 tokens\n"),
        "{stdout}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(&line), "{xml}");
}

/// The scenarios of tests/scenarios/mcp_fixture.yaml (the harness as an
/// MCP client against the tests' misbehaving server, mode by mode) pass.
#[test]
fn the_mcp_fixture_scenarios_pass() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/scenarios/mcp_fixture.yaml")).unwrap();
    let (code, stdout, report) = run_scenario(&text, &[]);
    assert_eq!(code, 0, "{stdout}");
    let outcomes: Vec<(&str, &str)> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (
                "a server's tools are called like the built-in ones, paths mapped both ways",
                "passed"
            ),
            (
                "error results, JSON-RPC errors, structuredContent, _meta and other blocks",
                "passed"
            ),
            (
                "a call past its call_timeout is cancelled and the scenario goes on (hang)",
                "passed"
            ),
            (
                "a server that exits mid-call makes that call and every later one an error (crash)",
                "passed"
            ),
            (
                "junk lines on stdout are counted, not fatal (junk)",
                "passed"
            ),
            ("a flood on stderr is drained (flood)", "passed"),
            (
                "a server that ignores SIGTERM and its end of input is killed, with its grandchild \
                 (ignore-sigterm, grandchild)",
                "passed"
            ),
        ]
    );
}

/// Calls to a server's tools go to it as written: an unknown name (bare
/// when only servers are active, `SERVER/NAME` always), `null`, an array
/// or a string as the arguments; the server's own answer is checked.
/// Argument text that is not JSON, or a bare unknown name beside active
/// built-in tools, stays the harness's own error.
#[test]
fn calls_to_a_server_are_sent_as_written_and_its_answer_is_checked() {
    let rpc = |message: &str| {
        format!(
            "\"^The MCP server answered with JSON-RPC error -32602 instead of a result: {message}$\""
        )
    };
    let server = "servers:\n  fx:\n    command: [\"${harness}\", mcp-fixture]\n";
    let text = format!(
        "name: as written\n{server}tools: [fx]\nmodel:\n\
         \x20 - call: no_such_tool\n    expect: {{ error: {} }}\n\
         \x20 - call: fx/also_missing\n    expect: {{ error: {} }}\n\
         \x20 - call: echo\n    raw_args: \"null\"\n    expect: {{ error: {} }}\n\
         \x20 - call: echo\n    raw_args: \"[1, 2]\"\n    expect: {{ error: {} }}\n\
         \x20 - call: fx/echo\n    raw_args: '\"text\"'\n    expect: {{ error: {} }}\n\
         \x20 - call: echo\n    args: {{ text: hi }}\n    expect: {{ equals: hi }}\n\
         \x20 - call: echo\n    raw_args: \"{{\\\"text\\\": \"\n    expect: {{ error: \"^The arguments of tool \\\"echo\\\" are not valid JSON\" }}\n\
         ---\nname: built-ins beside\n{server}tools: [read, fx/echo]\nmodel:\n\
         \x20 - call: nope\n    expect: {{ error: \"^Tool \\\"nope\\\" not found. Available tools: read, echo. Call one of those by its exact name.$\" }}\n\
         \x20 - call: fx/nope\n    expect: {{ error: {} }}\n",
        rpc("Unknown tool: no_such_tool"),
        rpc("Unknown tool: also_missing"),
        rpc("Invalid arguments for tool echo: expected an object, received null"),
        rpc("Invalid arguments for tool echo: expected an object, received \\\\[1,2\\\\]"),
        rpc("Invalid arguments for tool echo: expected an object, received \\\"text\\\""),
        rpc("Unknown tool: nope"),
    );
    let (code, stdout, report) = run_scenario(&text, &["--jobs", "1"]);
    assert_eq!(code, 0, "{stdout}\n{report:#}");
    let tools: Vec<Vec<&str>> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["tool"].as_str().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(
        tools,
        [
            vec![
                "no_such_tool",
                "fx/also_missing",
                "echo",
                "echo",
                "fx/echo",
                "echo",
                "echo"
            ],
            vec!["nope", "fx/nope"]
        ]
    );
    // What each scenario sent the server and how it answered, and the
    // run's sum, in the server author's terms: the call whose argument
    // text was not JSON and the built-in `nope` never reached it.
    let figures = |server: &Value| {
        ["calls", "error_results", "jsonrpc_errors", "result_tokens"].map(|k| server[k].clone())
    };
    let per_scenario: Vec<_> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| figures(&s["servers"][0]))
        .collect();
    assert_eq!(
        per_scenario,
        [
            [6, 5, 5, 140].map(Value::from),
            [1, 1, 1, 21].map(Value::from)
        ]
    );
    assert_eq!(
        report["servers"],
        serde_json::json!([{
            "name": "fx", "server": "harness-fixture 0.1.0", "scenarios": 2,
            "failed_starts": 0, "ended_early": 0, "calls": 7, "error_results": 6,
            "jsonrpc_errors": 6, "result_tokens": 161,
            "definition_tokens_min": 36, "definition_tokens_max": 387
        }])
    );
    let line = stdout.lines().find(|l| l.starts_with("server fx")).unwrap();
    assert_eq!(
        line,
        "server fx (harness-fixture 0.1.0): 7 calls in 2 scenarios, 6 error results (all \
         JSON-RPC errors), results 161 tokens, tool definitions 36 to 387 tokens per scenario"
    );
}
