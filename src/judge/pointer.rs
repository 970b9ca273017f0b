//! `details_at` (docs/scenarios.md, "Checks on one call"): checks on the
//! values inside a result's `details`, each found by a JSON pointer
//! (RFC 6901) and judged by matchers. A bare value means `equals`.
//!
//! A check returns the matchers that failed, each with what was expected
//! and what was found; the check layer turns them into failures.

use serde_json::Value;

use crate::scenario::expect::DetailExpect;
use crate::scenario::expect::DetailMatcher;

/// One matcher that did not hold: its name, what was expected, what was
/// found.
pub(crate) type Miss = (&'static str, String, String);

/// The most characters of a value a failure shows.
const SHOWN: usize = 2000;

/// A value as a failure shows it: JSON, cut after 2000 characters.
pub(crate) fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!(
            "{}… ({} characters in all)",
            &text[..at],
            text.chars().count()
        ),
        None => text,
    }
}

/// Whether two JSON values are equal, numbers by value (`2` is `2.0`).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|other| same(v, other)))
        }
        (x, y) => x == y,
    }
}

/// The matchers of `check` that fail on the value at `pointer` in
/// `details`.
pub(crate) fn misses(details: Option<&Value>, pointer: &str, check: &DetailExpect) -> Vec<Miss> {
    // A result without details has `null` there, as its snapshot shows.
    let found = details.unwrap_or(&Value::Null).pointer(pointer);
    let mut out = Vec::new();
    let matchers = match check {
        DetailExpect::Equals(want) => {
            equals(found, want, &mut out);
            return out;
        }
        DetailExpect::Matchers(matchers) => matchers,
    };
    let nothing = "nothing at this pointer".to_owned();
    let shown_found = || found.map_or(nothing.clone(), shown);
    for matcher in matchers {
        match matcher {
            DetailMatcher::Exists(want) => {
                if *want != found.is_some() {
                    let expected = if *want { "a value" } else { "nothing" };
                    out.push(("exists", expected.to_owned(), shown_found()));
                }
            }
            DetailMatcher::Absent(want) => {
                if *want == found.is_some() {
                    let expected = if *want { "nothing" } else { "a value" };
                    out.push(("absent", expected.to_owned(), shown_found()));
                }
            }
            DetailMatcher::Equals(want) => equals(found, want, &mut out),
            DetailMatcher::Contains(needles) => {
                for needle in needles {
                    if !holds(found, needle) {
                        out.push((
                            "contains",
                            format!("a string containing {needle:?}, or a list with that item"),
                            shown_found(),
                        ));
                    }
                }
            }
            DetailMatcher::NotContains(needles) => {
                for needle in needles {
                    let ok = match found {
                        Some(Value::String(_) | Value::Array(_)) => !holds(found, needle),
                        _ => false,
                    };
                    if !ok {
                        out.push((
                            "not_contains",
                            format!("a string without {needle:?}, or a list without that item"),
                            shown_found(),
                        ));
                    }
                }
            }
            DetailMatcher::Matches(pattern) => {
                let ok = match (found, &pattern.regex) {
                    (Some(Value::String(s)), Some(regex)) => regex.is_match(s),
                    _ => false,
                };
                if !ok {
                    out.push((
                        "matches",
                        format!("a string matching /{}/", pattern.text),
                        shown_found(),
                    ));
                }
            }
            DetailMatcher::Bound(bound, limit) => {
                let ok = found
                    .and_then(Value::as_f64)
                    .is_some_and(|v| bound.holds(v, *limit));
                if !ok {
                    out.push((
                        bound.key(),
                        format!("a number {} {limit}", bound.words()),
                        shown_found(),
                    ));
                }
            }
        }
    }
    out
}

fn equals(found: Option<&Value>, want: &Value, out: &mut Vec<Miss>) {
    if !found.is_some_and(|v| same(v, want)) {
        out.push((
            "equals",
            shown(want),
            found.map_or_else(|| "nothing at this pointer".to_owned(), shown),
        ));
    }
}

