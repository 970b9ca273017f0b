//! The MCP server author's toolkit end to end through the binary, with
//! `harness mcp` and the tests' `mcp_fixture` as the servers (the real servers
//! and real clients are tests/mcp/toolkit/, run by .ci/run): the audit of
//! `harness tools --check` (and of `harness run --audit-servers`), and a
//! suite made by `harness init --mcp` that loads, records its snapshots
//! and holds them.

use std::process::Command;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::test_helpers::mcp_fixture;
use super::test_helpers::with_mcp_fixture;

const HARNESS: &str = env!("CARGO_BIN_EXE_harness");

fn harness(args: &[&str]) -> Output {
    Command::new(HARNESS)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_audit_of_harness_mcp_over_the_protocol_is_the_audit_of_the_tools_it_serves() {
    let local = harness(&["tools", "--check"]);
    let served = harness(&["tools", "--check", "--mcp", HARNESS, "mcp"]);
    assert_eq!(local.status.code(), Some(0));
    assert_eq!(served.status.code(), Some(0));
    assert_eq!(text(&served), text(&local));
    assert_eq!(
        text(&local).lines().last(),
        Some(
            "harness: 7 tools, 0 errors, 0 warnings; the definitions cost 1473 tokens (o200k), \
             no budget (--max-definition-tokens N)"
        )
    );
}

#[test]
fn definitions_over_the_token_budget_are_an_error() {
    let out = harness(&[
        "tools",
        "--check",
        "--json",
        "--max-definition-tokens",
        "500",
        "--tools",
        "readonly",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tokens = report["definition_tokens"].clone();
    assert!(tokens.as_u64().is_some_and(|t| t > 500), "{report}");
    assert_eq!(
        report,
        json!({
            "server": "harness",
            "tools": 4,
            "errors": 1,
            "warnings": 0,
            "definition_tokens": tokens,
            "tokenizer": "o200k",
            "max_definition_tokens": 500,
            "findings": [{
                "tool": "",
                "level": "error",
                "rule": "definition_tokens",
                "clients": "all",
                "message": format!(
                    "the definitions cost {tokens} tokens (o200k), over the budget of 500 \
                     (--max-definition-tokens); shorten descriptions and schemas, or serve fewer \
                     tools"
                ),
                "source": "--max-definition-tokens"
            }]
        })
    );
}

#[test]
fn a_long_server_name_breaks_cursors_and_claude_codes_rules() {
    let name = "s".repeat(124);
    let out = harness(&[
        "tools",
        "--check",
        "--server-name",
        &name,
        "--mcp",
        &mcp_fixture(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let rules: Vec<String> = text(&out)
        .lines()
        .filter(|l| l.starts_with("  error"))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("").to_owned())
        .collect();
    // Every fixture tool is over Cursor's 60; the longer ones over Claude
    // Code's 128 too (mcp__ + 124 + __ + name).
    assert_eq!(rules.iter().filter(|r| *r == "name_cursor").count(), 12);
    assert!(rules.iter().any(|r| r == "name_claude_code"), "{rules:?}");
}

#[test]
fn run_audit_servers_fails_a_scenario_whose_server_breaks_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let name = "s".repeat(60);
    let file = dir.path().join("s.yaml");
    std::fs::write(
        &file,
        with_mcp_fixture(&format!(
            "servers:\n  {name}:\n    command: [\"${{harness}}\", mcp-fixture]\ntools: [{name}/echo]\nmodel:\n  - call: echo\n    args: {{ text: hi }}\n    expect: {{ equals: hi }}\n"
        )),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(harness(&["run", path, "-q"]).status.code(), Some(0));
    let json = dir.path().join("run.json");
    let out = harness(&[
        "run",
        path,
        "-q",
        "--audit-servers",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let failure = &report["scenarios"][0]["failures"][0];
    assert_eq!(failure["check"], "servers");
    let actual = failure["actual"].as_str().unwrap();
    assert!(
        actual.starts_with(&format!(
            "{name}/echo: name_cursor [Cursor] the server's name"
        )),
        "{actual}"
    );
}

#[test]
fn include_writes_runs_the_tools_that_change_things_in_their_workspaces() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness(&[
        "init",
        dir.path().to_str().unwrap(),
        "--include-writes",
        "--mcp",
        HARNESS,
        "mcp",
        "--cwd",
        "${workspace}",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().next(),
        Some(
            format!(
                "wrote a suite for `harness` into {}/scenarios: harness.yaml and 7 scenarios, \
                 one per tool (3 of them may change things and run, as --include-writes asks)",
                dir.path().display()
            )
            .as_str()
        )
    );
    let suite = dir.path().join("scenarios");
    let write = std::fs::read_to_string(suite.join("write.yaml")).unwrap();
    assert_eq!(
        write.lines().find(|l| l.starts_with("# It may")),
        Some(
            "# It may change things: it is annotated destructive (destructiveHint: true); it runs \
         because of --include-writes, in the scenario's workspace and sandbox."
        )
    );
    assert!(!write.contains("\nskip:"), "{write}");
    // The order, `--mcp --include-writes CMD`, writes the same.
    let other = tempfile::tempdir().unwrap();
    let out = harness(&[
        "init",
        other.path().to_str().unwrap(),
        "--mcp",
        "--include-writes",
        HARNESS,
        "mcp",
        "--cwd",
        "${workspace}",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(other.path().join("scenarios/write.yaml")).unwrap(),
        write
    );
    let suite = suite.to_str().unwrap();
    let first = harness(&["run", suite, "--update-snapshots", "-q"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert_eq!(
        text(&first).lines().find_map(|l| l
            .split(" in ")
            .next()
            .filter(|l| l.starts_with("7 scenarios"))),
        Some("7 scenarios: 7 passed, 0 failed, 0 skipped"),
        "{}",
        text(&first)
    );
}

#[test]
fn a_suite_from_harness_mcp_loads_records_its_snapshots_and_holds_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness(&[
        "init",
        dir.path().to_str().unwrap(),
        "--mcp",
        HARNESS,
        "mcp",
        "--cwd",
        "${workspace}",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let suite = dir.path().join("scenarios");
    let mut files: Vec<String> = std::fs::read_dir(&suite)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "bash.yaml",
            "edit.yaml",
            "find.yaml",
            "grep.yaml",
            "harness.yaml",
            "ls.yaml",
            "read.yaml",
            "write.yaml"
        ]
    );
    let read = std::fs::read_to_string(suite.join("read.yaml")).unwrap();
    assert!(
        read.contains("  - call: read\n    args:\n      path: .\n"),
        "{read}"
    );
    let edit = std::fs::read_to_string(suite.join("edit.yaml")).unwrap();
    assert!(
        edit.contains("skip: \"it is annotated destructive (destructiveHint: true);"),
        "{edit}"
    );
    let suite = suite.to_str().unwrap();
    assert_eq!(harness(&["check", suite]).status.code(), Some(0));
    let first = harness(&["run", suite, "--update-snapshots"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert!(
        text(&first).contains("4 passed, 0 failed, 3 skipped"),
        "{}",
        text(&first)
    );
    let second = harness(&["run", suite]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    assert!(
        text(&second).contains("4 passed, 0 failed, 3 skipped"),
        "{}",
        text(&second)
    );
}
