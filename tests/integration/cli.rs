//! `harness` as a user runs it: spawn the binary, check exit code and output.

use std::io::Write;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use serde_json::Value;
use serde_json::json;

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
    let v = json_of(&out);
    assert_eq!(
        v["content"][0]["text"],
        "Successfully wrote 3 bytes to n/x.txt"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("n/x.txt")).unwrap(),
        "hé"
    );
    let out = call(dir.path(), &["read", "-"], Some(r#"{"path":"n/x.txt"}"#));
    assert_eq!(json_of(&out)["content"][0]["text"], "hé");
}

#[test]
fn error_results_still_exit_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = call(dir.path(), &["read", r#"{"path":"missing.txt"}"#], None);
    let v = json_of(&out);
    assert_eq!(v["is_error"], true);
    let out = call(dir.path(), &["read", r#"{"path": "a.t"#], None);
    let v = json_of(&out);
    assert_eq!(v["is_error"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("The arguments of tool \"read\" are not valid JSON"),
        "{text}"
    );
    assert!(text.contains("cut off"), "{text}");
    let out = call(dir.path(), &["nope", "{}"], None);
    let v = json_of(&out);
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Tool \"nope\" not found.")
    );
}

#[test]
fn confinement_and_no_confine() {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "s3cret").unwrap();
    let out = call(&ws, &["read", r#"{"path":"../secret.txt"}"#], None);
    let v = json_of(&out);
    assert_eq!(v["is_error"], true);
    assert!(
        v["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );
    let out = call(
        &ws,
        &["read", r#"{"path":"../secret.txt"}"#, "--no-confine"],
        None,
    );
    assert_eq!(json_of(&out)["content"][0]["text"], "s3cret");
}

#[test]
fn usage_errors_exit_two() {
    let out = harness().args(["call"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = harness()
        .args(["call", "read", "{}", "--cwd", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/definitely/not/here"));
    let out = harness()
        .args(["call", "read", "{}", "--tools", "read,bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn tools_json_lists_definitions() {
    let out = harness().args(["tools", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read"));
    for tool in v.as_array().unwrap() {
        assert!(tool["description"].as_str().unwrap().len() > 20);
        assert_eq!(tool["parameters"]["type"], "object");
    }
}
