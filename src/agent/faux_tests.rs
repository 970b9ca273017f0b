use std::collections::BTreeMap;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::agent::Chars4;
use crate::agent::LoopOptions;
use crate::agent::run_loop;
use crate::tools::Content;
use crate::tools::testutil::Harness;

fn call(id: &str, name: &str, args: Value) -> FauxCall {
    FauxCall::json(id, name, args)
}

async fn run(h: &Harness, steps: Vec<FauxStep>) -> (crate::agent::Transcript, FauxReport) {
    let mut vars = BTreeMap::new();
    vars.insert("workspace".to_owned(), "/ws".to_owned());
    let mut p = FauxProvider::new(FauxScript { steps }, Arc::new(Chars4), vars);
    let mut t = crate::agent::Transcript::default();
    run_loop(
        &mut p,
        &h.registry,
        &LoopOptions::default(),
        &mut t,
        &mut |_| {},
    )
    .await;
    (t, p.into_report())
}

#[tokio::test]
async fn captures_chain_calls_and_workspace_is_bound() {
    let h = Harness::memory();
    h.add_file("notes/todo.txt", "fix it\n");
    h.add_file("index.txt", "see notes/todo.txt for details\n");
    let mut first = call("c1", "read", json!({"path": "index.txt"}));
    first.captures.push(Capture {
        name: "file".into(),
        regex: Regex::new(r"see (\S+)").unwrap().into(),
    });
    let second = call("c2", "read", json!({"path": "${workspace}/${file}"}));
    let (t, report) = run(
        &h,
        vec![FauxStep::Calls(vec![first]), FauxStep::Calls(vec![second])],
    )
    .await;
    assert_eq!(
        t.calls[1].call.arguments,
        crate::tools::CallArguments::Json(json!({"path": "/ws/notes/todo.txt"}))
    );
    assert_eq!(t.calls[1].result.text(), "fix it\n");
    assert_eq!(report.vars["file"], "notes/todo.txt");
}

#[tokio::test]
async fn a_failed_capture_stops_the_run() {
    let h = Harness::memory();
    h.add_file("a.txt", "nothing here\n");
    let mut first = call("c1", "read", json!({"path": "a.txt"}));
    first.captures.push(Capture {
        name: "x".into(),
        regex: Regex::new(r"id=(\d+)").unwrap().into(),
    });
    let (t, report) = run(
        &h,
        vec![FauxStep::Calls(vec![first]), FauxStep::Say("never".into())],
    )
    .await;
    assert_eq!(t.calls.len(), 1);
    assert_eq!(report.capture_failures.len(), 1);
    assert_eq!(report.capture_failures[0].name, "x");
    assert_eq!(t.assistant_messages().count(), 2);
}

#[tokio::test]
async fn retries_are_sent_only_after_errors_in_order() {
    let h = Harness::memory();
    h.add_file("real.txt", "ok\n");
    let mut failing = call("c1", "read", json!({"path": "nope.txt"}));
    failing.retry = vec![
        call("c1_r1", "read", json!({"path": "still-nope.txt"})),
        call("c1_r2", "read", json!({"path": "real.txt"})),
        call("c1_r3", "read", json!({"path": "never-sent.txt"})),
    ];
    let mut fine = call("c2", "read", json!({"path": "real.txt"}));
    fine.retry = vec![call("c2_r1", "read", json!({"path": "never.txt"}))];
    let (t, report) = run(
        &h,
        vec![FauxStep::Calls(vec![failing]), FauxStep::Calls(vec![fine])],
    )
    .await;
    let ids: Vec<&str> = t.calls.iter().map(|c| c.call.id.as_str()).collect();
    assert_eq!(ids, vec!["c1", "c1_r1", "c1_r2", "c2"]);
    assert_eq!(report.retries_sent, 2);
    assert_eq!(report.retries_avoided, 1);
    let retry_flags: Vec<Option<usize>> = report
        .turns
        .iter()
        .flat_map(|t| t.calls.iter().map(|c| c.retry))
        .collect();
    assert_eq!(retry_flags, vec![None, Some(0), Some(1), None]);
}

#[tokio::test]
async fn raw_args_are_sent_verbatim() {
    let h = Harness::memory();
    let raw = FauxCall {
        id: "c1".into(),
        name: "read".into(),
        args: FauxArgs::Raw("{\"path\": \"a.t".into()),
        captures: vec![],
        retry: vec![],
    };
    let (t, _) = run(&h, vec![FauxStep::Calls(vec![raw])]).await;
    assert!(t.calls[0].result.is_error);
    assert!(t.calls[0].result.text().contains("not valid JSON"));
}

