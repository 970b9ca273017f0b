//! `junit.xml`: one `<testcase>` per scenario, in the JUnit XML dialect
//! that Jenkins, GitLab and the GitHub Actions test reporters read.
//!
//! The document keeps to the common schema (tests/fixtures/reports/junit.xsd
//! describes it), so some readers' extensions are left out on purpose:
//!
//! - `<testsuites>` holds a `<testsuite name="harness">`; its `<properties>`
//!   carry the run's figures (tokenizer, token totals, retries …) and,
//!   with a baseline, the baseline's totals.
//! - Each scenario is a `<testcase name="NAME" classname="DIR.FILE">` (the
//!   file path without extension, `/` → `.`, so Jenkins groups by
//!   directory). A failed scenario has one `<failure>` whose `message` names
//!   the first failed check and whose text lists them all with expected and
//!   actual values; a skipped one has `<skipped message="REASON"/>`. The
//!   scenario's figures and its calls are in `<system-out>`, since the
//!   common schema has no per-testcase properties.
//! - With `--variant`, a testcase per scenario and variant, named
//!   `NAME [variant VARIANT]`, and with baselines a gates suite per
//!   variant, `harness gates [variant VARIANT]`.
//! - A scenario file that could not be loaded is a testcase with an
//!   `<error>`.
//! - With a baseline, a second `<testsuite name="harness gates">` has one
//!   testcase per gate (failed when breached) and one for regressions.
//!
//! Text is escaped for XML; characters XML 1.0 cannot hold (most control
//! characters, such as the ESC of ANSI colours) are written as `\u{1b}`.

use std::fmt::Write as _;

use crate::judge::Figures;
use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::Status;

use super::compare::Comparison;
use super::console::Colour;
use super::console::render_failures;
use super::markup::escape_xml as escape;

fn attr(text: &str) -> String {
    escape(text, true)
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

fn classname(file: &str) -> String {
    let path = file.strip_prefix("./").unwrap_or(file);
    let path = path
        .strip_suffix(".yaml")
        .or_else(|| path.strip_suffix(".yml"))
        .unwrap_or(path);
    path.replace(['/', '\\'], ".")
}

/// `turns=1 calls=2 …`: figures on one line.
fn figures_line(figures: &Figures) -> String {
    figures
        .named()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn property(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(
        out,
        "      <property name=\"{}\" value=\"{}\"/>",
        attr(name),
        attr(value)
    );
}

/// The scenario's figures and calls, for `<system-out>`.
fn system_out(outcome: &ScenarioOutcome, comparison: Option<&Comparison>) -> String {
    let mut text = String::new();
    let _ = writeln!(text, "{}", figures_line(&outcome.stats.figures));
    if let Some(change) =
        comparison.and_then(|c| c.scenarios.iter().find(|s| s.name == outcome.name))
    {
        let _ = writeln!(
            text,
            "baseline ({}): {}",
            change.baseline_status.as_str(),
            figures_line(&change.baseline)
        );
    }
    text.push_str(&super::console::server_lines(outcome, ""));
    for call in &outcome.calls {
        let _ = writeln!(
            text,
            "call {} {} turn={} retry={} is_error={} truncated={} args_tokens={} result_tokens={}",
            call.id,
            call.tool,
            call.turn,
            call.retry,
            call.is_error,
            call.truncated,
            call.args_tokens,
            call.result_tokens
        );
    }
    text
}

fn testcase(
    out: &mut String,
    outcome: &ScenarioOutcome,
    variant: Option<&str>,
    comparison: Option<&Comparison>,
) {
    let name = match variant {
        Some(variant) => format!("{} [variant {variant}]", outcome.name),
        None => outcome.name.clone(),
    };
    let _ = writeln!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\">",
        attr(&name),
        attr(&classname(&outcome.file)),
        seconds(outcome.stats.duration_ms)
    );
    match outcome.status {
        Status::Passed => {}
        Status::Skipped => {
            let _ = writeln!(
                out,
                "      <skipped message=\"{}\"/>",
                attr(outcome.skip_reason.as_deref().unwrap_or("skipped"))
            );
        }
        Status::Failed => {
            let count = outcome.failures.len();
            let (message, kind) = match outcome.failures.first() {
                Some(first) => (
                    format!(
                        "{count} failed check{}: {} · {}",
                        if count == 1 { "" } else { "s" },
                        first.step.as_deref().unwrap_or("scenario"),
                        first.check
                    ),
                    first.check.to_string(),
                ),
                None => ("failed".to_owned(), "failed".to_owned()),
            };
            let detail = render_failures(&outcome.failures, Colour::Plain);
            let _ = writeln!(
                out,
                "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                attr(&message),
                attr(&kind),
                escape(&detail, false)
            );
        }
    }
    if outcome.status != Status::Skipped {
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            escape(&system_out(outcome, comparison), false)
        );
    }
    out.push_str("    </testcase>\n");
}

