//! Argument properties (docs/tools.md "Argument handling", D17): arbitrary JSON
//! and argument text are answered, never panicked on, and every value a
//! tool's schema accepts is accepted by the whole argument pipeline.

use proptest::prelude::*;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::ArgsValidator;
use super::normalize;
use crate::tools::ALL_TOOL_NAMES;
use crate::tools::CallArguments;
use crate::tools::Registry;
use crate::tools::ToolCall;
use crate::tools::Workspace;
use crate::tools::testutil::Harness;
use crate::tools::testutil::cases;
use crate::tools::testutil::manual_cases;

/// Any JSON value, biased towards what lenient normalisation looks at:
/// numeric and boolean strings, JSON text holding arrays, integral floats,
/// huge and negative numbers, nulls, and the property names of the tools.
fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        prop::sample::select(vec![0.0, 1.0, 2.5, -0.0, 1e19, -1e19, 1e300, 5e-324])
            .prop_map(Value::from),
        arb_json_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((arb_json_key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Strings that normalisation may convert, and arbitrary ones.
fn arb_json_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "5",
            " 7 ",
            "-3",
            "1e2",
            "2.5",
            "1e400",
            "NaN",
            "inf",
            "true",
            "FALSE",
            " true ",
            "yes",
            "null",
            "[]",
            "[{}]",
            "[{\"oldText\":\"a\",\"newText\":\"b\"}]",
            "{\"oldText\":\"a\"}",
            "[",
            "a.txt",
            "../x",
            "/etc/passwd",
            "~",
            "@a.txt",
            "file:///tmp/x",
        ])
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

/// Keys: mostly the property names the tools know, sometimes others.
fn arb_json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(
            vec![
                "path", "offset", "limit", "content", "edits", "oldText", "newText", "command",
                "timeout", "pattern", "glob", "ignoreCase", "literal", "context",
            ]
        )
        .prop_map(str::to_owned),
        1 => "[a-z~/]{0,6}",
    ]
}

/// A value that `schema` accepts, built from the schema itself. Covers the
/// subset of JSON Schema the tools use: objects with `properties` and
/// `required`, arrays with `items`, strings, integers (with `minimum`),
/// numbers and booleans. Integers come as plain integers and, sometimes,
/// as integral floats (`3.0`), which JSON Schema also calls integers.
fn arb_valid_for(schema: &Value) -> BoxedStrategy<Value> {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let empty = Map::new();
            let properties = schema
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let required: Vec<String> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let mut parts: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
            for (name, property) in properties {
                let name = name.clone();
                let value = arb_valid_for(property);
                if required.contains(&name) {
                    parts.push(value.prop_map(move |v| Some((name.clone(), v))).boxed());
                } else {
                    parts.push(
                        prop::option::of(value)
                            .prop_map(move |v| v.map(|v| (name.clone(), v)))
                            .boxed(),
                    );
                }
            }
            parts
                .prop_map(|entries| Value::Object(entries.into_iter().flatten().collect()))
                .boxed()
        }
        Some("array") => {
            let items = schema.get("items").cloned().unwrap_or(Value::Bool(true));
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            prop::collection::vec(arb_valid_for(&items), min..min + 4)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("string") => prop_oneof![
            3 => "[a-z./ ]{0,12}",
            1 => arb_json_string(),
        ]
        .prop_map(Value::String)
        .boxed(),
        Some("integer") => {
            let min = schema.get("minimum").and_then(Value::as_i64);
            let ints = match min {
                Some(min) => (min..=i64::MAX).boxed(),
                None => any::<i64>().boxed(),
            };
            let low = min.unwrap_or(-1000);
            prop_oneof![
                4 => ints.prop_map(Value::from),
                1 => (low.max(-1000)..low.max(-1000) + 5000).prop_map(|n| Value::from(n as f64)),
                1 => Just(Value::from(u64::MAX)),
            ]
            .boxed()
        }
        Some("number") => prop_oneof![
            any::<i64>().prop_map(Value::from),
            (-1e9f64..1e9).prop_map(Value::from),
        ]
        .boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        _ => arb_json().boxed(),
    }
}

