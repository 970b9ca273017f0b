//! A suite made from an MCP server's `tools/list` (`harness init DIR --mcp
//! CMD [ARGS…]`): `harness.yaml` declaring the server, and one scenario
//! per tool that calls it once with arguments made up from its input
//! schema and expects a snapshot, so that `harness run --update-snapshots`
//! records today's answers and later runs hold them.
//!
//! Arguments: each required property gets its `const`, else its first
//! `examples` entry, else its `default`, else its first `enum` value,
//! else a value of its type (a path-like string is `.`, the workspace the
//! server runs in; a number its `minimum` or 1; an array one item when it
//! needs one; an object its own required properties). Where nothing
//! sensible can be made up (a free string) the value is `TODO` and the
//! file says so in a comment. A tool that is not annotated read-only
//! (destructive, `readOnlyHint: false`, or no hint at all) is written with
//! `skip:` and the reason, so the suite changes nothing out of the box;
//! with `--include-writes` ([`Writes::Include`]) it runs like the others,
//! its file saying why it may change things.

use std::collections::BTreeSet;

use rmcp::model::Tool;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::write::comment;
use super::yaml::to_yaml;

/// How deep made-up arguments nest before an object or array is left
/// empty.
const MAX_DEPTH: usize = 8;

/// The longest file name stem a tool's scenario gets (a file system takes
/// 255 bytes; a server may name a tool with 10 KB).
const MAX_STEM: usize = 64;

/// Seconds the generated suite gives a server to start (npx and uvx may
/// download first).
const STARTUP_TIMEOUT: u64 = 30;

/// One file of the suite: its path below the suite's directory, and its
/// text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SuiteFile {
    /// Relative to the suite's directory (`harness.yaml`, `echo.yaml`).
    pub path: String,
    /// Its text.
    pub text: String,
}

/// The server's name in `servers:` for the command `program`: its file
/// name, with every character a server name cannot hold as `_`.
pub(crate) fn server_name(program: &str) -> String {
    let file = program.rsplit('/').next().unwrap_or(program);
    let name: String = file
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "server".to_owned()
    } else {
        name
    }
}

/// Whether the tools that may change things get scenarios that run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writes {
    /// Written with `skip:` and the reason (the default).
    Skip,
    /// Written to run, with a comment saying they may change things
    /// (`harness init --mcp --include-writes`).
    Include,
}

/// The suite for the server started by `command` (program and
/// arguments), named `server`, that listed `tools`.
pub(crate) fn suite(
    server: &str,
    command: &[String],
    tools: &[Tool],
    writes: Writes,
) -> Vec<SuiteFile> {
    let mut files = vec![SuiteFile {
        path: "harness.yaml".to_owned(),
        text: suite_file(server, command, tools.len()),
    }];
    let mut taken = BTreeSet::new();
    let mut names = BTreeSet::new();
    for tool in tools {
        let stem = unique_stem(&tool.name, &mut taken);
        let name = unique_name(&format!("{server} {}", shown(&tool.name)), &mut names);
        files.push(SuiteFile {
            path: format!("{stem}.yaml"),
            text: scenario(server, tool, &name, writes),
        });
    }
    files
}

fn suite_file(server: &str, command: &[String], tools: usize) -> String {
    let command: Vec<Value> = command.iter().map(|a| Value::from(a.as_str())).collect();
    let body = json!({
        "servers": {
            server: {
                "command": command,
                "startup_timeout": STARTUP_TIMEOUT,
            }
        }
    });
    format!(
        "# Written by `harness init --mcp` from the server's tools/list ({tools} tools): one \
         scenario per tool,\n# each calling it once and expecting a snapshot. Record today's \
         answers with\n# `harness run DIR --update-snapshots`; later runs compare with them.\n# \
         Isolation: each scenario starts its own server process in a fresh temporary workspace \
         (its\n# working directory; `${{workspace}}` in its command is that path), in the \
         scenario's sandbox:\n# it may write only there and in a private TMPDIR, so a server \
         that keeps its data elsewhere\n# (its own package folder, the home directory) has \
         those writes refused, and its answers say so.\n# Where the kernel cannot sandbox, \
         `harness run` says so, and that data is shared across\n# scenarios and runs.\n{}",
        to_yaml(&body)
    )
}

