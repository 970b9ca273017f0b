//! A fuzz report as lines of text, the same for `harness fuzz`'s console
//! and a scenario's `fuzz` step: each tool's tally with its failures under
//! it (a bounded number, the rest counted), the notes, why the run stopped
//! early, and the verdict. Nothing in them varies between runs of the same
//! server (no durations), and nothing the server sent is shown raw: names
//! with their control characters as pictures, messages on one line, the
//! arguments as one line of escaped JSON.

use serde_json::Value;
use serde_json::json;

use super::drive::Answer;
use super::drive::Failure;
use super::drive::Report;
use super::drive::ToolTally;
use crate::mcp::client::visible_text;

/// The most characters of a call's arguments shown.
pub const SHOWN_ARGUMENTS: usize = 200;

/// The most failures listed per tool; the rest are counted.
pub const SHOWN_FAILURES: usize = 10;

/// The most notes (internal errors on arguments the schema may accept)
/// listed; the rest are counted.
pub const SHOWN_NOTES: usize = 10;

/// The most characters of what the server said shown per failure.
const SHOWN_DETAIL: usize = 300;

/// A call's arguments as one line of at most [`SHOWN_ARGUMENTS`]
/// characters, JSON-escaped (no raw control characters).
pub fn shown_arguments(arguments: &Value) -> String {
    let text = serde_json::to_string(arguments).unwrap_or_default();
    let count = text.chars().count();
    if count <= SHOWN_ARGUMENTS {
        return text;
    }
    let head: String = text.chars().take(SHOWN_ARGUMENTS).collect();
    format!("{head}… ({} bytes)", text.len())
}

/// `text` on one line (runs of white space as one space, other control
/// characters as pictures), at most 300 characters.
pub fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let joined = visible_text(&joined);
    if joined.chars().count() <= SHOWN_DETAIL {
        return joined;
    }
    let head: String = joined.chars().take(SHOWN_DETAIL).collect();
    format!("{head}…")
}

/// A tool's name (or a property's) as shown: on one line.
fn name(text: &str) -> String {
    visible_text(text)
}

/// One tool's tally: `  NAME: N calls: result_ok 3, internal_error 2`
/// (the classes it got, in report order).
pub fn tally_line(tool: &ToolTally) -> String {
    let counts: Vec<String> = Answer::ALL
        .iter()
        .filter_map(|a| {
            let n = tool.answers.get(a.name()).copied().unwrap_or(0);
            (n > 0).then(|| format!("{} {n}", a.name()))
        })
        .collect();
    format!(
        "  {}: {} calls: {}",
        name(&tool.name),
        tool.calls,
        counts.join(", ")
    )
}

/// The two lines of a failure (or a note): its tool, case number, class
/// and property, why it fails and what the server said; then the
/// arguments.
pub fn failure_lines(label: &str, failure: &Failure) -> [String; 2] {
    let field = failure
        .case
        .field
        .as_deref()
        .map_or_else(String::new, |f| format!(" `{}`", name(f)));
    let detail = one_line(&failure.detail);
    let said = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    [
        format!(
            "    {label} {} #{} ({}{field}): {}{said}",
            name(&failure.tool),
            failure.index,
            failure.case.class.name(),
            failure.kind.name(),
        ),
        format!(
            "      arguments: {}",
            shown_arguments(&failure.case.arguments)
        ),
    ]
}

/// A failure as JSON (the `--json` report's and a `fuzz` step's
/// details): the arguments as [`shown_arguments`] shows them.
pub fn failure_json(failure: &Failure) -> Value {
    json!({
        "tool": failure.tool,
        "index": failure.index,
        "class": failure.case.class.name(),
        "field": failure.case.field,
        "invalid": failure.case.invalid,
        "kind": failure.kind.name(),
        "detail": failure.detail,
        "arguments": shown_arguments(&failure.case.arguments),
    })
}

/// A report as JSON, for the `--json` report and a `fuzz` step's details
/// alike: `server`, `seed`, `cases_per_tool`, `timeout_ms`, `passed` and
/// `tools` (each tool's tally), then the fields of `rest` (an object),
/// which each adds for itself.
pub fn report_json(server: &str, report: &Report, options: &super::Options, rest: Value) -> Value {
    let mut value = json!({
        "server": server,
        "seed": options.seed,
        "cases_per_tool": options.cases,
        "timeout_ms": u64::try_from(options.timeout.as_millis()).unwrap_or(u64::MAX),
        "passed": report.passed(),
        "tools": report.tools,
    });
    if let (Some(map), Value::Object(rest)) = (value.as_object_mut(), rest) {
        map.extend(rest);
    }
    value
}

