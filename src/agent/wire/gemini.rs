//! Gemini (`POST /v1beta/models/M:streamGenerateContent?alt=sse` and
//! `:generateContent`), as Gemini CLI and pi speak it.
//!
//! The model and whether to stream come from the path. The body:
//! `systemInstruction` (`parts` with `text`, or a string), `tools` (each
//! with `functionDeclarations`, or a built-in tool named by its key), and
//! `contents`, each `user` or `model` with `parts`: `text` (a `thought`
//! part is reasoning, left out), `inlineData` (`mimeType`, `data`),
//! `functionCall` (`name`, `args`, an `id` when the agent gave one) in the
//! model's, `functionResponse` (`name`, `id`, `response` with `output` or,
//! on failure, `error`) in the user's. An `inlineData` part next to a
//! `functionResponse` belongs to that result. Every field not named here
//! is ignored.
//!
//! The answer is one `GenerateContentResponse`: `candidates[0].content`
//! with a `text` part and a `functionCall` part per call (`name`, `args`;
//! no id: the agent makes its own), `finishReason: "STOP"`, and
//! `usageMetadata`. Streamed, it is one `data:` line.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::json::At;
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

/// Reads a Gemini request body; `model` and `stream` come from the path.
pub(super) fn parse(body: &Value, model: &str, stream: bool) -> Result<WireRequest, WireError> {
    let root = At::root(body);
    let system = match root.get("systemInstruction")? {
        None => String::new(),
        Some(at) => match at.value() {
            Value::String(text) => text.clone(),
            _ => {
                let mut texts = Vec::new();
                for part in at.items_of("parts")? {
                    if let Some(text) = part.opt_str("text")? {
                        texts.push(text);
                    }
                }
                texts.join("\n\n")
            }
        },
    };
    let mut tools = Vec::new();
    for tool in root.items_of("tools")? {
        let declarations = tool.items_of("functionDeclarations")?;
        if declarations.is_empty() {
            for key in tool.object()?.keys() {
                tools.push(ToolDef {
                    name: key.clone(),
                    freeform: false,
                    definition: tool.value().clone(),
                });
            }
        }
        for declaration in declarations {
            tools.push(ToolDef {
                name: declaration.str_field("name")?.to_owned(),
                freeform: false,
                definition: declaration.value().clone(),
            });
        }
    }
    let mut history = Vec::new();
    for content in root.field("contents")?.items()? {
        match content.opt_str("role")?.unwrap_or("user") {
            "model" => model_parts(&content, &mut history)?,
            "user" | "function" => user_parts(&content, &mut history)?,
            other => {
                let other = shown(other);
                return Err(content.error(format!("role `{other}` is neither `user` nor `model`")));
            }
        }
    }
    Ok(WireRequest {
        api: Api::Gemini,
        model: model.to_owned(),
        stream,
        system,
        tools,
        history,
    })
}

fn inline_image(part: &At<'_>) -> Result<Option<Image>, WireError> {
    let Some(data) = part.get("inlineData")? else {
        return Ok(None);
    };
    Ok(Some(Image {
        media_type: data.opt_str("mimeType")?.unwrap_or_default().to_owned(),
        data: data.opt_str("data")?.unwrap_or_default().to_owned(),
    }))
}

fn user_parts(content: &At<'_>, history: &mut Vec<Item>) -> Result<(), WireError> {
    let mut texts = Vec::new();
    let mut images = Vec::new();
    // The index in `history` of the last result of this content.
    let mut last_result: Option<usize> = None;
    for part in content.items_of("parts")? {
        if let Some(text) = part.opt_str("text")? {
            texts.push(text);
        } else if let Some(image) = inline_image(&part)? {
            match last_result.and_then(|index| history.get_mut(index)) {
                Some(Item::ToolResult(result)) => result.images.push(image),
                _ => images.push(image),
            }
        } else if let Some(response) = part.get("functionResponse")? {
            history.push(Item::ToolResult(function_response(&response)?));
            last_result = Some(history.len() - 1);
        }
    }
    if !texts.is_empty() || !images.is_empty() {
        history.push(Item::User {
            text: join_texts(texts),
            images,
        });
    }
    Ok(())
}

/// A value as text: a string as it is, anything else as compact JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn function_response(at: &At<'_>) -> Result<ToolResultItem, WireError> {
    let response = at.get("response")?;
    let (text, is_error) = match &response {
        None => (String::new(), false),
        Some(response) => match (response.get("error")?, response.get("output")?) {
            (Some(error), _) => (text_of(error.value()), true),
            (None, Some(output)) => (text_of(output.value()), false),
            (None, None) => (text_of(response.value()), false),
        },
    };
    let mut images = Vec::new();
    for part in at.items_of("parts")? {
        images.extend(inline_image(&part)?);
    }
    Ok(ToolResultItem {
        id: at.opt_str("id")?.map(str::to_owned),
        name: at.opt_str("name")?.map(str::to_owned),
        text,
        images,
        is_error: Some(is_error),
    })
}

fn model_parts(content: &At<'_>, history: &mut Vec<Item>) -> Result<(), WireError> {
    let mut texts = Vec::new();
    for part in content.items_of("parts")? {
        if let Some(call) = part.get("functionCall")? {
            if !texts.is_empty() {
                history.push(Item::Assistant {
                    text: join_texts(std::mem::take(&mut texts)),
                });
            }
            history.push(Item::ToolCall(ToolCallItem {
                id: call.opt_str("id")?.map(str::to_owned),
                name: call.str_field("name")?.to_owned(),
                input: CallInput::Json(
                    call.get("args")?
                        .map_or_else(|| json!({}), |args| args.value().clone()),
                ),
            }));
        } else if let Some(text) = part.opt_str("text")?
            && part.opt_bool("thought")? != Some(true)
        {
            texts.push(text);
        }
    }
    if !texts.is_empty() {
        history.push(Item::Assistant {
            text: join_texts(texts),
        });
    }
    Ok(())
}

/// The answer as one `GenerateContentResponse`.
pub(super) fn json(reply: &WireReply, envelope: &Envelope) -> Value {
    let mut parts = Vec::new();
    if let Some(text) = &reply.text {
        parts.push(json!({"text": text}));
    }
    for call in &reply.calls {
        parts.push(json!({"functionCall": {"name": call.name, "args": call.input.to_value()}}));
    }
    let usage = reply.usage;
    let mut metadata = Map::new();
    metadata.insert("promptTokenCount".to_owned(), json!(usage.input));
    metadata.insert("candidatesTokenCount".to_owned(), json!(usage.output));
    metadata.insert(
        "totalTokenCount".to_owned(),
        json!(usage.input + usage.output),
    );
    if usage.cache_read > 0 {
        metadata.insert(
            "cachedContentTokenCount".to_owned(),
            json!(usage.cache_read),
        );
    }
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": parts},
            "finishReason": "STOP",
            "index": 0,
        }],
        "usageMetadata": metadata,
        "modelVersion": envelope.model,
        "responseId": format!("harness-{}", envelope.serial),
    })
}

/// The answer streamed: one `data:` line.
pub(super) fn stream(reply: &WireReply, envelope: &Envelope) -> String {
    let mut sse = Sse::default();
    sse.data(&json(reply, envelope));
    sse.finish()
}

/// An error body in the format's shape.
pub(super) fn error(code: u16, status: &str, message: &str) -> Value {
    json!({"error": {"code": code, "message": message, "status": status}})
}
