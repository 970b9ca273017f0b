use std::sync::Arc;

use pretty_assertions::assert_eq;
use rmcp::model::JsonObject;
use rmcp::model::Tool;
use rmcp::model::ToolAnnotations;
use serde_json::json;

use super::*;

fn tool(name: &str, schema: serde_json::Value) -> Tool {
    let schema: JsonObject = match schema {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Tool::new(name.to_owned(), "Does a thing.", Arc::new(schema))
}

fn rules(findings: &[Finding]) -> Vec<(&str, &str)> {
    findings.iter().map(|f| (f.tool.as_str(), f.rule)).collect()
}

#[test]
fn a_clean_tool_has_no_findings() {
    let clean = tool(
        "make_thing",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
    );
    assert_eq!(audit("srv", &[clean]), vec![]);
}

#[test]
fn names_are_judged_by_each_clients_rules() {
    let tools = [
        tool("dotted.name", json!({"type": "object"})),
        tool("9lives", json!({"type": "object"})),
        tool(&"x".repeat(65), json!({"type": "object"})),
        tool("ok-name", json!({"type": "object"})),
    ];
    let found = audit("srv", &tools);
    let long = "x".repeat(65);
    assert_eq!(
        rules(&found),
        vec![
            ("dotted.name", "name_codex"),
            ("9lives", "name_gemini"),
            (long.as_str(), "name_gemini"),
            (long.as_str(), "name_cursor"),
        ]
    );
    assert_eq!(
        found[1].message,
        "Gemini CLI refuses the name: it does not start with a letter or `_`"
    );
    assert_eq!(
        found[2].message,
        "Gemini CLI refuses the name: it is 65 characters, over 64"
    );
}

#[test]
fn claude_code_counts_the_server_name_in() {
    let name = "t".repeat(60);
    let server = "s".repeat(63);
    let found = audit(&server, &[tool(&name, json!({"type": "object"}))]);
    assert_eq!(
        rules(&found),
        vec![
            (name.as_str(), "name_claude_code"),
            (name.as_str(), "name_cursor")
        ]
    );
    assert_eq!(
        found[0].message,
        format!(
            "`mcp__{server}__{name}` is 130 characters, over Claude Code's 128; shorten the \
             tool's name or the server's"
        )
    );
    assert_eq!(
        found[1].message,
        "the server's name and the tool's are 123 characters together, over Cursor's 60; \
         shorten either"
    );
}

#[test]
fn gemini_keywords_are_found_at_any_depth_and_property_names_are_not_keywords() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "$schema": {"type": "string"},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "keys": {"type": "object", "propertyNames": {"pattern": "^a"}},
            "list": {"type": "array", "items": {"anyOf": [{"type": "object", "additionalProperties": false}]}}
        }
    });
    let found = audit("srv", &[tool("t", schema)]);
    let messages: Vec<&str> = found.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        vec![
            "the input schema holds `$schema` at the top: Gemini CLI's model API refuses it; \
             leave it out",
            "the input schema holds `additionalProperties` at `/properties/map`: Gemini CLI's \
             model API refuses it; leave it out",
            "the input schema holds `propertyNames` at `/properties/keys`: Gemini CLI's model \
             API refuses it; leave it out",
        ]
    );
}

#[test]
fn a_schema_that_is_not_an_object_and_untyped_properties() {
    let found = audit(
        "srv",
        &[
            tool("a", json!({"type": "string"})),
            tool(
                "b",
                json!({"properties": {"x": {"description": "?"}, "y": {"enum": [1]}}}),
            ),
        ],
    );
    assert_eq!(
        rules(&found),
        vec![
            ("a", "schema_not_object"),
            ("b", "schema_not_object"),
            ("b", "untyped_property")
        ]
    );
    assert_eq!(
        found[0].message,
        "the input schema's type is \"string\", not \"object\": clients refuse a tool whose \
         arguments are not an object"
    );
    assert_eq!(
        found[2].message,
        "the property at `/properties/x` has no `type`: clients that turn schemas into function \
         declarations guess or drop it; give it one"
    );
}

#[test]
fn long_descriptions_read_only_names_and_output_schemas() {
    let mut long = tool("make", json!({"type": "object"}));
    long.description = Some("d".repeat(1025).into());
    let reader = tool("get_user", json!({"type": "object"}));
    let said = tool("listThings", json!({"type": "object"}))
        .with_annotations(ToolAnnotations::new().read_only(true));
    let writer = tool("get_or_create", json!({"type": "object"}));
    let mut structured = tool("make2", json!({"type": "object"}));
    structured.output_schema = Some(Arc::new(JsonObject::new()));
    let found = audit("srv", &[long, reader, said, writer, structured]);
    assert_eq!(
        rules(&found),
        vec![
            ("make", "description_length"),
            ("get_user", "read_only_hint"),
            ("make2", "structured_content"),
        ]
    );
    assert_eq!(
        found[0].message,
        "the description is 1025 characters, over Gemini CLI's 1024; shorten it"
    );
    assert_eq!(found[1].level, Level::Warning);
}

#[test]
fn name_words_split_at_separators_and_case() {
    assert_eq!(name_words("getUserID"), vec!["get", "user", "id"]);
    assert_eq!(name_words("git_status"), vec!["git", "status"]);
    assert_eq!(name_words("a.b:c-d/e"), vec!["a", "b", "c", "d", "e"]);
    assert!(looks_read_only("read_text_file"));
    assert!(!looks_read_only("write_file"));
    assert!(!looks_read_only("convert_time"));
}

#[test]
fn the_tools_harness_mcp_serves_have_no_findings() {
    let dir = std::env::temp_dir();
    let workspace = crate::tools::Workspace::local(&dir).expect("workspace");
    let registry = crate::tools::Registry::builder(workspace)
        .build()
        .expect("registry");
    assert_eq!(
        audit("harness", &crate::mcp::tool_definitions(&registry)),
        vec![]
    );
}

#[test]
fn every_rule_is_listed_once() {
    let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), RULES.len());
}
