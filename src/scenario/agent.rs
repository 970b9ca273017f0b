//! The agents a scenario may name (docs/agents.md): harness.yaml's
//! `agents:` as written ([`AgentSpec`]) and as loading checked it
//! ([`AgentDef`]). Which program runs, and how, is the run layer's
//! business; this is only what the files say.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::agent::profiles;
use crate::agent::wire::Api;

/// One entry of harness.yaml's `agents:`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentSpec {
    /// The program and its first arguments. For a built-in agent it
    /// replaces the program looked for on PATH (its own arguments
    /// follow); for an agent of your own it is the whole command line.
    /// `${model_url}`, `${workspace}`, `${home}` and `${prompt}` are
    /// expanded in the arguments.
    #[schemars(length(min = 1))]
    pub command: Option<Vec<String>>,
    /// The wire format it speaks: `anthropic-messages`,
    /// `openai-responses`, `openai-chat` or `gemini` (required for an
    /// agent of your own).
    pub api: Option<String>,
    /// Environment variables it gets (over a built-in's), with the same
    /// placeholders.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// An entry of `agents:`, checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AgentDef {
    /// `command`, when given.
    pub command: Option<Vec<String>>,
    /// `api`, when given.
    pub api: Option<Api>,
    /// `env`, in name order.
    pub env: Vec<(String, String)>,
}

/// The placeholders `command` and `env` may hold.
pub(crate) const PLACEHOLDERS: [&str; 4] = profiles::Placeholders::NAMES;

/// The longest agent name.
pub(crate) const MAX_NAME: usize = 64;

/// Whether `name` is a usable agent name: 1 to [`MAX_NAME`] letters,
/// digits, `_`, `-` or `.`.
pub(crate) fn good_name(name: &str) -> bool {
    let good = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    !name.is_empty() && name.len() <= MAX_NAME && name.chars().all(good)
}

/// The names of the agents known with `defs`: the built-in ones, then
/// those `defs` adds.
pub(crate) fn known_names(defs: &BTreeMap<String, AgentDef>) -> Vec<String> {
    let mut names: Vec<String> = profiles::PROFILES
        .iter()
        .map(|p| p.name.to_owned())
        .collect();
    for name in defs.keys() {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}
