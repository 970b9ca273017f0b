//! MCP servers registered with a real agent through its own
//! configuration (docs/agents.md#mcp-servers-inside-the-agent): Claude
//! Code's `--mcp-config` file, Codex's `[mcp_servers.NAME]` tables in
//! `config.toml`, Gemini CLI's `mcpServers` in `settings.json`. pi has no
//! MCP client, so it has no format here.
//!
//! The servers come with their placeholders already expanded; this only
//! writes them in each agent's own words, into the files, arguments and
//! environment of its launch.

use std::time::Duration;

use serde::Serialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

/// How an agent is told about MCP servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum McpFormat {
    /// Claude Code: a JSON file given with `--mcp-config FILE
    /// --strict-mcp-config` (so no server of the user's own comes in);
    /// its tools are `mcp__SERVER__TOOL`.
    ClaudeCode,
    /// Codex: `[mcp_servers.SERVER]` tables appended to its
    /// `config.toml`, and a model it has no metadata for ([`CODEX_MODEL`]);
    /// its tools are `mcp__SERVER__TOOL`.
    Codex,
    /// Gemini CLI: `mcpServers` in its `settings.json`, each trusted (no
    /// confirmation asked); its tools are `mcp_SERVER_TOOL`.
    GeminiCli,
}

impl McpFormat {
    /// The name the agent gives `tool` of `server`.
    pub fn tool_name(self, server: &str, tool: &str) -> String {
        match self {
            McpFormat::ClaudeCode | McpFormat::Codex => format!("mcp__{server}__{tool}"),
            McpFormat::GeminiCli => format!("mcp_{server}_{tool}"),
        }
    }
}

/// One MCP server to register, its placeholders expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpServer {
    /// Its name (letters, digits, `_` and `-`).
    pub name: String,
    /// How the agent reaches it.
    pub transport: McpTransport,
    /// How long it may take to start (`None`: the agent's default).
    pub startup_timeout: Option<Duration>,
    /// How long one call may take (`None`: the agent's default).
    pub call_timeout: Option<Duration>,
}

/// How an agent reaches a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpTransport {
    /// A program the agent starts, speaking over standard input and
    /// output.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: Vec<(String, String)>,
        /// Its working directory.
        cwd: String,
    },
    /// A running server, over Streamable HTTP.
    Http {
        /// Its endpoint.
        url: String,
        /// Sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// A launch to add the servers to: its arguments, environment and config
/// files (path and contents).
#[derive(Debug)]
pub struct LaunchParts<'a> {
    /// The arguments.
    pub args: &'a mut Vec<String>,
    /// The environment.
    pub env: &'a mut Vec<(String, String)>,
    /// The config files.
    pub files: &'a mut Vec<(String, String)>,
}

/// Where Claude Code's MCP config is written, below the home.
pub const CLAUDE_CODE_FILE: &str = ".claude/harness-mcp.json";

/// The model Codex is given when it has MCP servers: a name it has no
/// metadata for, so that it declares their tools in its requests.
pub const CODEX_MODEL: &str = "scripted";

/// Why the servers could not be written into an agent's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpConfigError(pub String);

impl std::fmt::Display for McpConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `servers` written into `launch` in `format`'s words; `home` is the
/// agent's home (where Claude Code's file goes).
pub fn register(
    format: McpFormat,
    servers: &[McpServer],
    home: &str,
    launch: LaunchParts<'_>,
) -> Result<(), McpConfigError> {
    if servers.is_empty() {
        return Ok(());
    }
    match format {
        McpFormat::ClaudeCode => {
            let file = format!("{home}/{CLAUDE_CODE_FILE}");
            let text = claude_code_json(servers);
            launch.files.push((file.clone(), text));
            launch.args.extend([
                "--mcp-config".to_owned(),
                file,
                "--strict-mcp-config".to_owned(),
            ]);
            // Claude Code's timeouts are for every server at once: the
            // longest asked for.
            let longest =
                |pick: fn(&McpServer) -> Option<Duration>| servers.iter().filter_map(pick).max();
            if let Some(startup) = longest(|s| s.startup_timeout) {
                launch
                    .env
                    .push(("MCP_TIMEOUT".to_owned(), startup.as_millis().to_string()));
            }
            if let Some(call) = longest(|s| s.call_timeout) {
                launch
                    .env
                    .push(("MCP_TOOL_TIMEOUT".to_owned(), call.as_millis().to_string()));
            }
            Ok(())
        }
        McpFormat::Codex => {
            let file = launch
                .files
                .iter_mut()
                .find(|(path, _)| path.ends_with("/.codex/config.toml"))
                .ok_or_else(|| {
                    McpConfigError("Codex's launch writes no `.codex/config.toml`".to_owned())
                })?;
            file.1.push_str(&codex_toml(servers));
            // For the models it has metadata for, Codex defers MCP tools
            // behind its `tool_search` (a Responses call the served model
            // does not make); for one it does not know, it declares them
            // up front, as a namespace per server.
            launch.args.extend([
                "-c".to_owned(),
                format!("model={}", toml_string(CODEX_MODEL)),
            ]);
            Ok(())
        }
        McpFormat::GeminiCli => {
            let file = launch
                .files
                .iter_mut()
                .find(|(path, _)| path.ends_with("/.gemini/settings.json"))
                .ok_or_else(|| {
                    McpConfigError(
                        "Gemini CLI's launch writes no `.gemini/settings.json`".to_owned(),
                    )
                })?;
            let mut settings: Map<String, Value> = serde_json::from_str(&file.1)
                .map_err(|err| McpConfigError(format!("Gemini CLI's settings.json: {err}")))?;
            settings.insert("mcpServers".to_owned(), gemini_servers(servers));
            let mut text = Value::Object(settings).to_string();
            text.push('\n');
            file.1 = text;
            Ok(())
        }
    }
}