/// One testcase of the `harness gates` suite: a gate, or the regressions.
struct GateCase {
    /// The testcase name.
    name: String,
    /// The failure message, when it failed.
    failure: Option<String>,
    /// Why it was not judged (a gate on figures the baseline lacks).
    skipped: Option<String>,
    /// One line per breach or regression.
    detail: Vec<String>,
}

/// The testcases of the gates suite: each gate, then the regressions.
fn gate_cases(c: &Comparison) -> Vec<GateCase> {
    let mut cases: Vec<GateCase> = c
        .gates
        .iter()
        .map(|gate| {
            let detail: Vec<String> = gate.breaches.iter().map(|b| b.describe()).collect();
            let n = detail.len();
            GateCase {
                name: format!("gate {}", gate.gate),
                failure: (!gate.held).then(|| {
                    format!(
                        "gate {}: {n} breach{}",
                        gate.gate,
                        if n == 1 { "" } else { "es" }
                    )
                }),
                skipped: gate
                    .not_compared_note()
                    .filter(|_| gate.held)
                    .map(|note| format!("not compared: {note}")),
                detail,
            }
        })
        .collect();
    let detail: Vec<String> = c
        .regressions
        .iter()
        .map(|n| format!("`{n}` passed in the baseline and fails now"))
        .collect();
    let n = detail.len();
    cases.push(GateCase {
        name: "regressions".to_owned(),
        failure: (n > 0).then(|| {
            format!(
                "{n} scenario{} passed in the baseline and fail{} now",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" }
            )
        }),
        skipped: None,
        detail,
    });
    cases
}

/// `<testsuite name="harness gates">` (or, for a variant, `harness
/// gates [variant NAME]`).
fn gates_suite(out: &mut String, name: &str, cases: &[GateCase]) {
    let failures = cases.iter().filter(|g| g.failure.is_some()).count();
    let skipped = cases.iter().filter(|g| g.skipped.is_some()).count();
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"0.000\">",
        attr(name),
        cases.len()
    );
    for case in cases {
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"harness.gates\" time=\"0.000\"",
            attr(&case.name)
        );
        match (&case.failure, &case.skipped) {
            (None, None) => out.push_str("/>\n"),
            (None, Some(message)) => {
                out.push_str(">\n");
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", attr(message));
                out.push_str("    </testcase>\n");
            }
            (Some(message), _) => {
                out.push_str(">\n");
                let _ = writeln!(
                    out,
                    "      <failure message=\"{}\" type=\"gate\">{}</failure>",
                    attr(message),
                    escape(&(case.detail.join("\n") + "\n"), false)
                );
                out.push_str("    </testcase>\n");
            }
        }
    }
    out.push_str("  </testsuite>\n");
}

