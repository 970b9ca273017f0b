//! The four formats against small requests written in each format's shape
//! (no agent's prompt or tool descriptions), and their answers snapshotted.

use pretty_assertions::assert_eq;
use serde_json::Value;
use serde_json::json;

use super::*;

fn post(path: &str, body: &Value) -> Result<WireRequest, WireError> {
    let route = route(path).expect("a served path");
    parse(&route, body.to_string().as_bytes(), WireLimits::default())
}

fn user(text: &str) -> Item {
    Item::User {
        text: text.to_owned(),
        images: Vec::new(),
    }
}

fn assistant(text: &str) -> Item {
    Item::Assistant {
        text: text.to_owned(),
    }
}

fn call(id: Option<&str>, name: &str, input: CallInput) -> Item {
    Item::ToolCall(ToolCallItem {
        id: id.map(str::to_owned),
        name: name.to_owned(),
        input,
    })
}

fn result(id: Option<&str>, text: &str, is_error: Option<bool>) -> ToolResultItem {
    ToolResultItem {
        id: id.map(str::to_owned),
        name: None,
        text: text.to_owned(),
        images: Vec::new(),
        is_error,
    }
}

fn png() -> Image {
    Image {
        media_type: "image/png".to_owned(),
        data: "iVBORw0KGgo=".to_owned(),
    }
}

fn tool(name: &str, freeform: bool, definition: Value) -> ToolDef {
    ToolDef {
        name: name.to_owned(),
        freeform,
        definition,
    }
}

#[test]
fn anthropic_messages_are_read_in_order() {
    let read_tool = json!({"name": "Read", "description": "d", "input_schema": {"type": "object"}});
    let body = json!({
        "model": "m-1",
        "stream": true,
        "max_tokens": 100,
        "thinking": {"type": "enabled"},
        "metadata": {"user_id": "u"},
        "system": [{"type": "text", "text": "one"}, {"type": "text", "text": "two", "cache_control": {}}],
        "tools": [read_tool, {"type": "web_search_20250305", "max_uses": 1}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "fix a.txt"}, {"type": "text", "text": "<reminder>"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "c1", "name": "Read", "input": {"file_path": "/w/a.txt"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "1\thello", "is_error": false},
                {"type": "text", "text": "go on"}
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "c2", "name": "Read", "input": {}},
                {"type": "tool_use", "id": "c3", "name": "Bash", "input": {"command": "ls"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c2", "content": [
                    {"type": "text", "text": "a"}, {"type": "text", "text": "b"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
                ]},
                {"type": "tool_result", "tool_use_id": "c3", "is_error": true, "content": "no such file"}
            ]},
            {"role": "system", "content": [{"type": "text", "text": "env"}]},
            {"role": "assistant", "content": "done"}
        ]
    });
    let request = post("/v1/messages?beta=true", &body).unwrap();
    let mut with_image = result(Some("c2"), "a\nb", Some(false));
    with_image.images.push(png());
    assert_eq!(
        request,
        WireRequest {
            api: Api::AnthropicMessages,
            model: "m-1".to_owned(),
            stream: true,
            system: "one\n\ntwo\n\nenv".to_owned(),
            tools: vec![
                tool("Read", false, body["tools"][0].clone()),
                tool("web_search_20250305", false, body["tools"][1].clone()),
            ],
            history: vec![
                user("fix a.txt\n<reminder>"),
                assistant("Reading."),
                call(
                    Some("c1"),
                    "Read",
                    CallInput::Json(json!({"file_path": "/w/a.txt"}))
                ),
                Item::ToolResult(result(Some("c1"), "1\thello", Some(false))),
                user("go on"),
                call(Some("c2"), "Read", CallInput::Json(json!({}))),
                call(
                    Some("c3"),
                    "Bash",
                    CallInput::Json(json!({"command": "ls"}))
                ),
                Item::ToolResult(with_image),
                Item::ToolResult(result(Some("c3"), "no such file", Some(true))),
                assistant("done"),
            ],
        }
    );
    assert_eq!(request.call_count(), 3);
    assert!(!request.is_side_call());
}

