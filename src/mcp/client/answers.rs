//! A server's answer to `tools/call` as the [`ToolResult`] the model gets.
//!
//! - `content`: text blocks as they are, images as image blocks; audio,
//!   resource links and embedded resources as one text block each (see
//!   [`content_block`]).
//! - `isError: true` is an error result.
//! - `details`: when `_meta` holds [`DETAILS_META_KEY`] (a result of
//!   `harness mcp`), exactly those details, as if the tool had run
//!   in-process (and [`INTERNAL_ERROR_META_KEY`] is the result's internal
//!   error). Otherwise an object of what the result carried besides
//!   `content`: `structured_content`, `structured_content_duplicates_text`
//!   (whether it only repeats the text, as servers that copy their text
//!   into it do: it is reported, never priced), and `meta` (its `_meta`).
//! - A JSON-RPC error instead of a result is an error result whose text
//!   says so, with `details.jsonrpc_error` holding its code, message and
//!   data.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::super::results::DETAILS_META_KEY;
use super::super::results::INTERNAL_ERROR_META_KEY;
use crate::tools::Content;
use crate::tools::ToolResult;

/// `details.error_class` of a call the server answered with a JSON-RPC
/// error.
pub const JSONRPC_ERROR_CLASS: &str = "mcp_jsonrpc_error";

/// The result of a `tools/call` answer (`result` is its JSON: a
/// `CallToolResult`).
pub fn tool_result(result: &Value) -> ToolResult {
    let content = result
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| blocks.iter().map(content_block).collect())
        .unwrap_or_default();
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let meta = result.get("_meta").and_then(Value::as_object);
    let mut answer = ToolResult {
        facts: None,
        call_id: None,
        is_error,
        content,
        details: None,
        internal_error: None,
    };
    if let Some(meta) = meta
        && let Some(details) = meta.get(DETAILS_META_KEY)
    {
        answer.details = Some(details.clone());
        answer.internal_error = meta
            .get(INTERNAL_ERROR_META_KEY)
            .map(|message| match message {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            });
        return answer;
    }
    if answer.internal_error.is_none()
        && let Some(Value::String(message)) = meta.and_then(|m| m.get(INTERNAL_ERROR_META_KEY))
    {
        answer.internal_error = Some(message.clone());
    }
    let mut details = Map::new();
    if let Some(structured) = result.get("structuredContent") {
        let duplicates = duplicates_text(structured, &answer.text());
        details.insert("structured_content".to_owned(), structured.clone());
        details.insert(
            "structured_content_duplicates_text".to_owned(),
            Value::Bool(duplicates),
        );
    }
    if let Some(meta) = meta.filter(|m| !m.is_empty()) {
        details.insert("meta".to_owned(), Value::Object(meta.clone()));
    }
    answer.details = (!details.is_empty()).then_some(Value::Object(details));
    answer
}

/// Whether `structured` only repeats `text`: it is the text itself, the
/// JSON the text holds, or an object or array whose only string is the
/// text.
fn duplicates_text(structured: &Value, text: &str) -> bool {
    if text.is_empty() {
        return false;
    }
    if structured.as_str() == Some(text) {
        return true;
    }
    if serde_json::from_str::<Value>(text).is_ok_and(|parsed| &parsed == structured) {
        return true;
    }
    let mut strings = Vec::new();
    collect_strings(structured, &mut strings);
    strings.len() == 1 && strings[0] == text
}

fn collect_strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// One content block as the model gets it:
///
/// - `text`: its text; `image`: an image block (its `data` and `mimeType`);
/// - `audio`: `[audio MIME: N bytes of base64 data]`;
/// - `resource_link`: `[resource link URI: NAME — DESCRIPTION (MIME)]`
///   (the parts it has);
/// - `resource` (embedded): `[resource URI]` then a newline and its text,
///   or `[resource URI: MIME, N bytes of base64 data]` for a blob;
/// - anything else: `[TYPE content]`.
pub fn content_block(block: &Value) -> Content {
    let field = |value: &Value, key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let kind = field(block, "type");
    match kind.as_str() {
        "text" => Content::text(field(block, "text")),
        "image" => Content::Image {
            data: field(block, "data"),
            mime_type: field(block, "mimeType"),
        },
        "audio" => Content::text(format!(
            "[audio {}: {} bytes of base64 data]",
            field(block, "mimeType"),
            field(block, "data").len()
        )),
        "resource_link" => {
            let mut text = format!("[resource link {}", field(block, "uri"));
            let name = field(block, "name");
            let description = field(block, "description");
            let mime = field(block, "mimeType");
            if !name.is_empty() {
                text.push_str(&format!(": {name}"));
            }
            if !description.is_empty() {
                text.push_str(&format!(" — {description}"));
            }
            if !mime.is_empty() {
                text.push_str(&format!(" ({mime})"));
            }
            text.push(']');
            Content::text(text)
        }
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = field(&resource, "uri");
            match resource.get("text").and_then(Value::as_str) {
                Some(body) => Content::text(format!("[resource {uri}]\n{body}")),
                None => Content::text(format!(
                    "[resource {uri}: {}, {} bytes of base64 data]",
                    field(&resource, "mimeType"),
                    field(&resource, "blob").len()
                )),
            }
        }
        other => Content::text(format!("[{other} content]")),
    }
}

