//! The script responder over conversations written by hand, and the
//! server over raw HTTP/1.1 on a loopback socket.

use std::collections::BTreeMap;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use regex::Regex;
use serde_json::Value;
use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;

use super::*;
use crate::agent::faux::Capture;
use crate::agent::faux::FauxArgs;
use crate::agent::faux::FauxCall;
use crate::agent::faux::FauxScript;
use crate::agent::faux::FauxStep;
use crate::agent::tokens::Chars4;
use crate::agent::wire::Api;
use crate::agent::wire::CallInput;
use crate::agent::wire::Item;
use crate::agent::wire::ReplyCall;
use crate::agent::wire::ToolCallItem;
use crate::agent::wire::ToolDef;
use crate::agent::wire::ToolResultItem;
use crate::agent::wire::WireReply;
use crate::agent::wire::WireRequest;

fn vars() -> BTreeMap<String, String> {
    BTreeMap::from([("workspace".to_owned(), "/tmp/w\"s".to_owned())])
}

fn script() -> FauxScript {
    FauxScript {
        steps: vec![
            FauxStep::Calls(vec![FauxCall::json(
                "call_1_1",
                "read",
                json!({"path": "${workspace}/a.txt"}),
            )]),
            FauxStep::Calls(vec![
                FauxCall::json("call_2_1", "grep", json!({"pattern": "x"})),
                FauxCall::json("call_2_2", "bash", json!({"command": "ls"})),
            ]),
            FauxStep::Say("All done in ${workspace}.".to_owned()),
        ],
    }
}

fn responder(script: FauxScript, errors: ErrorRule) -> ScriptResponder {
    ScriptResponder::new(script, vars(), Arc::new(Chars4), errors)
}

fn request(history: Vec<Item>) -> WireRequest {
    WireRequest {
        api: Api::AnthropicMessages,
        model: "m".to_owned(),
        stream: true,
        system: "sys".to_owned(),
        tools: ["read", "grep", "bash"]
            .map(|name| ToolDef {
                name: name.to_owned(),
                freeform: false,
                definition: json!({"name": name}),
            })
            .to_vec(),
        history,
    }
}

fn made(id: &str, name: &str) -> Item {
    Item::ToolCall(ToolCallItem {
        id: Some(id.to_owned()),
        name: name.to_owned(),
        input: CallInput::Json(json!({})),
    })
}

fn answered(id: &str, text: &str, is_error: Option<bool>) -> Item {
    Item::ToolResult(ToolResultItem {
        id: Some(id.to_owned()),
        name: None,
        text: text.to_owned(),
        images: Vec::new(),
        is_error,
    })
}

fn user() -> Item {
    Item::User {
        text: "go".to_owned(),
        images: Vec::new(),
    }
}

/// What an answer is, without its usage.
fn shape(answer: &Answer) -> (WireReply, AnswerKind) {
    let mut reply = answer.reply.clone();
    reply.usage = Default::default();
    (reply, answer.kind.clone())
}

fn json_call(id: &str, name: &str, args: Value) -> ReplyCall {
    ReplyCall {
        id: id.to_owned(),
        name: name.to_owned(),
        input: CallInput::Json(args),
    }
}

fn scripted(id: &str, step: usize, retry: Option<usize>) -> ScriptedCall {
    ScriptedCall {
        id: id.to_owned(),
        step,
        retry,
    }
}

#[test]
fn the_step_answered_is_the_count_of_calls_made() {
    let r = responder(script(), ErrorRule::Flag);
    let first = r.respond(&request(vec![user()]));
    assert_eq!(
        shape(&first),
        (
            WireReply {
                text: None,
                calls: vec![json_call(
                    "call_1_1",
                    "read",
                    json!({"path": "/tmp/w\"s/a.txt"})
                )],
                usage: Default::default(),
            },
            AnswerKind::Calls {
                calls: vec![scripted("call_1_1", 0, None)]
            }
        )
    );
    // The agent's own ids do not matter; a parallel step is one answer.
    let history = vec![
        user(),
        made("toolu_9", "read"),
        answered("toolu_9", "hi", Some(false)),
    ];
    let second = r.respond(&request(history.clone()));
    assert_eq!(
        shape(&second),
        (
            WireReply {
                text: None,
                calls: vec![
                    json_call("call_2_1", "grep", json!({"pattern": "x"})),
                    json_call("call_2_2", "bash", json!({"command": "ls"})),
                ],
                usage: Default::default(),
            },
            AnswerKind::Calls {
                calls: vec![scripted("call_2_1", 1, None), scripted("call_2_2", 1, None)]
            }
        )
    );
    // Asked again (a retry of the request), the same answer.
    assert_eq!(r.respond(&request(history.clone())), second);
    let mut history = history;
    history.extend([
        made("a", "grep"),
        made("b", "bash"),
        answered("a", "", Some(false)),
        answered("b", "", Some(false)),
    ]);
    let last = r.respond(&request(history));
    assert_eq!(
        shape(&last),
        (WireReply::text("All done in /tmp/w\"s."), AnswerKind::Final)
    );
}