/// The scenario calling `tool`, named `title`.
fn scenario(server: &str, tool: &Tool, title: &str, writes: Writes) -> String {
    let name = tool.name.as_ref();
    let mut todo = Vec::new();
    let args = escaped(&arguments(&tool.input_schema, "", &mut todo, 0));
    let mut header = vec![format!(
        "# {}: made by `harness init --mcp` from the tool's input schema.",
        shown(name)
    )];
    if let Some(description) = tool.description.as_deref().filter(|d| !d.is_empty()) {
        header.push(format!(
            "# What it says of itself: {}",
            comment(&clip(description))
        ));
    }
    for (pointer, what) in &todo {
        header.push(format!(
            "# TODO: `{}` ({}): nothing sensible could be made up; the call sends \"TODO\".",
            comment(pointer),
            comment(what)
        ));
    }
    let changes = skip_reason(tool);
    if let (Some(_), Writes::Include) = (&changes, writes) {
        header.push(format!(
            "# It may change things: it {}; it runs because of --include-writes, in the \
             scenario's workspace and sandbox.",
            change_hint(tool)
        ));
    }
    let optional = optional_properties(&tool.input_schema);
    if !optional.is_empty() {
        header.push(format!(
            "# Optional arguments left out: {}.",
            comment(&optional.join(", "))
        ));
    }
    let tools_entry = if name.contains('/') {
        server.to_owned()
    } else {
        format!("{server}/{name}")
    };
    let mut call = Map::new();
    call.insert("call".to_owned(), Value::from(name));
    if args.as_object().is_some_and(|a| !a.is_empty()) {
        call.insert("args".to_owned(), args);
    }
    call.insert("expect".to_owned(), json!({"snapshot": true}));
    let mut body = Map::new();
    body.insert("name".to_owned(), Value::from(title));
    body.insert("tags".to_owned(), json!(["mcp", server]));
    if let (Some(reason), Writes::Skip) = (changes, writes) {
        body.insert("skip".to_owned(), Value::from(reason));
    }
    body.insert("tools".to_owned(), json!([tools_entry]));
    body.insert("model".to_owned(), Value::Array(vec![Value::Object(call)]));
    format!("{}\n{}", header.join("\n"), to_yaml(&Value::Object(body)))
}

/// A tool's name as it may stand in a scenario's name or a comment: on
/// one line (a line break as `\\n`), its first 200 characters.
fn shown(name: &str) -> String {
    comment(&clip(name))
}

/// `name`, or `name (2)`, `name (3)`… when it is among `taken`: scenario
/// names are unique in a suite (two tools' names may show alike).
fn unique_name(name: &str, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = name.to_owned();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{name} ({n})");
        n += 1;
    }
    candidate
}

/// `value` with every `${` in its strings written `$${`, so that the call
/// sends the text the schema gave (scenario variables are `${name}`;
/// docs/scenarios.md, "Variables").
fn escaped(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::from(s.replace("${", "$${")),
        Value::Array(items) => Value::Array(items.iter().map(escaped).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), escaped(v))).collect())
        }
        other => other.clone(),
    }
}

/// Why a tool is not run out of the box: it is not annotated read-only.
pub(crate) fn skip_reason(tool: &Tool) -> Option<String> {
    let read_only = tool.annotations.as_ref().and_then(|h| h.read_only_hint);
    if read_only == Some(true) {
        return None;
    }
    Some(format!(
        "it {}; check its arguments and what it reaches, then remove this line to run it (or \
         write the suite with `harness init --mcp --include-writes`)",
        change_hint(tool)
    ))
}

/// What a tool's annotations say of its changing things, for a tool not
/// annotated read-only.
fn change_hint(tool: &Tool) -> &'static str {
    let hints = tool.annotations.as_ref();
    if hints.and_then(|h| h.destructive_hint) == Some(true) {
        "is annotated destructive (destructiveHint: true)"
    } else if hints.and_then(|h| h.read_only_hint) == Some(false) {
        "is annotated as changing things (readOnlyHint: false)"
    } else {
        "sets no readOnlyHint, so by the protocol's defaults it may change things"
    }
}

