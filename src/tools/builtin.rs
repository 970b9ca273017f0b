//! The built-in tools as a set: what each can show (the behaviours its
//! module declares next to its code), and the one place typed facts are
//! read back from `details` JSON, for results that did not keep theirs (a
//! result read back from JSON, or made outside the tools).

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::bash;
use super::contract::ToolResult;
use super::edit;
use super::facts::EditRule;
use super::facts::ErrorClass;
use super::facts::ErrorKind;
use super::facts::Facts;
use super::ls;
use super::read;
use super::search::find;
use super::search::grep;
use super::write;

/// What each built-in tool can show, in prompt order: each tool's
/// `BEHAVIOURS`, which `harness run --coverage` lists (docs/reports.md,
/// "Coverage").
pub const TOOL_BEHAVIOURS: [(&str, &[&str]); 7] = [
    ("read", read::BEHAVIOURS),
    ("bash", bash::BEHAVIOURS),
    ("edit", edit::BEHAVIOURS),
    ("write", write::BEHAVIOURS),
    ("grep", grep::BEHAVIOURS),
    ("find", find::BEHAVIOURS),
    ("ls", ls::BEHAVIOURS),
];

/// The typed facts of `result`, a result of the tool named `tool`: the
/// ones it holds, else what its `details` say ([`parse_facts`]).
pub fn facts_of<'a>(tool: &str, result: &'a ToolResult) -> Cow<'a, Facts> {
    match &result.facts {
        Some(facts) => Cow::Borrowed(facts),
        None => Cow::Owned(parse_facts(tool, result.is_error, result.details.as_ref())),
    }
}

/// The facts the `details` of a result of `tool` say: the tool's details
/// struct, the kind of an error where `details` name it, and whether the
/// arguments were normalised. An error whose `details` say nothing of its
/// kind (a missing file, a bad pattern, an offset past the end …) has no
/// kind here: only the result the tool made knows it.
pub fn parse_facts(tool: &str, is_error: bool, details: Option<&Value>) -> Facts {
    let Some(details) = details.filter(|d| d.is_object()) else {
        return Facts::default();
    };
    let listed = |name: &str| key::<Vec<Value>>(details, name).is_some_and(|v| !v.is_empty());
    let error = if is_error {
        error_kind(tool, details)
    } else {
        None
    };
    let mut facts =
        Facts::default().with_normalised(listed("coerced_fields") || listed("ignored_fields"));
    facts.error = error;
    let tool_details = matches!(
        error,
        None | Some(ErrorKind::Command | ErrorKind::Cancelled)
    );
    if tool_details {
        facts = match tool {
            "read" => with::<read::ReadDetails>(facts, details),
            "bash" => with::<bash::BashDetails>(facts, details),
            "edit" => with::<edit::EditDetails>(facts, details),
            "write" => with::<write::WriteDetails>(facts, details),
            "grep" => with::<grep::GrepDetails>(facts, details),
            "find" => with::<find::FindDetails>(facts, details),
            "ls" => with::<ls::LsDetails>(facts, details),
            _ => facts,
        };
    }
    facts
}

/// The value of `name` in `details`, if it is a `T`.
fn key<T: DeserializeOwned>(details: &Value, name: &str) -> Option<T> {
    details
        .get(name)
        .filter(|v| !v.is_null())
        .and_then(|v| T::deserialize(v).ok())
}

/// `facts` with `details` as a `T`, when they are one.
fn with<T: super::facts::ToolDetails + DeserializeOwned>(facts: Facts, details: &Value) -> Facts {
    match T::deserialize(details) {
        Ok(typed) => facts.with_details(typed),
        Err(_) => facts,
    }
}

/// The kind of an error result, where its `details` name it.
fn error_kind(tool: &str, details: &Value) -> Option<ErrorKind> {
    let has = |name: &str| details.get(name).is_some_and(|v| !v.is_null());
    let yes = |name: &str| key::<bool>(details, name) == Some(true);
    if has("validation_errors") {
        return Some(ErrorKind::InvalidArguments);
    }
    if has("available_tools") {
        return Some(ErrorKind::UnknownTool);
    }
    if has("raw_arguments") {
        return Some(ErrorKind::ArgumentsCutOff);
    }
    if let Some(class) = key::<String>(details, "error_class") {
        return ErrorClass::from_name(&class).map(ErrorKind::Io);
    }
    if tool == "edit"
        && let Some(rule) = key::<String>(details, "error")
    {
        return EditRule::from_name(&rule).map(ErrorKind::Edit);
    }
    if has("binary") {
        return Some(ErrorKind::Binary);
    }
    if tool == "bash" {
        if yes("cancelled") {
            return Some(ErrorKind::Cancelled);
        }
        if yes("timed_out") || has("exit_code") || has("signal") {
            return Some(ErrorKind::Command);
        }
        return None;
    }
    yes("timed_out").then_some(ErrorKind::SearchTimedOut)
}

#[cfg(test)]
#[path = "builtin_tests.rs"]
mod tests;