#[test]
fn a_request_without_tools_is_a_side_call() {
    let r = responder(script(), ErrorRule::Flag);
    let mut side = request(vec![user(), made("x", "read"), answered("x", "", None)]);
    side.tools.clear();
    assert_eq!(
        shape(&r.respond(&side)),
        (WireReply::text(SIDE_TEXT), AnswerKind::Side)
    );
}

#[test]
fn a_script_without_say_ends_with_done() {
    let r = responder(
        FauxScript {
            steps: vec![FauxStep::Calls(vec![FauxCall::json(
                "c",
                "read",
                json!({}),
            )])],
        },
        ErrorRule::Flag,
    );
    let answer = r.respond(&request(vec![
        user(),
        made("c", "read"),
        answered("c", "x", None),
    ]));
    assert_eq!(
        shape(&answer),
        (WireReply::text(DONE_TEXT), AnswerKind::Final)
    );
    assert_eq!(answer.note, None);
}

#[test]
fn usage_counts_the_request_and_the_answer() {
    let r = responder(script(), ErrorRule::Flag);
    let answer = r.respond(&request(vec![user()]));
    // chars4 of the prompt text and of `read:{"path":"/tmp/w\"s/a.txt"}`.
    let prompt = "system:sys\n\nuser:go\n\ntools:[{\"name\":\"read\"},{\"name\":\"grep\"},{\"name\":\"bash\"}]";
    assert_eq!(
        answer.reply.usage,
        crate::agent::wire::ReplyUsage {
            input: prompt.len().div_ceil(4) as u64,
            cache_read: 0,
            output: "\nread:{\"path\":\"/tmp/w\\\"s/a.txt\"}".len().div_ceil(4) as u64,
        }
    );
}

fn retrying_script() -> FauxScript {
    let mut first = FauxCall::json("c1", "bash", json!({"command": "false"}));
    first.retry = vec![FauxCall::json(
        "c1_retry1",
        "bash",
        json!({"command": "true"}),
    )];
    FauxScript {
        steps: vec![
            FauxStep::Calls(vec![first]),
            FauxStep::Calls(vec![FauxCall::json("c2", "read", json!({}))]),
        ],
    }
}

#[test]
fn a_failed_call_gets_its_retry_by_the_flag_or_the_rule() {
    let flagged = responder(retrying_script(), ErrorRule::Flag);
    let failed = vec![user(), made("x", "bash"), answered("x", "boom", Some(true))];
    assert_eq!(
        shape(&flagged.respond(&request(failed))).1,
        AnswerKind::Calls {
            calls: vec![scripted("c1_retry1", 0, Some(0))]
        }
    );
    // Without a flag, Codex's words say it failed.
    let codex = responder(retrying_script(), ErrorRule::Codex);
    let text = "Chunk ID: 1\nWall time: 0.01 seconds\nProcess exited with code 1\nOutput:\n";
    let failed = vec![user(), made("x", "bash"), answered("x", text, None)];
    assert_eq!(
        shape(&codex.respond(&request(failed.clone()))).1,
        AnswerKind::Calls {
            calls: vec![scripted("c1_retry1", 0, Some(0))]
        }
    );
    // The retry made and passed: the next step.
    let mut history = failed;
    history.extend([
        made("y", "bash"),
        answered("y", "Process exited with code 0\n", None),
    ]);
    assert_eq!(
        shape(&codex.respond(&request(history))).1,
        AnswerKind::Calls {
            calls: vec![scripted("c2", 1, None)]
        }
    );
    // A success needs no retry.
    let passed = vec![
        user(),
        made("x", "bash"),
        answered("x", "fine", Some(false)),
    ];
    assert_eq!(
        shape(&flagged.respond(&request(passed))).1,
        AnswerKind::Calls {
            calls: vec![scripted("c2", 1, None)]
        }
    );
}

