use std::time::Duration;

use serde_json::json;

use super::*;
use crate::agent::Transcript;
use crate::agent::Usage;
use crate::agent::faux::ServedCall;
use crate::agent::faux::Turn;
use crate::tools::ImageDetails;
use crate::tools::ToolCall;
use crate::tools::ToolOutput;
use crate::tools::ToolResult;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::truncate_head;

fn record(turn: usize, id: &str, tool: &str, args: Value, result: ToolResult) -> CallRecord {
    CallRecord {
        turn,
        index: 0,
        call: ToolCall::new(id, tool, args),
        result,
        duration: Duration::ZERO,
        updates: Default::default(),
        completion: 0,
        cancelled: false,
        args_tokens: 0,
        result_tokens: 0,
    }
}

fn ok(details: Value) -> ToolResult {
    ToolResult::ok(ToolOutput::text("done").with_details(details))
}

/// The JSON of a tool's details struct, as `details` has it.
fn json_of(details: impl serde::Serialize) -> Value {
    serde_json::to_value(details).unwrap()
}

fn behaviours(coverage: &ScenarioCoverage, area: &str) -> Vec<(String, u64)> {
    coverage
        .get(area)
        .map(|b| b.iter().map(|(k, v)| (k.clone(), *v)).collect())
        .unwrap_or_default()
}

#[test]
fn calls_read_back_from_json_are_classified_by_what_their_details_say() {
    let transcript = Transcript {
        calls: vec![
            record(
                1,
                "a",
                "read",
                json!({"path": "a", "offset": 3}),
                ok(json_of(ReadDetails::Page {
                    truncation: truncate_head(&"x\n".repeat(3000), TruncationLimits::default())
                        .facts,
                })),
            ),
            record(
                1,
                "b",
                "grep",
                json!({"pattern": "x", "literal": true}),
                ok(json_of(GrepDetails::default())),
            ),
            record(
                2,
                "c",
                "bash",
                json!({"command": "seq 9"}),
                ToolResult::error(
                    "Command exited with code 3",
                    Some(json!({"exit_code": 3, "cleaned": false})),
                ),
            ),
            record(
                2,
                "d",
                "edit",
                json!({"path": "a", "oldText": "x", "newText": "y"}),
                ToolResult::error("Found 2 occurrences", Some(json!({"error": "duplicate"}))),
            ),
            record(
                3,
                "d_retry1",
                "edit",
                json!({"path": "a", "edits": [{}, {}]}),
                ok(json_of(EditDetails {
                    diff: "-1 a\n+1 b".to_owned(),
                    patch: String::new(),
                    diff_truncated: false,
                    patch_truncated: false,
                    first_changed_line: Some(1),
                    fuzzy: true,
                    fuzzy_edits: Some(vec![0]),
                    line_ending: None,
                })),
            ),
            record(
                4,
                "e",
                "read",
                json!({"path": "../x"}),
                ToolResult::error(
                    "Path \"../x\" is outside the workspace: it resolves to …",
                    Some(json!({"error_class": "outside_workspace"})),
                ),
            ),
            record(
                5,
                "f",
                "cat",
                json!({}),
                ToolResult::error(
                    "Tool \"cat\" not found.",
                    Some(json!({"available_tools": ["read"]})),
                ),
            ),
            record(
                7,
                "h",
                "write",
                json!({"path": "a", "content": "x"}),
                ToolResult::error(
                    "Cannot write a: no space left on the device. …",
                    Some(json!({"error_class": "disk_full", "errno": "ENOSPC"})),
                ),
            ),
            record(
                8,
                "i",
                "bash",
                json!({"command": "true"}),
                ToolResult::error(
                    "Could not start the command: …",
                    Some(json!({"error_class": "too_many_open_files", "errno": "EMFILE"})),
                ),
            ),
            record(
                9,
                "j",
                "read",
                json!({"path": "a.bmp"}),
                ok(json_of(ReadDetails::Image(ImageDetails {
                    mime_type: "image/png".to_owned(),
                    converted_from: Some("image/bmp".to_owned()),
                    ..ImageDetails::default()
                }))),
            ),
            record(
                9,
                "k",
                "read",
                json!({"path": "wide.png"}),
                ok(json_of(ReadDetails::Image(ImageDetails {
                    mime_type: "image/jpeg".to_owned(),
                    resized_from: Some([4000, 20]),
                    resized_to: Some([2000, 10]),
                    ..ImageDetails::default()
                }))),
            ),
            record(
                9,
                "l",
                "read",
                json!({"path": "bad.bmp"}),
                ok(json_of(ReadDetails::Image(ImageDetails {
                    mime_type: "image/bmp".to_owned(),
                    omitted: true,
                    omitted_reason: Some(OmittedReason::NotConverted),
                    ..ImageDetails::default()
                }))),
            ),
            record(
                9,
                "m",
                "read",
                json!({"path": "huge.png"}),
                ok(json!({
                    "mime_type": "image/png",
                    "bytes": 90_000_000,
                    "omitted": true,
                    "omitted_reason": "too_large"
                })),
            ),
            record(
                10,
                "n",
                "grep",
                json!({"pattern": "x"}),
                ToolResult::error(
                    "Cannot search …",
                    Some(json!({"error_class": "some_future_class"})),
                ),
            ),
            record(
                6,
                "g",
                "ls",
                json!({"path": "a", "limit": "2"}),
                ToolResult::error(
                    "Something new went wrong",
                    Some(json!({"coerced_fields": ["/limit"]})),
                ),
            ),
        ],
        ..Transcript::default()
    };
    let report = FauxReport {
        turns: vec![Turn {
            usage: Usage::default(),
            scripted: true,
            calls: vec![ServedCall {
                id: "d_retry1".to_owned(),
                step: 1,
                retry: Some(1),
                origin: "d".to_owned(),
            }],
        }],
        retries_avoided: 2,
        ..FauxReport::default()
    };
    let coverage = observe(&transcript, &report, &[]);
    let owned = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    };
    assert_eq!(
        behaviours(&coverage, "read"),
        owned(&[
            ("error: outside the workspace", 1),
            ("image", 2),
            ("image converted (BMP to PNG)", 1),
            ("image omitted (file too large)", 1),
            ("image omitted (not converted)", 1),
            ("image resized", 1),
            ("offset", 1),
            ("text", 1),
            ("truncated by lines", 1)
        ])
    );
    assert_eq!(
        behaviours(&coverage, "grep"),
        owned(&[
            // A class this harness does not know has no kind.
            ("error: other", 1),
            ("literal", 1),
            ("no matches", 1)
        ])
    );
    assert_eq!(
        behaviours(&coverage, "bash"),
        owned(&[
            ("error: command could not start", 1),
            ("exit code non-zero", 1)
        ])
    );
    assert_eq!(
        behaviours(&coverage, "edit"),
        owned(&[
            ("error: old text found more than once", 1),
            ("fuzzy match", 1),
            ("legacy oldText/newText", 1),
            ("several edits", 1)
        ])
    );
    assert_eq!(
        behaviours(&coverage, "write"),
        owned(&[("error: disk full", 1)])
    );
    assert_eq!(
        behaviours(&coverage, "ls"),
        owned(&[("arguments normalised", 1), ("error: other", 1)])
    );
    assert_eq!(
        behaviours(&coverage, LOOP),
        owned(&[
            ("one call in a message", 7),
            ("retry avoided", 2),
            ("retry sent", 1),
            ("retry that succeeded", 1),
            ("sequential batch", 1),
            ("parallel batch", 2),
            ("unknown or inactive tool", 1)
        ])
        .into_iter()
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
}

