//! What `harness run --variant NAME=FILE …` adds to the reports: each
//! variant's figures side by side, and the scenarios whose figures moved
//! most against the first variant, with the delta (console, summary.md,
//! index.html).

use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::Status;
use crate::run::VariantRun;

/// The figures a variant table shows, per scenario or summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Row {
    /// Scenarios passed.
    pub passed: usize,
    /// Scenarios failed.
    pub failed: usize,
    /// Tokens of every result.
    pub result_tokens: u64,
    /// Input tokens (cache reads excluded).
    pub input_tokens: u64,
    /// Error results.
    pub errors: u64,
    /// Retries sent.
    pub retries: u64,
    /// Results the tool truncated.
    pub truncations: u64,
}

/// The figures' column names, in the order every variant table shows
/// them.
pub(crate) const COLUMNS: [&str; 7] = [
    "passed",
    "failed",
    "result tokens",
    "input tokens",
    "errors",
    "retries",
    "truncations",
];

impl Row {
    /// The figures in the order of [`COLUMNS`].
    pub(crate) fn cells(&self) -> [u64; 7] {
        [
            self.passed as u64,
            self.failed as u64,
            self.result_tokens,
            self.input_tokens,
            self.errors,
            self.retries,
            self.truncations,
        ]
    }

    /// The figures of one scenario.
    pub(crate) fn of(outcome: &ScenarioOutcome) -> Self {
        let f = &outcome.stats.figures;
        Self {
            passed: usize::from(outcome.status == Status::Passed),
            failed: usize::from(outcome.status == Status::Failed),
            result_tokens: f.result_tokens,
            input_tokens: f.input_tokens,
            errors: f.errors,
            retries: f.retries,
            truncations: outcome.calls.iter().filter(|c| c.truncated).count() as u64,
        }
    }

    /// A variant's figures, summed (saturating).
    pub(crate) fn total(summary: &RunSummary) -> Self {
        summary
            .scenarios
            .iter()
            .map(Self::of)
            .fold(Self::default(), |a, b| Self {
                passed: a.passed.saturating_add(b.passed),
                failed: a.failed.saturating_add(b.failed),
                result_tokens: a.result_tokens.saturating_add(b.result_tokens),
                input_tokens: a.input_tokens.saturating_add(b.input_tokens),
                errors: a.errors.saturating_add(b.errors),
                retries: a.retries.saturating_add(b.retries),
                truncations: a.truncations.saturating_add(b.truncations),
            })
    }

    /// The token, error, retry and truncation figures with their names.
    fn named(&self) -> [(&'static str, u64); 5] {
        [
            ("result_tokens", self.result_tokens),
            ("input_tokens", self.input_tokens),
            ("errors", self.errors),
            ("retries", self.retries),
            ("truncations", self.truncations),
        ]
    }
}

/// A scenario whose figures differ between the first variant and another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Moved {
    /// The scenario.
    pub name: String,
    /// The other variant.
    pub variant: String,
    /// Each figure that differs: its name, the first variant's value and
    /// the other's.
    pub changes: Vec<(&'static str, u64, u64)>,
    /// Whether its status differs.
    pub status: Option<(Status, Status)>,
}

impl Moved {
    /// How far it moved: the sum of the absolute token deltas, for the
    /// order of the list.
    fn weight(&self) -> u64 {
        self.changes
            .iter()
            .map(|(_, a, b)| a.abs_diff(*b))
            .fold(0, u64::saturating_add)
    }

    /// `result_tokens 1200 → 800 (-400), errors 0 → 1 (+1)`.
    pub(crate) fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some((a, b)) = self.status {
            parts.push(format!("{} → {}", a.as_str(), b.as_str()));
        }
        for (name, a, b) in &self.changes {
            parts.push(format!("{name} {a} → {b} ({})", delta(*a, *b)));
        }
        parts.join(", ")
    }
}

