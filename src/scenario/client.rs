//! The serde types of what the harness, as an MCP client, answers and
//! sends: a scenario's `sampling:`, `elicitation:` and `roots:` (answers
//! to its servers' requests) and a server's `auth:` (OAuth client
//! credentials), and the steps that check a server as its client:
//! resources, prompts, and `fuzz`. Checked by `load/client.rs`,
//! `load/client_steps.rs` and `load/fuzz_step.rs`.

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
/// The tool of a `fuzz` step.
pub(crate) const FUZZ: &str = "mcp:fuzz";
/// Every tool a check step is served as.
pub(crate) const CHECK_TOOLS: [&str; 5] = [
    LIST_RESOURCES,
    READ_RESOURCE,
    LIST_PROMPTS,
    GET_PROMPT,
    FUZZ,
];
use schemars::json_schema;
use serde::Deserialize;
use serde::de;
use serde::de::value::MapAccessDeserializer;
use serde_json::Map;
use serde_json::Value;

use super::two_way::schema;
use super::two_way::two_way;

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

/// `fuzz: SERVER` or `fuzz: { server, tools, cases, seed, timeout }`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FuzzSpec {
    /// The server, every other key at its default.
    Server(String),
    /// The server and what to send it.
    Options(FuzzOptions),
}

/// `fuzz: { server, tools, cases, seed, timeout }`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FuzzOptions {
    /// The server to fuzz (one of the scenario's `servers`).
    pub server: String,
    /// Only these of its tools, by the server's own names (default: all).
    #[schemars(length(min = 1))]
    pub tools: Option<Vec<String>>,
    /// Calls per tool (default 30).
    #[schemars(range(min = 1, max = crate::mcp::fuzz::generate::MAX_CASES))]
    pub cases: Option<u64>,
    /// The generator's seed (default 0): the same seed sends the same
    /// calls.
    pub seed: Option<u64>,
    /// Seconds each call, and the ping after it, may take (default 10).
    #[schemars(range(max = crate::mcp::fuzz::MAX_TIMEOUT_SECS), extend("exclusiveMinimum" = 0))]
    pub timeout: Option<f64>,
}

impl FuzzSpec {
    /// Its options, the short form's with only the server given.
    pub(crate) fn options(&self) -> FuzzOptions {
        match self {
            FuzzSpec::Server(server) => FuzzOptions {
                server: server.clone(),
                ..FuzzOptions::default()
            },
            FuzzSpec::Options(options) => options.clone(),
        }
    }
}

two_way!(
    FuzzSpec,
    "a server's name, or { server, tools, cases, seed, timeout }",
    {
        fn visit_str<E: de::Error>(self, v: &str) -> Result<FuzzSpec, E> {
            Ok(FuzzSpec::Server(v.to_owned()))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<FuzzSpec, A::Error> {
            FuzzOptions::deserialize(MapAccessDeserializer::new(map)).map(FuzzSpec::Options)
        }
    }
);

schema!(FuzzSpec, |generator| {
    let options = generator.subschema_for::<FuzzOptions>();
    json_schema!({
        "description": "The server to fuzz, or the server and what to send it",
        "anyOf": [{"type": "string"}, options]
    })
});
