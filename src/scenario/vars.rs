//! Variables in expectations (docs/scenarios.md, "Variables"): finding the
//! `${name}` references of `expect:` strings when a file loads, and
//! expanding them when a run is checked.
//!
//! Every string of a call's `expect` and of the run's `expect.files` is
//! expanded, with `$${` a literal `${` and unbound names left as written;
//! in a regex (`error: REGEX`, `matches`), a value stands for its literal
//! text (it is regex-escaped). File paths, tool names, modes and snapshot
//! files are not expanded.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::base::vars::substitute;
use crate::base::vars::substitute_with;
use crate::base::vars::var_refs;

use super::detail_spec::DetailCheck;
use super::model::CallExpect;
use super::model::ErrorExpect;
use super::model::FileExpect;
use super::two_way::StringList;
use super::yaml::Seg;

/// Variables by name.
pub(crate) type Vars = BTreeMap<String, String>;

/// A reference and the path (below the `expect` it is in) of its string.
pub(crate) type Ref = (String, Vec<Seg>);

fn key(name: &str) -> Seg {
    Seg::Key(name.to_owned())
}

fn text_refs(text: &str, path: Vec<Seg>, out: &mut Vec<Ref>) {
    for name in var_refs(text) {
        out.push((name, path.clone()));
    }
}

fn list_refs(list: Option<&StringList>, name: &str, out: &mut Vec<Ref>) {
    let Some(StringList(items)) = list else {
        return;
    };
    for (i, item) in items.iter().enumerate() {
        // A single string is written without a list.
        let path = if items.len() == 1 {
            vec![key(name)]
        } else {
            vec![key(name), Seg::Index(i)]
        };
        text_refs(item, path, out);
    }
}

/// The `${name}` references in JSON strings, with their paths.
pub(crate) fn value_refs(value: &Value, path: Vec<Seg>, out: &mut Vec<Ref>) {
    match value {
        Value::String(s) => text_refs(s, path, out),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let mut p = path.clone();
                p.push(Seg::Index(i));
                value_refs(item, p, out);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let mut p = path.clone();
                p.push(key(k));
                value_refs(item, p, out);
            }
        }
        _ => {}
    }
}

/// Every reference in a call's expectations.
pub(crate) fn call_expect_refs(e: &CallExpect) -> Vec<Ref> {
    let mut out = Vec::new();
    if let Some(ErrorExpect::Matches(p)) = &e.error {
        text_refs(p, vec![key("error")], &mut out);
    }
    list_refs(e.contains.as_ref(), "contains", &mut out);
    list_refs(e.not_contains.as_ref(), "not_contains", &mut out);
    if let Some(p) = &e.matches {
        text_refs(p, vec![key("matches")], &mut out);
    }
    if let Some(t) = &e.equals {
        text_refs(t, vec![key("equals")], &mut out);
    }
    if let Some(details) = &e.details {
        value_refs(details, vec![key("details")], &mut out);
    }
    details_at_refs(e, &mut out);
    if let Some(updates) = &e.updates {
        for (name, list) in [
            ("contains", &updates.contains),
            ("last_contains", &updates.last_contains),
        ] {
            let mut inner = Vec::new();
            list_refs(list.as_ref(), name, &mut inner);
            out.extend(inner.into_iter().map(|(n, mut p)| {
                p.insert(0, key("updates"));
                (n, p)
            }));
        }
    }
    out
}

/// The references in `details_at`, with their paths.
fn details_at_refs(e: &CallExpect, out: &mut Vec<Ref>) {
    for (pointer, check) in e.details_at.iter().flatten() {
        let base = vec![key("details_at"), key(pointer)];
        match check {
            DetailCheck::Equals(value) => value_refs(value, base, out),
            DetailCheck::Matchers(m) => {
                if let Some(value) = &m.equals {
                    let mut p = base.clone();
                    p.push(key("equals"));
                    value_refs(value, p, out);
                }
                for (name, list) in [("contains", &m.contains), ("not_contains", &m.not_contains)] {
                    let mut inner = Vec::new();
                    list_refs(list.as_ref(), name, &mut inner);
                    out.extend(inner.into_iter().map(|(n, p)| {
                        let mut full = base.clone();
                        full.extend(p);
                        (n, full)
                    }));
                }
                if let Some(pattern) = &m.matches {
                    let mut p = base.clone();
                    p.push(key("matches"));
                    text_refs(pattern, p, out);
                }
            }
        }
    }
}

