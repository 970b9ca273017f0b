//! The audit of a server's tool definitions (`harness tools --check`):
//! what known MCP clients reject or mishandle in what `tools/list`
//! sends, tool by tool. Each rule names the clients it is about and the
//! source of the fact (docs/mcp.md has the table of rules and sources).
//!
//! The rules look only at the definitions: names (with the name the
//! server is registered under, for the clients that join the two),
//! descriptions, input schemas, output schemas and annotations. What a
//! definition costs in tokens is priced above this layer (the budget of
//! `--max-definition-tokens`).

use std::fmt;

use rmcp::model::Tool;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// A known client refuses the tool (or the whole server), or cannot
    /// call it as written.
    Error,
    /// A known client takes the tool but handles it worse than it could.
    Warning,
}

impl Level {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warning => "warning",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A rule of the audit: its name in findings, its level, the clients it
/// is about and where the fact comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Its name, as findings and docs/mcp.md write it.
    pub id: &'static str,
    /// How much a finding of it matters.
    pub level: Level,
    /// The clients it is about.
    pub clients: &'static str,
    /// Where the fact comes from (an issue, a pull request, the
    /// specification).
    pub source: &'static str,
}

/// Codex: `^[a-zA-Z0-9_-]+$`.
pub const NAME_CODEX: Rule = Rule {
    id: "name_codex",
    level: Level::Error,
    clients: "Codex",
    source: "openai/codex#8174, openai/codex#8694",
};
/// Gemini CLI: a letter or `_` first, `[A-Za-z0-9_.:-]`, at most 64.
pub const NAME_GEMINI: Rule = Rule {
    id: "name_gemini",
    level: Level::Error,
    clients: "Gemini CLI",
    source: "google-gemini/gemini-cli#602",
};
/// Claude Code: `mcp__SERVER__TOOL` at most 128 characters.
pub const NAME_CLAUDE_CODE: Rule = Rule {
    id: "name_claude_code",
    level: Level::Error,
    clients: "Claude Code",
    source: "Claude Code's MCP documentation (tool names mcp__SERVER__TOOL)",
};
/// Cursor: server name and tool name together at most 60 characters.
pub const NAME_CURSOR: Rule = Rule {
    id: "name_cursor",
    level: Level::Error,
    clients: "Cursor",
    source: "Cursor's MCP documentation (server and tool names, 60 characters)",
};
/// Gemini CLI: `$schema`, `propertyNames`, object-valued
/// `additionalProperties`.
pub const SCHEMA_KEYWORD: Rule = Rule {
    id: "schema_keyword",
    level: Level::Error,
    clients: "Gemini CLI",
    source: "google-gemini/gemini-cli#400, google-gemini/gemini-cli#5388",
};
/// Gemini CLI: a description over 1024 characters.
pub const DESCRIPTION_LENGTH: Rule = Rule {
    id: "description_length",
    level: Level::Error,
    clients: "Gemini CLI",
    source: "the Gemini API's function declarations (descriptions of at most 1024 characters)",
};
/// The input schema is not an object schema.
pub const SCHEMA_NOT_OBJECT: Rule = Rule {
    id: "schema_not_object",
    level: Level::Error,
    clients: "all",
    source: "the MCP specification, 2025-11-25, server/tools (inputSchema: type object)",
};
/// A property without a type.
pub const UNTYPED_PROPERTY: Rule = Rule {
    id: "untyped_property",
    level: Level::Warning,
    clients: "Gemini CLI, Codex",
    source: "google-gemini/gemini-cli#4594 (function declarations need a type)",
};
/// A tool that looks read-only but does not say so.
pub const READ_ONLY_HINT: Rule = Rule {
    id: "read_only_hint",
    level: Level::Warning,
    clients: "Claude Code, Codex",
    source: "the MCP specification, 2025-11-25, ToolAnnotations (readOnlyHint defaults to false)",
};
/// A tool whose results carry `structuredContent` beside `content`.
pub const STRUCTURED_CONTENT: Rule = Rule {
    id: "structured_content",
    level: Level::Warning,
    clients: "Claude Code",
    source: "anthropics/claude-code#54737",
};
/// The definitions cost more tokens than the budget.
pub const DEFINITION_TOKENS: Rule = Rule {
    id: "definition_tokens",
    level: Level::Error,
    clients: "all",
    source: "--max-definition-tokens",
};

/// Every rule, in the order findings are listed.
pub const RULES: [Rule; 11] = [
    NAME_CODEX,
    NAME_GEMINI,
    NAME_CLAUDE_CODE,
    NAME_CURSOR,
    SCHEMA_NOT_OBJECT,
    SCHEMA_KEYWORD,
    DESCRIPTION_LENGTH,
    UNTYPED_PROPERTY,
    READ_ONLY_HINT,
    STRUCTURED_CONTENT,
    DEFINITION_TOKENS,
];

