//! Anthropic Messages (`POST /v1/messages`), as Claude Code and pi speak
//! it.
//!
//! The request: `model`, `stream`, `system` (a string or text blocks),
//! `tools` (`name`, `input_schema`, or a server tool's `type`), and
//! `messages`, each `user`, `assistant` or `system` (Claude Code's
//! environment, added to the system prompt) with a string or blocks: `text`,
//! `image`, `tool_use` (`id`, `name`, `input`) in the assistant's,
//! `tool_result` (`tool_use_id`, `content`, `is_error`) in the user's.
//! Thinking blocks and every field not named here are ignored.
//!
//! The stream: `message_start` (with `usage`), for each block
//! `content_block_start` (`text`, or `tool_use` with an empty `input`),
//! one `content_block_delta` (`text_delta`, or `input_json_delta` whose
//! `partial_json` is the whole argument text), `content_block_stop`; then
//! `message_delta` (`stop_reason` `tool_use` or `end_turn`, `usage`) and
//! `message_stop`, each an `event:` and a `data:` line.

use serde_json::Value;
use serde_json::json;

use super::json::At;
use super::json::join_texts;
use super::json::shown;
use super::reply::Envelope;
use super::reply::ReplyUsage;
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

/// Reads a Messages request body.
pub(super) fn parse(body: &Value) -> Result<WireRequest, WireError> {
    let root = At::root(body);
    let model = root.opt_str("model")?.unwrap_or_default().to_owned();
    let stream = root.opt_bool("stream")?.unwrap_or(false);
    let system = match root.get("system")? {
        None => String::new(),
        Some(at) => texts(&at)?,
    };
    let mut tools = Vec::new();
    for tool in root.items_of("tools")? {
        let name = match tool.opt_str("name")? {
            Some(name) => name,
            None => tool.str_field("type")?,
        };
        tools.push(ToolDef {
            name: name.to_owned(),
            freeform: false,
            definition: tool.value().clone(),
        });
    }
    let mut system = vec![system];
    let mut history = Vec::new();
    for message in root.field("messages")?.items()? {
        let role = message.str_field("role")?;
        let content = message.field("content")?;
        match role {
            "user" => user_content(&content, &mut history)?,
            "assistant" => assistant_content(&content, &mut history)?,
            // Claude Code sends its environment as a system message.
            "system" => system.push(texts(&content)?),
            other => {
                let other = shown(other);
                return Err(message.error(format!(
                    "role `{other}` is none of `user`, `assistant`, `system`"
                )));
            }
        }
    }
    system.retain(|text| !text.is_empty());
    Ok(WireRequest {
        api: Api::AnthropicMessages,
        model,
        stream,
        system: system.join("\n\n"),
        tools,
        history,
    })
}

/// A string, or the texts of text blocks joined by blank lines.
fn texts(content: &At<'_>) -> Result<String, WireError> {
    if let Value::String(text) = content.value() {
        return Ok(text.clone());
    }
    let mut texts = Vec::new();
    for block in content.items()? {
        if let Some(text) = block.opt_str("text")? {
            texts.push(text);
        }
    }
    Ok(texts.join("\n\n"))
}

/// A user message's blocks: its words and images, and tool results, in
/// order.
fn user_content(content: &At<'_>, history: &mut Vec<Item>) -> Result<(), WireError> {
    if let Value::String(text) = content.value() {
        history.push(Item::User {
            text: text.clone(),
            images: Vec::new(),
        });
        return Ok(());
    }
    let mut texts = Vec::new();
    let mut images = Vec::new();
    let flush = |texts: &mut Vec<&str>, images: &mut Vec<Image>, history: &mut Vec<Item>| {
        if !texts.is_empty() || !images.is_empty() {
            history.push(Item::User {
                text: join_texts(std::mem::take(texts)),
                images: std::mem::take(images),
            });
        }
    };
    for block in content.items()? {
        match block.opt_str("type")? {
            Some("text") => texts.push(block.str_field("text")?),
            Some("image") => images.extend(image(&block)?),
            Some("tool_result") => {
                flush(&mut texts, &mut images, history);
                history.push(Item::ToolResult(tool_result(&block)?));
            }
            _ => {}
        }
    }
    flush(&mut texts, &mut images, history);
    Ok(())
}

