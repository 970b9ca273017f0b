//! What a client sees of a server's resources and prompts, for the steps
//! that check them: `resources/list` and `prompts/list` (every page,
//! merged), `resources/read` and `prompts/get`.
//!
//! Each answer is a [`ToolResult`] whose text is the result's JSON,
//! pretty-printed with two-space indents and the keys in the order the
//! server gave them (`{"resources": [...]}` for a listing, the result
//! itself for a read or a get), and whose `details` are the same JSON, for
//! `details` and `details_at`. A JSON-RPC error is an error result as for
//! a tool call; the call timeout and the caller's cancellation bound each
//! request; a refused request of the server during one fails it as it
//! fails a tool call.

use std::future::Future;

use rmcp::model::GetPromptRequestParams;
use rmcp::model::ReadResourceRequestParams;
use rmcp::service::ServiceError;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::session::McpClient;
use super::session::TIMEOUT_CLASS;
use crate::tools::Content;
use crate::tools::ToolError;
use crate::tools::ToolResult;

impl McpClient {
    /// `resources/list`, every page.
    pub async fn list_resources(&self, cancel: &CancellationToken) -> ToolResult {
        let peer = self.peer().clone();
        self.check("resources/list", cancel, async move {
            peer.list_all_resources()
                .await
                .map(|resources| json!({ "resources": resources }))
        })
        .await
    }

    /// `resources/read` of `uri`.
    pub async fn read_resource(&self, uri: &str, cancel: &CancellationToken) -> ToolResult {
        let peer = self.peer().clone();
        let params = ReadResourceRequestParams::new(uri);
        self.check("resources/read", cancel, async move {
            peer.read_resource(params).await.and_then(to_json)
        })
        .await
    }

    /// `prompts/list`, every page.
    pub async fn list_prompts(&self, cancel: &CancellationToken) -> ToolResult {
        let peer = self.peer().clone();
        self.check("prompts/list", cancel, async move {
            peer.list_all_prompts()
                .await
                .map(|prompts| json!({ "prompts": prompts }))
        })
        .await
    }

    /// `prompts/get` of `name` with `arguments`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> ToolResult {
        let peer = self.peer().clone();
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        self.check("prompts/get", cancel, async move {
            peer.get_prompt(params).await.and_then(to_json)
        })
        .await
    }

    async fn check(
        &self,
        method: &str,
        cancel: &CancellationToken,
        request: impl Future<Output = Result<Value, ServiceError>>,
    ) -> ToolResult {
        let timeout = async {
            match self.call_timeout() {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            answer = request => match answer {
                Ok(value) => shown(value),
                Err(err) => self.failed(method, err).await,
            },
            () = timeout => ToolResult::error(
                format!(
                    "MCP server `{}` did not answer `{method}` within its call_timeout.",
                    self.name()
                ),
                Some(json!({ "error_class": TIMEOUT_CLASS })),
            ),
            () = cancel.cancelled() => ToolResult::from(ToolError::cancelled()),
        };
        self.with_refusals(result)
    }
}

fn to_json(result: impl Serialize) -> Result<Value, ServiceError> {
    Ok(serde_json::to_value(result).unwrap_or(Value::Null))
}

/// The result of an answer: its JSON, pretty, as the text and the details.
fn shown(value: Value) -> ToolResult {
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    ToolResult {
        facts: None,
        call_id: None,
        is_error: false,
        content: vec![Content::text(text)],
        details: Some(value),
        internal_error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn an_answer_is_its_pretty_json_and_its_details() {
        let value = json!({ "resources": [{ "uri": "file:///a", "name": "a" }] });
        let shown = shown(value.clone());
        assert_eq!(
            shown.text(),
            "{\n  \"resources\": [\n    {\n      \"uri\": \"file:///a\",\n      \"name\": \"a\"\n    }\n  ]\n}"
        );
        assert_eq!(shown.details, Some(value));
        assert!(!shown.is_error);
    }
}