#[test]
fn responses_items_are_read_in_order() {
    let body = json!({
        "model": "gpt-x",
        "stream": true,
        "store": false,
        "instructions": "be brief",
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {"type": "object"}, "strict": false},
            {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
            {"type": "web_search"}
        ],
        "include": ["reasoning.encrypted_content"],
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "fix it"},
                {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
            ]},
            {"type": "reasoning", "summary": [], "encrypted_content": "x"},
            {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": "{\"cmd\":\"cat a.txt\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Process exited with code 0\nOutput:\nhello"},
            {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch"},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "Done!"}]},
            {"type": "function_call", "call_id": "c3", "name": "exec_command", "arguments": "{\"cmd\":"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "All done."}]}
        ]
    });
    let request = post("/v1/responses", &body).unwrap();
    assert_eq!(
        request,
        WireRequest {
            api: Api::OpenaiResponses,
            model: "gpt-x".to_owned(),
            stream: true,
            system: "be brief\n\nrules".to_owned(),
            tools: vec![
                tool("exec_command", false, body["tools"][0].clone()),
                tool("apply_patch", true, body["tools"][1].clone()),
                tool("web_search", false, body["tools"][2].clone()),
            ],
            history: vec![
                Item::User {
                    text: "fix it".to_owned(),
                    images: vec![png()],
                },
                call(
                    Some("c1"),
                    "exec_command",
                    CallInput::Json(json!({"cmd": "cat a.txt"}))
                ),
                Item::ToolResult(result(
                    Some("c1"),
                    "Process exited with code 0\nOutput:\nhello",
                    None
                )),
                call(
                    Some("c2"),
                    "apply_patch",
                    CallInput::Freeform("*** Begin Patch\n*** End Patch".to_owned())
                ),
                Item::ToolResult(result(Some("c2"), "Done!", None)),
                call(
                    Some("c3"),
                    "exec_command",
                    CallInput::Text("{\"cmd\":".to_owned())
                ),
                assistant("All done."),
            ],
        }
    );
}

#[test]
fn a_responses_input_may_be_one_string() {
    let request = post("/responses", &json!({"model": "m", "input": "hi"})).unwrap();
    assert_eq!(request.history, vec![user("hi")]);
    assert!(!request.stream);
    assert!(request.is_side_call());
}

#[test]
fn chat_messages_are_read_in_order() {
    let body = json!({
        "model": "m",
        "stream": true,
        "stream_options": {"include_usage": true},
        "tools": [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}],
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
            ]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "hello"},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "x"}]},
            {"role": "assistant", "content": "ok"}
        ]
    });
    let request = post("/v1/chat/completions", &body).unwrap();
    assert_eq!(
        request,
        WireRequest {
            api: Api::OpenaiChat,
            model: "m".to_owned(),
            stream: true,
            system: "sys".to_owned(),
            tools: vec![tool("read", false, body["tools"][0].clone())],
            history: vec![
                Item::User {
                    text: "look".to_owned(),
                    images: vec![png()],
                },
                call(
                    Some("c1"),
                    "read",
                    CallInput::Json(json!({"path": "a.txt"}))
                ),
                call(Some("c2"), "read", CallInput::Json(json!({}))),
                Item::ToolResult(result(Some("c1"), "hello", None)),
                Item::ToolResult(result(Some("c2"), "x", None)),
                assistant("ok"),
            ],
        }
    );
}

