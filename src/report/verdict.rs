//! Verdicts of gates: which figures grew past a gate's limit, and how
//! changes are worded in every report.
//!
//! The gate language itself (`KEY=+LIMIT`) is [`crate::run::gate`]: a run
//! records its gates, and this module judges them.

use serde::Deserialize;
use serde::Serialize;

use crate::judge::Figures;
use crate::run::Gate;
use crate::run::Metric;

/// A figure that grew past a gate's limit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Breach {
    /// The scenario, or `None` for the totals.
    pub scenario: Option<String>,
    /// The figure.
    pub metric: Metric,
    /// Its value in the baseline.
    pub baseline: u64,
    /// Its value now.
    pub current: u64,
}

impl Breach {
    /// `` `name` result_tokens 100 → 120 (+20.0%) ``.
    pub(crate) fn describe(&self) -> String {
        let scope = match &self.scenario {
            Some(name) => format!("`{name}`"),
            None => "total".to_owned(),
        };
        format!(
            "{scope} {} {} → {} ({})",
            self.metric.as_str(),
            self.baseline,
            self.current,
            change_text(self.baseline, self.current)
        )
    }
}

/// `+20.0%`, `-3.5%`, `±0`, or `+12 from 0`.
pub(crate) fn change_text(baseline: u64, current: u64) -> String {
    if baseline == current {
        return "±0".to_owned();
    }
    if baseline == 0 {
        return format!("+{current} from 0");
    }
    let pct = (current as f64 - baseline as f64) / baseline as f64 * 100.0;
    format!("{pct:+.1}%")
}

/// How one gate fared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct GateOutcome {
    /// The gate, as written (`tokens=+5%`).
    pub gate: String,
    /// Whether no figure breached it.
    pub held: bool,
    /// The figures that breached it: scenarios in run order, then totals.
    pub breaches: Vec<Breach>,
    /// The figures it watches that the baseline does not hold (it was
    /// written before they existed), so were not compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_compared: Vec<Metric>,
}

impl GateOutcome {
    /// Why some of its figures were not compared, when some were not: `the
    /// baseline has no definition_tokens (written before that figure
    /// existed); save a new baseline to gate on it`.
    pub(crate) fn not_compared_note(&self) -> Option<String> {
        if self.not_compared.is_empty() {
            return None;
        }
        let names: Vec<&str> = self.not_compared.iter().map(|m| m.as_str()).collect();
        Some(format!(
            "the baseline has no {} (written before that figure existed); save a new baseline \
             to gate on it",
            names.join(" or ")
        ))
    }
}

/// Judges one gate: each scenario's figures (`name`, baseline, now) in
/// order, then the totals (baseline, now). The figures of `unrecorded`
/// (those the baseline does not hold) are not compared.
pub(crate) fn judge<'a>(
    gate: &Gate,
    scenarios: impl IntoIterator<Item = (&'a str, &'a Figures, &'a Figures)>,
    totals: (&Figures, &Figures),
    unrecorded: &[Metric],
) -> GateOutcome {
    let (not_compared, compared): (Vec<Metric>, Vec<Metric>) = gate
        .key
        .metrics()
        .into_iter()
        .partition(|metric| unrecorded.contains(metric));
    let mut breaches = Vec::new();
    let mut check = |scenario: Option<&str>, before: &Figures, now: &Figures| {
        for &metric in &compared {
            let (baseline, current) = (metric.value(before), metric.value(now));
            if gate.limit.breached(baseline, current) {
                breaches.push(Breach {
                    scenario: scenario.map(str::to_owned),
                    metric,
                    baseline,
                    current,
                });
            }
        }
    };
    for (name, before, now) in scenarios {
        check(Some(name), before, now);
    }
    check(None, totals.0, totals.1);
    GateOutcome {
        gate: gate.to_string(),
        held: breaches.is_empty(),
        breaches,
        not_compared,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn changes_are_worded_as_percentages_or_from_zero() {
        assert_eq!(change_text(100, 120), "+20.0%");
        assert_eq!(change_text(200, 193), "-3.5%");
        assert_eq!(change_text(7, 7), "±0");
        assert_eq!(change_text(0, 12), "+12 from 0");
    }

    #[test]
    fn a_gate_lists_scenario_breaches_then_the_total() {
        let gate: Gate = "calls=+0".parse().unwrap();
        let one = Figures {
            calls: 1,
            ..Figures::default()
        };
        let two = Figures {
            calls: 2,
            ..Figures::default()
        };
        let outcome = judge(
            &gate,
            [("a", &one, &two), ("b", &two, &two)],
            (&one, &two),
            &[],
        );
        assert_eq!(
            outcome
                .breaches
                .iter()
                .map(Breach::describe)
                .collect::<Vec<_>>(),
            ["`a` calls 1 → 2 (+100.0%)", "total calls 1 → 2 (+100.0%)"]
        );
        assert!(!outcome.held);
        assert_eq!(outcome.gate, "calls=+0");
        assert_eq!(outcome.not_compared_note(), None);
    }

    #[test]
    fn a_figure_the_baseline_lacks_is_not_compared_and_said_so() {
        let gate: Gate = "definition_tokens=+0".parse().unwrap();
        let old = Figures::default();
        let now = Figures {
            definition_tokens: 90,
            ..Figures::default()
        };
        let outcome = judge(
            &gate,
            [("a", &old, &now)],
            (&old, &now),
            &[Metric::DefinitionTokens],
        );
        assert_eq!(
            outcome,
            GateOutcome {
                gate: "definition_tokens=+0".into(),
                held: true,
                breaches: Vec::new(),
                not_compared: vec![Metric::DefinitionTokens],
            }
        );
        assert_eq!(
            outcome.not_compared_note().unwrap(),
            "the baseline has no definition_tokens (written before that figure existed); save a \
             new baseline to gate on it"
        );
        // The same baseline compares the figures it has.
        let calls: Gate = "calls=+0".parse().unwrap();
        let more = Figures { calls: 1, ..now };
        let outcome = judge(
            &calls,
            [("a", &old, &more)],
            (&old, &more),
            &[Metric::DefinitionTokens],
        );
        assert_eq!(outcome.breaches.len(), 2);
        assert!(outcome.not_compared.is_empty());
    }
}