#[test]
fn captures_bind_from_the_agents_results() {
    let mut first = FauxCall::json("c1", "bash", json!({"command": "ls"}));
    first.captures.push(Capture {
        name: "file".to_owned(),
        regex: Arc::new(Regex::new(r"(\w+\.txt)").unwrap()),
    });
    let steps = vec![
        FauxStep::Calls(vec![first]),
        FauxStep::Calls(vec![FauxCall::json(
            "c2",
            "read",
            json!({"path": "${file}"}),
        )]),
    ];
    let r = responder(FauxScript { steps }, ErrorRule::Flag);
    let history = vec![
        user(),
        made("x", "bash"),
        answered("x", "notes.txt\n", None),
    ];
    assert_eq!(
        shape(&r.respond(&request(history))).0.calls,
        vec![json_call("c2", "read", json!({"path": "notes.txt"}))]
    );
    // Nothing to capture: the script ends, and the answer says why.
    let history = vec![user(), made("x", "bash"), answered("x", "none here", None)];
    let answer = r.respond(&request(history));
    assert_eq!(
        shape(&answer),
        (WireReply::text(DONE_TEXT), AnswerKind::Final)
    );
    assert_eq!(
        answer.note.as_deref(),
        Some(
            "the script ended early: capture `file` ((\\w+\\.txt)) found nothing in the result of c1"
        )
    );
}

#[test]
fn a_freeform_tool_gets_its_raw_input_with_plain_variables() {
    let patch = "*** Begin Patch\n*** Update File: ${workspace}/a.txt\n*** End Patch";
    let steps = vec![FauxStep::Calls(vec![FauxCall {
        id: "p".to_owned(),
        name: "apply_patch".to_owned(),
        args: FauxArgs::Raw(patch.to_owned()),
        captures: Vec::new(),
        retry: Vec::new(),
    }])];
    let r = responder(FauxScript { steps }, ErrorRule::Codex);
    let mut codex = request(vec![user()]);
    codex.api = Api::OpenaiResponses;
    codex.tools = vec![ToolDef {
        name: "apply_patch".to_owned(),
        freeform: true,
        definition: json!({"type": "custom", "name": "apply_patch"}),
    }];
    assert_eq!(
        shape(&r.respond(&codex)).0.calls,
        vec![ReplyCall {
            id: "p".to_owned(),
            name: "apply_patch".to_owned(),
            input: CallInput::Freeform(
                "*** Begin Patch\n*** Update File: /tmp/w\"s/a.txt\n*** End Patch".to_owned()
            ),
        }]
    );
    // To a function tool, raw_args stay argument text, values JSON-escaped.
    codex.tools[0].freeform = false;
    assert_eq!(
        shape(&r.respond(&codex)).0.calls[0].input,
        CallInput::Text(
            "*** Begin Patch\n*** Update File: /tmp/w\\\"s/a.txt\n*** End Patch".to_owned()
        )
    );
}

#[test]
fn codex_results_are_read_by_their_words() {
    let result = |text: &str, flag| ToolResultItem {
        id: None,
        name: None,
        text: text.to_owned(),
        images: Vec::new(),
        is_error: flag,
    };
    let cases = [
        (
            ErrorRule::Codex,
            result("Process exited with code 2\nOutput:\n", None),
            Some(true),
        ),
        (
            ErrorRule::Codex,
            result("Process exited with code 0\nOutput:\n", None),
            Some(false),
        ),
        (
            ErrorRule::Codex,
            result("apply_patch verification failed: no such file", None),
            Some(true),
        ),
        (
            ErrorRule::Codex,
            result(
                "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.",
                None,
            ),
            Some(false),
        ),
        (
            ErrorRule::Codex,
            result("Exit code: 1\nOutput:\n", None),
            Some(true),
        ),
        (
            ErrorRule::Codex,
            result(
                "Process exited with code 0\nOutput:\nProcess exited with code 3\n",
                None,
            ),
            Some(false),
        ),
        (
            ErrorRule::Codex,
            result("Process exited with code 2", Some(false)),
            Some(false),
        ),
        (
            ErrorRule::Flag,
            result("Process exited with code 2", None),
            None,
        ),
        (ErrorRule::Flag, result("x", Some(true)), Some(true)),
    ];
    for (rule, result, want) in cases {
        assert_eq!(rule.is_error(&result), want, "{rule:?} {:?}", result.text);
    }
}

