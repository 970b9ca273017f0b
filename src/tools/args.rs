//! Argument handling: lenient normalisation, then JSON Schema validation
//! (docs/tools.md "Argument handling", D17).
//!
//! Normalisation is driven by the tool's schema and is lenient only where
//! the meaning cannot change:
//!
//! - a numeric string for a number (`"10"`, `" 5 "`, `"1e2"`) becomes the
//!   number; `""` does not;
//! - `"true"` / `"false"` (any case) for a boolean become the boolean;
//! - a single object for an array of objects becomes a one-item list, and a
//!   string holding a JSON array becomes that array;
//! - `null` for an optional property means "absent";
//! - properties the schema does not know are dropped and listed, so the
//!   model learns they were ignored.
//!
//! It is strict where leniency would change the meaning: `null` for a
//! required string stays `null` and fails validation (pi turns it into the
//! string `"null"`). Validation then runs the compiled schema and reports
//! **every** problem with its JSON pointer, what was expected and what was
//! received.

use serde::Serialize;
use serde_json::Map;
use serde_json::Value;

use super::contract::ToolResult;
use super::error::ToolError;
use super::facts::ErrorKind;

/// What normalisation changed, for `details`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Normalization {
    /// JSON pointers of properties that were dropped as unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_fields: Vec<String>,
    /// JSON pointers of values that were converted (`"5"` to `5`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coerced_fields: Vec<String>,
}

impl Normalization {
    /// Whether nothing was changed.
    pub(crate) fn is_empty(&self) -> bool {
        self.ignored_fields.is_empty() && self.coerced_fields.is_empty()
    }
}

/// Normalises `value` against `schema` in place.
pub(crate) fn normalize(schema: &Value, value: &mut Value) -> Normalization {
    let mut notes = Normalization::default();
    normalize_at(schema, value, &mut String::new(), &mut notes);
    notes
}

fn schema_type(schema: &Value) -> Option<&str> {
    schema.get("type").and_then(Value::as_str)
}

fn normalize_at(
    schema: &Value,
    value: &mut Value,
    pointer: &mut String,
    notes: &mut Normalization,
) {
    match schema_type(schema) {
        Some("object") => normalize_object(schema, value, pointer, notes),
        Some("array") => {
            let items = schema.get("items");
            if let Value::String(text) = value
                && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text)
            {
                *value = parsed;
                notes.coerced_fields.push(pointer_or_root(pointer));
            }
            let wants_objects = items.and_then(schema_type) == Some("object");
            if wants_objects && value.is_object() {
                *value = Value::Array(vec![value.take()]);
                notes.coerced_fields.push(pointer_or_root(pointer));
            }
            if let (Some(items), Value::Array(elements)) = (items, value) {
                for (index, element) in elements.iter_mut().enumerate() {
                    let len = pointer.len();
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                    normalize_at(items, element, pointer, notes);
                    pointer.truncate(len);
                }
            }
        }
        Some(kind @ ("integer" | "number")) => {
            if let Value::String(text) = value
                && let Some(number) = parse_number(text, kind == "integer")
            {
                *value = number;
                notes.coerced_fields.push(pointer_or_root(pointer));
            }
        }
        Some("boolean") => {
            if let Value::String(text) = value {
                let parsed = match text.trim().to_ascii_lowercase().as_str() {
                    "true" => Some(true),
                    "false" => Some(false),
                    _ => None,
                };
                if let Some(parsed) = parsed {
                    *value = Value::Bool(parsed);
                    notes.coerced_fields.push(pointer_or_root(pointer));
                }
            }
        }
        _ => {}
    }
}

fn normalize_object(
    schema: &Value,
    value: &mut Value,
    pointer: &mut String,
    notes: &mut Normalization,
) {
    let Value::Object(object) = value else {
        return;
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let keys: Vec<String> = object.keys().cloned().collect();
    for key in keys {
        let len = pointer.len();
        pointer.push('/');
        pointer.push_str(&escape_pointer(&key));
        match properties.get(&key) {
            None => {
                object.remove(&key);
                notes.ignored_fields.push(pointer.clone());
            }
            Some(_)
                if object.get(&key).is_some_and(Value::is_null)
                    && !required.contains(&key.as_str()) =>
            {
                object.remove(&key);
            }
            Some(property) => {
                if let Some(child) = object.get_mut(&key) {
                    normalize_at(property, child, pointer, notes);
                }
            }
        }
        pointer.truncate(len);
    }
}

fn parse_number(text: &str, integer: bool) -> Option<Value> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(int) = trimmed.parse::<i64>() {
        return Some(Value::from(int));
    }
    let float: f64 = trimmed.parse().ok()?;
    if !float.is_finite() {
        return None;
    }
    if float.fract() == 0.0 && float.abs() < 9.007_199_254_740_992e15 {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "checked integral and in range"
        )]
        return Some(Value::from(float as i64));
    }
    if integer {
        // A fraction for an integer stays a string: validation says so.
        return None;
    }
    serde_json::Number::from_f64(float).map(Value::Number)
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn pointer_or_root(pointer: &str) -> String {
    if pointer.is_empty() {
        "/".to_owned()
    } else {
        pointer.to_owned()
    }
}

