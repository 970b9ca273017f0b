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
    let files = suite("srv", &command, &tools, Writes::Skip);
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
    // With --include-writes, the tools that may change things run too,
    // each saying why it may.
    let files = suite("srv", &command, &tools, Writes::Include);
    assert_eq!(
        files[1].text,
        suite("srv", &command, &tools, Writes::Skip)[1].text
    );
    assert!(files.iter().all(|f| !f.text.contains("\nskip: ")));
    insta::assert_snapshot!("server_suite_wipe_included", files[2].text);
    insta::assert_snapshot!("server_suite_unannotated_included", files[3].text);
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
    for file in suite("srv", &["srv".to_owned()], &tools, Writes::Skip) {
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

/// Issue 42 item 5: a server's hostile tools made suites that did not
/// load (`${HOME}` and `${workspace}` in an example or a default, a name
/// with a line break) or could not be written (a 10 KB name). Every file
/// is written under its own name, the suite loads, and each call sends
/// the values the schema gave, as written there.
#[test]
fn hostile_names_and_values_make_a_suite_that_loads_and_sends_them_as_given() {
    let long = "x".repeat(10_240);
    let tools = [
        tool(
            "vars",
            json!({"type": "object", "properties": {
                "home": {"type": "string", "examples": ["${HOME}/x"]},
                "where": {"type": "string", "default": "${workspace}"},
                "fixed": {"const": {"list": ["a ${b}", "$${c}"]}},
                "pick": {"enum": ["${x"]}
            }, "required": ["home", "where", "fixed", "pick"]}),
            Some(true),
        ),
        tool("line\nbreak", json!({"type": "object"}), Some(true)),
        tool("line\\nbreak", json!({"type": "object"}), Some(true)),
        tool(&long, json!({"type": "object"}), Some(true)),
        tool(&format!("{long}y"), json!({"type": "object"}), Some(true)),
        tool("a${HOME}b", json!({"type": "object"}), Some(true)),
    ];
    let dir = tempfile::tempdir().expect("tempdir");
    let files = suite("srv", &["srv".to_owned()], &tools, Writes::Skip);
    for file in &files {
        std::fs::write(dir.path().join(&file.path), &file.text).expect("write");
    }
    let found = crate::run::discover(
        &[dir.path().to_path_buf()],
        &crate::run::Selection::default(),
    );
    let errors: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
    assert_eq!(errors, Vec::<String>::new());
    let vars =
        std::collections::BTreeMap::from([("workspace".to_owned(), "/workspace".to_owned())]);
    let vars = &vars;
    let mut sent: Vec<(String, String, Value)> = found
        .scenarios
        .iter()
        .flat_map(|s| {
            s.script.steps.iter().filter_map(move |step| match step {
                crate::agent::FauxStep::Calls(calls) => calls.first().map(|c| {
                    let crate::agent::FauxArgs::Json(args) = &c.args else {
                        return (s.name.clone(), c.name.clone(), Value::Null);
                    };
                    (s.name.clone(), c.name.clone(), substituted(args, vars))
                }),
                crate::agent::FauxStep::Say(_) => None,
            })
        })
        .collect();
    sent.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let short = "x".repeat(200);
    assert_eq!(
        sent,
        [
            (
                "srv a${HOME}b".to_owned(),
                "a${HOME}b".to_owned(),
                json!({})
            ),
            (
                "srv line\\nbreak".to_owned(),
                "line\nbreak".to_owned(),
                json!({})
            ),
            (
                "srv line\\nbreak (2)".to_owned(),
                "line\\nbreak".to_owned(),
                json!({})
            ),
            (
                "srv vars".to_owned(),
                "vars".to_owned(),
                json!({"home": "${HOME}/x", "where": "${workspace}",
                       "fixed": {"list": ["a ${b}", "$${c}"]}, "pick": "${x"})
            ),
            (format!("srv {short}…"), long.clone(), json!({})),
            (format!("srv {short}… (2)"), format!("{long}y"), json!({})),
        ]
    );
    let paths: Vec<usize> = files.iter().map(|f| f.path.len()).collect();
    assert!(paths.iter().all(|&n| n <= 100), "{paths:?}");
}

/// `value` with `${var}` substituted in every string, as a call sends it.
fn substituted(value: &Value, vars: &std::collections::BTreeMap<String, String>) -> Value {
    match value {
        Value::String(s) => Value::from(crate::base::vars::substitute(s, vars)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substituted(v, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substituted(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}
