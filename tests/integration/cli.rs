//! `harness` as a user runs it: spawn the binary, check exit code and output.

use std::io::Write;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use insta::assert_snapshot;
use serde_json::Value;
use serde_json::json;

use super::test_helpers::printed;
use super::test_helpers::redacting;

fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

fn call(dir: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = harness();
    cmd.arg("call").args(args).arg("--cwd").arg(dir);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn json_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(
        stdout.lines().count(),
        1,
        "one JSON object on one line: {stdout}"
    );
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn call_read_prints_one_json_result() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let out = call(dir.path(), &["read", r#"{"path":"a.txt"}"#], None);
    assert_eq!(
        json_of(&out),
        json!({"is_error": false, "content": [{"type": "text", "text": "hello\n"}], "details": null})
    );
}

#[test]
fn call_reads_arguments_from_stdin_and_dash() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(
        dir.path(),
        &["write"],
        Some(r#"{"path":"n/x.txt","content":"hé"}"#),
    );
    assert_eq!(
        json_of(&out),
        json!({
            "is_error": false,
            "content": [{"type": "text", "text": "Successfully wrote 3 bytes to n/x.txt"}],
            "details": {"bytes": 3, "created": true}
        })
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n/x.txt")).unwrap(),
        "hé"
    );
    let out = call(dir.path(), &["read", "-"], Some(r#"{"path":"n/x.txt"}"#));
    assert_eq!(
        json_of(&out),
        json!({"is_error": false, "content": [{"type": "text", "text": "hé"}], "details": null})
    );
}

#[test]
fn error_results_still_exit_zero() {
    let dir = tempfile::tempdir().unwrap();
    let settings = redacting(&[dir.path()]);
    let _guard = settings.bind_to_scope();
    let cases: [(&str, &[&str]); 3] = [
        (
            "call_error_missing_file",
            &["read", r#"{"path":"missing.txt"}"#],
        ),
        ("call_error_cut_off_json", &["read", r#"{"path": "a.t"#]),
        ("call_error_unknown_tool", &["nope", "{}"]),
    ];
    for (name, args) in cases {
        let out = call(dir.path(), args, None);
        assert_eq!(json_of(&out)["is_error"], true, "{name}");
        assert_snapshot!(name, printed(&out));
    }
}

#[test]
fn confinement_and_no_confine() {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "s3cret").unwrap();
    let out = call(&ws, &["read", r#"{"path":"../secret.txt"}"#], None);
    assert_eq!(json_of(&out)["is_error"], true);
    redacting(&[outer.path()])
        .bind(|| assert_snapshot!("call_outside_the_workspace", printed(&out)));
    let out = call(
        &ws,
        &["read", r#"{"path":"../secret.txt"}"#, "--no-confine"],
        None,
    );
    assert_eq!(
        json_of(&out),
        json!({"is_error": false, "content": [{"type": "text", "text": "s3cret"}], "details": null})
    );
}

#[test]
fn usage_errors_exit_two() {
    let _guard = redacting(&[]).bind_to_scope();
    let out = harness().args(["call"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!("call_without_a_tool", printed(&out));
    let out = harness()
        .args(["call", "read", "{}", "--cwd", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!("call_with_a_missing_cwd", printed(&out));
    let out = harness()
        .args(["call", "read", "{}", "--tools", "read,bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_snapshot!("call_with_an_unknown_tool_in_tools", printed(&out));
}

#[test]
fn tools_json_lists_definitions() {
    let out = harness().args(["tools", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    // It is JSON, and the snapshot holds it byte for byte.
    let _: Value = serde_json::from_slice(&out.stdout).unwrap();
    redacting(&[]).bind(|| assert_snapshot!("tools_json", printed(&out)));
}