/// A string that contains `needle`, or a list with the item `needle`.
fn holds(found: Option<&Value>, needle: &str) -> bool {
    match found {
        Some(Value::String(s)) => s.contains(needle),
        Some(Value::Array(items)) => items.iter().any(|i| i.as_str() == Some(needle)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use regex::Regex;

    use super::*;
    use crate::scenario::detail_spec::DetailCheck;
    use crate::scenario::detail_spec::DetailMatchers;
    use crate::scenario::two_way::StringList;
    use serde_json::json;

    fn list(s: &str) -> Option<StringList> {
        Some(StringList(vec![s.to_owned()]))
    }

    /// The misses of a `details_at` entry as written, `regex` its
    /// compiled `matches`.
    fn written(
        details: Option<&Value>,
        pointer: &str,
        check: &DetailCheck,
        regex: Option<&Regex>,
    ) -> Vec<Miss> {
        misses(
            details,
            pointer,
            &DetailExpect::new(check, regex.cloned().map(Arc::new)),
        )
    }

    #[test]
    fn every_matcher_can_pass_and_fail() {
        let details = json!({
            "truncation": {"truncated_by": "lines", "total_lines": 3000},
            "diff": "-a\n+x\n",
            "files": ["a.txt", "b.txt"],
            "patch": null,
            "matches": 4
        });
        let d = Some(&details);
        let pass = |p: &str, m: DetailMatchers| written(d, p, &DetailCheck::Matchers(m), None);
        assert_eq!(
            written(
                d,
                "/truncation/truncated_by",
                &DetailCheck::Equals(json!("lines")),
                None
            ),
            []
        );
        assert_eq!(
            written(d, "/matches", &DetailCheck::Equals(json!(4.0)), None),
            []
        );
        assert_eq!(
            written(d, "/matches", &DetailCheck::Equals(json!(5)), None),
            [("equals", "5".to_owned(), "4".to_owned())]
        );
        let contains = DetailMatchers {
            contains: list("+x"),
            ..DetailMatchers::default()
        };
        assert_eq!(pass("/diff", contains.clone()), []);
        assert_eq!(
            pass(
                "/files",
                DetailMatchers {
                    contains: list("b.txt"),
                    ..DetailMatchers::default()
                }
            ),
            []
        );
        assert_eq!(
            pass("/missing", contains),
            [(
                "contains",
                "a string containing \"+x\", or a list with that item".to_owned(),
                "nothing at this pointer".to_owned()
            )]
        );
        let not = DetailMatchers {
            not_contains: list("+x"),
            ..DetailMatchers::default()
        };
        assert_eq!(pass("/diff", not).len(), 1);
        let exists = DetailMatchers {
            exists: Some(true),
            ..DetailMatchers::default()
        };
        assert_eq!(pass("/patch", exists.clone()), []);
        assert_eq!(
            pass("/full_output_path", exists),
            [(
                "exists",
                "a value".to_owned(),
                "nothing at this pointer".to_owned()
            )]
        );
        let absent = DetailMatchers {
            absent: Some(true),
            ..DetailMatchers::default()
        };
        assert_eq!(pass("/nope", absent.clone()), []);
        assert_eq!(
            pass("/patch", absent),
            [("absent", "nothing".to_owned(), "null".to_owned())]
        );
        let bounds = DetailMatchers {
            gt: Some(3.0),
            ge: Some(4.0),
            lt: Some(5.0),
            le: Some(4.0),
            ..DetailMatchers::default()
        };
        assert_eq!(pass("/matches", bounds.clone()), []);
        assert_eq!(
            pass("/diff", bounds)
                .iter()
                .map(|m| m.0)
                .collect::<Vec<_>>(),
            ["lt", "le", "gt", "ge"]
        );
        let regex = Regex::new(r"^-a\n\+x").unwrap();
        let matches = DetailCheck::Matchers(DetailMatchers {
            matches: Some(r"^-a\n\+x".to_owned()),
            ..DetailMatchers::default()
        });
        assert_eq!(written(d, "/diff", &matches, Some(&regex)), []);
        assert_eq!(written(d, "/matches", &matches, Some(&regex)).len(), 1);
        // A result without details has `null` there.
        assert_eq!(
            written(None, "", &DetailCheck::Equals(json!(null)), None),
            []
        );
        assert_eq!(
            written(None, "/a", &DetailCheck::Equals(json!(null)), None).len(),
            1
        );
    }

    #[test]
    fn a_long_value_is_shown_cut() {
        assert_eq!(
            shown(&json!("x".repeat(2500))).chars().count(),
            2000 + "… (2502 characters in all)".chars().count()
        );
    }
}
