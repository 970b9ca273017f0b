//! OpenAI Chat Completions (`POST /v1/chat/completions`), as pi speaks it.
//!
//! The request: `model`, `stream`, `tools` (`function` tools, their name in
//! `function.name`; `custom` tools in `custom.name`), and `messages`:
//! `system` and `developer` (the system prompt), `user` (a string, or
//! `text` and `image_url` parts), `assistant` (its text, and `tool_calls`:
//! `id`, `function.name`, `function.arguments` as text), `tool`
//! (`tool_call_id`, `content`). Every field not named here is ignored. The
//! format has no error flag on a result.
//!
//! The stream is `data:` lines only: a chunk with the assistant's role, one
//! with the text, one per tool call (`delta.tool_calls[0]` with its
//! `index`, `id`, `function.name` and the whole `arguments`), one with the
//! `finish_reason` (`tool_calls` or `stop`), one with the `usage` and no
//! choices, and `data: [DONE]`.

use serde_json::Value;
use serde_json::json;

use super::json::At;
use super::json::data_url;
use super::json::join_texts;
use super::json::shown;
use super::reply::Envelope;
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

/// Reads a Chat Completions request body.
pub(super) fn parse(body: &Value) -> Result<WireRequest, WireError> {
    let root = At::root(body);
    let model = root.opt_str("model")?.unwrap_or_default().to_owned();
    let stream = root.opt_bool("stream")?.unwrap_or(false);
    let mut tools = Vec::new();
    for tool in root.items_of("tools")? {
        let kind = tool.opt_str("type")?;
        let named = |key: &str| -> Result<Option<&str>, WireError> {
            match tool.get(key)? {
                Some(inner) => inner.opt_str("name"),
                None => Ok(None),
            }
        };
        let name = match (named("function")?, named("custom")?, kind) {
            (Some(name), _, _) | (None, Some(name), _) | (None, None, Some(name)) => name,
            (None, None, None) => {
                return Err(tool.error("a tool has neither `function.name` nor `type`"));
            }
        };
        tools.push(ToolDef {
            name: name.to_owned(),
            freeform: kind == Some("custom"),
            definition: tool.value().clone(),
        });
    }
    let mut system = Vec::new();
    let mut history = Vec::new();
    for message in root.field("messages")?.items()? {
        let role = message.str_field("role")?;
        let (text, images) = match message.get("content")? {
            Some(content) => parts(&content)?,
            None => (String::new(), Vec::new()),
        };
        match role {
            "system" | "developer" => system.push(text),
            "user" => history.push(Item::User { text, images }),
            "assistant" => {
                if !text.is_empty() {
                    history.push(Item::Assistant { text });
                }
                for call in message.items_of("tool_calls")? {
                    let function = call.field("function")?;
                    history.push(Item::ToolCall(ToolCallItem {
                        id: Some(call.str_field("id")?.to_owned()),
                        name: function.str_field("name")?.to_owned(),
                        input: CallInput::from_arguments(
                            function.opt_str("arguments")?.unwrap_or_default(),
                        ),
                    }));
                }
            }
            "tool" => history.push(Item::ToolResult(ToolResultItem {
                id: Some(message.str_field("tool_call_id")?.to_owned()),
                name: None,
                text,
                images,
                is_error: None,
            })),
            other => {
                let other = shown(other);
                return Err(message.error(format!(
                    "role `{other}` is none of `system`, `developer`, `user`, `assistant`, `tool`"
                )));
            }
        }
    }
    Ok(WireRequest {
        api: Api::OpenaiChat,
        model,
        stream,
        system: system.join("\n\n"),
        tools,
        history,
    })
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
            Some("text") => texts.push(part.str_field("text")?),
            Some("image_url") => {
                let url = match part.get("image_url")? {
                    Some(at) => match at.value() {
                        Value::String(url) => Some(url.as_str()),
                        _ => at.opt_str("url")?,
                    },
                    None => None,
                };
                if let Some((media_type, data)) = url.and_then(data_url) {
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

fn finish_reason(reply: &WireReply) -> &'static str {
    if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

fn usage_json(reply: &WireReply) -> Value {
    let usage = reply.usage;
    json!({
        "prompt_tokens": usage.input,
        "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.output,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read},
    })
}

fn call_json(reply: &WireReply) -> Vec<Value> {
    reply
        .calls
        .iter()
        .map(|call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.input.to_text()},
            })
        })
        .collect()
}

/// The answer as a Chat Completions stream.
pub(super) fn stream(reply: &WireReply, envelope: &Envelope) -> String {
    let mut sse = Sse::default();
    let chunk = |choices: Value| {
        json!({
            "id": format!("chatcmpl-{}", envelope.serial),
            "object": "chat.completion.chunk",
            "created": 0,
            "model": envelope.model,
            "choices": choices,
        })
    };
    let delta = |delta: Value, finish: Value| {
        chunk(json!([{"index": 0, "delta": delta, "finish_reason": finish}]))
    };
    sse.data(&delta(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ));
    if let Some(text) = &reply.text {
        sse.data(&delta(json!({"content": text}), Value::Null));
    }
    for (index, call) in call_json(reply).into_iter().enumerate() {
        let mut call = call;
        if let Value::Object(map) = &mut call {
            let mut ordered = serde_json::Map::new();
            ordered.insert("index".to_owned(), json!(index));
            ordered.extend(std::mem::take(map));
            *map = ordered;
        }
        sse.data(&delta(json!({"tool_calls": [call]}), Value::Null));
    }
    sse.data(&delta(json!({}), json!(finish_reason(reply))));
    let mut usage = chunk(json!([]));
    if let Value::Object(map) = &mut usage {
        map.insert("usage".to_owned(), usage_json(reply));
    }
    sse.data(&usage);
    sse.data_text("[DONE]");
    sse.finish()
}

/// The answer as one Chat Completions response.
pub(super) fn json(reply: &WireReply, envelope: &Envelope) -> Value {
    let mut message = json!({"role": "assistant", "content": reply.text});
    let calls = call_json(reply);
    if !calls.is_empty()
        && let Value::Object(map) = &mut message
    {
        map.insert("tool_calls".to_owned(), Value::Array(calls));
    }
    json!({
        "id": format!("chatcmpl-{}", envelope.serial),
        "object": "chat.completion",
        "created": 0,
        "model": envelope.model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(reply)}],
        "usage": usage_json(reply),
    })
}

/// An error body in the format's shape.
pub(super) fn error(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "message": message, "code": null, "param": null}})
}