#[test]
fn gemini_contents_are_read_in_order() {
    let body = json!({
        "systemInstruction": {"role": "user", "parts": [{"text": "sys"}]},
        "generationConfig": {"temperature": 0},
        "tools": [
            {"functionDeclarations": [
                {"name": "read_file", "parametersJsonSchema": {"type": "object"}},
                {"name": "replace", "parametersJsonSchema": {"type": "object"}}
            ]},
            {"googleSearch": {}}
        ],
        "contents": [
            {"role": "user", "parts": [{"text": "fix a.txt"}]},
            {"role": "model", "parts": [
                {"text": "thinking about it", "thought": true},
                {"text": "On it."},
                {"functionCall": {"name": "read_file", "args": {"file_path": "a.txt"}}, "thoughtSignature": "sig"}
            ]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "g-1", "name": "read_file", "response": {"output": "hello"}}},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
            ]},
            {"role": "model", "parts": [{"functionCall": {"id": "g-2", "name": "replace", "args": {}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"id": "g-2", "name": "replace", "response": {"error": "no match"}}}
            ]}
        ]
    });
    let request = post("/v1beta/models/gem-1:streamGenerateContent?alt=sse", &body).unwrap();
    let mut first = result(Some("g-1"), "hello", Some(false));
    first.name = Some("read_file".to_owned());
    first.images.push(png());
    let mut second = result(Some("g-2"), "no match", Some(true));
    second.name = Some("replace".to_owned());
    assert_eq!(
        request,
        WireRequest {
            api: Api::Gemini,
            model: "gem-1".to_owned(),
            stream: true,
            system: "sys".to_owned(),
            tools: vec![
                tool(
                    "read_file",
                    false,
                    body["tools"][0]["functionDeclarations"][0].clone()
                ),
                tool(
                    "replace",
                    false,
                    body["tools"][0]["functionDeclarations"][1].clone()
                ),
                tool("googleSearch", false, body["tools"][1].clone()),
            ],
            history: vec![
                user("fix a.txt"),
                assistant("On it."),
                call(
                    None,
                    "read_file",
                    CallInput::Json(json!({"file_path": "a.txt"}))
                ),
                Item::ToolResult(first.clone()),
                call(Some("g-2"), "replace", CallInput::Json(json!({}))),
                Item::ToolResult(second),
            ],
        }
    );
    // The first call has no id: its result is paired by name.
    let answered: Vec<(&str, Option<&str>)> = request
        .answered_calls()
        .iter()
        .map(|a| (a.call.name.as_str(), a.result.map(|r| r.text.as_str())))
        .collect();
    assert_eq!(
        answered,
        vec![("read_file", Some("hello")), ("replace", Some("no match"))]
    );
}

#[test]
fn results_pair_with_calls_by_id_then_name_then_order() {
    let request = WireRequest {
        api: Api::Gemini,
        model: String::new(),
        stream: false,
        system: String::new(),
        tools: Vec::new(),
        history: vec![
            call(None, "a", CallInput::Json(json!({}))),
            call(None, "b", CallInput::Json(json!({}))),
            call(Some("x"), "c", CallInput::Json(json!({}))),
            call(None, "d", CallInput::Json(json!({}))),
            Item::ToolResult(result(Some("x"), "for c", None)),
            Item::ToolResult(ToolResultItem {
                name: Some("b".to_owned()),
                ..result(None, "for b", None)
            }),
            Item::ToolResult(result(None, "for a", None)),
        ],
    };
    let answered: Vec<(&str, Option<&str>)> = request
        .answered_calls()
        .iter()
        .map(|a| (a.call.name.as_str(), a.result.map(|r| r.text.as_str())))
        .collect();
    assert_eq!(
        answered,
        vec![
            ("a", Some("for a")),
            ("b", Some("for b")),
            ("c", Some("for c")),
            ("d", None)
        ]
    );
}

#[test]
fn the_paths_of_each_format() {
    let gemini = |model: &str, stream: bool, sse: bool| Route {
        api: Api::Gemini,
        model: Some(model.to_owned()),
        stream: Some(stream),
        sse,
    };
    let plain = |api| Route {
        api,
        model: None,
        stream: None,
        sse: false,
    };
    let cases = [
        (
            "/v1/messages?beta=true",
            Some(plain(Api::AnthropicMessages)),
        ),
        ("/messages", Some(plain(Api::AnthropicMessages))),
        ("/v1/responses", Some(plain(Api::OpenaiResponses))),
        ("/v1/chat/completions", Some(plain(Api::OpenaiChat))),
        ("/chat/completions?x=1", Some(plain(Api::OpenaiChat))),
        (
            "/v1beta/models/g-2.5:streamGenerateContent?alt=sse",
            Some(gemini("g-2.5", true, true)),
        ),
        (
            "/v1beta/models/g:streamGenerateContent",
            Some(gemini("g", true, false)),
        ),
        (
            "/v1beta/models/g:generateContent",
            Some(gemini("g", false, false)),
        ),
        ("/models/g:generateContent", Some(gemini("g", false, false))),
        ("/v1beta/models/g:countTokens", None),
        ("/v1beta/models/:generateContent", None),
        ("/v1beta/models/a/b:generateContent", None),
        ("/v1/models", None),
        ("/", None),
        ("/api/hello", None),
    ];
    for (path, want) in cases {
        assert_eq!(route(path), want, "{path}");
    }
}

