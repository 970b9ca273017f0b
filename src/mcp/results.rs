//! A [`ToolResult`] as an MCP `CallToolResult`.
//!
//! `content` carries the text and image blocks exactly as the model gets
//! them in-process, and `isError` is always set (true for every tool error,
//! argument validation included). `structuredContent` is never set: Claude
//! Code uses it instead of `content` when both are present, and would drop
//! the text and the images. The result's `details` go in `_meta` under
//! [`DETAILS_META_KEY`], and a broken invariant of the tool layer (which
//! fails a scenario in-process) under [`INTERNAL_ERROR_META_KEY`].

use rmcp::model::CallToolResult;
use rmcp::model::ContentBlock;
use rmcp::model::JsonObject;
use rmcp::model::MetaObject;
use serde_json::Value;

use crate::tools::Content;
use crate::tools::ToolResult;

/// The `_meta` key of a result that holds its `details` (the JSON that
/// `harness call` prints as `details`).
pub const DETAILS_META_KEY: &str = "harness/details";

/// The `_meta` key of a result that holds the message of a broken
/// invariant in the tool layer (a panic), when there was one.
pub const INTERNAL_ERROR_META_KEY: &str = "harness/internal_error";

/// `result` as `tools/call` answers it.
pub fn call_tool_result(result: ToolResult) -> CallToolResult {
    let ToolResult {
        is_error,
        content,
        details,
        internal_error,
        ..
    } = result;
    let blocks = content
        .into_iter()
        .map(|block| match block {
            Content::Text { text } => ContentBlock::text(text),
            Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        })
        .collect();
    let mut meta = JsonObject::new();
    if let Some(details) = details {
        meta.insert(DETAILS_META_KEY.to_owned(), details);
    }
    if let Some(message) = internal_error {
        meta.insert(INTERNAL_ERROR_META_KEY.to_owned(), Value::from(message));
    }
    let answer = if is_error {
        CallToolResult::error(blocks)
    } else {
        CallToolResult::success(blocks)
    };
    answer.with_meta((!meta.is_empty()).then_some(MetaObject(meta)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolError;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn wire(result: ToolResult) -> Value {
        serde_json::to_value(call_tool_result(result)).unwrap()
    }

    #[test]
    fn text_and_images_go_in_content_and_details_in_meta() {
        let result = ToolResult {
            is_error: false,
            content: vec![
                Content::text("Read image file [image/png]"),
                Content::Image {
                    data: "iVBORw0KGgo=".to_owned(),
                    mime_type: "image/png".to_owned(),
                },
            ],
            details: Some(json!({ "mime_type": "image/png" })),
            internal_error: None,
            facts: None,
            call_id: None,
        };
        assert_eq!(
            wire(result),
            json!({
                "resultType": "complete",
                "content": [
                    { "type": "text", "text": "Read image file [image/png]" },
                    { "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png" }
                ],
                "isError": false,
                "_meta": { "harness/details": { "mime_type": "image/png" } }
            })
        );
    }

    #[test]
    fn an_error_is_an_error_result_and_a_result_without_details_has_no_meta() {
        assert_eq!(
            wire(ToolResult::error("File not found: a.txt.", None)),
            json!({
                "resultType": "complete",
                "content": [{ "type": "text", "text": "File not found: a.txt." }],
                "isError": true
            })
        );
    }

    #[test]
    fn a_broken_invariant_is_named_in_meta() {
        let result = ToolResult::from(ToolError::fatal("the tool panicked: boom"));
        let value = wire(result);
        assert_eq!(
            (&value["isError"], &value["_meta"]),
            (
                &json!(true),
                &json!({ "harness/internal_error": "the tool panicked: boom" })
            )
        );
    }
}