/// A registry on an empty workspace, shared by the argument properties;
/// preparing a call never writes.
fn argument_registry() -> &'static (tempfile::TempDir, Registry) {
    static REGISTRY: std::sync::OnceLock<(tempfile::TempDir, Registry)> =
        std::sync::OnceLock::new();
    REGISTRY.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::builder(Workspace::local(dir.path()).unwrap())
            .build()
            .unwrap();
        (dir, registry)
    })
}

const SCHEMA_MISMATCH: &str = "passed the schema but not deserialisation";

fn arb_tool() -> impl Strategy<Value = &'static str> {
    prop::sample::select(ALL_TOOL_NAMES.to_vec())
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn preparing_arbitrary_json_never_panics_and_never_breaks_the_schema(
        tool in arb_tool(),
        args in arb_json(),
    ) {
        let (_, registry) = argument_registry();
        let schema = registry.spec(tool).map(|s| s.parameters.clone());
        prop_assert!(schema.is_some());
        let schema = schema.unwrap_or_default();
        let mut normalised = args.clone();
        let _ = normalize(&schema, &mut normalised);
        let validator = ArgsValidator::new(tool, &schema).unwrap();
        let problems = validator.problems(&normalised);
        let message = validator.message(&problems, &args);
        prop_assert!(problems.is_empty() || message.contains(&problems[0].path));
        // The registry also runs the tool's own preparation (edit's legacy
        // fields), so it may accept what plain validation refuses; either
        // way it answers with a result, never a panic, and never finds
        // that its schema and its typed arguments disagree.
        if let Err(err) = registry.prepare(&ToolCall::new("p", tool, args)) {
            let result = err.result();
            prop_assert!(result.is_error);
            prop_assert!(!result.text().contains(SCHEMA_MISMATCH), "{}", result.text());
        }
    }

    #[test]
    fn builtin_schemas_mean_the_same_in_both_drafts(
        tool in arb_tool(),
        args in arb_json(),
    ) {
        let (_, registry) = argument_registry();
        let schema = registry.spec(tool).map(|s| s.parameters.clone()).unwrap_or_default();
        let latest = ArgsValidator::new(tool, &schema).unwrap();
        let draft7 = ArgsValidator::builtin(tool, &schema).unwrap();
        // The arguments as sent and as a valid call's properties with one
        // of them replaced, so that both refusals and acceptances compare.
        let mut near = Map::new();
        if let (Some(valid), Value::Object(props)) = (valid_example(&schema), &args) {
            near = valid;
            for (key, value) in props {
                if near.contains_key(key) {
                    near.insert(key.clone(), value.clone());
                    break;
                }
            }
        }
        for value in [args, Value::Object(near)] {
            prop_assert_eq!(latest.problems(&value), draft7.problems(&value), "{}", value);
        }
    }

    #[test]
    fn argument_text_of_any_shape_is_answered_not_panicked_on(
        tool in arb_tool(),
        text in prop_oneof![any::<String>(), arb_json().prop_map(|v| {
            let text = v.to_string();
            let cut = text.len() / 2;
            text.get(..cut).unwrap_or_default().to_owned()
        })],
    ) {
        let (_, registry) = argument_registry();
        let call = ToolCall {
            id: "p".to_owned(),
            name: tool.to_owned(),
            arguments: CallArguments::Text(text),
        };
        if let Err(err) = registry.prepare(&call) {
            let result = err.result();
            prop_assert!(result.is_error);
            prop_assert!(!result.text().contains(SCHEMA_MISMATCH), "{}", result.text());
        }
    }
}