#[test]
fn the_catalogue_names_each_behaviour_once_per_area() {
    for (area, behaviours) in catalogue() {
        let unique: std::collections::BTreeSet<&&str> = behaviours.iter().collect();
        assert_eq!(unique.len(), behaviours.len(), "{area}");
    }
}

#[test]
fn calls_to_a_servers_tools_count_in_its_area_and_built_in_names_keep_their_behaviours() {
    let transcript = Transcript {
        calls: vec![
            record(1, "a", "read", json!({"path": "a"}), ok(json!({}))),
            record(2, "b", "fs_list", json!({}), ok(json!({}))),
            record(3, "c", "fs_list", json!({}), ok(json!({}))),
        ],
        ..Transcript::default()
    };
    let servers = vec![
        (
            "fs".to_owned(),
            vec!["read".to_owned(), "fs_list".to_owned()],
        ),
        ("idle".to_owned(), vec!["idle_tool".to_owned()]),
    ];
    let coverage = observe(&transcript, &FauxReport::default(), &servers);
    assert_eq!(
        behaviours(&coverage, "server fs"),
        vec![("fs_list".to_owned(), 2), ("read".to_owned(), 1)]
    );
    // A server none of whose tools was called has no area; a server
    // tool's own area is kept only under a built-in tool's name.
    assert!(!coverage.contains_key("server idle"));
    assert!(!coverage.contains_key("fs_list"));
    assert!(coverage.contains_key("read"));
}

/// The behaviours of one run's calls (as the judging pass sees them, one
/// [`Observer::call`] each).
fn observe(
    transcript: &Transcript,
    report: &FauxReport,
    servers: &[(String, Vec<String>)],
) -> ScenarioCoverage {
    let retries = report.retry_ids();
    let mut observer = Observer::new(servers);
    for record in &transcript.calls {
        observer.call(record, retries.contains(record.call.id.as_str()));
    }
    observer.finish(report)
}
