//! The built-in agent profiles: how each real coding agent is started
//! headless against the served model, with its telemetry, updates,
//! plugins and side lookups off (docs/agents.md).
//!
//! A profile is data: the command looked for on PATH, the wire format it
//! speaks, its arguments and environment, and the config files to write
//! into its throwaway home. Strings may hold `${model_url}` (the server's
//! base URL, `http://127.0.0.1:PORT`), `${workspace}` (the workspace's
//! real path), `${home}` (the throwaway home) and `${prompt}` (the task),
//! expanded by [`AgentProfile::launch`] with the faux script's
//! substitution (`$${` is a literal `${`). The caller runs the command
//! with the workspace as its working directory, standard input
//! `/dev/null`, and only this environment (plus a PATH).
//!
//! tests/agents/recipes.sh is this table written as shell functions for
//! tests/agents/smoke.sh; a unit test keeps the two the same.

use std::collections::BTreeMap;

use serde::Serialize;

use super::mcp_config::McpFormat;
use super::serve::ErrorRule;
use super::wire::Api;
use crate::base::vars::substitute;

/// A config file an agent reads, written before it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigFile {
    /// Where (`${home}/.codex/config.toml`).
    pub path: &'static str,
    /// What it holds.
    pub contents: &'static str,
}

/// How one agent is run against the served model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AgentProfile {
    /// Its name (`claude-code`).
    pub name: &'static str,
    /// The command looked for on PATH (`claude`).
    pub command: &'static str,
    /// The wire format it is pointed at.
    pub api: Api,
    /// Its arguments.
    pub args: &'static [&'static str],
    /// Its environment (besides PATH).
    pub env: &'static [(&'static str, &'static str)],
    /// Config files written into its home before it starts.
    pub files: &'static [ConfigFile],
    /// Programs its tools look for on PATH, and fall back or fail without
    /// (pi's grep and find run `rg` and `fd`, and offline fail without
    /// them).
    pub helpers: &'static [&'static str],
    /// How its tool results are read as failures where the format has no
    /// error flag.
    pub errors: ErrorRule,
    /// How MCP servers are registered with it (`None`: it has no MCP
    /// client).
    pub mcp: Option<McpFormat>,
}

/// The values of a profile's placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placeholders {
    /// `${model_url}`: the server's base URL, without a path.
    pub model_url: String,
    /// `${workspace}`: the workspace's real path.
    pub workspace: String,
    /// `${home}`: the throwaway home directory.
    pub home: String,
    /// `${prompt}`: the task given to the agent.
    pub prompt: String,
}

impl Placeholders {
    /// The names this table uses, in the order documented.
    pub const NAMES: [&'static str; 4] = ["model_url", "workspace", "home", "prompt"];

    fn vars(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("model_url".to_owned(), self.model_url.clone()),
            ("workspace".to_owned(), self.workspace.clone()),
            ("home".to_owned(), self.home.clone()),
            ("prompt".to_owned(), self.prompt.clone()),
        ])
    }
}

/// A profile with its placeholders expanded: what to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The command (looked for on PATH).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment, in the table's order.
    pub env: Vec<(String, String)>,
    /// The files to write first: path and contents.
    pub files: Vec<(String, String)>,
}

impl AgentProfile {
    /// The profile with `values` in place of its placeholders.
    pub fn launch(&self, values: &Placeholders) -> Launch {
        let vars = values.vars();
        let expand = |text: &str| substitute(text, &vars);
        Launch {
            command: self.command.to_owned(),
            args: self.args.iter().map(|arg| expand(arg)).collect(),
            env: self
                .env
                .iter()
                .map(|(name, value)| ((*name).to_owned(), expand(value)))
                .collect(),
            files: self
                .files
                .iter()
                .map(|file| (expand(file.path), expand(file.contents)))
                .collect(),
        }
    }
}

/// The key every profile gives its agent for the served model (any is
/// accepted).
const KEY: &str = "harness";

/// pi over Anthropic Messages (of the four it speaks, a format whose
/// results carry an error flag): a provider of its own in `models.json`,
/// its session not kept, offline. It has no MCP client (its README: "No
/// MCP"), so no MCP servers can be given to it.
const PI: AgentProfile = AgentProfile {
    name: "pi",
    command: "pi",
    api: Api::AnthropicMessages,
    args: &[
        "-p",
        "--offline",
        "--no-session",
        "--mode",
        "json",
        "--provider",
        "harness",
        "--model",
        "scripted",
        "--tools",
        "read,bash,edit,write,grep,find,ls",
        "${prompt}",
    ],
    env: &[
        ("HOME", "${home}"),
        ("PI_CODING_AGENT_DIR", "${home}/.pi/agent"),
        ("PI_OFFLINE", "1"),
    ],
    files: &[ConfigFile {
        path: "${home}/.pi/agent/models.json",
        contents: concat!(
            r#"{"providers":{"harness":{"baseUrl":"${model_url}","api":"anthropic-messages","#,
            r#""apiKey":"harness","models":[{"id":"scripted","contextWindow":128000,"maxTokens":4096}]}}}"#,
            "\n"
        ),
    }],
    helpers: &["rg", "fd"],
    errors: ErrorRule::Flag,
    mcp: None,
};