/// The JUnit XML document of a run; with variants, `variants[i]` is the
/// comparison of `summary.variants[i]` with its own baseline (the first
/// variant's falls back to `comparison`): each variant's test cases carry
/// its baseline's figures, and each compared variant has its gates suite,
/// `harness gates [variant NAME]`.
pub(crate) fn render(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> Vec<u8> {
    let totals = summary.totals().figures;
    let compared = |i: usize| match variants.get(i) {
        Some(c) => c.as_ref(),
        None if i == 0 => comparison,
        None => None,
    };
    // With variants, a testcase per scenario and variant.
    type Case<'a> = (Option<&'a str>, &'a ScenarioOutcome, Option<&'a Comparison>);
    let cases: Vec<Case<'_>> = if summary.variants.is_empty() {
        summary
            .scenarios
            .iter()
            .map(|o| (None, o, comparison))
            .collect()
    } else {
        summary
            .variants
            .iter()
            .enumerate()
            .flat_map(|(i, v)| {
                v.summary
                    .scenarios
                    .iter()
                    .map(move |o| (Some(v.name.as_str()), o, compared(i)))
            })
            .collect()
    };
    let with = |status: Status| cases.iter().filter(|(_, o, _)| o.status == status).count();
    let tests = cases.len() + summary.load_errors.len();
    let failures = with(Status::Failed);
    let errors = summary.load_errors.len();
    let skipped = with(Status::Skipped);
    // The gates suites: the run's, or one per compared variant.
    let suites: Vec<(String, Vec<GateCase>)> = if summary.variants.is_empty() {
        comparison
            .map(|c| ("harness gates".to_owned(), gate_cases(c)))
            .into_iter()
            .collect()
    } else {
        summary
            .variants
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                compared(i).map(|c| (format!("harness gates [variant {}]", v.name), gate_cases(c)))
            })
            .collect()
    };
    let gate_tests: usize = suites.iter().map(|(_, cases)| cases.len()).sum();
    let gate_failures: usize = suites
        .iter()
        .flat_map(|(_, cases)| cases)
        .filter(|g| g.failure.is_some())
        .count();

    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"harness\" tests=\"{}\" failures=\"{}\" errors=\"{errors}\" time=\"{}\">",
        tests + gate_tests,
        failures + gate_failures,
        seconds(summary.duration_ms)
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"harness\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\">",
        seconds(summary.duration_ms)
    );
    out.push_str("    <properties>\n");
    property(&mut out, "tokenizer", &summary.tokenizer);
    if let Some(info) = &summary.partition {
        property(&mut out, "partition", &info.spec.to_string());
    }
    if summary.interrupted {
        property(&mut out, "interrupted", "true");
    }
    if !summary.variants.is_empty() {
        let names: Vec<&str> = summary.variants.iter().map(|v| v.name.as_str()).collect();
        property(&mut out, "variants", &names.join(","));
    }
    for (name, value) in totals.named() {
        property(&mut out, name, &value.to_string());
    }
    if let Some(c) = comparison {
        for (name, value) in c.baseline_totals.named() {
            property(&mut out, &format!("baseline.{name}"), &value.to_string());
        }
    }
    out.push_str("    </properties>\n");
    for (variant, outcome, compared) in cases {
        testcase(&mut out, outcome, variant, compared);
    }
    for error in &summary.load_errors {
        let _ = writeln!(
            out,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"0.000\">",
            attr(&format!("load {}", error.file)),
            attr(&classname(&error.file))
        );
        let _ = writeln!(
            out,
            "      <error message=\"{}\" type=\"load\">{}</error>",
            attr(&error.message),
            escape(&error.to_string(), false)
        );
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n");
    for (name, cases) in &suites {
        gates_suite(&mut out, name, cases);
    }
    out.push_str("</testsuites>\n");
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn classnames_follow_the_path() {
        assert_eq!(
            classname("scenarios/read/basic.yaml"),
            "scenarios.read.basic"
        );
        assert_eq!(classname("./a.yml"), "a");
        assert_eq!(classname("a.b/c"), "a.b.c");
    }

    #[test]
    fn times_are_seconds_with_three_decimals() {
        assert_eq!(seconds(0), "0.000");
        assert_eq!(seconds(1234), "1.234");
        assert_eq!(seconds(5), "0.005");
    }
}
