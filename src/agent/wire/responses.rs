//! OpenAI Responses (`POST /v1/responses`), as Codex and pi speak it.
//!
//! The request: `model`, `stream`, `instructions`, `tools` (`function`
//! tools with `name` and `parameters`, `custom` tools whose input is free
//! text, and built-in tools named by their `type`), and `input`: a string,
//! or items: messages (`role` `user`, `assistant`, `system` or
//! `developer`; `content` a string or `input_text`, `output_text` and
//! `input_image` parts), `function_call` (`call_id`, `name`, `arguments`
//! as text, and a `namespace` joined to the name: Codex's `mcp__harness`
//! and `read` are the call `mcp__harness__read`), `custom_tool_call` (`call_id`, `name`, `input`),
//! `function_call_output` and `custom_tool_call_output` (`call_id`,
//! `output`: a string or parts). Reasoning items and every field not named
//! here are ignored. The format has no error flag on a result.
//!
//! The stream, every event an `event:` and a `data:` line carrying its
//! `sequence_number` (0, 1, …): `response.created`; for each output item
//! `response.output_item.added`, its deltas and their end
//! (`response.content_part.added`, `response.output_text.delta`,
//! `response.output_text.done`, `response.content_part.done` for text;
//! `response.function_call_arguments.delta` and `.done` for a
//! `function_call`; `response.custom_tool_call_input.delta` and `.done`
//! for a `custom_tool_call`), `response.output_item.done` with the whole
//! item; then `response.completed` with every item and the `usage`. A
//! call named `mcp__SERVER__TOOL` goes out as Codex declares an MCP
//! server's tools, `namespace: "mcp__SERVER"` and `name: "TOOL"`.

use serde_json::Value;
use serde_json::json;

use super::json::At;
use super::json::data_url;
use super::json::join_texts;
use super::json::shown;
use super::reply::Envelope;
use super::reply::ReplyCall;
use super::reply::Sse;
use super::reply::WireReply;
use super::request::Api;
use super::request::CallInput;
use super::request::Image;
use super::request::Item;
use super::request::ToolCallItem;
use super::request::ToolDef;
use super::request::ToolResultItem;
use super::request::WireError;
use super::request::WireRequest;

/// Reads a Responses request body.
pub(super) fn parse(body: &Value) -> Result<WireRequest, WireError> {
    let root = At::root(body);
    let model = root.opt_str("model")?.unwrap_or_default().to_owned();
    let stream = root.opt_bool("stream")?.unwrap_or(false);
    let mut system = Vec::new();
    if let Some(text) = root.opt_str("instructions")? {
        system.push(text.to_owned());
    }
    let mut tools = Vec::new();
    for tool in root.items_of("tools")? {
        let kind = tool.opt_str("type")?;
        let name = match (tool.opt_str("name")?, kind) {
            (Some(name), _) | (None, Some(name)) => name,
            (None, None) => return Err(tool.error("a tool has neither `name` nor `type`")),
        };
        tools.push(ToolDef {
            name: name.to_owned(),
            freeform: kind == Some("custom"),
            definition: tool.value().clone(),
        });
    }
    let mut history = Vec::new();
    let input = root.field("input")?;
    if let Value::String(text) = input.value() {
        history.push(Item::User {
            text: text.clone(),
            images: Vec::new(),
        });
    } else {
        for item in input.items()? {
            read_item(&item, &mut system, &mut history)?;
        }
    }
    Ok(WireRequest {
        api: Api::OpenaiResponses,
        model,
        stream,
        system: system.join("\n\n"),
        tools,
        history,
    })
}

