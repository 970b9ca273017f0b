//! What `harness run` and `harness report merge` print on a console: one
//! line per scenario, then every failure with its step, check, expected and
//! actual values (a diff for long texts), a summary line and, with a
//! baseline, the comparison and how each gate fared.

use std::fmt::Write;

use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::Status;
use crate::scenario::Failure;

use super::compare::Comparison;

/// `PASS  name  (3 calls, 12 ms)`.
pub fn scenario_line(outcome: &ScenarioOutcome) -> String {
    match outcome.status {
        Status::Passed => format!(
            "PASS  {}  ({} call{}, {} ms)",
            outcome.name,
            outcome.stats.figures.calls,
            if outcome.stats.figures.calls == 1 {
                ""
            } else {
                "s"
            },
            outcome.stats.duration_ms
        ),
        Status::Failed => format!(
            "FAIL  {}  ({} failed check{})",
            outcome.name,
            outcome.failures.len(),
            if outcome.failures.len() == 1 { "" } else { "s" }
        ),
        Status::Skipped => format!(
            "SKIP  {}  ({})",
            outcome.name,
            outcome.skip_reason.as_deref().unwrap_or("skipped")
        ),
    }
}

/// Every failure of the run, grouped by scenario.
pub fn failure_details(summary: &RunSummary) -> String {
    let mut out = String::new();
    for outcome in summary
        .scenarios
        .iter()
        .filter(|o| o.status == Status::Failed)
    {
        let _ = writeln!(out, "\nFAIL {}  ({})", outcome.name, outcome.file);
        for failure in &outcome.failures {
            out.push_str(&render_failure(failure));
        }
        if let Some(ws) = &outcome.workspace {
            let _ = writeln!(out, "  workspace kept at {ws}");
        }
    }
    out
}

/// Lines of one value shown on the console; the rest is summarised (the
/// report files keep everything).
const MAX_SHOWN_LINES: usize = 40;

fn indent(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    let total = text.lines().count();
    for (i, line) in text.lines().enumerate() {
        if i == MAX_SHOWN_LINES {
            out.push('\n');
            out.push_str(prefix);
            out.push_str(&format!("… {} more lines", total - MAX_SHOWN_LINES));
            break;
        }
        if i > 0 {
            out.push('\n');
            out.push_str(prefix);
        }
        out.push_str(line);
    }
    if text.is_empty() {
        out.push_str("(empty)");
    }
    out
}

fn is_long(text: &str) -> bool {
    text.lines().count() > 3 || text.len() > 160
}