/// One HTTP/1.1 exchange over a fresh connection, read to its end (the
/// server closes it): the status, the headers and the body.
async fn http(addr: std::net::SocketAddr, head: &str, body: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{head} HTTP/1.1\r\nhost: localhost\r\nx-api-key: k\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8(response).unwrap();
    let (headers, body) = response.split_once("\r\n\r\n").unwrap();
    let status = headers[9..12].parse().unwrap();
    (status, headers.to_lowercase(), body.to_owned())
}

fn chat_body(history: Value) -> String {
    json!({
        "model": "m",
        "stream": true,
        "tools": [{"type": "function", "function": {"name": "read"}}],
        "messages": history,
    })
    .to_string()
}

#[tokio::test]
async fn the_server_answers_a_run_records_it_and_finishes() {
    let steps = vec![
        FauxStep::Calls(vec![FauxCall::json("c1", "read", json!({"path": "a"}))]),
        FauxStep::Say("bye".to_owned()),
    ];
    let server = ModelServer::start(
        ServeConfig {
            keep_bodies: true,
            ..ServeConfig::default()
        },
        Arc::new(responder(FauxScript { steps }, ErrorRule::Flag)),
        None,
    )
    .await
    .unwrap();
    let addr = server.addr();
    assert_eq!(server.url(), format!("http://127.0.0.1:{}", addr.port()));
    let first = chat_body(json!([{"role": "user", "content": "go"}]));
    let (status, headers, body) = http(addr, "POST /v1/chat/completions", &first).await;
    assert_eq!(status, 200);
    assert!(
        headers.contains("content-type: text/event-stream"),
        "{headers}"
    );
    assert!(headers.contains("connection: close"), "{headers}");
    assert!(body.contains(r#""tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}}]"#), "{body}");
    assert!(body.ends_with("data: [DONE]\n\n"));
    assert!(!server.is_finished());
    let second = chat_body(json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "text"}
    ]));
    let (status, _, body) = http(addr, "POST /chat/completions", &second).await;
    assert_eq!(status, 200);
    assert!(body.contains(r#""delta":{"content":"bye"}"#), "{body}");
    server.finished().await;
    assert!(server.is_finished());
    let exchanges = server.stop().await;
    let summary: Vec<(u64, u16, Option<AnswerKind>, usize)> = exchanges
        .iter()
        .map(|e| {
            (
                e.serial,
                e.status,
                e.answer.as_ref().map(|a| a.kind.clone()),
                e.request.as_ref().map_or(0, WireRequest::call_count),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                1,
                200,
                Some(AnswerKind::Calls {
                    calls: vec![scripted("c1", 0, None)]
                }),
                0
            ),
            (2, 200, Some(AnswerKind::Final), 1),
        ]
    );
    assert_eq!(exchanges[0].body.as_deref(), Some(first.as_str()));
    assert_eq!(exchanges[1].path, "/chat/completions");
}

#[tokio::test]
async fn the_server_refuses_what_it_does_not_serve() {
    let server = ModelServer::start(
        ServeConfig {
            apis: vec![Api::Gemini],
            limits: crate::agent::wire::WireLimits {
                max_body_bytes: 100,
            },
            ..ServeConfig::default()
        },
        Arc::new(responder(script(), ErrorRule::Flag)),
        None,
    )
    .await
    .unwrap();
    let addr = server.addr();
    let gemini = "POST /v1beta/models/g:generateContent";
    let answers = vec![
        http(addr, "GET /v1/models", "").await,
        http(addr, "POST /v1/messages", "{}").await,
        http(addr, gemini, &"x".repeat(101)).await,
        http(addr, gemini, "{\"contents\": 3}").await,
    ];
    let answers: Vec<(u16, String)> = answers.into_iter().map(|(s, _, b)| (s, b)).collect();
    let served = "this scripted model answers POST /v1beta/models/MODEL:streamGenerateContent, \
                  /v1beta/models/MODEL:generateContent (gemini)";
    assert_eq!(
        answers,
        vec![
            (
                404,
                json!({"error": {"type": "not_found", "message": format!("nothing is served at GET /v1/models: {served}"), "code": null, "param": null}}).to_string()
            ),
            (
                404,
                json!({"error": {"type": "not_found", "message": format!("nothing is served at POST /v1/messages: {served}"), "code": null, "param": null}}).to_string()
            ),
            (
                413,
                json!({"error": {"code": 413, "message": "the request body has 101 bytes, more than the 100 this server reads", "status": "INVALID_ARGUMENT"}}).to_string()
            ),
            (
                400,
                json!({"error": {"code": 400, "message": "contents: expected an array, found a number", "status": "INVALID_ARGUMENT"}}).to_string()
            ),
        ]
    );
    let exchanges = server.stop().await;
    let statuses: Vec<(u64, u16, Option<Api>)> = exchanges
        .iter()
        .map(|e| (e.serial, e.status, e.api))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (1, 404, None),
            (2, 404, None),
            (3, 413, Some(Api::Gemini)),
            (4, 400, Some(Api::Gemini))
        ]
    );
}

