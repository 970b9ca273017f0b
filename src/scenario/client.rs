//! The serde types of what the harness, as an MCP client, answers and
//! sends: a scenario's `sampling:`, `elicitation:` and `roots:` (answers
//! to its servers' requests) and a server's `auth:` (OAuth client
//! credentials). Checked by `load/client.rs`.

use schemars::JsonSchema;

/// The tool a `list_resources` step is served as (a name no MCP tool can
/// have: `:` is not allowed in one).
pub(crate) const LIST_RESOURCES: &str = "mcp:list_resources";
/// The tool of a `read_resource` step.
pub(crate) const READ_RESOURCE: &str = "mcp:read_resource";
/// The tool of a `list_prompts` step.
pub(crate) const LIST_PROMPTS: &str = "mcp:list_prompts";
/// The tool of a `get_prompt` step.
pub(crate) const GET_PROMPT: &str = "mcp:get_prompt";
/// Every tool a check step is served as.
pub(crate) const CHECK_TOOLS: [&str; 4] = [LIST_RESOURCES, READ_RESOURCE, LIST_PROMPTS, GET_PROMPT];
use serde::Deserialize;
use serde_json::Map;
use serde_json::Value;

/// One reply to a server's `sampling/createMessage`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SamplingSpec {
    /// The assistant's text.
    pub text: String,
}

/// One reply to a server's `elicitation/create`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ElicitationSpec {
    /// `accept`, `decline` or `cancel`.
    #[schemars(extend("enum" = ["accept", "decline", "cancel"]))]
    pub action: String,
    /// The form's fields (with `accept`); a field the request's schema
    /// gives a `default` for and this omits is sent with the default.
    pub content: Option<Map<String, Value>>,
}

/// OAuth client credentials (machine to machine) for a server reached by
/// `url`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AuthSpec {
    /// The client's id at the authorization server.
    pub client_id: String,
    /// The client's secret (`client_secret_basic`); `${env:NAME}` is
    /// expanded.
    pub client_secret: Option<String>,
    /// Instead of a secret: a PEM private key that signs a JWT assertion
    /// (`private_key_jwt`); `${env:NAME}` is expanded.
    pub private_key: Option<String>,
    /// The JWT's signing algorithm (default `ES256`).
    #[schemars(extend("enum" = ["ES256", "ES384", "RS256", "RS384", "RS512"]))]
    pub signing_algorithm: Option<String>,
    /// Scopes asked for (default none).
    pub scopes: Option<Vec<String>>,
}

/// `get_prompt: { server, name, arguments }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetPromptSpec {
    /// The server.
    pub server: String,
    /// The prompt's name.
    pub name: String,
    /// Its arguments (strings).
    #[serde(default)]
    pub arguments: std::collections::BTreeMap<String, String>,
}