/// The body of a report: each tool's tally line with its failures under
/// it (at most [`SHOWN_FAILURES`]; past them, a count and `more`, which
/// says where the rest are), the notes (at most [`SHOWN_NOTES`]), and why
/// the run stopped early.
pub fn lines(report: &Report, more: &str) -> Vec<String> {
    let mut out = Vec::new();
    for tool in &report.tools {
        out.push(tally_line(tool));
        let failures: Vec<&Failure> = report
            .failures
            .iter()
            .filter(|f| f.tool == tool.name)
            .collect();
        for failure in failures.iter().take(SHOWN_FAILURES) {
            out.extend(failure_lines("FAIL", failure));
        }
        if failures.len() > SHOWN_FAILURES {
            out.push(format!(
                "    … and {} more failure(s){more}",
                failures.len() - SHOWN_FAILURES
            ));
        }
    }
    let notes = &report.internal_errors_on_plausible_input;
    for note in notes.iter().take(SHOWN_NOTES) {
        out.extend(failure_lines(
            "note: internal error on arguments the schema may accept:",
            note,
        ));
    }
    if notes.len() > SHOWN_NOTES {
        out.push(format!(
            "    … and {} more note(s){more}",
            notes.len() - SHOWN_NOTES
        ));
    }
    if let Some(why) = &report.stopped_early {
        out.push(format!("stopped early: {}", one_line(why)));
    }
    out
}

/// The last line: passed, or how many calls failed.
pub fn verdict(report: &Report) -> String {
    if report.passed() {
        "passed: every call was answered and the server stayed up".to_owned()
    } else if report.failures.is_empty() {
        "FAILED: the run stopped before its end".to_owned()
    } else {
        format!("FAILED: {} failing call(s)", report.failures.len())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::mcp::fuzz::Case;
    use crate::mcp::fuzz::Class;
    use crate::mcp::fuzz::FailureKind;

    fn failure(tool: &str, index: usize, detail: &str) -> Failure {
        Failure {
            tool: tool.to_owned(),
            index,
            case: Case {
                class: Class::WrongType,
                field: Some("k\ney".to_owned()),
                invalid: true,
                arguments: json!({ "k\ney": 5, "s": "a\u{1b}[31m" }),
            },
            kind: FailureKind::InternalErrorOnInvalidInput,
            detail: detail.to_owned(),
        }
    }

    #[test]
    fn failures_are_listed_per_tool_up_to_the_bound_and_the_rest_counted() {
        let mut tally = ToolTally {
            name: "look\nup".to_owned(),
            calls: 12,
            ..ToolTally::default()
        };
        tally.answers.insert("internal_error", 12);
        let report = Report {
            tools: vec![tally],
            failures: (0..12)
                .map(|i| failure("look\nup", i, "JSON-RPC error -32603:\n  boom \u{1b}[0m"))
                .collect(),
            stopped_early: Some("the server went\ndown".to_owned()),
            ..Report::default()
        };
        let lines = lines(&report, " (see there)");
        assert_eq!(lines.len(), 1 + 2 * SHOWN_FAILURES + 2);
        assert_eq!(
            lines[..3],
            [
                "  look␊up: 12 calls: internal_error 12",
                "    FAIL look␊up #0 (wrong_type `k␊ey`): internal error on invalid input: \
                 JSON-RPC error -32603: boom ␛[0m",
                "      arguments: {\"k\\ney\":5,\"s\":\"a\\u001b[31m\"}",
            ]
        );
        assert_eq!(
            lines[lines.len() - 2..],
            [
                "    … and 2 more failure(s) (see there)",
                "stopped early: the server went down",
            ]
        );
        assert_eq!(verdict(&report), "FAILED: 12 failing call(s)");
    }

    #[test]
    fn long_arguments_and_details_are_cut() {
        let long = "x".repeat(400);
        assert_eq!(
            shown_arguments(&json!(long)),
            format!("\"{}… (402 bytes)", "x".repeat(199))
        );
        assert_eq!(one_line(&long), format!("{}…", "x".repeat(300)));
    }
}
