//! [`ServerTool`]: one tool of an MCP server as a tool of the registry,
//! through the same erased trait as the built-ins, so the agent loop's
//! batches, cancellation, presentation (paths mapped in and out) and
//! pricing apply to it unchanged.
//!
//! Its spec is the server's definition: the name (with the server's
//! prefix, if any), the description and the input schema as `tools/list`
//! gave them, the title (or the name) as its label, no prompt snippet (a
//! client's system prompt does not list a server's tools), and parallel
//! execution (calls to one server are concurrent requests). The registry
//! neither normalises nor validates its arguments: they are sent as
//! written (`null`, an array, any JSON) and the server's own answer to
//! them is what is being tested.

use std::sync::Arc;

use serde_json::Value;

use super::session::McpClient;
use crate::tools::Limits;
use crate::tools::Tool;
use crate::tools::ToolContext;
use crate::tools::ToolError;
use crate::tools::ToolOutput;
use crate::tools::ToolResult;
use crate::tools::ToolSpec;

/// A server's tool in the registry.
pub struct ServerTool {
    client: Arc<McpClient>,
    remote: String,
    spec: ToolSpec,
}

impl std::fmt::Debug for ServerTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerTool")
            .field("server", &self.client.name())
            .field("tool", &self.remote)
            .field("name", &self.spec.name)
            .finish_non_exhaustive()
    }
}

/// The spec of a server's tool as the model gets it: `prefix` + its name.
pub fn server_tool_spec(tool: &rmcp::model::Tool, prefix: &str) -> ToolSpec {
    let name = format!("{prefix}{}", tool.name);
    let label = tool
        .title
        .clone()
        .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone()))
        .unwrap_or_else(|| tool.name.to_string());
    ToolSpec::new(
        name,
        tool.description.as_deref().unwrap_or(""),
        Value::Object(tool.input_schema.as_ref().clone()),
    )
    .label(label)
}

impl ServerTool {
    /// The server's tool called `tool` (as `tools/list` names it), named
    /// `prefix` + `tool` for the model; `None` when the server has no such
    /// tool.
    pub fn new(client: &Arc<McpClient>, tool: &str, prefix: &str) -> Option<Self> {
        let listed = client.tools().iter().find(|t| t.name == tool)?;
        Some(Self {
            client: Arc::clone(client),
            remote: tool.to_owned(),
            spec: server_tool_spec(listed, prefix),
        })
    }

    /// Every tool of the server, in `tools/list` order.
    pub fn all(client: &Arc<McpClient>, prefix: &str) -> Vec<Self> {
        client
            .tools()
            .iter()
            .map(|listed| Self {
                client: Arc::clone(client),
                remote: listed.name.to_string(),
                spec: server_tool_spec(listed, prefix),
            })
            .collect()
    }

    /// A call the model makes as `name` sent to the server as `tool`,
    /// whether or not `tools/list` names it: the server's answer to a
    /// name it does not have is what is being tested.
    pub fn routed(client: &Arc<McpClient>, tool: &str, name: &str) -> Self {
        let listed = client.tools().iter().find(|t| t.name == tool);
        let spec = match listed {
            Some(listed) => ToolSpec {
                name: name.to_owned().into(),
                ..server_tool_spec(listed, "")
            },
            None => ToolSpec::new(name.to_owned(), "", serde_json::json!({ "type": "object" }))
                .label(tool.to_owned()),
        };
        Self {
            client: Arc::clone(client),
            remote: tool.to_owned(),
            spec,
        }
    }

    /// The tool's name on the server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        self.client.name()
    }
}

/// A server's result as what a tool returns: an error result's blocks
/// become its message (text blocks joined by newlines, an image as
/// `[image:TYPE:LENGTH]`, which is how results are priced, so the model
/// reads and pays the same); a broken invariant that `harness mcp`
/// reported is one here too.
pub fn into_output(result: ToolResult) -> Result<ToolOutput, ToolError> {
    if let Some(message) = result.internal_error {
        return Err(ToolError::fatal(message));
    }
    if !result.is_error {
        return Ok(ToolOutput {
            facts: None,
            content: result.content,
            details: result.details,
        });
    }
    let message = crate::tools::priced_text_of(&result.content);
    Err(ToolError::Failed {
        facts: None,
        message,
        details: result.details,
    })
}

impl Tool for ServerTool {
    type Args = Value;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        self.spec.clone()
    }

    fn checks_arguments(&self) -> bool {
        false
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        into_output(self.client.call(&self.remote, args, &ctx.cancel).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Content;
    use crate::tools::ExecutionMode;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn a_definition_becomes_a_spec_with_the_prefix() {
        let tool: rmcp::model::Tool = serde_json::from_value(json!({
            "name": "get_current_time",
            "title": "Current time",
            "description": "Get the time.",
            "inputSchema": { "type": "object", "properties": { "timezone": { "type": "string" } } }
        }))
        .unwrap();
        let spec = server_tool_spec(&tool, "time_");
        assert_eq!(
            spec,
            ToolSpec {
                name: "time_get_current_time".into(),
                label: "Current time".into(),
                description: "Get the time.".into(),
                prompt_snippet: String::new(),
                prompt_guidelines: vec![],
                parameters: json!({ "type": "object", "properties": { "timezone": { "type": "string" } } }),
                execution_mode: ExecutionMode::Parallel,
            }
        );
    }

    #[test]
    fn error_results_keep_their_text_and_details_as_priced() {
        let error = ToolResult {
            facts: None,
            call_id: None,
            is_error: true,
            content: vec![
                Content::text("no such file"),
                Content::Image {
                    data: "AAAA".to_owned(),
                    mime_type: "image/png".to_owned(),
                },
            ],
            details: Some(json!({ "code": 2 })),
            internal_error: None,
        };
        assert_eq!(
            ToolResult::from(into_output(error).unwrap_err()),
            ToolResult::error(
                "no such file\n[image:image/png:4]",
                Some(json!({ "code": 2 }))
            )
        );
        let ok = ToolResult::ok(ToolOutput::text("fine").with_details(json!({ "n": 1 })));
        assert_eq!(ToolResult::ok(into_output(ok.clone()).unwrap()), ok);
        let broken = ToolResult {
            internal_error: Some("the tool panicked: boom".to_owned()),
            ..ToolResult::error("Internal error", None)
        };
        assert_eq!(
            into_output(broken).unwrap_err(),
            ToolError::fatal("the tool panicked: boom")
        );
    }
}