fn read_item(
    item: &At<'_>,
    system: &mut Vec<String>,
    history: &mut Vec<Item>,
) -> Result<(), WireError> {
    let kind = item.opt_str("type")?;
    match kind {
        None | Some("message") => {
            let role = item.str_field("role")?;
            let (text, images) = parts(&item.field("content")?)?;
            match role {
                "user" => history.push(Item::User { text, images }),
                "assistant" => history.push(Item::Assistant { text }),
                "system" | "developer" => system.push(text),
                other => {
                    let other = shown(other);
                    return Err(item.error(format!(
                        "role `{other}` is none of `user`, `assistant`, `system`, `developer`"
                    )));
                }
            }
        }
        Some("function_call") => history.push(Item::ToolCall(ToolCallItem {
            id: Some(item.str_field("call_id")?.to_owned()),
            name: joined(item.opt_str("namespace")?, item.str_field("name")?),
            input: CallInput::from_arguments(item.opt_str("arguments")?.unwrap_or_default()),
        })),
        Some("custom_tool_call") => history.push(Item::ToolCall(ToolCallItem {
            id: Some(item.str_field("call_id")?.to_owned()),
            name: item.str_field("name")?.to_owned(),
            input: CallInput::Freeform(item.opt_str("input")?.unwrap_or_default().to_owned()),
        })),
        Some("function_call_output" | "custom_tool_call_output") => {
            let (text, images) = match item.get("output")? {
                Some(output) => parts(&output)?,
                None => (String::new(), Vec::new()),
            };
            history.push(Item::ToolResult(ToolResultItem {
                id: Some(item.str_field("call_id")?.to_owned()),
                name: None,
                text,
                images,
                is_error: None,
            }));
        }
        Some(_) => {}
    }
    Ok(())
}

/// A content value: a string, or parts whose texts are joined by newlines.
fn parts(content: &At<'_>) -> Result<(String, Vec<Image>), WireError> {
    if let Value::String(text) = content.value() {
        return Ok((text.clone(), Vec::new()));
    }
    let mut texts = Vec::new();
    let mut images = Vec::new();
    for part in content.items()? {
        match part.opt_str("type")? {
            Some("input_text" | "output_text" | "text" | "refusal") => {
                texts.push(match part.opt_str("text")? {
                    Some(text) => text,
                    None => part.opt_str("refusal")?.unwrap_or_default(),
                });
            }
            Some("input_image") => {
                if let Some((media_type, data)) = part.opt_str("image_url")?.and_then(data_url) {
                    images.push(Image {
                        media_type: media_type.to_owned(),
                        data: data.to_owned(),
                    });
                }
            }
            _ => {}
        }
    }
    Ok((join_texts(texts), images))
}

fn response_id(envelope: &Envelope) -> String {
    format!("resp_{}", envelope.serial)
}

/// The output items of the answer, completed, each with its id.
fn output_items(reply: &WireReply, envelope: &Envelope) -> Vec<Value> {
    let mut items = Vec::new();
    if let Some(text) = &reply.text {
        items.push(json!({
            "id": format!("msg_{}_0", envelope.serial),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }));
    }
    for (index, call) in reply.calls.iter().enumerate() {
        items.push(call_item(call, envelope.serial, index + 1, "completed"));
    }
    items
}

fn call_item(call: &ReplyCall, serial: u64, index: usize, status: &str) -> Value {
    let done = status == "completed";
    match &call.input {
        CallInput::Freeform(text) => json!({
            "id": format!("ctc_{serial}_{index}"),
            "type": "custom_tool_call",
            "status": status,
            "call_id": call.id,
            "name": call.name,
            "input": if done { text.as_str() } else { "" },
        }),
        input => {
            let mut item = json!({
                "id": format!("fc_{serial}_{index}"),
                "type": "function_call",
                "status": status,
                "call_id": call.id,
                "name": call.name,
                "arguments": if done { input.to_text() } else { String::new() },
            });
            if let Some((namespace, name)) = split_namespace(&call.name) {
                item["namespace"] = json!(namespace);
                item["name"] = json!(name);
            }
            item
        }
    }
}

/// An MCP tool's call as Codex names it (`mcp__SERVER__TOOL`) split into
/// the namespace Codex declares the server's tools in (`mcp__SERVER`) and
/// the tool's name there: Codex runs a call of a namespaced tool only
/// with its `namespace` given.
fn split_namespace(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let at = rest.find("__")?;
    let tool = &rest[at + 2..];
    (at > 0 && !tool.is_empty()).then(|| (&name[..5 + at], tool))
}

