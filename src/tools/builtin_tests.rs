use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::tools::BashDetails;
use crate::tools::CallArguments;
use crate::tools::EditDetails;
use crate::tools::FindDetails;
use crate::tools::GrepDetails;
use crate::tools::LsDetails;
use crate::tools::ReadDetails;
use crate::tools::ToolCall;
use crate::tools::UpdateSink;
use crate::tools::WriteDetails;
use crate::tools::testutil::Harness;
use crate::tools::truncate::Truncation;

/// A workspace with one of each kind of thing a call can meet.
fn workspace() -> Harness {
    let h = Harness::local();
    h.add_file("a.txt", "hello\nworld\n");
    h.add_file("twice.txt", "x\nx\n");
    h.add_file("latin1.txt", b"caf\xe9\n");
    h.add_file("blob.bin", b"\x7fELF\x02\x01\x01\0\0\xff\0\0\0\0\0\0");
    h.add_file("many.txt", "match\n".repeat(3000));
    h.add_dir("d");
    let fifo = CString::new(h.root().join("fifo").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    h
}

/// Calls whose results the tests below look at: a name, the tool, the
/// arguments.
fn calls() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        ("read missing", "read", json!({"path": "missing.txt"})),
        ("read dir", "read", json!({"path": "d"})),
        ("read fifo", "read", json!({"path": "fifo"})),
        ("read offset", "read", json!({"path": "a.txt", "offset": 9})),
        ("read outside", "read", json!({"path": "../x"})),
        ("read binary", "read", json!({"path": "blob.bin"})),
        ("read whole", "read", json!({"path": "a.txt"})),
        (
            "read page",
            "read",
            json!({"path": "many.txt", "limit": "2"}),
        ),
        ("read cut", "read", json!({"path": "many.txt"})),
        ("grep regex", "grep", json!({"pattern": "("})),
        ("grep newline", "grep", json!({"pattern": "a\nb"})),
        ("grep large", "grep", json!({"pattern": "(\\w{100}){100}"})),
        ("grep glob", "grep", json!({"pattern": "x", "glob": "["})),
        ("grep fifo", "grep", json!({"pattern": "x", "path": "fifo"})),
        (
            "grep limit",
            "grep",
            json!({"pattern": "match", "limit": 2}),
        ),
        ("find glob", "find", json!({"pattern": "["})),
        (
            "find file",
            "find",
            json!({"pattern": "*", "path": "a.txt"}),
        ),
        ("ls file", "ls", json!({"path": "a.txt"})),
        ("ls empty", "ls", json!({"path": "d", "colour": "red"})),
        ("edit none", "edit", json!({"path": "a.txt", "edits": []})),
        (
            "edit twice",
            "edit",
            json!({"path": "twice.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
        ),
        (
            "edit latin1",
            "edit",
            json!({"path": "latin1.txt", "edits": [{"oldText": "caf", "newText": "t"}]}),
        ),
        (
            "edit binary",
            "edit",
            json!({"path": "blob.bin", "edits": [{"oldText": "ELF", "newText": "x"}]}),
        ),
        (
            "edit dir",
            "edit",
            json!({"path": "d", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        ("write dir", "write", json!({"path": "d", "content": "x"})),
        (
            "write new",
            "write",
            json!({"path": "new.txt", "content": "x"}),
        ),
        ("bash exit", "bash", json!({"command": "echo out; exit 3"})),
        (
            "bash timeout",
            "bash",
            json!({"command": "true", "timeout": -1}),
        ),
        ("bash seq", "bash", json!({"command": "seq 3000"})),
        ("find ok", "find", json!({"pattern": "*.txt"})),
        (
            "edit ok",
            "edit",
            json!({"path": "a.txt", "edits": [{"oldText": "world", "newText": "earth"}]}),
        ),
        ("unknown", "cat", json!({})),
        ("invalid", "read", json!({"path": 1})),
    ]
}

async fn results(h: &Harness) -> Vec<(&'static str, &'static str, ToolResult)> {
    let mut out = Vec::new();
    for (name, tool, args) in calls() {
        out.push((name, tool, h.call(tool, args).await));
    }
    let cut_off = ToolCall {
        id: "c".to_owned(),
        name: "read".to_owned(),
        arguments: CallArguments::Text("{\"path\": \"a.t".to_owned()),
    };
    let cancel = CancellationToken::new();
    cancel.cancel();
    let cancelled = ToolCall::new("d", "write", json!({"path": "b.txt", "content": "x"}));
    out.push((
        "cut off",
        "read",
        h.registry
            .dispatch(&cut_off, CancellationToken::new(), UpdateSink::discard())
            .await,
    ));
    out.push((
        "cancelled",
        "write",
        h.registry
            .dispatch(&cancelled, cancel, UpdateSink::discard())
            .await,
    ));
    out
}

#[tokio::test]
async fn every_result_of_a_built_in_tool_carries_its_facts_and_every_error_its_kind() {
    let h = workspace();
    let kinds: Vec<(&str, bool, Option<ErrorKind>)> = results(&h)
        .await
        .into_iter()
        .map(|(name, _, r)| {
            let facts = r
                .facts
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: no facts"));
            (name, r.is_error, facts.error)
        })
        .collect();
    let io = |class| Some(ErrorKind::Io(class));
    assert_eq!(
        kinds,
        [
            ("read missing", true, io(ErrorClass::NotFound)),
            ("read dir", true, io(ErrorClass::IsADirectory)),
            ("read fifo", true, io(ErrorClass::NotRegular)),
            ("read offset", true, Some(ErrorKind::OffsetBeyondEnd)),
            ("read outside", true, io(ErrorClass::OutsideWorkspace)),
            ("read binary", true, Some(ErrorKind::Binary)),
            ("read whole", false, None),
            ("read page", false, None),
            ("read cut", false, None),
            ("grep regex", true, Some(ErrorKind::InvalidRegex)),
            ("grep newline", true, Some(ErrorKind::MultiLinePattern)),
            ("grep large", true, Some(ErrorKind::PatternTooLarge)),
            ("grep glob", true, Some(ErrorKind::InvalidGlob)),
            ("grep fifo", true, io(ErrorClass::NotRegular)),
            ("grep limit", false, None),
            ("find glob", true, Some(ErrorKind::InvalidGlob)),
            ("find file", true, io(ErrorClass::NotADirectory)),
            ("ls file", true, io(ErrorClass::NotADirectory)),
            ("ls empty", false, None),
            ("edit none", true, Some(ErrorKind::NoEdits)),
            (
                "edit twice",
                true,
                Some(ErrorKind::Edit(EditRule::Duplicate))
            ),
            ("edit latin1", true, Some(ErrorKind::NotUtf8)),
            ("edit binary", true, Some(ErrorKind::NotText)),
            ("edit dir", true, io(ErrorClass::IsADirectory)),
            ("write dir", true, io(ErrorClass::IsADirectory)),
            ("write new", false, None),
            ("bash exit", true, Some(ErrorKind::Command)),
            ("bash timeout", true, Some(ErrorKind::InvalidArguments)),
            ("bash seq", false, None),
            ("find ok", false, None),
            ("edit ok", false, None),
            ("unknown", true, Some(ErrorKind::UnknownTool)),
            ("invalid", true, Some(ErrorKind::InvalidArguments)),
            ("cut off", true, Some(ErrorKind::ArgumentsCutOff)),
            ("cancelled", true, Some(ErrorKind::Cancelled)),
        ]
    );
}

#[tokio::test]
async fn the_facts_hold_the_struct_details_is_the_json_of() {
    let h = workspace();
    let results = results(&h).await;
    let get = |name: &str| {
        let (_, _, r) = results.iter().find(|(n, ..)| *n == name).unwrap();
        r.facts.clone().unwrap()
    };
    // Each typed struct serialises to the result's details, key for key.
    let mut typed_names = Vec::new();
    for (name, _, r) in &results {
        let facts = r.facts.as_ref().unwrap();
        let typed = [
            facts.details::<ReadDetails>().map(serde_json::to_value),
            facts.details::<GrepDetails>().map(serde_json::to_value),
            facts.details::<LsDetails>().map(serde_json::to_value),
            facts.details::<WriteDetails>().map(serde_json::to_value),
            facts.details::<BashDetails>().map(serde_json::to_value),
            facts.details::<EditDetails>().map(serde_json::to_value),
            facts.details::<FindDetails>().map(serde_json::to_value),
        ];
        if let Some(json) = typed.into_iter().flatten().next() {
            let mut json = json.unwrap();
            // The registry adds its notes beside the tool's details.
            if let (Some(details), serde_json::Value::Object(map)) = (&r.details, &mut json) {
                for key in ["coerced_fields", "ignored_fields"] {
                    if let Some(v) = details.get(key) {
                        map.insert(key.to_owned(), v.clone());
                    }
                }
            }
            assert_eq!(Some(&json), r.details.as_ref(), "{name}");
            typed_names.push(*name);
        }
    }
    assert_eq!(
        typed_names,
        [
            "read cut",
            "grep limit",
            "ls empty",
            "write new",
            "bash exit",
            "bash seq",
            "find ok",
            "edit ok"
        ]
    );
    let cut = get("read cut");
    assert_eq!(
        cut.truncation(),
        Truncation::from_details(results[8].2.details.as_ref().unwrap()).as_ref()
    );
    assert!(cut.truncation().unwrap().truncated);
    assert_eq!(get("read whole"), Facts::default());
    assert!(get("read page").normalised);
    assert_eq!(
        get("ls empty"),
        Facts::of(LsDetails::default()).with_normalised(true)
    );
    assert_eq!(
        get("write new"),
        Facts::of(WriteDetails {
            bytes: 1,
            created: true
        })
    );
    assert_eq!(
        get("grep limit").details::<GrepDetails>().unwrap(),
        &GrepDetails {
            matches: 2,
            files_with_matches: 1,
            match_limit_reached: Some(2),
            binary_files: Some(1),
            ..GrepDetails::default()
        }
    );
    let exit = get("bash exit");
    assert_eq!(
        exit.details::<BashDetails>().unwrap(),
        &BashDetails {
            exit_code: Some(3),
            cleaned: Some(false),
            ..BashDetails::default()
        }
    );
    assert_eq!(
        get("edit ok")
            .details::<EditDetails>()
            .map(|d| (d.fuzzy, d.first_changed_line)),
        Some((false, Some(2)))
    );
    assert_eq!(
        get("find ok").details::<FindDetails>().map(|d| d.results),
        Some(5)
    );
    let seq = get("bash seq");
    let truncation = seq.truncation().unwrap();
    assert_eq!(
        (truncation.total_lines, truncation.output_lines),
        (3000, 2000)
    );
    if let Some(path) = &seq.details::<BashDetails>().unwrap().full_output_path {
        crate::tools::testutil::disk::remove_file(path);
    }
}

/// A result read back from JSON has its facts read from `details`: the
/// same details struct and normalisation, and the kind wherever `details`
/// name it.
#[tokio::test]
async fn facts_read_back_from_json_are_the_facts_the_result_held() {
    let h = workspace();
    let mut unnamed = Vec::new();
    for (name, tool, result) in results(&h).await {
        let held = result.facts.clone().unwrap();
        let wire: ToolResult =
            serde_json::from_value(serde_json::to_value(&result).unwrap()).unwrap();
        assert_eq!(wire.facts, None, "{name}");
        let read = facts_of(tool, &wire).into_owned();
        if read.error == held.error {
            assert_eq!(read, held, "{name}");
        } else {
            assert_eq!(read.error, None, "{name}");
            assert_eq!(
                read,
                Facts::default().with_normalised(held.normalised),
                "{name}"
            );
            unnamed.push(name);
        }
        if let Some(BashDetails {
            full_output_path: Some(path),
            ..
        }) = held.details::<BashDetails>()
        {
            crate::tools::testutil::disk::remove_file(path);
        }
    }
    // The errors whose details say nothing of their kind.
    assert_eq!(
        unnamed,
        [
            "read missing",
            "read dir",
            "read fifo",
            "read offset",
            "grep regex",
            "grep newline",
            "grep large",
            "grep glob",
            "grep fifo",
            "find glob",
            "find file",
            "ls file",
            "edit none",
            "edit latin1",
            "edit binary",
            "edit dir",
            "write dir",
            "cancelled",
        ]
    );
}

#[test]
fn every_class_and_rule_is_read_back_by_its_name() {
    for class in ErrorClass::ALL {
        assert_eq!(ErrorClass::from_name(class.name()), Some(class));
        let details = json!({ "error_class": class.name() });
        assert_eq!(
            parse_facts("write", true, Some(&details)).error,
            Some(ErrorKind::Io(class))
        );
    }
    for rule in EditRule::ALL {
        let details = json!({ "error": rule.name(), "edit_index": 0 });
        assert_eq!(
            parse_facts("edit", true, Some(&details)).error,
            Some(ErrorKind::Edit(rule))
        );
    }
    assert_eq!(
        parse_facts("write", true, Some(&json!({"error_class": "new"}))),
        Facts::default()
    );
    // A success says nothing of errors, whatever its details hold.
    assert_eq!(
        parse_facts("read", false, Some(&json!({"error_class": "busy"}))).error,
        None
    );
}

#[test]
fn each_tool_declares_its_behaviours_once() {
    let names: Vec<&str> = TOOL_BEHAVIOURS.iter().map(|(tool, _)| *tool).collect();
    assert_eq!(names, crate::tools::ALL_TOOL_NAMES);
    for (tool, behaviours) in TOOL_BEHAVIOURS {
        let unique: std::collections::BTreeSet<&&str> = behaviours.iter().collect();
        assert_eq!(unique.len(), behaviours.len(), "{tool}");
    }
}
