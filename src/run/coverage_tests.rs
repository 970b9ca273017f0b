use std::time::Duration;

use serde_json::json;

use super::*;
use crate::agent::Usage;
use crate::agent::faux::ServedCall;
use crate::agent::faux::Turn;
use crate::run::ScenarioOutcome;
use crate::run::Status;
use crate::tools::ToolCall;
use crate::tools::ToolOutput;
use crate::tools::ToolResult;

fn record(turn: usize, id: &str, tool: &str, args: Value, result: ToolResult) -> CallRecord {
    CallRecord {
        turn,
        index: 0,
        call: ToolCall::new(id, tool, args),
        result,
        duration: Duration::ZERO,
        updates: 0,
        completion: 0,
        cancelled: false,
    }
}

fn ok(details: Value) -> ToolResult {
    ToolResult::ok(ToolOutput::text("done").with_details(details))
}

fn behaviours(coverage: &ScenarioCoverage, area: &str) -> Vec<(String, u64)> {
    coverage
        .get(area)
        .map(|b| b.iter().map(|(k, v)| (k.clone(), *v)).collect())
        .unwrap_or_default()
}

#[test]
fn calls_are_classified_by_details_then_text() {
    let transcript = Transcript {
        calls: vec![
            record(
                1,
                "a",
                "read",
                json!({"path": "a", "offset": 3}),
                ok(json!({
                    "truncation": {"truncated": true, "truncated_by": "lines"}
                })),
            ),
            record(
                1,
                "b",
                "grep",
                json!({"pattern": "x", "literal": true}),
                ok(json!({"matches": 0})),
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
                ok(json!({"fuzzy": true})),
            ),
            record(
                4,
                "e",
                "read",
                json!({"path": "../x"}),
                ToolResult::error(
                    "Path \"../x\" is outside the workspace: it resolves to …",
                    None,
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
    let coverage = observe(&transcript, &report);
    let owned = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    };
    assert_eq!(
        behaviours(&coverage, "read"),
        owned(&[
            ("error: outside the workspace", 1),
            ("offset", 1),
            ("text", 1),
            ("truncated by lines", 1)
        ])
    );
    assert_eq!(
        behaviours(&coverage, "grep"),
        owned(&[("literal", 1), ("no matches", 1)])
    );
    assert_eq!(
        behaviours(&coverage, "bash"),
        owned(&[("exit code non-zero", 1)])
    );
    assert_eq!(
        behaviours(&coverage, "edit"),
        owned(&[
            ("error: duplicate", 1),
            ("fuzzy match", 1),
            ("legacy oldText/newText", 1),
            ("several edits", 1)
        ])
    );
    assert_eq!(
        behaviours(&coverage, "ls"),
        owned(&[("arguments normalised", 1), ("error: other", 1)])
    );
    assert_eq!(
        behaviours(&coverage, LOOP),
        owned(&[
            ("one call in a message", 4),
            ("retry avoided", 2),
            ("retry sent", 1),
            ("retry that succeeded", 1),
            ("sequential batch", 1),
            ("parallel batch", 1),
            ("unknown or inactive tool", 1)
        ])
        .into_iter()
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
}

#[test]
fn a_run_sums_its_scenarios_and_names_what_none_exercised() {
    let scenario = |name: &str, coverage: Option<ScenarioCoverage>| {
        let mut outcome = ScenarioOutcome::empty(name, "f.yaml", &[], Status::Passed);
        outcome.coverage = coverage;
        outcome
    };
    let one = ScenarioCoverage::from([(
        "write".to_owned(),
        BTreeMap::from([("created".to_owned(), 2), ("error: other".to_owned(), 1)]),
    )]);
    let two = ScenarioCoverage::from([
        (
            "write".to_owned(),
            BTreeMap::from([("created".to_owned(), 1)]),
        ),
        ("mystery".to_owned(), BTreeMap::from([("ok".to_owned(), 1)])),
    ]);
    let mut summary = RunSummary {
        scenarios: vec![scenario("a", None)],
        ..RunSummary::default()
    };
    assert_eq!(summarize(&summary), None);
    summary.scenarios.push(scenario("b", Some(one)));
    summary.scenarios.push(scenario("c", Some(two)));
    let coverage = summarize(&summary).unwrap();
    assert_eq!(coverage.scenarios, 2);
    let write = coverage.areas.iter().find(|a| a.area == "write").unwrap();
    assert_eq!(
        write,
        &AreaCoverage {
            area: "write".to_owned(),
            known: 6,
            exercised: 1,
            behaviours: vec![
                BehaviourCoverage {
                    behaviour: "created".to_owned(),
                    calls: 3,
                    scenarios: 2,
                    known: true
                },
                BehaviourCoverage {
                    behaviour: "overwritten".to_owned(),
                    calls: 0,
                    scenarios: 0,
                    known: true
                },
                BehaviourCoverage {
                    behaviour: "arguments normalised".to_owned(),
                    calls: 0,
                    scenarios: 0,
                    known: true
                },
                BehaviourCoverage {
                    behaviour: "error: a directory".to_owned(),
                    calls: 0,
                    scenarios: 0,
                    known: true
                },
                BehaviourCoverage {
                    behaviour: "error: outside the workspace".to_owned(),
                    calls: 0,
                    scenarios: 0,
                    known: true
                },
                BehaviourCoverage {
                    behaviour: "error: invalid arguments".to_owned(),
                    calls: 0,
                    scenarios: 0,
                    known: true
                },
                BehaviourCoverage {
                    behaviour: "error: other".to_owned(),
                    calls: 1,
                    scenarios: 1,
                    known: false
                },
            ],
            not_exercised: vec![
                "overwritten".to_owned(),
                "arguments normalised".to_owned(),
                "error: a directory".to_owned(),
                "error: outside the workspace".to_owned(),
                "error: invalid arguments".to_owned(),
            ],
        }
    );
    let names: Vec<&str> = coverage.areas.iter().map(|a| a.area.as_str()).collect();
    assert_eq!(
        names,
        [
            "read", "bash", "edit", "write", "grep", "find", "ls", "loop", "mystery"
        ]
    );
    assert_eq!(coverage.exercised, 1);
    assert_eq!(
        coverage.known,
        CATALOGUE.iter().map(|(_, b)| b.len()).sum::<usize>()
    );
}

#[test]
fn the_catalogue_names_each_behaviour_once_per_area() {
    for (area, behaviours) in CATALOGUE {
        let unique: BTreeSet<&&str> = behaviours.iter().collect();
        assert_eq!(unique.len(), behaviours.len(), "{area}");
    }
}
