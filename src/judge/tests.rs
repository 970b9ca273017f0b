use serde_json::json;

use super::actual::ActualCut;
use super::call::subset_mismatch;
use super::call::truncation_check;
use super::files::CheckedFiles;
use super::*;
use crate::judge::deadline::Deadline;
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

/// The checks of the run of the scenario in `yaml`, whose workspace is
/// `dir`, with `deadline`.
fn run_checks(yaml: &str, dir: &std::path::Path, deadline: Deadline) -> CheckOutput {
    use crate::scenario::load::Suite;
    let (scenarios, errors) =
        crate::scenario::load_text(std::path::Path::new("s/x.yaml"), yaml, &Suite::default());
    assert!(errors.is_empty(), "{errors:?}");
    let tokens = crate::agent::tokens::tokenizer_by_name("chars4").unwrap();
    check(&CheckInput {
        scenario: &scenarios[0],
        transcript: &crate::agent::Transcript::default(),
        figures: &crate::judge::Figures::default(),
        workspace: dir,
        workspace_name: "/workspace",
        presenter: &crate::agent::Presenter::default(),
        tokens: tokens.as_ref(),
        stored_snapshots: &std::collections::BTreeMap::new(),
        deadline,
    })
}

/// `expect.files` of `big.txt` containing each of `needles`.
fn contains_yaml(needles: &[String]) -> String {
    let list: String = needles
        .iter()
        .map(|n| format!("        - {n:?}\n"))
        .collect();
    format!(
        "name: big\nmodel:\n  - say: done\nexpect:\n  files:\n    big.txt:\n      contains:\n{list}"
    )
}

/// Issue 21 item 2: each failing `contains` string of a 2 MB file carried
/// the whole file (200 MB for 100 strings). Each failure now keeps at
/// most MAX_ACTUAL_BYTES, and all of them the same shared text.
#[test]
fn failures_on_a_large_file_keep_one_bounded_shared_text() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(2_000_000)).unwrap();
    let needles: Vec<String> = (0..100).map(|k| format!("missing {k}")).collect();
    let out = run_checks(&contains_yaml(&needles), dir.path(), Deadline::never());
    assert_eq!(out.failures.len(), 100);
    let first = &out.failures[0];
    let omitted = 2_000_000 - (MAX_ACTUAL_BYTES - 256);
    assert_eq!(
        first.actual_cut,
        Some(ActualCut {
            bytes: 2_000_000,
            lines: 1,
            omitted_bytes: omitted as u64,
        })
    );
    assert_eq!(
        first.actual.lines().nth(1),
        Some(format!("[… {omitted} of 2000000 bytes not shown: part of line 1 of 1 …]").as_str())
    );
    for (failure, needle) in out.failures.iter().zip(&needles) {
        assert_eq!(failure.expected, format!("content containing {needle:?}"));
        assert!(failure.actual.len() <= MAX_ACTUAL_BYTES);
        assert!(std::sync::Arc::ptr_eq(&failure.actual, &first.actual));
        assert_eq!(failure.focus, None);
    }
}

/// Issue 21 item 2: the focus of a failure on a cut text is found in the
/// whole text and keeps its lines, numbered as in the whole text.
#[test]
fn the_focus_of_a_cut_text_keeps_the_lines_it_points_at() {
    let dir = tempfile::tempdir().unwrap();
    let mut text: String = (1..=200_000).map(|i| format!("row {i}\n")).collect();
    let at = text.find("row 100000\n").unwrap();
    text.insert_str(at, "fn the_function_we_wanted(a: u32) {\n");
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();
    let needle = "fn the_function_we_wanted(a: u64) {".to_owned();
    let out = run_checks(&contains_yaml(&[needle]), dir.path(), Deadline::never());
    let [failure] = out.failures.as_slice() else {
        panic!("{:?}", out.failures);
    };
    assert_eq!(failure.actual_cut.map(|c| c.lines), Some(200_001));
    assert!(!failure.actual.contains("the_function_we_wanted"));
    assert_eq!(
        failure.focus,
        Some(crate::judge::focus::Focus {
            first_line: 99_998,
            last_line: 100_002,
            reason: "line 100000 has the first 30 of the 35 characters expected".into(),
            lines: [
                "row 99998",
                "row 99999",
                "fn the_function_we_wanted(a: u32) {",
                "row 100000",
                "row 100001",
            ]
            .map(String::from)
            .to_vec(),
        })
    );
}

/// Issue 21 item 2: the checks run within the scenario's time budget:
/// once it is spent, they stop with a `timeout` failure that says where,
/// and make no more checks.
#[test]
fn checks_stop_at_the_deadline_and_say_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.txt"), "x".repeat(1000)).unwrap();
    let needles: Vec<String> = (0..5).map(|k| format!("missing {k}")).collect();
    let spent = Deadline::after(std::time::Instant::now(), std::time::Duration::ZERO);
    let out = run_checks(&contains_yaml(&needles), dir.path(), spent);
    assert_eq!(
        out.failures,
        [Failure::new(
            None,
            "timeout",
            "the scenario finishes within 0.0 s",
            "it timed out after 0.0 s while its checks ran, at files: big.txt; the checks from \
             there on were not made"
        )]
    );
    // With time left, the same checks are made.
    let out = run_checks(&contains_yaml(&needles), dir.path(), Deadline::never());
    assert_eq!(out.failures.len(), 5);
}