/// One validation problem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Problem {
    /// JSON pointer of the offending value (`/` for the arguments object).
    pub path: String,
    /// What the schema wants there.
    pub expected: String,
    /// What was sent (shortened).
    pub received: String,
}

/// `details` of arguments that failed validation.
#[derive(Debug, Serialize)]
pub(crate) struct ValidationDetails<'a> {
    /// Every problem, sorted by path.
    pub validation_errors: &'a [Problem],
}

/// A schema compiled once, with the tool name for messages.
pub(crate) struct ArgsValidator {
    tool: String,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for ArgsValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArgsValidator")
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}

impl ArgsValidator {
    /// Compiles `schema`; a broken schema is a programming error reported at
    /// registry build time.
    pub(crate) fn new(tool: &str, schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(schema)
            .map_err(|err| format!("the parameter schema of tool {tool} is invalid: {err}"))?;
        Ok(Self {
            tool: tool.to_owned(),
            validator,
        })
    }

    /// Compiles a built-in tool's `schema` as a draft 7 schema. Built-in
    /// schemas use only keywords that mean the same in draft 7 and 2020-12
    /// (`type`, `properties`, `required`, `additionalProperties`, `items`,
    /// `minimum`, `description`): `builtin_schemas_use_only_keywords_both_drafts_share`
    /// checks the list, `builtin_schemas_mean_the_same_in_both_drafts` the
    /// answers. The compiler first checks a schema against its draft's
    /// meta-schema, and draft 7's is much the smaller: `harness call ls` on
    /// an empty directory takes 4.2 ms of CPU this way, 5.5 ms as 2020-12.
    pub(crate) fn builtin(tool: &str, schema: &Value) -> Result<Self, String> {
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(schema)
            .map_err(|err| format!("the parameter schema of tool {tool} is invalid: {err}"))?;
        Ok(Self {
            tool: tool.to_owned(),
            validator,
        })
    }

    /// Every problem of `value`, sorted by path.
    pub(crate) fn problems(&self, value: &Value) -> Vec<Problem> {
        let mut problems: Vec<Problem> = self
            .validator
            .iter_errors(value)
            .map(|error| describe(&error))
            .collect();
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        problems.dedup();
        problems
    }

    /// The model-facing message for a failed validation.
    pub(crate) fn message(&self, problems: &[Problem], raw: &Value) -> String {
        let mut text = format!("Validation failed for tool \"{}\":\n", self.tool);
        for problem in problems {
            text.push_str(&format!(
                "  - {}: expected {}, received {}\n",
                problem.path, problem.expected, problem.received
            ));
        }
        let received = serde_json::to_string_pretty(raw).unwrap_or_else(|_| raw.to_string());
        text.push_str(&format!(
            "\nReceived arguments:\n{}\n\nFix the listed arguments and call {} again.",
            shorten(&received, 2000),
            self.tool
        ));
        text
    }
}