/// Every reference in one file's checks.
pub(crate) fn file_expect_refs(e: &FileExpect) -> Vec<Ref> {
    let mut out = Vec::new();
    match e {
        FileExpect::Equals(t) => text_refs(t, Vec::new(), &mut out),
        FileExpect::Checks(c) => {
            if let Some(t) = &c.equals {
                text_refs(t, vec![key("equals")], &mut out);
            }
            list_refs(c.contains.as_ref(), "contains", &mut out);
            list_refs(c.not_contains.as_ref(), "not_contains", &mut out);
            if let Some(p) = &c.matches {
                text_refs(p, vec![key("matches")], &mut out);
            }
            if let Some(t) = &c.symlink {
                text_refs(t, vec![key("symlink")], &mut out);
            }
        }
    }
    out
}

/// Whether a text changes when expanded (it has `${`).
fn has_vars(text: &str) -> bool {
    text.contains("${")
}

fn list_has_vars(list: Option<&StringList>) -> bool {
    list.is_some_and(|l| l.0.iter().any(|s| has_vars(s)))
}

fn value_has_vars(value: &Value) -> bool {
    match value {
        Value::String(s) => has_vars(s),
        Value::Array(items) => items.iter().any(value_has_vars),
        Value::Object(map) => map.values().any(value_has_vars),
        _ => false,
    }
}

/// Whether a call's expectations change when expanded.
pub(crate) fn call_expect_has_vars(e: &CallExpect) -> bool {
    matches!(&e.error, Some(ErrorExpect::Matches(p)) if has_vars(p))
        || list_has_vars(e.contains.as_ref())
        || list_has_vars(e.not_contains.as_ref())
        || e.matches.as_deref().is_some_and(has_vars)
        || e.equals.as_deref().is_some_and(has_vars)
        || e.details.as_ref().is_some_and(value_has_vars)
        || e.details_at.iter().flatten().any(|(_, c)| match c {
            DetailCheck::Equals(value) => value_has_vars(value),
            DetailCheck::Matchers(m) => {
                m.equals.as_ref().is_some_and(value_has_vars)
                    || list_has_vars(m.contains.as_ref())
                    || list_has_vars(m.not_contains.as_ref())
                    || m.matches.as_deref().is_some_and(has_vars)
            }
        })
        || e.updates.as_ref().is_some_and(|u| {
            list_has_vars(u.contains.as_ref()) || list_has_vars(u.last_contains.as_ref())
        })
}

/// Whether one file's checks change when expanded.
pub(crate) fn file_expect_has_vars(e: &FileExpect) -> bool {
    match e {
        FileExpect::Equals(t) => has_vars(t),
        FileExpect::Checks(c) => {
            c.equals.as_deref().is_some_and(has_vars)
                || list_has_vars(c.contains.as_ref())
                || list_has_vars(c.not_contains.as_ref())
                || c.matches.as_deref().is_some_and(has_vars)
                || c.symlink.as_deref().is_some_and(has_vars)
        }
    }
}

/// A regex with its variables expanded as literal text.
pub(crate) fn expand_pattern(pattern: &str, vars: &Vars) -> String {
    substitute_with(pattern, vars, |value, out| {
        out.push_str(&regex::escape(value));
    })
}

/// A regex as it will be compiled whatever the variables hold: every
/// reference replaced by a literal, to check its syntax when it loads.
pub(crate) fn placeholder_pattern(pattern: &str) -> String {
    let vars: Vars = var_refs(pattern)
        .into_iter()
        .map(|name| (name, "x".to_owned()))
        .collect();
    expand_pattern(pattern, &vars)
}

/// A JSON value with every string in it expanded.
pub(crate) fn expand_value(value: &Value, vars: &Vars) -> Value {
    match value {
        Value::String(s) => Value::String(substitute(s, vars)),
        Value::Array(items) => Value::Array(items.iter().map(|v| expand_value(v, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), expand_value(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}