/// The longest name Gemini CLI takes.
pub const GEMINI_MAX_NAME: usize = 64;
/// The longest `mcp__SERVER__TOOL` Claude Code takes.
pub const CLAUDE_CODE_MAX_NAME: usize = 128;
/// The longest server name plus tool name Cursor takes.
pub const CURSOR_MAX_NAME: usize = 60;
/// The longest description Gemini CLI takes.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// One thing a client rejects or mishandles in one tool's definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The tool (empty for a finding about all of them).
    pub tool: String,
    /// The rule's level.
    pub level: Level,
    /// The rule's name.
    pub rule: &'static str,
    /// The clients it is about.
    pub clients: &'static str,
    /// What is wrong, in a sentence, and what to do.
    pub message: String,
    /// Where the fact comes from.
    pub source: &'static str,
}

impl Finding {
    /// A finding of `rule` about `tool`.
    pub fn new(rule: Rule, tool: &str, message: String) -> Self {
        Self {
            tool: tool.to_owned(),
            level: rule.level,
            rule: rule.id,
            clients: rule.clients,
            message,
            source: rule.source,
        }
    }
}

/// The findings about `tools`, the definitions of the server registered
/// as `server`, tool by tool in `tools/list` order and rule by rule in
/// [`RULES`] order.
pub fn audit(server: &str, tools: &[Tool]) -> Vec<Finding> {
    tools
        .iter()
        .flat_map(|tool| audit_tool(server, tool))
        .collect()
}

fn audit_tool(server: &str, tool: &Tool) -> Vec<Finding> {
    let name = tool.name.as_ref();
    let mut found = Vec::new();
    let mut add = |rule: Rule, message: String| found.push(Finding::new(rule, name, message));
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        add(
            NAME_CODEX,
            "the name holds characters outside [a-zA-Z0-9_-]: Codex rewrites them to `_`, so the \
             model calls another name; use letters, digits, `_` and `-`"
                .to_owned(),
        );
    }
    if let Some(problem) = gemini_name_problem(name) {
        add(NAME_GEMINI, problem);
    }
    let claude = format!("mcp__{server}__{name}");
    let claude_len = claude.chars().count();
    if claude_len > CLAUDE_CODE_MAX_NAME {
        add(
            NAME_CLAUDE_CODE,
            format!(
                "`{claude}` is {claude_len} characters, over Claude Code's {CLAUDE_CODE_MAX_NAME}; \
                 shorten the tool's name or the server's"
            ),
        );
    }
    let cursor_len = server.chars().count() + name.chars().count();
    if cursor_len > CURSOR_MAX_NAME {
        add(
            NAME_CURSOR,
            format!(
                "the server's name and the tool's are {cursor_len} characters together, over \
                 Cursor's {CURSOR_MAX_NAME}; shorten either"
            ),
        );
    }
    let schema = tool.input_schema.as_ref();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        add(
            SCHEMA_NOT_OBJECT,
            match schema.get("type") {
                Some(kind) => format!(
                    "the input schema's type is {kind}, not \"object\": clients refuse a tool \
                     whose arguments are not an object"
                ),
                None => "the input schema has no `\"type\": \"object\"`: clients refuse a tool \
                         whose arguments are not declared an object"
                    .to_owned(),
            },
        );
    }
    let mut walk = SchemaWalk::default();
    walk.schema(schema, "");
    for (pointer, keyword) in &walk.keywords {
        add(
            SCHEMA_KEYWORD,
            format!(
                "the input schema holds `{keyword}` at {}: Gemini CLI's model API refuses it; \
                 leave it out",
                shown_pointer(pointer)
            ),
        );
    }
    let description = tool.description.as_deref().unwrap_or("");
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        add(
            DESCRIPTION_LENGTH,
            format!(
                "the description is {chars} characters, over Gemini CLI's \
                 {MAX_DESCRIPTION_CHARS}; shorten it"
            ),
        );
    }
    for pointer in &walk.untyped {
        add(
            UNTYPED_PROPERTY,
            format!(
                "the property at {} has no `type`: clients that turn schemas into function \
                 declarations guess or drop it; give it one",
                shown_pointer(pointer)
            ),
        );
    }
    let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint);
    if read_only.is_none() && looks_read_only(name) {
        add(
            READ_ONLY_HINT,
            "the name reads like a tool that only looks, but it sets no `readOnlyHint`: clients \
             take it for one that changes things (Claude Code runs it alone, never in parallel \
             or in plan mode; Codex asks for approval); set `readOnlyHint: true` if it changes \
             nothing"
                .to_owned(),
        );
    }
    if tool.output_schema.is_some() {
        add(
            STRUCTURED_CONTENT,
            "it declares an `outputSchema`, so its results carry `structuredContent` beside \
             `content`: Claude Code gives the model `structuredContent` instead of `content` \
             (text and images dropped), and clients that pass both send the same facts twice"
                .to_owned(),
        );
    }
    found
}