fn describe(error: &jsonschema::ValidationError<'_>) -> Problem {
    use jsonschema::error::TypeKind;
    use jsonschema::error::ValidationErrorKind as Kind;
    let mut path = error.instance_path().to_string();
    let instance = error.instance();
    let received = describe_value(instance);
    let (expected, received) = match error.kind() {
        Kind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            path = format!("{path}/{}", escape_pointer(&name));
            (
                "a value (the property is required)".to_owned(),
                "nothing".to_owned(),
            )
        }
        Kind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => article(&t.to_string()),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| article(&t.to_string()))
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            (expected, received)
        }
        Kind::MinItems { limit } => (
            format!("at least {limit} item{}", plural(*limit)),
            format!("{} items", instance.as_array().map_or(0, Vec::len)),
        ),
        Kind::MaxItems { limit } => (
            format!("at most {limit} item{}", plural(*limit)),
            format!("{} items", instance.as_array().map_or(0, Vec::len)),
        ),
        Kind::Minimum { limit } => (format!("a number >= {limit}"), received),
        Kind::Maximum { limit } => (format!("a number <= {limit}"), received),
        Kind::ExclusiveMinimum { limit } => (format!("a number > {limit}"), received),
        Kind::ExclusiveMaximum { limit } => (format!("a number < {limit}"), received),
        Kind::MinLength { limit } => (
            format!("a string of at least {limit} character{}", plural(*limit)),
            received,
        ),
        Kind::Enum { options } => (format!("one of {options}"), received),
        Kind::AdditionalProperties { unexpected } => (
            "no other properties".to_owned(),
            format!("unknown properties {}", unexpected.join(", ")),
        ),
        _ => (error.to_string(), received),
    };
    Problem {
        path: if path.is_empty() {
            "/".to_owned()
        } else {
            path
        },
        expected,
        received,
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn article(kind: &str) -> String {
    match kind {
        "integer" | "object" | "array" => format!("an {kind}"),
        "null" => "null".to_owned(),
        other => format!("a {other}"),
    }
}

/// `string "abc"`, `number 2.5`, `null`, `object {…}` — shortened.
pub(crate) fn describe_value(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("{kind} {}", shorten(&value.to_string(), 80))
}

/// Cuts `text` to about `max` characters, marking the cut.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!(
            "{}… [{} more characters]",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

#[cfg(test)]
#[path = "args_properties.rs"]
mod properties;

/// `details` of argument text that is not JSON.
#[derive(Debug, Serialize)]
struct UnparsedDetails {
    raw_arguments: String,
}

/// The arguments a model sent as text, parsed; text that is not JSON is
/// an error result for the model (it was most likely cut off).
pub(super) fn parse_argument_text(tool: &str, text: &str) -> Result<Value, Box<ToolResult>> {
    serde_json::from_str(text).map_err(|err| {
        let hint = if err.is_eof() {
            "The text ends in the middle of a value, so the call was probably cut off."
        } else {
            "The text is not a JSON object."
        };
        Box::new(ToolResult::from(ToolError::failure_with(
            ErrorKind::ArgumentsCutOff,
            format!(
                "The arguments of tool \"{tool}\" are not valid JSON ({err}). {hint} Received: \
                 {}\nSend the call again with a complete JSON object.",
                shorten(text, 200)
            ),
            &UnparsedDetails {
                raw_arguments: shorten(text, 2000),
            },
        )))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn read_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer"},
                "limit": {"type": "integer", "minimum": 1},
                "flag": {"type": "boolean"},
                "edits": {"type": "array", "minItems": 1, "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"]
                }}
            },
            "required": ["path"]
        })
    }

    #[test]
    fn numeric_and_boolean_strings_are_converted() {
        let mut v = json!({"path": "a", "offset": " 5 ", "limit": "1e2", "flag": "TRUE"});
        let notes = normalize(&read_schema(), &mut v);
        assert_eq!(
            v,
            json!({"path": "a", "offset": 5, "limit": 100, "flag": true})
        );
        assert_eq!(notes.coerced_fields, vec!["/offset", "/limit", "/flag"]);
    }

    #[test]
    fn meaning_changing_conversions_are_not_made() {
        let mut v = json!({"path": null, "offset": "", "limit": "2.5", "flag": "yes"});
        normalize(&read_schema(), &mut v);
        assert_eq!(
            v,
            json!({"path": null, "offset": "", "limit": "2.5", "flag": "yes"})
        );
    }

    #[test]
    fn null_optional_is_absent_and_unknown_fields_are_listed() {
        let mut v = json!({"path": "a", "offset": null, "colour": "red", "x/y": 1});
        let notes = normalize(&read_schema(), &mut v);
        assert_eq!(v, json!({"path": "a"}));
        assert_eq!(notes.ignored_fields, vec!["/colour", "/x~1y"]);
    }

    #[test]
    fn single_object_and_json_text_become_lists() {
        let mut v = json!({"path": "a", "edits": {"oldText": "x", "newText": "y", "why": 1}});
        let notes = normalize(&read_schema(), &mut v);
        assert_eq!(
            v,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
        assert_eq!(notes.ignored_fields, vec!["/edits/0/why"]);
        let mut v = json!({"path": "a", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]"});
        normalize(&read_schema(), &mut v);
        assert_eq!(
            v,
            json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}]})
        );
    }

    #[test]
    fn every_problem_is_listed_with_pointer_expected_and_received() {
        let validator = ArgsValidator::new("read", &read_schema()).unwrap();
        let v = json!({"path": null, "offset": "abc", "limit": 0, "edits": [{"oldText": 1}]});
        let problems = validator.problems(&v);
        let lines: Vec<String> = problems
            .iter()
            .map(|p| {
                format!(
                    "{}: expected {}, received {}",
                    p.path, p.expected, p.received
                )
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                "/edits/0/newText: expected a value (the property is required), received nothing",
                "/edits/0/oldText: expected a string, received number 1",
                "/limit: expected a number >= 1, received number 0",
                "/offset: expected an integer, received string \"abc\"",
                "/path: expected a string, received null",
            ]
        );
    }

    #[test]
    fn missing_required_and_wrong_root_type() {
        let validator = ArgsValidator::new("read", &read_schema()).unwrap();
        let problems = validator.problems(&json!({}));
        assert_eq!(problems[0].path, "/path");
        let problems = validator.problems(&json!("src/main.rs"));
        assert_eq!(
            problems,
            vec![Problem {
                path: "/".into(),
                expected: "an object".into(),
                received: "string \"src/main.rs\"".into()
            }]
        );
    }

    #[test]
    fn message_lists_problems_and_the_received_arguments() {
        let validator = ArgsValidator::new("read", &read_schema()).unwrap();
        let raw = json!({"offset": 2});
        let problems = validator.problems(&raw);
        assert_eq!(
            validator.message(&problems, &raw),
            "Validation failed for tool \"read\":\n  - /path: expected a value (the property is \
             required), received nothing\n\nReceived arguments:\n{\n  \"offset\": 2\n}\n\nFix the \
             listed arguments and call read again."
        );
    }

    #[test]
    fn shorten_marks_the_cut() {
        assert_eq!(shorten("abcdef", 3), "abc… [3 more characters]");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
