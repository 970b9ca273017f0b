//! `tools/list`: the registry's active tools as MCP tool definitions.
//!
//! Names, descriptions and input schemas are exactly what `harness tools
//! --json` prints (the definitions a model gets in-process), in the
//! registry's prompt order, so the list is the same on every call and in
//! every process (clients cache prompts on it). A top-level `$schema` is
//! left out: Gemini CLI rejects schemas that carry one. Each built-in tool
//! says how it behaves through the four annotation hints, and every tool
//! tells Claude Code how long its results may be before it would save them
//! to a file instead of showing them to the model.

use std::sync::Arc;

use rmcp::model::JsonObject;
use rmcp::model::MetaObject;
use rmcp::model::Tool;
use rmcp::model::ToolAnnotations;
use serde_json::Value;

use crate::tools::Limits;
use crate::tools::Registry;
use crate::tools::ToolSpec;

/// The `_meta` key of a tool definition by which Claude Code lets a tool's
/// results be longer than its default of 50,000 characters before it
/// saves them to a file and shows the model a preview.
pub const MAX_RESULT_CHARS_META_KEY: &str = "anthropic/maxResultSizeChars";

/// Characters a result may hold beyond `max_bytes` of tool output: the
/// truncation notices, and the messages of errors.
const NOTICE_ALLOWANCE: usize = 4096;

/// The most Claude Code takes for [`MAX_RESULT_CHARS_META_KEY`].
const CLAUDE_MAX_RESULT_CHARS: usize = 500_000;

/// The active tools of `registry`, as `tools/list` sends them.
pub fn tool_definitions(registry: &Registry) -> Vec<Tool> {
    let limits = registry.limits();
    registry
        .specs()
        .map(|spec| definition(spec, limits))
        .collect()
}

fn definition(spec: &ToolSpec, limits: &Limits) -> Tool {
    let mut schema = match &spec.parameters {
        Value::Object(map) => map.clone(),
        // Every tool's parameters are an object schema; anything else is
        // wrapped so the definition stays valid.
        other => {
            let mut map = JsonObject::new();
            map.insert("type".to_owned(), Value::from("object"));
            map.insert("description".to_owned(), Value::from(other.to_string()));
            map
        }
    };
    schema.remove("$schema");
    let mut meta = JsonObject::new();
    meta.insert(
        MAX_RESULT_CHARS_META_KEY.to_owned(),
        Value::from(max_result_chars(limits)),
    );
    let mut tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        Arc::new(schema),
    )
    .with_title(spec.label.clone())
    .with_meta(MetaObject(meta));
    if let Some(hints) = annotations(&spec.name) {
        tool = tool.with_annotations(hints);
    }
    tool
}

/// The longest text a result can have under `limits`: every tool keeps at
/// most `max_bytes` of output, and adds at most a notice.
fn max_result_chars(limits: &Limits) -> usize {
    limits
        .max_bytes
        .saturating_add(NOTICE_ALLOWANCE)
        .min(CLAUDE_MAX_RESULT_CHARS)
}