/// What Gemini CLI refuses in a tool name, if anything.
fn gemini_name_problem(name: &str) -> Option<String> {
    let first_ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let chars_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'));
    let len = name.chars().count();
    let mut problems = Vec::new();
    if !first_ok {
        problems.push("it does not start with a letter or `_`".to_owned());
    }
    if !chars_ok {
        problems.push("it holds characters outside [A-Za-z0-9_.:-]".to_owned());
    }
    if len > GEMINI_MAX_NAME {
        problems.push(format!("it is {len} characters, over {GEMINI_MAX_NAME}"));
    }
    (!problems.is_empty()).then(|| format!("Gemini CLI refuses the name: {}", problems.join("; ")))
}

/// Words of names that only look (`get`, `list`, `status`…).
const READING_WORDS: [&str; 22] = [
    "get", "list", "read", "search", "find", "show", "describe", "fetch", "query", "view",
    "lookup", "count", "inspect", "status", "diff", "log", "info", "stat", "stats", "echo", "sum",
    "ls",
];

/// Words of names that change things (`write`, `delete`, `commit`…).
const CHANGING_WORDS: [&str; 34] = [
    "write", "edit", "create", "delete", "remove", "update", "set", "add", "commit", "reset",
    "checkout", "move", "rename", "put", "post", "send", "run", "exec", "execute", "install",
    "push", "kill", "start", "stop", "insert", "modify", "patch", "apply", "upload", "clear",
    "drop", "merge", "toggle", "make",
];

/// Whether a tool's name reads like one that only looks: one of its words
/// (`get`, `list`, `status`…) reads, and none (`write`, `delete`…) changes.
pub fn looks_read_only(name: &str) -> bool {
    let words = name_words(name);
    words.iter().any(|w| READING_WORDS.contains(&w.as_str()))
        && !words.iter().any(|w| CHANGING_WORDS.contains(&w.as_str()))
}

/// A name's words, lowercase: split at `_`, `-`, `.`, `:`, `/` and where
/// a lowercase letter meets an uppercase one (`getUser` is get, user).
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut last_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            last_lower = false;
            continue;
        }
        if c.is_uppercase() && last_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        last_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `/properties/x` as people read it; the root as "the top".
fn shown_pointer(pointer: &str) -> String {
    if pointer.is_empty() {
        "the top".to_owned()
    } else {
        format!("`{pointer}`")
    }
}

/// How deep the walk goes into a schema: a deeper one is left unchecked
/// below that depth rather than followed without end.
const MAX_SCHEMA_DEPTH: usize = 64;

/// What a walk over a schema found: the keywords Gemini CLI refuses and
/// the properties without a type, each by its JSON pointer.
#[derive(Default)]
struct SchemaWalk {
    keywords: Vec<(String, &'static str)>,
    untyped: Vec<String>,
}

impl SchemaWalk {
    fn schema(&mut self, node: &Map<String, Value>, at: &str) {
        if at.matches('/').count() > MAX_SCHEMA_DEPTH * 2 {
            return;
        }
        if node.contains_key("$schema") {
            self.keywords.push((at.to_owned(), "$schema"));
        }
        if node.contains_key("propertyNames") {
            self.keywords.push((at.to_owned(), "propertyNames"));
        }
        if let Some(Value::Object(extra)) = node.get("additionalProperties") {
            self.keywords.push((at.to_owned(), "additionalProperties"));
            self.schema(extra, &format!("{at}/additionalProperties"));
        }
        for key in ["properties", "patternProperties", "$defs", "definitions"] {
            let Some(Value::Object(children)) = node.get(key) else {
                continue;
            };
            for (name, child) in children {
                let pointer = format!("{at}/{key}/{}", escape_pointer(name));
                let Value::Object(child) = child else {
                    continue;
                };
                if key == "properties" && !is_typed(child) {
                    self.untyped.push(pointer.clone());
                }
                self.schema(child, &pointer);
            }
        }
        for key in ["items", "not", "contains", "if", "then", "else"] {
            if let Some(Value::Object(child)) = node.get(key) {
                self.schema(child, &format!("{at}/{key}"));
            }
        }
        for key in ["anyOf", "oneOf", "allOf", "prefixItems", "items"] {
            if let Some(Value::Array(children)) = node.get(key) {
                for (n, child) in children.iter().enumerate() {
                    if let Value::Object(child) = child {
                        self.schema(child, &format!("{at}/{key}/{n}"));
                    }
                }
            }
        }
    }
}

/// Whether a property's schema says what it holds: a `type`, or what
/// stands for one (a reference, a choice of schemas, an enum, a constant).
fn is_typed(schema: &Map<String, Value>) -> bool {
    ["type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"]
        .iter()
        .any(|key| schema.contains_key(*key))
}

/// A key as a JSON pointer's token (`~` and `/` escaped).
fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