/// The arguments made up for the object schema `schema` (at the JSON
/// pointer `at`), noting in `todo` each value that had to be `TODO`.
fn arguments(
    schema: &Map<String, Value>,
    at: &str,
    todo: &mut Vec<(String, String)>,
    depth: usize,
) -> Value {
    let mut args = Map::new();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Value::Object(args);
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (key, property) in properties {
        if !required.contains(&key.as_str()) {
            continue;
        }
        let pointer = format!("{at}/{key}");
        let value = match property {
            Value::Object(property) => value_for(key, property, &pointer, todo, depth + 1),
            _ => Value::Null,
        };
        args.insert(key.clone(), value);
    }
    Value::Object(args)
}

fn value_for(
    key: &str,
    schema: &Map<String, Value>,
    at: &str,
    todo: &mut Vec<(String, String)>,
    depth: usize,
) -> Value {
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(Value::Array(examples)) = schema.get("examples")
        && let Some(first) = examples.first()
    {
        return first.clone();
    }
    if let Some(value) = schema.get("default") {
        return value.clone();
    }
    if let Some(Value::Array(values)) = schema.get("enum")
        && let Some(first) = values.first()
    {
        return first.clone();
    }
    for choice in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(choice) {
            let branch = branches
                .iter()
                .filter_map(Value::as_object)
                .find(|b| b.get("type").and_then(Value::as_str) != Some("null"));
            if let Some(branch) = branch {
                return value_for(key, branch, at, todo, depth);
            }
        }
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null"),
        _ => "",
    };
    match kind {
        "string" if looks_like_path(key) => Value::from("."),
        "string" => {
            let what = match schema.get("description").and_then(Value::as_str) {
                Some(description) => format!("a string: {}", clip(description)),
                None => "a string".to_owned(),
            };
            todo.push((at.to_owned(), what));
            Value::from("TODO")
        }
        "integer" | "number" => schema
            .get("minimum")
            .filter(|m| m.is_number())
            .cloned()
            .unwrap_or_else(|| Value::from(1)),
        "boolean" => Value::Bool(false),
        "null" => Value::Null,
        "array" => {
            let needs_one = schema
                .get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 0);
            match schema.get("items") {
                Some(Value::Object(items)) if needs_one && depth < MAX_DEPTH => {
                    Value::Array(vec![value_for(
                        key,
                        items,
                        &format!("{at}/0"),
                        todo,
                        depth + 1,
                    )])
                }
                _ => Value::Array(Vec::new()),
            }
        }
        "object" if depth < MAX_DEPTH => arguments(schema, at, todo, depth),
        "object" => Value::Object(Map::new()),
        _ => {
            todo.push((at.to_owned(), "a value of no declared type".to_owned()));
            Value::from("TODO")
        }
    }
}

/// Whether a property's name says it holds a path (`path`, `repo_path`,
/// `directory`, `file`…).
fn looks_like_path(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    [
        "path",
        "paths",
        "dir",
        "directory",
        "folder",
        "file",
        "files",
        "filename",
        "root",
    ]
    .iter()
    .any(|word| key == *word || key.ends_with(&format!("_{word}")))
        || key.ends_with("path")
}

/// The names of the top-level properties that are not required.
fn optional_properties(schema: &Map<String, Value>) -> Vec<String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .filter(|k| !required.contains(&k.as_str()))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// A description cut to its first 200 characters, for a comment.
fn clip(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(200).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

/// A file name for a tool's scenario: its name with what a file name
/// should not hold as `_`, cut to [`MAX_STEM`] characters, made unique
/// among `taken` (`-2`, `-3`…), and never `harness`.
fn unique_stem(tool: &str, taken: &mut BTreeSet<String>) -> String {
    let mut stem: String = tool
        .chars()
        .take(MAX_STEM)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if stem.is_empty() || stem == "harness" || stem.starts_with('.') {
        stem = format!("tool_{stem}");
    }
    let mut candidate = stem.clone();
    let mut n = 2;
    while !taken.insert(candidate.to_ascii_lowercase()) {
        candidate = format!("{stem}-{n}");
        n += 1;
    }
    candidate
}

#[cfg(test)]
#[path = "server_suite_tests.rs"]
mod tests;
