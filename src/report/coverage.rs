//! The coverage section of `summary.md` and of the console
//! (`harness run --coverage`): for each tool and for the loop, how many of
//! its known behaviours the run exercised, and which it never did. The
//! figures come from `run::coverage`; run.json holds them whole.

use std::fmt::Write as _;

use crate::run::RunSummary;
use crate::run::coverage::AreaCoverage;
use crate::run::coverage::Coverage;
use crate::run::coverage::summarize;

/// A behaviour's name as Markdown inline code (names hold no backticks;
/// `|` is escaped for table cells).
fn code(name: &str) -> String {
    format!("`{}`", name.replace('`', "'")).replace('|', "\\|")
}

/// Behaviours seen that the catalogue does not list, with their calls.
fn others(area: &AreaCoverage) -> Vec<(String, u64)> {
    area.behaviours
        .iter()
        .filter(|b| !b.known)
        .map(|b| (b.behaviour.clone(), b.calls))
        .collect()
}

fn headline(c: &Coverage) -> String {
    format!(
        "{} of {} known behaviours exercised, by the calls of {} scenario{}",
        c.exercised,
        c.known,
        c.scenarios,
        if c.scenarios == 1 { "" } else { "s" }
    )
}

/// The `### Coverage` section of summary.md; empty without coverage.
pub(crate) fn markdown(summary: &RunSummary) -> String {
    let Some(c) = summarize(summary) else {
        return String::new();
    };
    let mut out = String::from("### Coverage\n\n");
    let _ = writeln!(out, "{}.\n", headline(&c));
    out.push_str("| area | exercised | never exercised | also seen |\n|---|---:|---|---|\n");
    for area in &c.areas {
        let never: Vec<String> = area.not_exercised.iter().map(|n| code(n)).collect();
        let also: Vec<String> = others(area)
            .iter()
            .map(|(n, calls)| format!("{} ({calls})", code(n)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {} of {} | {} | {} |",
            code(&area.area),
            area.exercised,
            area.known,
            if never.is_empty() {
                "–".to_owned()
            } else {
                never.join(", ")
            },
            if also.is_empty() {
                "–".to_owned()
            } else {
                also.join(", ")
            }
        );
    }
    out.push('\n');
    out
}

/// The coverage summary `harness run --coverage` prints: one line per
/// area, with what it never exercised.
pub(crate) fn console(summary: &RunSummary) -> String {
    let Some(c) = summarize(summary) else {
        return String::new();
    };
    let mut out = format!("\ncoverage: {}\n", headline(&c));
    let width = c.areas.iter().map(|a| a.area.len()).max().unwrap_or(0);
    for area in &c.areas {
        let counts = format!("{}/{}", area.exercised, area.known);
        let mut line = format!("  {:<width$}  {counts:>5}", area.area);
        if !area.not_exercised.is_empty() {
            let _ = write!(line, "  never: {}", area.not_exercised.join(", "));
        }
        let also: Vec<String> = others(area)
            .iter()
            .map(|(n, calls)| format!("{n} ({calls})"))
            .collect();
        if !also.is_empty() {
            let _ = write!(line, "  also: {}", also.join(", "));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use pretty_assertions::assert_eq;

    use super::*;
    use crate::run::ScenarioOutcome;
    use crate::run::Status;

    fn run(coverage: Option<BTreeMap<String, BTreeMap<String, u64>>>) -> RunSummary {
        let mut outcome = ScenarioOutcome::empty("a", "a.yaml", &[], Status::Passed);
        outcome.coverage = coverage;
        RunSummary {
            scenarios: vec![outcome],
            ..RunSummary::default()
        }
    }

    #[test]
    fn without_coverage_nothing_is_shown() {
        assert_eq!(markdown(&run(None)), "");
        assert_eq!(console(&run(None)), "");
    }

    #[test]
    fn each_area_shows_what_it_never_exercised() {
        let summary = run(Some(BTreeMap::from([
            (
                "write".to_owned(),
                BTreeMap::from([
                    ("created".to_owned(), 2),
                    ("overwritten".to_owned(), 1),
                    ("error: other".to_owned(), 1),
                ]),
            ),
            (
                "loop".to_owned(),
                BTreeMap::from([("one call in a message".to_owned(), 4)]),
            ),
        ])));
        let md = markdown(&summary);
        // write (11) and the loop: the built-in tools no scenario activated
        // are not counted.
        let known = 11 + crate::judge::coverage::LOOP_BEHAVIOURS.len();
        assert!(
            md.starts_with(&format!(
                "### Coverage\n\n3 of {known} known behaviours exercised, by the calls of 1 \
                 scenario.\n\n"
            )),
            "{md}"
        );
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| `")).count(),
            2,
            "{md}"
        );
        let write_row = md.lines().find(|l| l.starts_with("| `write`")).unwrap();
        assert_eq!(
            write_row,
            "| `write` | 2 of 11 | `arguments normalised`, `error: a directory`, `error: outside \
             the workspace`, `error: permission denied`, `error: disk full`, `error: read-only \
             file system`, `error: I/O error`, `error: hard-linked file in place`, `error: \
             invalid arguments` | `error: other` (1) |"
        );
        let text = console(&summary);
        let write_line = text
            .lines()
            .find(|l| l.trim_start().starts_with("write"))
            .unwrap();
        assert_eq!(
            write_line,
            "  write   2/11  never: arguments normalised, error: a directory, error: outside \
             the workspace, error: permission denied, error: disk full, error: read-only file \
             system, error: I/O error, error: hard-linked file in place, error: invalid \
             arguments  also: error: other (1)"
        );
    }
}