/// `+400`, `-12`, `0`.
pub(crate) fn delta(from: u64, to: u64) -> String {
    if to >= from {
        format!("+{}", to - from)
    } else {
        format!("-{}", from - to)
    }
}

/// The scenarios whose figures or status differ between the first
/// variant and each other one, those that moved most first (then by
/// name and variant, so the order is stable).
pub(crate) fn moved(variants: &[VariantRun]) -> Vec<Moved> {
    let Some((first, others)) = variants.split_first() else {
        return Vec::new();
    };
    let mut moved = Vec::new();
    for other in others {
        for a in &first.summary.scenarios {
            let Some(b) = other.summary.scenarios.iter().find(|b| b.name == a.name) else {
                continue;
            };
            let (ra, rb) = (Row::of(a), Row::of(b));
            let changes: Vec<(&'static str, u64, u64)> = ra
                .named()
                .into_iter()
                .zip(rb.named())
                .filter(|((_, x), (_, y))| x != y)
                .map(|((name, x), (_, y))| (name, x, y))
                .collect();
            let status = (a.status != b.status).then_some((a.status, b.status));
            if !changes.is_empty() || status.is_some() {
                moved.push(Moved {
                    name: a.name.clone(),
                    variant: other.name.clone(),
                    changes,
                    status,
                });
            }
        }
    }
    moved.sort_by(|x, y| {
        y.status
            .is_some()
            .cmp(&x.status.is_some())
            .then(y.weight().cmp(&x.weight()))
            .then(x.name.cmp(&y.name))
            .then(x.variant.cmp(&y.variant))
    });
    moved
}

/// The most moved scenarios the console and summary.md list.
pub(crate) const SHOWN: usize = 15;

/// The variant section of the console (empty without variants).
pub(crate) fn console(summary: &RunSummary) -> String {
    let Some(first) = summary.variants.first() else {
        return String::new();
    };
    let width = summary
        .variants
        .iter()
        .map(|v| v.name.chars().count())
        .max()
        .unwrap_or(0)
        .max("variant".len());
    let mut out = format!(
        "\nvariants:\n  {:<width$}  passed  failed  result tokens  input tokens  errors  retries  \
         truncations\n",
        "variant"
    );
    for v in &summary.variants {
        out.push_str(&format!("  {:<width$}", v.name));
        for (n, column) in Row::total(&v.summary).cells().iter().zip(COLUMNS) {
            out.push_str(&format!("  {n:>0$}", column.len()));
        }
        out.push('\n');
    }
    let moved = moved(&summary.variants);
    if moved.is_empty() {
        out.push_str(&format!(
            "no scenario's figures differ from variant {}\n",
            first.name
        ));
        return out;
    }
    out.push_str(&format!(
        "scenarios that moved most against variant {} ({} of {} shown):\n",
        first.name,
        moved.len().min(SHOWN),
        moved.len()
    ));
    for m in moved.iter().take(SHOWN) {
        out.push_str(&format!("  {} [{}]: {}\n", m.name, m.variant, m.describe()));
    }
    out
}

/// The variant section of summary.md (empty without variants): a table
/// of the variants side by side, and the scenarios that moved most.
/// `cell` escapes a text for a table cell.
pub(crate) fn markdown(summary: &RunSummary, cell: impl Fn(&str) -> String) -> String {
    let Some(first) = summary.variants.first() else {
        return String::new();
    };
    let mut out = String::from(
        "\n### Variants\n\n| | passed | failed | result tokens | input tokens | errors | retries \
         | truncations |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for v in &summary.variants {
        out.push_str(&format!("| **{}** ({}) |", cell(&v.name), cell(&v.file)));
        for n in Row::total(&v.summary).cells() {
            out.push_str(&format!(" {n} |"));
        }
        out.push('\n');
    }
    let moved = moved(&summary.variants);
    if moved.is_empty() {
        out.push_str(&format!(
            "\nNo scenario's figures differ from variant {}.\n",
            cell(&first.name)
        ));
        return out;
    }
    out.push_str(&format!(
        "\nScenarios that moved most against variant {} ({} of {}):\n\n\
         | scenario | variant | change |\n| --- | --- | --- |\n",
        cell(&first.name),
        moved.len().min(SHOWN),
        moved.len()
    ));
    for m in moved.iter().take(SHOWN) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            cell(&m.name),
            cell(&m.variant),
            cell(&m.describe())
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::judge::tally::CallStat;

    fn outcome(name: &str, status: Status, result_tokens: u64, truncated: bool) -> ScenarioOutcome {
        let mut o = ScenarioOutcome::empty(name, &format!("{name}.yaml"), &[], status);
        o.stats.figures.result_tokens = result_tokens;
        o.stats.figures.input_tokens = result_tokens * 2;
        o.calls.push(CallStat {
            truncated,
            ..CallStat::default()
        });
        o
    }

    fn variant(name: &str, scenarios: Vec<ScenarioOutcome>) -> VariantRun {
        VariantRun {
            name: name.into(),
            file: format!("{name}.yaml"),
            summary: RunSummary {
                scenarios,
                ..RunSummary::default()
            },
        }
    }

    fn summary() -> RunSummary {
        let a = variant(
            "default",
            vec![
                outcome("big", Status::Passed, 1000, false),
                outcome("same", Status::Passed, 10, false),
                outcome("small", Status::Passed, 50, false),
            ],
        );
        let b = variant(
            "tight",
            vec![
                outcome("big", Status::Passed, 400, true),
                outcome("same", Status::Passed, 10, false),
                outcome("small", Status::Failed, 40, true),
            ],
        );
        RunSummary {
            scenarios: a.summary.scenarios.clone(),
            variants: vec![a, b],
            ..RunSummary::default()
        }
    }

    #[test]
    fn moved_scenarios_come_status_changes_first_then_by_size() {
        let moved = moved(&summary().variants);
        let described: Vec<(String, String)> = moved
            .iter()
            .map(|m| (m.name.clone(), m.describe()))
            .collect();
        assert_eq!(
            described,
            [
                (
                    "small".to_owned(),
                    "passed → failed, result_tokens 50 → 40 (-10), input_tokens 100 → 80 (-20), \
                     truncations 0 → 1 (+1)"
                        .to_owned()
                ),
                (
                    "big".to_owned(),
                    "result_tokens 1000 → 400 (-600), input_tokens 2000 → 800 (-1200), \
                     truncations 0 → 1 (+1)"
                        .to_owned()
                ),
            ]
        );
    }

    #[test]
    fn the_console_shows_the_variants_side_by_side() {
        assert_eq!(
            console(&summary()),
            "\nvariants:\n  \
             variant  passed  failed  result tokens  input tokens  errors  retries  truncations\n  \
             default       3       0           1060          2120       0        0            0\n  \
             tight         2       1            450           900       0        0            2\n\
             scenarios that moved most against variant default (2 of 2 shown):\n  \
             small [tight]: passed → failed, result_tokens 50 → 40 (-10), input_tokens 100 → 80 \
             (-20), truncations 0 → 1 (+1)\n  \
             big [tight]: result_tokens 1000 → 400 (-600), input_tokens 2000 → 800 (-1200), \
             truncations 0 → 1 (+1)\n"
        );
        assert_eq!(console(&RunSummary::default()), "");
    }

    #[test]
    fn summary_md_has_a_side_by_side_table() {
        let text = markdown(&summary(), str::to_owned);
        assert_eq!(
            text.lines().take(6).collect::<Vec<_>>(),
            [
                "",
                "### Variants",
                "",
                "| | passed | failed | result tokens | input tokens | errors | retries | truncations |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
                "| **default** (default.yaml) | 3 | 0 | 1060 | 2120 | 0 | 0 | 0 |",
            ]
        );
        assert!(
            text.contains("| big | tight | result_tokens 1000 → 400 (-600), input_tokens 2000 → 800 (-1200), truncations 0 → 1 (+1) |\n"),
            "{text}"
        );
    }
}