#[test]
fn malformed_requests_are_errors_that_say_where() {
    let errors: Vec<String> = [
        ("/v1/messages", "nope".to_owned()),
        ("/v1/messages", "[1]".to_owned()),
        ("/v1/messages", json!({"model": "m"}).to_string()),
        (
            "/v1/messages",
            json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": 7}]}]})
                .to_string(),
        ),
        (
            "/v1/messages",
            json!({"messages": [{"role": "robot", "content": "x"}]}).to_string(),
        ),
        (
            "/v1/messages",
            json!({"stream": "yes", "messages": []}).to_string(),
        ),
        (
            "/v1/responses",
            json!({"input": [{"type": "function_call", "name": "x"}]}).to_string(),
        ),
        (
            "/v1/chat/completions",
            json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]}).to_string(),
        ),
        (
            "/v1beta/models/g:generateContent",
            json!({"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]})
                .to_string(),
        ),
        ("/v1/messages", "[".repeat(200)),
    ]
    .iter()
    .map(|(path, body)| {
        let route = route(path).unwrap();
        parse(&route, body.as_bytes(), WireLimits::default())
            .unwrap_err()
            .message
    })
    .collect();
    assert_eq!(
        errors,
        vec![
            "the request body is not JSON: expected ident at line 1 column 2",
            "the request body is an array, not a JSON object",
            "the body: `messages` is missing",
            "messages[0].content[0].tool_use_id: expected a string, found a number",
            "messages[0]: role `robot` is none of `user`, `assistant`, `system`",
            "stream: expected a boolean, found a string",
            "input[0]: `call_id` is missing",
            "messages[0].tool_calls[0]: `function` is missing",
            "contents[0].parts[0].functionCall: `name` is missing",
            "the request body is not JSON: recursion limit exceeded at line 1 column 128",
        ]
    );
}

#[test]
fn a_body_over_the_limit_is_refused_before_it_is_parsed() {
    let route = route("/v1/messages").unwrap();
    let body = json!({"messages": [], "pad": "x".repeat(100)}).to_string();
    let limits = WireLimits { max_body_bytes: 64 };
    assert_eq!(
        parse(&route, body.as_bytes(), limits).unwrap_err().message,
        format!(
            "the request body has {} bytes, more than the 64 this server reads",
            body.len()
        )
    );
}

fn reply() -> WireReply {
    WireReply {
        text: Some("Let me look.".to_owned()),
        calls: vec![
            ReplyCall {
                id: "call_1_1".to_owned(),
                name: "read".to_owned(),
                input: CallInput::Json(json!({"path": "a.txt"})),
            },
            ReplyCall {
                id: "call_1_2".to_owned(),
                name: "apply_patch".to_owned(),
                input: CallInput::Freeform("*** Begin Patch\n*** End Patch\n".to_owned()),
            },
        ],
        usage: ReplyUsage {
            input: 120,
            cache_read: 100,
            output: 9,
        },
    }
}

fn envelope() -> Envelope {
    Envelope {
        serial: 3,
        model: "m-1".to_owned(),
    }
}

fn encoded(path: &str, stream: bool, reply: &WireReply) -> Encoded {
    encode(&route(path).unwrap(), stream, reply, &envelope())
}