/// Every value a tool's schema accepts is accepted by the whole argument
/// pipeline (preparation, normalisation, validation, typed arguments).
fn check_schema_valid_values_are_accepted(tool: &'static str) {
    let (_, registry) = argument_registry();
    let schema = registry
        .spec(tool)
        .map(|s| s.parameters.clone())
        .unwrap_or_default();
    let validator = ArgsValidator::new(tool, &schema).unwrap();
    let mut runner = proptest::test_runner::TestRunner::new(manual_cases(128));
    let outcome = runner.run(&arb_valid_for(&schema), |value| {
        // The generator is right about the schema...
        prop_assert_eq!(validator.problems(&value), Vec::new(), "{}", value);
        // ...and the tool takes what its schema takes.
        let prepared = registry.prepare(&ToolCall::new("p", tool, value.clone()));
        prop_assert!(
            prepared.is_ok(),
            "{tool} refused schema-valid arguments {value}: {}",
            prepared.err().map(|r| r.to_string()).unwrap_or_default()
        );
        Ok(())
    });
    if let Err(err) = outcome {
        panic!("{tool}: {err}");
    }
}

#[test]
fn schema_valid_arguments_are_accepted_by_write_edit_bash_grep_find_ls() {
    for tool in ["write", "edit", "bash", "grep", "find", "ls"] {
        check_schema_valid_values_are_accepted(tool);
    }
}

/// Regression: `read`'s schema says `offset` and `limit` are JSON Schema
/// integers, which include integral floats (`1.0`) and integers beyond
/// `i64`; `ReadArgs` once held `i64` / `u64`, so such calls passed
/// validation and then failed deserialisation with an internal error.
/// Found by the property below with `{"path": "", "limit": 1.0}`.
#[test]
fn schema_valid_arguments_are_accepted_by_read() {
    check_schema_valid_values_are_accepted("read");
}

/// The minimal cases of that regression.
#[tokio::test]
async fn read_accepts_integral_floats_and_large_integers_for_offset_and_limit() {
    let h = Harness::local();
    h.add_file("a.txt", "one\ntwo\n");
    for args in [
        json!({ "path": "a.txt", "limit": 1.0 }),
        json!({ "path": "a.txt", "offset": 2.0 }),
        json!({ "path": "a.txt", "offset": u64::MAX }),
    ] {
        let result = h.call("read", args.clone()).await;
        assert!(
            !result.text().contains(SCHEMA_MISMATCH),
            "{args}: {}",
            result.text()
        );
    }
}

/// A value with every required property of `schema`, each of the simplest
/// kind its type allows.
fn valid_example(schema: &Value) -> Option<Map<String, Value>> {
    let props = schema.get("properties")?.as_object()?;
    let required = schema.get("required")?.as_array()?;
    let mut out = Map::new();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match props.get(name)?.get("type")?.as_str()? {
            "string" => json!("a"),
            "integer" | "number" => json!(1),
            "boolean" => json!(true),
            "array" => json!([]),
            "object" => json!({}),
            _ => return None,
        };
        out.insert(name.to_owned(), value);
    }
    Some(out)
}

/// The keywords [`ArgsValidator::builtin`] relies on meaning the same in
/// draft 7 and 2020-12 are the only ones the built-in schemas use.
#[test]
fn builtin_schemas_use_only_keywords_both_drafts_share() {
    fn keywords(value: &Value, found: &mut std::collections::BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    found.insert(key.clone());
                    match (key.as_str(), inner) {
                        ("properties", Value::Object(props)) => {
                            props.values().for_each(|v| keywords(v, found));
                        }
                        ("description", _) => {}
                        _ => keywords(inner, found),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| keywords(v, found)),
            _ => {}
        }
    }
    let (_, registry) = argument_registry();
    let mut found = std::collections::BTreeSet::new();
    for tool in ALL_TOOL_NAMES {
        keywords(&registry.spec(tool).unwrap().parameters, &mut found);
    }
    assert_eq!(
        found.into_iter().collect::<Vec<_>>(),
        [
            "additionalProperties",
            "description",
            "items",
            "minimum",
            "properties",
            "required",
            "type"
        ]
    );
}