/// An image block with base64 data (one given by URL is left out).
fn image(block: &At<'_>) -> Result<Option<Image>, WireError> {
    let source = block.field("source")?;
    if source.opt_str("type")? != Some("base64") {
        return Ok(None);
    }
    Ok(Some(Image {
        media_type: source.opt_str("media_type")?.unwrap_or_default().to_owned(),
        data: source.str_field("data")?.to_owned(),
    }))
}

fn tool_result(block: &At<'_>) -> Result<ToolResultItem, WireError> {
    let id = block.str_field("tool_use_id")?.to_owned();
    let mut texts = Vec::new();
    let mut images = Vec::new();
    if let Some(content) = block.get("content")? {
        match content.value() {
            Value::String(text) => texts.push(text.as_str()),
            _ => {
                for part in content.items()? {
                    match part.opt_str("type")? {
                        Some("text") => texts.push(part.str_field("text")?),
                        Some("image") => images.extend(image(&part)?),
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(ToolResultItem {
        id: Some(id),
        name: None,
        text: texts.join("\n"),
        images,
        is_error: Some(block.opt_bool("is_error")?.unwrap_or(false)),
    })
}

/// An assistant message's blocks: text and tool calls, in order.
fn assistant_content(content: &At<'_>, history: &mut Vec<Item>) -> Result<(), WireError> {
    if let Value::String(text) = content.value() {
        history.push(Item::Assistant { text: text.clone() });
        return Ok(());
    }
    let mut texts = Vec::new();
    for block in content.items()? {
        match block.opt_str("type")? {
            Some("text") => texts.push(block.str_field("text")?),
            Some("tool_use") => {
                if !texts.is_empty() {
                    history.push(Item::Assistant {
                        text: join_texts(std::mem::take(&mut texts)),
                    });
                }
                history.push(Item::ToolCall(ToolCallItem {
                    id: Some(block.str_field("id")?.to_owned()),
                    name: block.str_field("name")?.to_owned(),
                    input: CallInput::Json(
                        block
                            .get("input")?
                            .map_or(json!({}), |at| at.value().clone()),
                    ),
                }));
            }
            _ => {}
        }
    }
    if !texts.is_empty() {
        history.push(Item::Assistant {
            text: join_texts(texts),
        });
    }
    Ok(())
}

fn usage_json(usage: ReplyUsage) -> Value {
    json!({
        "input_tokens": usage.input.saturating_sub(usage.cache_read),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.output,
    })
}

fn stop_reason(reply: &WireReply) -> &'static str {
    if reply.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

fn message_id(envelope: &Envelope) -> String {
    format!("msg_{}", envelope.serial)
}

/// The answer as a Messages event stream.
pub(super) fn stream(reply: &WireReply, envelope: &Envelope) -> String {
    let mut sse = Sse::default();
    let start_usage = ReplyUsage {
        output: 0,
        ..reply.usage
    };
    sse.event(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": message_id(envelope),
                "type": "message",
                "role": "assistant",
                "model": envelope.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage_json(start_usage),
            },
        }),
    );
    let mut index = 0;
    let mut block = |sse: &mut Sse, start: Value, delta: Value| {
        sse.event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        sse.event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        );
        sse.event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        );
        index += 1;
    };
    if let Some(text) = &reply.text {
        block(
            &mut sse,
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
        );
    }
    for call in &reply.calls {
        block(
            &mut sse,
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": call.input.to_text()}),
        );
    }
    sse.event(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
            "usage": usage_json(reply.usage),
        }),
    );
    sse.event("message_stop", &json!({"type": "message_stop"}));
    sse.finish()
}

/// The answer as one Messages response.
pub(super) fn json(reply: &WireReply, envelope: &Envelope) -> Value {
    let mut content = Vec::new();
    if let Some(text) = &reply.text {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in &reply.calls {
        content.push(json!({
            "type": "tool_use",
            "id": call.id,
            "name": call.name,
            "input": call.input.to_value(),
        }));
    }
    json!({
        "id": message_id(envelope),
        "type": "message",
        "role": "assistant",
        "model": envelope.model,
        "content": content,
        "stop_reason": stop_reason(reply),
        "stop_sequence": null,
        "usage": usage_json(reply.usage),
    })
}

/// An error body in the format's shape.
pub(super) fn error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