/// The `data:` payloads of an event stream, each parsed.
fn data_lines(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

#[test]
fn anthropic_stream() {
    let out = encoded("/v1/messages", true, &reply());
    assert_eq!(out.content_type, "text/event-stream");
    // Every `event:` names the type its data carries.
    let names: Vec<&str> = out
        .body
        .lines()
        .filter_map(|line| line.strip_prefix("event: "))
        .collect();
    let types: Vec<String> = data_lines(&out.body)
        .iter()
        .map(|d| d["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, types);
    insta::assert_snapshot!(out.body);
}

#[test]
fn anthropic_json() {
    let out = encoded("/v1/messages", false, &reply());
    assert_eq!(out.content_type, "application/json");
    insta::assert_snapshot!(out.body);
}

#[test]
fn anthropic_text_only_ends_the_turn() {
    let out = encoded("/v1/messages", false, &WireReply::text("done"));
    let value: Value = serde_json::from_str(&out.body).unwrap();
    assert_eq!(value["stop_reason"], "end_turn");
    assert_eq!(value["content"], json!([{"type": "text", "text": "done"}]));
}

#[test]
fn responses_stream() {
    let out = encoded("/v1/responses", true, &reply());
    let data = data_lines(&out.body);
    let numbers: Vec<u64> = data
        .iter()
        .map(|d| d["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers, (0..data.len() as u64).collect::<Vec<_>>());
    insta::assert_snapshot!(out.body);
}

#[test]
fn responses_json() {
    insta::assert_snapshot!(encoded("/v1/responses", false, &reply()).body);
}

#[test]
fn chat_stream() {
    let out = encoded("/v1/chat/completions", true, &reply());
    assert!(out.body.ends_with("data: [DONE]\n\n"), "{}", out.body);
    insta::assert_snapshot!(out.body);
}

#[test]
fn chat_json() {
    insta::assert_snapshot!(encoded("/v1/chat/completions", false, &reply()).body);
}

#[test]
fn gemini_stream_json_and_array() {
    let sse = encoded(
        "/v1beta/models/m-1:streamGenerateContent?alt=sse",
        true,
        &reply(),
    );
    let one = encoded("/v1beta/models/m-1:generateContent", false, &reply());
    let array = encoded("/v1beta/models/m-1:streamGenerateContent", true, &reply());
    assert_eq!(sse.content_type, "text/event-stream");
    assert_eq!(
        data_lines(&sse.body),
        vec![serde_json::from_str::<Value>(&one.body).unwrap()]
    );
    assert_eq!(array.body, format!("[{}]", one.body));
    insta::assert_snapshot!(sse.body);
}

#[test]
fn error_bodies_take_each_formats_shape() {
    let bodies: Vec<String> = [
        Some(Api::AnthropicMessages),
        Some(Api::OpenaiResponses),
        Some(Api::OpenaiChat),
        Some(Api::Gemini),
        None,
    ]
    .into_iter()
    .map(|api| error_body(api, Refusal::BadRequest, "bad"))
    .collect();
    assert_eq!(
        bodies,
        vec![
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#,
            r#"{"error":{"type":"invalid_request_error","message":"bad","code":null,"param":null}}"#,
            r#"{"error":{"type":"invalid_request_error","message":"bad","code":null,"param":null}}"#,
            r#"{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}"#,
            r#"{"error":{"type":"invalid_request_error","message":"bad","code":null,"param":null}}"#,
        ]
    );
}

#[test]
fn api_names_round_trip() {
    for api in Api::ALL {
        assert_eq!(Api::from_name(api.name()), Some(api));
    }
    assert_eq!(Api::from_name("openai"), None);
}

#[test]
fn errors_quote_at_most_64_characters_of_the_request() {
    let role = "é".repeat(100);
    let body = json!({"messages": [{"role": role, "content": "x"}]});
    assert_eq!(
        post("/v1/messages", &body).unwrap_err().message,
        format!(
            "messages[0]: role `{}…` is none of `user`, `assistant`, `system`",
            "é".repeat(64)
        )
    );
}

#[test]
fn a_codex_mcp_call_goes_out_in_its_namespace_and_comes_back_under_the_joined_name() {
    let reply = WireReply {
        text: None,
        calls: vec![
            ReplyCall {
                id: "call_1_1".to_owned(),
                name: "mcp__harness__read".to_owned(),
                input: CallInput::Json(json!({"path": "a.txt"})),
            },
            ReplyCall {
                id: "call_1_2".to_owned(),
                name: "mcp__x".to_owned(),
                input: CallInput::Json(json!({})),
            },
        ],
        usage: ReplyUsage::default(),
    };
    let body: Value = serde_json::from_str(&encoded("/v1/responses", false, &reply).body).unwrap();
    assert_eq!(
        body["output"],
        json!([
            {"id": "fc_3_1", "type": "function_call", "status": "completed",
                "call_id": "call_1_1", "name": "read", "arguments": "{\"path\":\"a.txt\"}",
                "namespace": "mcp__harness"},
            {"id": "fc_3_2", "type": "function_call", "status": "completed",
                "call_id": "call_1_2", "name": "mcp__x", "arguments": "{}"},
        ])
    );
    let request = post(
        "/v1/responses",
        &json!({"model": "m", "input": [
            {"type": "function_call", "call_id": "c1", "namespace": "mcp__harness",
                "name": "read", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "mcp__fs__ls", "arguments": "{}"},
        ]}),
    )
    .unwrap();
    assert_eq!(
        request.history,
        vec![
            call(Some("c1"), "mcp__harness__read", CallInput::Json(json!({}))),
            call(Some("c2"), "mcp__fs__ls", CallInput::Json(json!({}))),
        ]
    );
}