/// Claude Code over Anthropic Messages: nonessential traffic, telemetry,
/// updates and error reports off; `IS_SANDBOX=1` lets it skip permission
/// prompts when run as root.
const CLAUDE_CODE: AgentProfile = AgentProfile {
    name: "claude-code",
    command: "claude",
    api: Api::AnthropicMessages,
    args: &[
        "-p",
        "${prompt}",
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
        "--model",
        "claude-sonnet-4-5",
    ],
    env: &[
        ("HOME", "${home}"),
        ("ANTHROPIC_BASE_URL", "${model_url}"),
        ("ANTHROPIC_API_KEY", KEY),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("DISABLE_BUG_COMMAND", "1"),
        ("IS_SANDBOX", "1"),
    ],
    files: &[],
    helpers: &[],
    errors: ErrorRule::Flag,
    mcp: Some(McpFormat::ClaudeCode),
};

/// Codex over OpenAI Responses (the only format it speaks): a model
/// provider of its own in `config.toml`, a model slug it has metadata for
/// (else it drops `apply_patch`), update checks, analytics and plugin
/// sync off, the session not kept.
const CODEX: AgentProfile = AgentProfile {
    name: "codex",
    command: "codex",
    api: Api::OpenaiResponses,
    args: &[
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--ephemeral",
        "--dangerously-bypass-approvals-and-sandbox",
        "${prompt}",
    ],
    env: &[
        ("HOME", "${home}"),
        ("CODEX_HOME", "${home}/.codex"),
        ("HARNESS_MODEL_KEY", KEY),
    ],
    files: &[ConfigFile {
        path: "${home}/.codex/config.toml",
        contents: concat!(
            "model = \"gpt-5.5\"\n",
            "model_provider = \"harness\"\n",
            "check_for_update_on_startup = false\n",
            "\n",
            "[model_providers.harness]\n",
            "name = \"harness\"\n",
            "base_url = \"${model_url}/v1\"\n",
            "wire_api = \"responses\"\n",
            "env_key = \"HARNESS_MODEL_KEY\"\n",
            "\n",
            "[analytics]\n",
            "enabled = false\n",
            "\n",
            "[features]\n",
            "plugins = false\n",
        ),
    }],
    helpers: &[],
    errors: ErrorRule::Codex,
    mcp: Some(McpFormat::Codex),
};

/// Gemini CLI over Gemini `streamGenerateContent`: API-key auth chosen in
/// `settings.json` (the base URL alone selects an auth `-p` refuses),
/// usage statistics, telemetry and updates off, a model named so that no
/// router call is made.
const GEMINI_CLI: AgentProfile = AgentProfile {
    name: "gemini-cli",
    command: "gemini",
    api: Api::Gemini,
    args: &[
        "-p",
        "${prompt}",
        "--yolo",
        "--skip-trust",
        "--output-format",
        "stream-json",
        "-m",
        "gemini-2.5-pro",
    ],
    env: &[
        ("HOME", "${home}"),
        ("GEMINI_API_KEY", KEY),
        ("GOOGLE_GEMINI_BASE_URL", "${model_url}"),
    ],
    files: &[ConfigFile {
        path: "${home}/.gemini/settings.json",
        contents: concat!(
            r#"{"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"#,
            r#""general":{"disableAutoUpdate":true,"disableUpdateNag":true},"#,
            r#""security":{"auth":{"selectedType":"gemini-api-key"}}}"#,
            "\n"
        ),
    }],
    helpers: &[],
    errors: ErrorRule::Flag,
    mcp: Some(McpFormat::GeminiCli),
};

/// The built-in profiles, by name.
pub static PROFILES: [AgentProfile; 4] = [PI, CLAUDE_CODE, CODEX, GEMINI_CLI];

/// The built-in profile called `name`.
pub fn profile(name: &str) -> Option<&'static AgentProfile> {
    PROFILES.iter().find(|profile| profile.name == name)
}

#[cfg(test)]
#[path = "profiles_tests.rs"]
mod tests;