fn object(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// Claude Code's `--mcp-config` file.
fn claude_code_json(servers: &[McpServer]) -> String {
    let entries: Map<String, Value> = servers
        .iter()
        .map(|server| {
            let entry = match &server.transport {
                // Claude Code starts a server in its own working directory,
                // the workspace: it has no `cwd` key.
                McpTransport::Stdio {
                    command, args, env, ..
                } => json!({"type": "stdio", "command": command, "args": args, "env": object(env)}),
                McpTransport::Http { url, headers } => {
                    json!({"type": "http", "url": url, "headers": object(headers)})
                }
            };
            (server.name.clone(), entry)
        })
        .collect();
    let mut text = json!({ "mcpServers": entries }).to_string();
    text.push('\n');
    text
}

/// Gemini CLI's `mcpServers`: each trusted, so that its calls are not held
/// for a confirmation headless runs cannot give.
fn gemini_servers(servers: &[McpServer]) -> Value {
    let entries: Map<String, Value> = servers
        .iter()
        .map(|server| {
            let mut entry = match &server.transport {
                McpTransport::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => json!({"command": command, "args": args, "env": object(env), "cwd": cwd}),
                McpTransport::Http { url, headers } => {
                    json!({"httpUrl": url, "headers": object(headers)})
                }
            };
            if let Some(map) = entry.as_object_mut() {
                if let Some(call) = server.call_timeout {
                    map.insert("timeout".to_owned(), json!(call.as_millis()));
                }
                map.insert("trust".to_owned(), Value::Bool(true));
            }
            (server.name.clone(), entry)
        })
        .collect();
    Value::Object(entries)
}

/// Codex's `[mcp_servers.NAME]` tables, each `required` (a server that
/// does not start stops Codex with its reason, rather than leaving its
/// tools out).
fn codex_toml(servers: &[McpServer]) -> String {
    let mut text = String::new();
    for server in servers {
        text.push_str(&format!("\n[mcp_servers.{}]\n", toml_key(&server.name)));
        match &server.transport {
            McpTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                text.push_str(&format!("command = {}\n", toml_string(command)));
                let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
                text.push_str(&format!("args = [{}]\n", args.join(", ")));
                text.push_str(&format!("cwd = {}\n", toml_string(cwd)));
                if !env.is_empty() {
                    text.push_str(&format!("env = {}\n", toml_table(env)));
                }
            }
            McpTransport::Http { url, headers } => {
                text.push_str(&format!("url = {}\n", toml_string(url)));
                if !headers.is_empty() {
                    text.push_str(&format!("http_headers = {}\n", toml_table(headers)));
                }
            }
        }
        if let Some(startup) = server.startup_timeout {
            text.push_str(&format!(
                "startup_timeout_sec = {}\n",
                toml_seconds(startup)
            ));
        }
        if let Some(call) = server.call_timeout {
            text.push_str(&format!("tool_timeout_sec = {}\n", toml_seconds(call)));
        }
        text.push_str("required = true\n");
    }
    text
}

/// A TOML basic string: `"` and `\` escaped, control characters as
/// `\uXXXX`.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key: bare when it is letters, digits, `_` and `-`, else quoted.
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        toml_string(key)
    }
}

fn toml_table(pairs: &[(String, String)]) -> String {
    let items: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{} = {}", toml_key(k), toml_string(v)))
        .collect();
    format!("{{ {} }}", items.join(", "))
}

/// Seconds as a TOML number: an integer when whole.
fn toml_seconds(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        duration.as_secs().to_string()
    } else {
        format!("{}", duration.as_secs_f64())
    }
}

#[cfg(test)]
#[path = "mcp_config_tests.rs"]
mod tests;
