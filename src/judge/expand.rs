//! Expectations with their `${var}` expanded when a run is checked
//! (docs/scenarios.md, "Variables"): every string with the variables'
//! values, every regex that waited for them compiled, in the order the
//! checks list them. Checks without variables are used as loaded.

use std::borrow::Cow;
use std::sync::Arc;

use regex::Regex;

use crate::base::vars::substitute;
use crate::scenario::expect::CallCheck;
use crate::scenario::expect::CallExpectation;
use crate::scenario::expect::ContentCheck;
use crate::scenario::expect::DetailExpect;
use crate::scenario::expect::DetailMatcher;
use crate::scenario::expect::FileCheck;
use crate::scenario::expect::FileChecks;
use crate::scenario::expect::FileExpectation;
use crate::scenario::expect::Pattern;
use crate::scenario::vars;
use crate::scenario::vars::Vars;

use super::failure::Failure;
use super::kind::CheckKind;

/// A call's checks with their `${var}` expanded; unchanged when they have
/// none. A regex that no longer compiles is a failure at `check.label`.
pub(super) fn call_checks<'c>(
    check: &'c CallCheck,
    vars: &Vars,
    failures: &mut Vec<Failure>,
) -> Cow<'c, [CallExpectation]> {
    if !check.has_vars {
        return Cow::Borrowed(&check.checks);
    }
    let label = check.label.as_str();
    let expanded = check
        .checks
        .iter()
        .map(|c| match c {
            CallExpectation::ErrorMatches(p) => {
                CallExpectation::ErrorMatches(pattern(p, vars, label, failures))
            }
            CallExpectation::Contains(list) => CallExpectation::Contains(texts(list, vars)),
            CallExpectation::NotContains(list) => CallExpectation::NotContains(texts(list, vars)),
            CallExpectation::Matches(p) => {
                CallExpectation::Matches(pattern(p, vars, label, failures))
            }
            CallExpectation::Equals(text) => CallExpectation::Equals(substitute(text, vars)),
            CallExpectation::Details(value) => {
                CallExpectation::Details(vars::expand_value(value, vars))
            }
            CallExpectation::DetailsAt { pointer, check } => CallExpectation::DetailsAt {
                pointer: pointer.clone(),
                check: detail(check, vars, label, failures),
            },
            CallExpectation::UpdatesContains(list) => {
                CallExpectation::UpdatesContains(texts(list, vars))
            }
            CallExpectation::UpdatesLastContains(list) => {
                CallExpectation::UpdatesLastContains(texts(list, vars))
            }
            other => other.clone(),
        })
        .collect();
    Cow::Owned(expanded)
}

/// A file's checks with their `${var}` expanded (the symlink target and
/// what the file holds); unchanged when they have none.
pub(super) fn file_check<'c>(
    file: &'c FileCheck,
    vars: &Vars,
    label: &str,
    failures: &mut Vec<Failure>,
) -> Cow<'c, FileExpectation> {
    if !file.has_vars {
        return Cow::Borrowed(&file.expect);
    }
    Cow::Owned(match &file.expect {
        FileExpectation::Equals(text) => FileExpectation::Equals(substitute(text, vars)),
        FileExpectation::Checks(checks) => FileExpectation::Checks(FileChecks {
            presence: checks.presence.clone(),
            symlink: checks.symlink.as_deref().map(|t| substitute(t, vars)),
            content: checks
                .content
                .iter()
                .map(|c| match c {
                    ContentCheck::Equals(text) => ContentCheck::Equals(substitute(text, vars)),
                    ContentCheck::Contains(list) => ContentCheck::Contains(texts(list, vars)),
                    ContentCheck::NotContains(list) => ContentCheck::NotContains(texts(list, vars)),
                    ContentCheck::Matches(p) => {
                        ContentCheck::Matches(pattern(p, vars, label, failures))
                    }
                    other => other.clone(),
                })
                .collect(),
            mode: checks.mode.clone(),
        }),
    })
}

/// Strings with the variables' values.
fn texts(list: &[String], vars: &Vars) -> Vec<String> {
    list.iter().map(|s| substitute(s, vars)).collect()
}

/// A `details_at` entry with its strings expanded (a regex's values as
/// literal text).
fn detail(
    check: &DetailExpect,
    vars: &Vars,
    label: &str,
    failures: &mut Vec<Failure>,
) -> DetailExpect {
    match check {
        DetailExpect::Equals(value) => DetailExpect::Equals(vars::expand_value(value, vars)),
        DetailExpect::Matchers(matchers) => DetailExpect::Matchers(
            matchers
                .iter()
                .map(|m| match m {
                    DetailMatcher::Equals(value) => {
                        DetailMatcher::Equals(vars::expand_value(value, vars))
                    }
                    DetailMatcher::Contains(list) => DetailMatcher::Contains(texts(list, vars)),
                    DetailMatcher::NotContains(list) => {
                        DetailMatcher::NotContains(texts(list, vars))
                    }
                    DetailMatcher::Matches(p) => {
                        DetailMatcher::Matches(pattern(p, vars, label, failures))
                    }
                    other => other.clone(),
                })
                .collect(),
        ),
    }
}

/// A regex that waited for its variables, expanded (their values as
/// literal text) and compiled; one compiled when it loaded is kept.
fn pattern(p: &Pattern, vars: &Vars, label: &str, failures: &mut Vec<Failure>) -> Pattern {
    if p.regex.is_some() {
        return p.clone();
    }
    let text = vars::expand_pattern(&p.text, vars);
    let regex = expanded_regex(&text, label, failures);
    Pattern { text, regex }
}

/// A regex of an expectation after expansion; a failure when it no
/// longer compiles (a value too large for the regex engine).
fn expanded_regex(pattern: &str, step: &str, failures: &mut Vec<Failure>) -> Option<Arc<Regex>> {
    match Regex::new(pattern) {
        Ok(regex) => Some(Arc::new(regex)),
        Err(err) => {
            failures.push(Failure::new(
                Some(step),
                CheckKind::Expect,
                "a regex that compiles once its variables are expanded",
                err.to_string(),
            ));
            // A regex that matches nothing, so the check fails.
            Regex::new("[^\\s\\S]").ok().map(Arc::new)
        }
    }
}