#[tokio::test]
async fn a_full_record_refuses_more_requests() {
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&lines);
    let server = ModelServer::start(
        ServeConfig {
            max_exchanges: 1,
            ..ServeConfig::default()
        },
        Arc::new(responder(script(), ErrorRule::Flag)),
        Some(Box::new(move |exchange: &Exchange| {
            seen.lock().unwrap().push(exchange.log_line(10));
        })),
    )
    .await
    .unwrap();
    let body = chat_body(json!([{"role": "user", "content": "go"}]));
    let first = http(server.addr(), "POST /v1/chat/completions", &body).await;
    let second = http(server.addr(), "POST /v1/chat/completions", &body).await;
    assert_eq!((first.0, second.0), (200, 503));
    assert_eq!(server.unrecorded(), 1);
    let exchanges = server.stop().await;
    assert_eq!(exchanges.len(), 1);
    let logged: Vec<Value> = lines
        .lock()
        .unwrap()
        .iter()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(logged.len(), 2);
    assert_eq!(logged[0]["request"]["history_calls"], 0);
    assert_eq!(logged[0]["answer"]["kind"], "calls");
    assert_eq!(logged[1]["status"], 503);
}

#[test]
fn a_log_line_cuts_the_body_at_a_character_boundary() {
    let exchange = Exchange {
        serial: 7,
        method: "POST".to_owned(),
        path: "/v1/messages".to_owned(),
        api: Some(Api::AnthropicMessages),
        status: 400,
        body_bytes: 7,
        request: None,
        answer: None,
        error: Some("bad".to_owned()),
        body: Some("aé€b".to_owned()),
    };
    let line = |max| serde_json::from_str::<Value>(&exchange.log_line(max)).unwrap();
    assert_eq!(
        line(4),
        json!({
            "serial": 7, "method": "POST", "path": "/v1/messages", "api": "anthropic-messages",
            "status": 400, "body_bytes": 7, "request": null, "side_call": false, "answer": null,
            "error": "bad", "body": "aé", "body_truncated": true,
        })
    );
    assert_eq!(line(100)["body"], "aé€b");
    assert_eq!(line(100)["body_truncated"], false);
}

#[test]
fn a_replay_says_which_scripted_call_each_call_made_was() {
    let history = vec![
        user(),
        made("x", "bash"),
        answered("x", "boom", Some(true)),
        made("y", "bash"),
        answered("y", "ok", Some(false)),
        made("z", "read"),
    ];
    let replay = replay(
        &retrying_script(),
        &vars(),
        &request(history),
        ErrorRule::Flag,
    );
    let made: Vec<(String, usize, Option<usize>)> = replay
        .made
        .iter()
        .map(|served| (served.id.clone(), served.step, served.retry))
        .collect();
    assert_eq!(
        made,
        vec![
            ("c1".to_owned(), 0, None),
            ("c1_retry1".to_owned(), 0, Some(0)),
            ("c2".to_owned(), 1, None),
        ]
    );
    assert!(!replay.next.scripted);
    assert_eq!(replay.report.retries_sent, 1);
}
