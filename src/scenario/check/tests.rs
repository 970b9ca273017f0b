use serde_json::json;

use super::call::subset_mismatch;
use super::call::truncation_check;
use super::files::CheckedFiles;
use super::*;
use crate::scenario::model::TruncatedExpect;
use crate::tools::ToolResult;
use crate::tools::truncate::TruncatedBy;

/// Issue 10, item 4: file checks read only regular files inside the
/// workspace, never blocking, never more than the cap.
#[test]
fn file_checks_read_only_regular_files_inside_the_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(base.join("secret.txt"), "secret").unwrap();
    std::fs::write(ws.join("small.txt"), "1234").unwrap();
    std::fs::write(ws.join("big.txt"), "12345").unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.join("zero")).unwrap();
    let fifo =
        std::ffi::CString::new(ws.join("fifo").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let files = CheckedFiles {
        max: 4,
        ..CheckedFiles::new(&ws)
    };
    let outside = Err("the path leads outside the workspace".to_owned());
    let not_regular = Err("not a regular file (a pipe, socket or device)".to_owned());
    let abs_secret = base.join("secret.txt").display().to_string();
    let read: Vec<Result<Vec<u8>, String>> = [
        "small.txt",
        "big.txt",
        "../secret.txt",
        "sub/../../secret.txt",
        abs_secret.as_str(),
        "/etc/hostname",
        "zero",
        "fifo",
    ]
    .iter()
    .map(|rel| files.read(rel))
    .collect();
    assert_eq!(
        read,
        [
            Ok(b"1234".to_vec()),
            Err("it is larger than 4B, the most a file check reads".to_owned()),
            outside.clone(),
            outside.clone(),
            outside.clone(),
            outside.clone(),
            outside.clone(),
            not_regular,
        ]
    );
    assert!(files.exists("fifo"));
    assert!(!files.exists("../secret.txt"));
    assert_eq!(files.mode("small.txt").map(|m| m & 0o7000), Ok(0));
    assert_eq!(files.mode("../secret.txt"), outside.map(|_: Vec<u8>| 0));
}

#[test]
fn subset_reports_the_first_difference() {
    let actual = json!({"a": 1, "b": {"c": [1, 2], "d": "x"}, "e": 2.0});
    assert_eq!(
        subset_mismatch(&json!({"a": 1}), &actual, String::new()),
        None
    );
    assert_eq!(
        subset_mismatch(&json!({"e": 2}), &actual, String::new()),
        None
    );
    assert_eq!(
        subset_mismatch(&json!({"b": {"d": "x"}}), &actual, String::new()),
        None
    );
    assert_eq!(
        subset_mismatch(&json!({"b": {"c": [1]}}), &actual, String::new()),
        Some("/b/c".into())
    );
    assert_eq!(
        subset_mismatch(&json!({"z": 1}), &actual, String::new()),
        Some("/z".into())
    );
    assert_eq!(
        subset_mismatch(&json!({"b": {"d": "y"}}), &actual, String::new()),
        Some("/b/d".into())
    );
}

#[test]
fn truncation_facts_are_the_typed_facts_of_the_result() {
    let facts = json!({
        "truncated": true,
        "truncated_by": "lines",
        "total_lines": 3000,
        "total_bytes": 9000,
        "output_lines": 2000,
        "output_bytes": 6000,
        "last_line_partial": false,
        "first_line_exceeds_limit": false,
        "max_lines": 2000,
        "max_bytes": 51200
    });
    let result = ToolResult::ok(
        crate::tools::ToolOutput::text("cut").with_details(json!({ "truncation": facts })),
    );
    let read = truncation("read", &result).unwrap();
    assert_eq!(
        (read.truncated, read.truncated_by, read.total_lines),
        (true, Some(TruncatedBy::Lines), 3000)
    );
    assert_eq!(
        truncation(
            "read",
            &ToolResult::ok(crate::tools::ToolOutput::text("whole"))
        ),
        None
    );
    // A result the tool made holds the same facts, typed.
    let held = ToolResult::ok(
        crate::tools::ToolOutput::text("cut")
            .with_facts(crate::tools::ReadDetails::Page {
                truncation: read.clone(),
            })
            .unwrap(),
    );
    assert_eq!(held.details, result.details);
    assert_eq!(truncation("read", &held), Some(read.clone()));
    let mut failures = Vec::new();
    truncation_check(&mut failures, None, TruncatedExpect::Bytes, Some(read));
    assert_eq!(
        failures,
        [Failure::new(
            None,
            "truncated",
            "truncated by bytes",
            "truncated by lines"
        )]
    );
}