#[tokio::test]
async fn usage_follows_the_prompt_and_the_cache_prefix() {
    let h = Harness::memory();
    h.add_file("a.txt", "alpha\n");
    let (t, report) = run(
        &h,
        vec![FauxStep::Calls(vec![call(
            "c1",
            "read",
            json!({"path": "a.txt"}),
        )])],
    )
    .await;
    assert_eq!(report.turns.len(), 2);
    let first = report.turns[0].usage;
    // First request: everything is written to the cache and billed as input.
    assert_eq!(first.cache_read, 0);
    assert_eq!(first.cache_write, first.input);
    assert_eq!(first.output, Chars4.count("read:{\"path\":\"a.txt\"}"));
    let second = report.turns[1].usage;
    // Second request: the first prompt is a prefix of the second, except
    // for the tools section, which now comes after the new messages.
    assert!(second.cache_read > 0);
    assert_eq!(second.output, 0);
    let request = crate::agent::Request {
        system: &t.system,
        messages: &t.messages[..t.messages.len() - 1],
        tools: &h.registry.specs().cloned().collect::<Vec<_>>(),
    };
    let prompt = serialize_prompt(&request);
    assert_eq!(second.input + second.cache_read, Chars4.count(&prompt));
    assert!(!report.turns[1].scripted);
}

#[test]
fn prompt_serialisation_matches_the_reference_shape() {
    let messages = vec![
        Message::User {
            text: "hello".into(),
        },
        Message::Assistant(AssistantMessage::text("prior")),
        Message::ToolResult(crate::agent::ToolResultMessage {
            tool_call_id: "x".into(),
            tool_name: "echo".into(),
            content: vec![
                Content::text("tool out"),
                Content::Image {
                    data: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ],
            details: None,
            is_error: false,
        }),
    ];
    let request = Request {
        system: "sys",
        messages: &messages,
        tools: &[],
    };
    assert_eq!(
        serialize_prompt(&request),
        "system:sys\n\nuser:hello\n\nassistant:prior\n\ntoolResult:echo\ntool out\n[image:image/png:4]"
    );
}

#[tokio::test]
async fn variables_in_raw_args_are_json_escaped_and_each_call_keeps_its_variables() {
    let h = Harness::memory();
    h.add_file("a.txt", "name: x\", \"limit\": 1, \"y\n");
    let mut first = call("c1", "read", json!({"path": "a.txt"}));
    first.captures.push(Capture {
        name: "v".into(),
        regex: Regex::new(r"name: (.*)").unwrap().into(),
    });
    let second = FauxCall {
        args: FauxArgs::Raw(r#"{"path": "${v}"}"#.into()),
        ..call("c2", "read", json!({}))
    };
    let (t, report) = run(
        &h,
        vec![FauxStep::Calls(vec![first]), FauxStep::Calls(vec![second])],
    )
    .await;
    assert_eq!(
        t.calls[1].call.arguments,
        crate::tools::CallArguments::Text(r#"{"path": "x\", \"limit\": 1, \"y"}"#.to_owned())
    );
    let seen: Vec<(&str, Vec<&str>)> = report
        .call_vars
        .iter()
        .map(|(id, vars)| (id.as_str(), vars.keys().map(String::as_str).collect()))
        .collect();
    assert_eq!(
        seen,
        vec![("c1", vec!["workspace"]), ("c2", vec!["v", "workspace"])]
    );
}

/// The tools part is kept between requests only while the tools stay the
/// same: each request is priced with the tools it offers.
#[tokio::test]
async fn each_request_is_priced_with_its_own_tools() {
    let h = Harness::memory();
    let specs: Vec<ToolSpec> = h.registry.specs().cloned().collect();
    let steps = ["one", "two", "three", "four"]
        .map(|text| FauxStep::Say(text.to_owned()))
        .to_vec();
    let mut provider = FauxProvider::new(FauxScript { steps }, Arc::new(Chars4), BTreeMap::new());
    let messages = vec![Message::User { text: "go".into() }];
    let mut priced = Vec::new();
    for tools in [&specs[..], &specs[..], &specs[..1], &[][..]] {
        let request = Request {
            system: "sys",
            messages: &messages,
            tools,
        };
        let expected = Chars4.count(&serialize_prompt(&request));
        let reply = provider.complete(request).await.unwrap();
        priced.push((reply.usage.input + reply.usage.cache_read, expected));
    }
    let (got, expected): (Vec<u64>, Vec<u64>) = priced.into_iter().unzip();
    assert_eq!(got, expected);
    // The three tool sets price differently, so a stale part would show.
    assert!(
        expected[0] > expected[2] && expected[2] > expected[3],
        "{expected:?}"
    );
}

#[test]
fn tool_lists_are_the_same_only_when_their_part_is() {
    let h = Harness::memory();
    let specs: Vec<ToolSpec> = h.registry.specs().cloned().collect();
    assert!(same_definitions(&specs, &specs.clone()));
    assert!(!same_definitions(&specs, &specs[1..]));
    // The same keys in another order serialise differently.
    let mut reordered = specs.clone();
    let Value::Object(schema) = &mut reordered[0].parameters else {
        panic!("a schema is an object");
    };
    let entries: Vec<(String, Value)> = std::mem::take(schema).into_iter().rev().collect();
    schema.extend(entries);
    assert_eq!(reordered[0].parameters, specs[0].parameters);
    assert!(!same_definitions(&specs, &reordered));
    assert_ne!(tools_part(&specs), tools_part(&reordered));
    // Numbers are compared as they are written.
    assert!(!same_json(&json!({"n": 1}), &json!({"n": 1.0})));
    assert!(same_json(
        &json!([{"a": [1, "x"]}]),
        &json!([{"a": [1, "x"]}])
    ));
}