/// A call's name with its namespace, as the script names it.
fn joined(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(namespace) if !namespace.is_empty() && !name.starts_with(namespace) => {
            format!("{namespace}__{name}")
        }
        _ => name.to_owned(),
    }
}

fn response(reply: &WireReply, envelope: &Envelope, status: &str, output: Vec<Value>) -> Value {
    let usage = reply.usage;
    let usage = if status == "completed" {
        json!({
            "input_tokens": usage.input,
            "input_tokens_details": {"cached_tokens": usage.cache_read},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input + usage.output,
        })
    } else {
        Value::Null
    };
    json!({
        "id": response_id(envelope),
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": envelope.model,
        "output": output,
        "usage": usage,
    })
}

/// Numbered events.
struct Events {
    sse: Sse,
    next: u64,
}

impl Events {
    fn send(&mut self, name: &str, mut data: Value) {
        if let Value::Object(map) = &mut data {
            let mut ordered = serde_json::Map::new();
            ordered.insert("type".to_owned(), Value::String(name.to_owned()));
            ordered.insert("sequence_number".to_owned(), json!(self.next));
            ordered.extend(std::mem::take(map));
            *map = ordered;
        }
        self.next += 1;
        self.sse.event(name, &data);
    }
}

/// The answer as a Responses event stream.
pub(super) fn stream(reply: &WireReply, envelope: &Envelope) -> String {
    let mut events = Events {
        sse: Sse::default(),
        next: 0,
    };
    events.send(
        "response.created",
        json!({"response": response(reply, envelope, "in_progress", Vec::new())}),
    );
    let items = output_items(reply, envelope);
    let mut output_index = 0;
    if let Some(text) = &reply.text {
        let id = format!("msg_{}_0", envelope.serial);
        let part = |text: &str| json!({"type": "output_text", "text": text, "annotations": []});
        events.send(
            "response.output_item.added",
            json!({"output_index": output_index, "item": {
                "id": id, "type": "message", "status": "in_progress", "role": "assistant",
                "content": [],
            }}),
        );
        let at = json!({"item_id": id, "output_index": output_index, "content_index": 0});
        let with = |extra: Value| {
            let mut value = at.clone();
            if let (Value::Object(map), Value::Object(extra)) = (&mut value, extra) {
                map.extend(extra);
            }
            value
        };
        events.send(
            "response.content_part.added",
            with(json!({"part": part("")})),
        );
        events.send(
            "response.output_text.delta",
            with(json!({"delta": text, "logprobs": []})),
        );
        events.send(
            "response.output_text.done",
            with(json!({"text": text, "logprobs": []})),
        );
        events.send(
            "response.content_part.done",
            with(json!({"part": part(text)})),
        );
        events.send(
            "response.output_item.done",
            json!({"output_index": output_index, "item": items[0]}),
        );
        output_index += 1;
    }
    for (index, call) in reply.calls.iter().enumerate() {
        let item = call_item(call, envelope.serial, index + 1, "in_progress");
        let id = item["id"].clone();
        events.send(
            "response.output_item.added",
            json!({"output_index": output_index, "item": item}),
        );
        let (delta, done, field) = match &call.input {
            CallInput::Freeform(_) => (
                "response.custom_tool_call_input.delta",
                "response.custom_tool_call_input.done",
                "input",
            ),
            _ => (
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "arguments",
            ),
        };
        let text = call.input.to_text();
        events.send(
            delta,
            json!({"item_id": id, "output_index": output_index, "delta": text}),
        );
        events.send(
            done,
            json!({"item_id": id, "output_index": output_index, field: text}),
        );
        events.send(
            "response.output_item.done",
            json!({"output_index": output_index, "item": items[output_index]}),
        );
        output_index += 1;
    }
    events.send(
        "response.completed",
        json!({"response": response(reply, envelope, "completed", items)}),
    );
    events.sse.finish()
}

/// The answer as one Responses response.
pub(super) fn json(reply: &WireReply, envelope: &Envelope) -> Value {
    response(reply, envelope, "completed", output_items(reply, envelope))
}

/// An error body in the format's shape.
pub(super) fn error(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "message": message, "code": null, "param": null}})
}
