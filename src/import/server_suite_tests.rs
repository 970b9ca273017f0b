use std::sync::Arc;

use pretty_assertions::assert_eq;
use rmcp::model::JsonObject;
use rmcp::model::Tool;
use rmcp::model::ToolAnnotations;
use serde_json::json;

use super::*;

fn tool(name: &str, schema: Value, read_only: Option<bool>) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let tool = Tool::new(name.to_owned(), "Does a thing.", Arc::new(schema));
    match read_only {
        Some(true) => tool.with_annotations(ToolAnnotations::new().read_only(true)),
        Some(false) => {
            tool.with_annotations(ToolAnnotations::new().read_only(false).destructive(true))
        }
        None => tool,
    }
}

fn args_of(schema: Value) -> (Value, Vec<(String, String)>) {
    let Value::Object(schema) = schema else {
        return (Value::Null, Vec::new());
    };
    let mut todo = Vec::new();
    (arguments(&schema, "", &mut todo, 0), todo)
}

#[test]
fn required_properties_get_values_from_their_schemas() {
    let (args, todo) = args_of(json!({
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["error", "success"]},
            "n": {"type": "integer", "minimum": 3},
            "x": {"type": "number"},
            "flag": {"type": "boolean"},
            "size": {"type": "integer", "default": 7},
            "zone": {"type": "string", "examples": ["Europe/London"]},
            "fixed": {"const": "v1"},
            "repo_path": {"type": "string"},
            "files": {"type": "array", "minItems": 1, "items": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "base": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
            "inner": {"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]},
            "message": {"type": "string", "description": "What to say"},
            "left_out": {"type": "string"}
        },
        "required": ["kind", "n", "x", "flag", "size", "zone", "fixed", "repo_path", "files",
                     "tags", "base", "inner", "message"]
    }));
    assert_eq!(
        args,
        json!({
            "kind": "error", "n": 3, "x": 1, "flag": false, "size": 7, "zone": "Europe/London",
            "fixed": "v1", "repo_path": ".", "files": ["."], "tags": [], "base": 1,
            "inner": {"a": false}, "message": "TODO"
        })
    );
    assert_eq!(
        todo,
        vec![("/message".to_owned(), "a string: What to say".to_owned())]
    );
}

#[test]
fn a_file_per_tool_and_the_suite_file() {
    let tools = [
        tool(
            "echo",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            Some(true),
        ),
        tool("wipe", json!({"type": "object"}), Some(false)),
        tool("a.b", json!({"type": "object"}), None),
        tool("a_b", json!({"type": "object"}), Some(true)),
    ];
    let command = ["npx".to_owned(), "-y".to_owned(), "srv".to_owned()];
    let files = suite("srv", &command, &tools);
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "harness.yaml",
            "echo.yaml",
            "wipe.yaml",
            "a_b.yaml",
            "a_b-2.yaml"
        ]
    );
    insta::assert_snapshot!("server_suite_harness", files[0].text);
    insta::assert_snapshot!("server_suite_echo", files[1].text);
    insta::assert_snapshot!("server_suite_wipe", files[2].text);
    insta::assert_snapshot!("server_suite_unannotated", files[3].text);
}

#[test]
fn the_suite_loads() {
    let tools = [
        tool(
            "echo",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            Some(true),
        ),
        tool("wipe", json!({"type": "object"}), Some(false)),
        tool("odd/name", json!({"type": "object"}), Some(true)),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    for file in suite("srv", &["srv".to_owned()], &tools) {
        std::fs::write(dir.path().join(&file.path), &file.text).expect("write");
    }
    let found = crate::run::discover(
        &[dir.path().to_path_buf()],
        &crate::run::Selection::default(),
    );
    let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors, Vec::<String>::new());
    let names: Vec<&str> = found.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["srv echo", "srv odd/name", "srv wipe"]);
}

#[test]
fn server_names_are_file_names_a_server_name_can_hold() {
    assert_eq!(server_name("/usr/bin/mcp-server-time"), "mcp-server-time");
    assert_eq!(server_name("server.py"), "server_py");
    assert_eq!(server_name("/"), "server");
}