/// One failure: where, which check, expected and actual (or their diff).
pub fn render_failure(failure: &Failure) -> String {
    let mut out = String::new();
    let step = failure.step.as_deref().unwrap_or("scenario");
    let _ = writeln!(out, "  {step} · {}", failure.check);
    if is_long(&failure.expected) && is_long(&failure.actual) {
        let diff = similar::TextDiff::from_lines(&failure.expected, &failure.actual);
        let _ = writeln!(out, "    diff (- expected, + actual):");
        let mut shown = 0;
        for change in diff
            .unified_diff()
            .context_radius(3)
            .iter_hunks()
            .flat_map(|h| {
                h.iter_changes()
                    .map(|c| (c.tag(), c.to_string_lossy().into_owned()))
                    .collect::<Vec<_>>()
            })
        {
            let sign = match change.0 {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            shown += 1;
            if shown > MAX_SHOWN_LINES * 2 {
                let _ = writeln!(out, "      … (diff cut at {} lines)", MAX_SHOWN_LINES * 2);
                break;
            }
            let _ = writeln!(out, "      {sign}{}", change.1.trim_end_matches('\n'));
        }
    } else {
        let _ = writeln!(
            out,
            "    expected: {}",
            indent(&failure.expected, "              ")
        );
        let _ = writeln!(
            out,
            "    actual:   {}",
            indent(&failure.actual, "              ")
        );
    }
    out
}

/// `60 scenarios: 58 passed, 1 failed, 1 skipped in 3.2 s`.
pub fn summary_line(summary: &RunSummary) -> String {
    let total = summary.scenarios.len();
    format!(
        "{total} scenario{}: {} passed, {} failed, {} skipped in {:.1} s{}",
        if total == 1 { "" } else { "s" },
        summary.count(Status::Passed),
        summary.count(Status::Failed),
        summary.count(Status::Skipped),
        summary.duration_ms as f64 / 1000.0,
        if summary.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    )
}

/// The comparison with a baseline: what was compared, new and missing
/// scenarios, regressions, and each gate with its breaches.
pub fn comparison_text(comparison: &Comparison) -> String {
    let mut out = String::new();
    let list = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let compared = comparison.scenarios.iter().filter(|c| c.compared).count();
    let _ = write!(
        out,
        "baseline: {compared} scenario{} compared",
        if compared == 1 { "" } else { "s" }
    );
    if !comparison.new.is_empty() {
        let _ = write!(out, "; new: {}", list(&comparison.new));
    }
    if !comparison.missing.is_empty() {
        let _ = write!(out, "; missing: {}", list(&comparison.missing));
    }
    out.push('\n');
    for name in &comparison.regressions {
        let _ = writeln!(
            out,
            "regression: `{name}` passed in the baseline and fails now"
        );
    }
    for gate in &comparison.gates {
        if gate.held {
            let _ = writeln!(out, "gate {}: held", gate.gate);
        } else {
            let _ = writeln!(
                out,
                "gate {}: BREACHED ({})",
                gate.gate,
                gate.breaches.len()
            );
            for breach in &gate.breaches {
                let _ = writeln!(out, "  {}", breach.describe());
            }
        }
    }
    out
}

/// One line per tool call of a scenario, for `harness run --verbose`:
/// `    1. read  ok, 12 result tokens, 3 ms`.
pub fn call_lines(outcome: &ScenarioOutcome) -> String {
    let mut out = String::new();
    for (seq, call) in outcome.calls.iter().enumerate() {
        let mut notes = vec![if call.is_error { "error" } else { "ok" }.to_owned()];
        if call.retry {
            notes.push("retry".to_owned());
        }
        if call.truncated {
            notes.push("truncated".to_owned());
        }
        notes.push(format!("{} result tokens", call.result_tokens));
        notes.push(format!("{} ms", call.duration_ms));
        let _ = writeln!(out, "    {}. {}  {}", seq + 1, call.tool, notes.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_failures_show_expected_and_actual() {
        let f = Failure {
            step: Some("step 2 (read)".into()),
            check: "contains".into(),
            expected: "text containing \"x\"".into(),
            actual: "a\nb".into(),
        };
        assert_eq!(
            render_failure(&f),
            "  step 2 (read) · contains\n    expected: text containing \"x\"\n    actual:   a\n              b\n"
        );
    }

    #[test]
    fn very_long_values_are_cut_on_the_console() {
        let long: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let f = Failure {
            step: None,
            check: "contains".into(),
            expected: "text containing \"x\"".into(),
            actual: long,
        };
        let text = render_failure(&f);
        assert!(
            text.contains("              40\n              … 60 more lines\n"),
            "{text}"
        );
        assert!(!text.contains("\n              41\n"), "{text}");
    }

    #[test]
    fn long_failures_show_a_diff() {
        let f = Failure {
            step: None,
            check: "equals".into(),
            expected: "1\n2\n3\n4\n5\n".into(),
            actual: "1\n2\nthree\n4\n5\n".into(),
        };
        let text = render_failure(&f);
        assert!(text.contains("      -3\n      +three\n"), "{text}");
    }

    #[test]
    fn the_comparison_names_new_and_missing_scenarios() {
        use crate::report::Baseline;
        use crate::report::compare::compare;
        let outcome = |name: &str| ScenarioOutcome::empty(name, "f.yaml", &[], Status::Passed);
        let run = |names: &[&str]| RunSummary {
            scenarios: names.iter().map(|n| outcome(n)).collect(),
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        };
        let c = compare(
            &run(&["a", "fresh"]),
            &Baseline::of(&run(&["a", "gone"])),
            &[],
        );
        assert!(
            comparison_text(&c)
                .starts_with("baseline: 1 scenario compared; new: `fresh`; missing: `gone`\n")
        );
    }
}