/// The error result of a JSON-RPC error answer.
pub fn jsonrpc_error(code: i32, message: &str, data: Option<&Value>) -> ToolResult {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data.clone();
    }
    ToolResult::error(
        format!(
            "The MCP server answered with JSON-RPC error {code} instead of a result: {message}"
        ),
        Some(json!({ "error_class": JSONRPC_ERROR_CLASS, "jsonrpc_error": error })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn content_and_is_error_pass_and_structured_content_and_meta_are_details() {
        let result = tool_result(&json!({
            "content": [
                { "type": "text", "text": "{\"now\":\"12:00\"}" },
                { "type": "image", "data": "AAAA", "mimeType": "image/png" }
            ],
            "structuredContent": { "now": "12:00" },
            "isError": true,
            "_meta": { "trace": 7 }
        }));
        assert_eq!(
            result,
            ToolResult {
                facts: None,
                call_id: None,
                is_error: true,
                content: vec![
                    Content::text("{\"now\":\"12:00\"}"),
                    Content::Image {
                        data: "AAAA".to_owned(),
                        mime_type: "image/png".to_owned()
                    }
                ],
                details: Some(json!({
                    "structured_content": { "now": "12:00" },
                    "structured_content_duplicates_text": true,
                    "meta": { "trace": 7 }
                })),
                internal_error: None,
            }
        );
    }

    #[test]
    fn harness_details_in_meta_are_the_details() {
        let result = tool_result(&json!({
            "content": [{ "type": "text", "text": "x" }],
            "isError": false,
            "_meta": { "harness/details": { "truncation": { "truncated": true } } }
        }));
        assert_eq!(
            (result.is_error, result.details, result.internal_error),
            (
                false,
                Some(json!({ "truncation": { "truncated": true } })),
                None
            )
        );
        let broken = tool_result(&json!({
            "content": [],
            "isError": true,
            "_meta": { "harness/internal_error": "boom" }
        }));
        assert_eq!(broken.internal_error.as_deref(), Some("boom"));
    }

    #[test]
    fn a_result_with_only_content_has_no_details_and_is_not_an_error() {
        let result = tool_result(&json!({ "content": [{ "type": "text", "text": "hi" }] }));
        assert_eq!(result, ToolResult::ok(crate::tools::ToolOutput::text("hi")));
    }

    #[test]
    fn structured_content_that_says_more_than_the_text_is_no_duplicate() {
        assert!(duplicates_text(&json!({ "content": "abc" }), "abc"));
        assert!(duplicates_text(&json!("abc"), "abc"));
        assert!(duplicates_text(&json!([1, 2]), "[1,2]"));
        assert!(!duplicates_text(&json!({ "a": "abc", "b": "d" }), "abc"));
        assert!(!duplicates_text(&json!({ "n": 1 }), ""));
    }

    #[test]
    fn other_blocks_become_text() {
        let texts: Vec<Content> = [
            json!({ "type": "audio", "data": "AAAA", "mimeType": "audio/wav" }),
            json!({ "type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain" }),
            json!({ "type": "resource_link", "uri": "file:///b", "name": "b", "description": "bee" }),
            json!({ "type": "resource", "resource": { "uri": "test://1", "text": "body" } }),
            json!({ "type": "resource", "resource": { "uri": "test://2", "blob": "AAAA", "mimeType": "application/octet-stream" } }),
            json!({ "type": "hologram" }),
        ]
        .iter()
        .map(content_block)
        .collect();
        assert_eq!(
            texts,
            [
                "[audio audio/wav: 4 bytes of base64 data]",
                "[resource link file:///a: a (text/plain)]",
                "[resource link file:///b: b — bee]",
                "[resource test://1]\nbody",
                "[resource test://2: application/octet-stream, 4 bytes of base64 data]",
                "[hologram content]",
            ]
            .map(Content::text)
        );
    }

    #[test]
    fn a_jsonrpc_error_says_so_and_keeps_code_and_message() {
        let result = jsonrpc_error(-32602, "Unknown tool: x", Some(&json!({ "tool": "x" })));
        assert_eq!(
            (result.is_error, result.text(), result.details),
            (
                true,
                "The MCP server answered with JSON-RPC error -32602 instead of a result: \
                 Unknown tool: x"
                    .to_owned(),
                Some(json!({
                    "error_class": "mcp_jsonrpc_error",
                    "jsonrpc_error": { "code": -32602, "message": "Unknown tool: x", "data": { "tool": "x" } }
                }))
            )
        );
    }
}
