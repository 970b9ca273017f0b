//! The harness as an MCP client, scripted in YAML, end to end through
//! `harness run` against the fixture server in its `client` mode: the
//! steps that check resources and prompts, the answers to the server's
//! sampling, elicitation and roots requests, a request the scenario did
//! not declare failing the step it came in, and `${env:NAME}` in headers.

use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;

use super::test_helpers::with_mcp_fixture;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

/// Runs `text` as one scenario file; the exit code and run.json.
fn run_scenario(text: &str) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.yaml");
    std::fs::write(&file, with_mcp_fixture(text)).unwrap();
    let json = dir.path().join("run.json");
    let out = Command::new(HARNESS)
        .args([
            "run",
            file.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ])
        .env_remove("HARNESS_TEST_NEVER_SET")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let report = std::fs::read_to_string(&json)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), report)
}

/// Each failure of the run as `where: actual`.
fn failures(report: &Value) -> Vec<String> {
    report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["failures"].as_array().unwrap().iter())
        .map(|f| {
            format!(
                "{}: {}",
                f["step"].as_str().unwrap_or("scenario"),
                f["actual"].as_str().unwrap()
            )
        })
        .collect()
}

const CLIENT: &str =
    "servers:\n  fx: { command: [\"${harness}\", mcp-fixture, client] }\ntools: [fx]\n";

#[test]
fn resources_and_prompts_are_checked_as_steps() {
    let (code, report) = run_scenario(&format!(
        "name: checks\n{CLIENT}model:\n  \
         - list_resources: fx\n    expect:\n      equals: |-\n        {{\n          \"resources\": [\n            {{\n              \"uri\": \"fixture://notes\",\n              \"name\": \"notes\",\n              \"mimeType\": \"text/plain\"\n            }}\n          ]\n        }}\n  \
         - read_resource: fixture://notes\n    server: fx\n    expect: {{ details_at: {{ /contents/0/text: {{ equals: \"alpha\\nbeta\" }} }} }}\n  \
         - read_resource: fixture://nope\n    server: fx\n    expect: {{ error: 'JSON-RPC error -32002 instead of a result: Resource not found: fixture://nope' }}\n  \
         - list_prompts: fx\n    expect: {{ details_at: {{ /prompts/0/name: {{ equals: greet }} }} }}\n  \
         - get_prompt: {{ server: fx, name: greet, arguments: {{ who: Ada }} }}\n    expect: {{ details_at: {{ /messages/0/content/text: {{ equals: 'Hello, Ada!' }} }} }}\n"
    ));
    assert_eq!((code, failures(&report)), (0, Vec::<String>::new()));
    let stats = &report["scenarios"][0]["stats"];
    assert_eq!(stats["calls"], Value::from(5));
}

#[test]
fn the_servers_requests_get_the_declared_answers_in_order() {
    let (code, report) = run_scenario(&format!(
        "name: answers\n{CLIENT}\
         sampling: [{{ text: first }}, {{ text: second }}]\n\
         elicitation:\n  - {{ action: accept, content: {{ city: Paris }} }}\n  - {{ action: cancel }}\n\
         roots: [src]\n\
         model:\n  \
         - call: ask\n    args: {{ kind: sampling, times: 2 }}\n    expect:\n      equals: |-\n        {{\"model\":\"harness-faux\",\"stopReason\":\"endTurn\",\"role\":\"assistant\",\"content\":{{\"type\":\"text\",\"text\":\"first\"}}}}\n        {{\"model\":\"harness-faux\",\"stopReason\":\"endTurn\",\"role\":\"assistant\",\"content\":{{\"type\":\"text\",\"text\":\"second\"}}}}\n  \
         - call: ask\n    args: {{ kind: elicitation, times: 2 }}\n    expect:\n      equals: |-\n        {{\"action\":\"accept\",\"content\":{{\"city\":\"Paris\",\"name\":\"Ada\",\"age\":36}}}}\n        {{\"action\":\"cancel\"}}\n  \
         - call: ask\n    args: {{ kind: roots }}\n    expect: {{ matches: '^\\{{\"roots\":\\[\\{{\"uri\":\"file:///[^\"]+/src\",\"name\":\"src\"\\}}\\]\\}}$' }}\n"
    ));
    assert_eq!((code, failures(&report)), (0, Vec::<String>::new()));
}

#[test]
fn a_request_the_scenario_did_not_declare_fails_the_step_it_came_in() {
    let (code, report) = run_scenario(&format!(
        "name: undeclared\n{CLIENT}sampling: [{{ text: only }}]\nmodel:\n  \
         - call: ask\n    args: {{ kind: roots }}\n  \
         - call: ask\n    args: {{ kind: sampling, times: 2 }}\n  \
         - call: echo\n    args: {{ text: fine }}\n    expect: {{ equals: fine }}\n"
    ));
    assert_eq!(code, 1);
    assert_eq!(
        failures(&report),
        [
            "step 1 (ask): internal error: MCP server `fx` sent `roots/list`, which the scenario has \
             no answer for (it declares no `roots:`); it was answered with JSON-RPC error -32601.",
            "step 2 (ask): internal error: MCP server `fx` sent `sampling/createMessage`, which is \
             request 2 of its kind, past the 1 `sampling:` answers the scenario declares; it was \
             answered with JSON-RPC error -32603.",
        ]
    );
}

#[test]
fn a_header_variable_not_set_fails_the_start_naming_it_not_a_value() {
    let (code, report) = run_scenario(
        "name: env\nservers:\n  web:\n    url: http://127.0.0.1:9/mcp\n    headers: { Authorization: \"Bearer ${env:HARNESS_TEST_NEVER_SET}\" }\ntools: [web]\nmodel:\n  - call: echo\n",
    );
    assert_eq!(code, 1);
    assert_eq!(
        failures(&report),
        [
            "scenario: MCP server `web` did not start: the environment variable \
             `HARNESS_TEST_NEVER_SET` (`servers.web.headers.Authorization` names it) is not set, \
             or is not UTF-8"
        ]
    );
}
