//! The tools the check steps are served as (`mcp:list_resources`,
//! `mcp:read_resource`, `mcp:list_prompts`, `mcp:get_prompt`, and
//! `mcp:fuzz`, whose work is `fuzz_step.rs`'s): added to a
//! scenario's registry only when its script has such a step, each sending
//! its request to the server its arguments name (`server`, with `uri`, or
//! `name` and `arguments`), through the scenario's running client.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::mcp::client::McpClient;
use crate::mcp::client::into_output;
use crate::scenario::client::CHECK_TOOLS;
use crate::scenario::client::FUZZ;
use crate::scenario::client::GET_PROMPT;
use crate::scenario::client::LIST_PROMPTS;
use crate::scenario::client::LIST_RESOURCES;
use crate::scenario::client::READ_RESOURCE;
use crate::tools::Limits;
use crate::tools::Tool;
use crate::tools::ToolContext;
use crate::tools::ToolError;
use crate::tools::ToolOutput;
use crate::tools::ToolResult;
use crate::tools::ToolSpec;

/// One check tool, over the scenario's running servers by name.
pub(super) struct CheckTool {
    name: &'static str,
    clients: BTreeMap<String, Arc<McpClient>>,
}

impl std::fmt::Debug for CheckTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl CheckTool {
    /// The check tool called `name` (one of the scenario's check tools).
    pub(super) fn new(name: &'static str, clients: BTreeMap<String, Arc<McpClient>>) -> Self {
        Self { name, clients }
    }
}

/// The check tools `scenario`'s script calls, in the order of
/// [`CHECK_TOOLS`].
pub(super) fn used(scenario: &crate::scenario::Scenario) -> Vec<&'static str> {
    let called: std::collections::BTreeSet<&str> = scenario
        .script
        .steps
        .iter()
        .flat_map(|step| match step {
            crate::agent::FauxStep::Calls(calls) => calls.as_slice(),
            _ => &[],
        })
        .map(|call| call.name.as_str())
        .collect();
    CHECK_TOOLS
        .into_iter()
        .filter(|name| called.contains(name))
        .collect()
}

fn text_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl Tool for CheckTool {
    type Args = Value;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec::new(
            self.name,
            "The harness's own MCP client check (a step of the script, not a model tool).",
            serde_json::json!({ "type": "object" }),
        )
    }

    fn checks_arguments(&self) -> bool {
        false
    }

    async fn execute(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if self.name == FUZZ {
            return super::fuzz_step::execute(&self.clients, &args, &ctx).await;
        }
        let server = text_arg(&args, "server");
        let Some(client) = self.clients.get(server) else {
            return Err(ToolError::failed(format!(
                "MCP server `{server}` is not running in this scenario."
            )));
        };
        let result: ToolResult = match self.name {
            LIST_RESOURCES => client.list_resources(&ctx.cancel).await,
            READ_RESOURCE => {
                client
                    .read_resource(text_arg(&args, "uri"), &ctx.cancel)
                    .await
            }
            LIST_PROMPTS => client.list_prompts(&ctx.cancel).await,
            GET_PROMPT => {
                let arguments = args
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                client
                    .get_prompt(text_arg(&args, "name"), arguments, &ctx.cancel)
                    .await
            }
            other => {
                return Err(ToolError::fatal(format!("`{other}` is no check tool")));
            }
        };
        into_output(result)
    }
}