/// The annotation hints of a built-in tool (`None` for a tool of one's
/// own: clients then assume the protocol's defaults). Every hint is set,
/// so no client falls back to a default that would be wrong:
///
/// | tool | readOnly | destructive | idempotent | openWorld |
/// | --- | --- | --- | --- | --- |
/// | read, grep, find, ls | true | false | true | false |
/// | write | false | true | true | false |
/// | edit | false | true | false | false |
/// | bash | false | true | false | true |
pub fn annotations(tool: &str) -> Option<ToolAnnotations> {
    let (read_only, destructive, idempotent, open_world) = match tool {
        "read" | "grep" | "find" | "ls" => (true, false, true, false),
        "write" => (false, true, true, false),
        "edit" => (false, true, false, false),
        "bash" => (false, true, false, true),
        _ => return None,
    };
    Some(
        ToolAnnotations::new()
            .read_only(read_only)
            .destructive(destructive)
            .idempotent(idempotent)
            .open_world(open_world),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ALL_TOOL_NAMES;
    use crate::tools::Workspace;
    use pretty_assertions::assert_eq;

    fn registry(limits: Limits) -> Registry {
        let dir = std::env::temp_dir();
        let workspace = Workspace::local(&dir).unwrap();
        Registry::builder(workspace).limits(limits).build().unwrap()
    }

    #[test]
    fn the_list_is_the_registry_definitions_in_prompt_order_with_hints() {
        let registry = registry(Limits::default());
        let listed = tool_definitions(&registry);
        let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ALL_TOOL_NAMES);
        for (tool, spec) in listed.iter().zip(registry.specs()) {
            assert_eq!(tool.description.as_deref(), Some(spec.description.as_str()));
            assert_eq!(tool.schema_as_json_value(), spec.parameters);
            assert_eq!(tool.title.as_deref(), Some(spec.label.as_ref()));
            assert_eq!(tool.annotations, annotations(&spec.name));
            assert_eq!(
                tool.meta.as_ref().map(|m| m.0.clone()),
                Some(
                    serde_json::json!({ "anthropic/maxResultSizeChars": 51200 + 4096 })
                        .as_object()
                        .unwrap()
                        .clone()
                )
            );
        }
    }

    #[test]
    fn the_hints_of_each_tool_are_all_set() {
        let wire: Vec<Value> = ALL_TOOL_NAMES
            .iter()
            .map(|name| serde_json::to_value(annotations(name)).unwrap())
            .collect();
        let row = |r: bool, d: bool, i: bool, o: bool| {
            serde_json::json!({
                "readOnlyHint": r, "destructiveHint": d, "idempotentHint": i, "openWorldHint": o
            })
        };
        assert_eq!(
            wire,
            vec![
                row(true, false, true, false),  // read
                row(false, true, false, true),  // bash
                row(false, true, false, false), // edit
                row(false, true, true, false),  // write
                row(true, false, true, false),  // grep
                row(true, false, true, false),  // find
                row(true, false, true, false),  // ls
            ]
        );
        assert_eq!(annotations("my_tool"), None);
    }

    /// What strict clients refuse: Gemini CLI (`$schema`, `propertyNames`,
    /// object-valued `additionalProperties`, descriptions over 1024
    /// characters), the Inspector's `--strict` (`type` lists, schemas that
    /// are `true`).
    #[test]
    fn no_schema_holds_what_a_strict_client_refuses() {
        fn walk(value: &Value, at: &str, found: &mut Vec<String>) {
            match value {
                Value::Object(map) => {
                    for (key, inner) in map {
                        let here = format!("{at}/{key}");
                        let refused = key == "$schema"
                            || key == "propertyNames"
                            || (key == "additionalProperties" && inner.is_object())
                            || (key == "type" && !inner.is_string());
                        if refused {
                            found.push(here.clone());
                        }
                        walk(inner, &here, found);
                    }
                }
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        walk(item, &format!("{at}/{i}"), found);
                    }
                }
                Value::Bool(true) if !at.ends_with("additionalProperties") => {
                    found.push(at.to_owned());
                }
                _ => {}
            }
        }
        let limits = Limits {
            max_lines: u32::MAX as usize,
            max_bytes: u32::MAX as usize,
            ..Limits::default()
        };
        let mut found = Vec::new();
        for tool in tool_definitions(&registry(limits)) {
            walk(&tool.schema_as_json_value(), &tool.name, &mut found);
            let length = tool.description.as_deref().unwrap_or("").chars().count();
            if length > 1024 {
                found.push(format!("{} description: {length} characters", tool.name));
            }
        }
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn the_result_size_hint_follows_the_byte_cap_up_to_claude_codes_maximum() {
        let small = Limits {
            max_bytes: 1000,
            ..Limits::default()
        };
        let huge = Limits {
            max_bytes: 10_000_000,
            ..Limits::default()
        };
        assert_eq!(
            (max_result_chars(&small), max_result_chars(&huge)),
            (5096, 500_000)
        );
    }
}
