//! Setting a run against a baseline: which scenarios are new, missing,
//! regressed, and how each gate fared.
//!
//! - a scenario that passed in the baseline and fails now is a regression;
//! - a gate (see [`crate::run::gate`]) is breached when a figure grew by
//!   more than its limit, for one scenario or in total.
//!
//! Only scenarios present in both, and skipped in neither, are compared;
//! totals are summed over those same scenarios, so a new or missing
//! scenario is reported but never breaches a gate. A partitioned run
//! compares only its own scenarios.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde::Serialize;

use crate::judge::Figures;
use crate::run::Gate;
use crate::run::RunSummary;
use crate::run::Status;

use super::baseline::Baseline;
use super::verdict::GateOutcome;
use super::verdict::judge;

/// One scenario present in both the run and the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct ScenarioChange {
    /// The scenario.
    pub name: String,
    /// Its status in the baseline.
    pub baseline_status: Status,
    /// Its status now.
    pub status: Status,
    /// Whether its figures were compared (skipped in neither).
    pub compared: bool,
    /// Its figures in the baseline.
    pub baseline: Figures,
    /// Its figures now.
    pub current: Figures,
}

/// A run set against a baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Comparison {
    /// Whether no scenario regressed and every gate held.
    pub passed: bool,
    /// The gates and how they fared, sorted by key.
    pub gates: Vec<GateOutcome>,
    /// Scenarios that passed in the baseline and fail now, in run order.
    pub regressions: Vec<String>,
    /// Scenarios not in the baseline, in run order.
    pub new: Vec<String>,
    /// Baseline scenarios not in the run, by name. A partitioned run
    /// lists only those that belong to its partition (hash partitions)
    /// or none (slices).
    pub missing: Vec<String>,
    /// Scenarios present in both, in run order.
    pub scenarios: Vec<ScenarioChange>,
    /// Figures summed over the compared scenarios: the baseline's.
    pub baseline_totals: Figures,
    /// Figures summed over the compared scenarios: now.
    pub current_totals: Figures,
}

impl Comparison {
    /// Breaches of every gate.
    pub(crate) fn breaches(&self) -> usize {
        self.gates.iter().map(|g| g.breaches.len()).sum()
    }
}

/// Sets a run against a baseline and judges the gates.
pub(crate) fn compare(summary: &RunSummary, baseline: &Baseline, gates: &[Gate]) -> Comparison {
    let in_run: BTreeSet<&str> = summary.scenarios.iter().map(|s| s.name.as_str()).collect();
    let mut comparison = Comparison {
        passed: true,
        gates: Vec::new(),
        regressions: Vec::new(),
        new: Vec::new(),
        missing: Vec::new(),
        scenarios: Vec::new(),
        baseline_totals: Figures::default(),
        current_totals: Figures::default(),
    };
    for outcome in &summary.scenarios {
        let Some(before) = baseline.scenarios.get(&outcome.name) else {
            comparison.new.push(outcome.name.clone());
            continue;
        };
        if before.status == Status::Passed && outcome.status == Status::Failed {
            comparison.regressions.push(outcome.name.clone());
        }
        let compared = before.status != Status::Skipped && outcome.status != Status::Skipped;
        let current = outcome.stats.figures;
        if compared {
            comparison.baseline_totals.add(&before.figures);
            comparison.current_totals.add(&current);
        }
        comparison.scenarios.push(ScenarioChange {
            name: outcome.name.clone(),
            baseline_status: before.status,
            status: outcome.status,
            compared,
            baseline: before.figures,
            current,
        });
    }
    comparison.missing = baseline
        .scenarios
        .keys()
        .filter(|name| !in_run.contains(name.as_str()))
        .filter(|name| match &summary.partition {
            None => true,
            Some(info) => info.spec.holds_name(name).unwrap_or(false),
        })
        .cloned()
        .collect();
    for gate in gates {
        let compared = comparison
            .scenarios
            .iter()
            .filter(|c| c.compared)
            .map(|c| (c.name.as_str(), &c.baseline, &c.current));
        let outcome = judge(
            gate,
            compared,
            (&comparison.baseline_totals, &comparison.current_totals),
            &baseline.unrecorded,
        );
        comparison.gates.push(outcome);
    }
    comparison.passed =
        comparison.regressions.is_empty() && comparison.gates.iter().all(|g| g.held);
    comparison
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::report::verdict::Breach;
    use crate::run::Metric;
    use crate::run::ScenarioOutcome;

    fn outcome(
        name: &str,
        status: Status,
        result: u64,
        input: u64,
        retries: u64,
    ) -> ScenarioOutcome {
        let mut o = ScenarioOutcome::empty(name, &format!("{name}.yaml"), &[], status);
        o.stats.figures.result_tokens = result;
        o.stats.figures.input_tokens = input;
        o.stats.figures.retries = retries;
        o.stats.figures.calls = 2;
        o.stats.duration_ms = 17;
        o
    }

    fn run(scenarios: Vec<ScenarioOutcome>) -> RunSummary {
        RunSummary {
            scenarios,
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        }
    }

    /// Each breach of `gate` as the reports word it.
    fn described(gate: &crate::report::verdict::GateOutcome) -> Vec<String> {
        gate.breaches.iter().map(Breach::describe).collect()
    }

    fn gates(list: &[&str]) -> Vec<Gate> {
        list.iter().map(|g| g.parse().unwrap()).collect()
    }

    fn base() -> RunSummary {
        run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("b", Status::Passed, 200, 2000, 1),
        ])
    }

    #[test]
    fn each_gate_holds_without_a_regression() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        // Within the limits: +5 % exactly and no extra retries or errors.
        now.scenarios[0].stats.figures.result_tokens = 105;
        now.scenarios[1].stats.figures.input_tokens = 1990;
        let c = compare(
            &now,
            &baseline,
            &gates(&["tokens=+5%", "retries=+0", "errors=+0"]),
        );
        assert!(c.passed, "{c:#?}");
        assert_eq!(c.breaches(), 0);
        assert!(c.gates.iter().all(|g| g.held));
    }

    #[test]
    fn the_tokens_gate_fails_on_a_token_regression() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[0].stats.figures.result_tokens = 106;
        let c = compare(&now, &baseline, &gates(&["tokens=+5%"]));
        assert!(!c.passed);
        assert_eq!(
            c.gates,
            vec![GateOutcome {
                gate: "tokens=+5%".into(),
                held: false,
                breaches: vec![Breach {
                    scenario: Some("a".into()),
                    metric: Metric::ResultTokens,
                    baseline: 100,
                    current: 106,
                }],
                not_compared: Vec::new(),
            }]
        );
        assert_eq!(
            c.gates[0].breaches[0].describe(),
            "`a` result_tokens 100 → 106 (+6.0%)"
        );
    }

    #[test]
    fn the_tokens_gate_also_watches_the_total() {
        let baseline = Baseline::of(&run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("b", Status::Passed, 100, 1000, 0),
        ]));
        // Each scenario grows 4 % (held per scenario); with a 3 % gate the
        // total breaches too.
        let now = run(vec![
            outcome("a", Status::Passed, 100, 1040, 0),
            outcome("b", Status::Passed, 100, 1040, 0),
        ]);
        let held = compare(&now, &baseline, &gates(&["tokens=+5%"]));
        assert!(held.passed);
        let c = compare(&now, &baseline, &gates(&["input_tokens=+3%"]));
        assert_eq!(
            described(&c.gates[0]),
            [
                "`a` input_tokens 1000 → 1040 (+4.0%)",
                "`b` input_tokens 1000 → 1040 (+4.0%)",
                "total input_tokens 2000 → 2080 (+4.0%)"
            ]
        );
    }

    #[test]
    fn the_retries_gate_fails_on_one_more_retry() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[1].stats.figures.retries = 2;
        let c = compare(&now, &baseline, &gates(&["retries=+0", "errors=+0"]));
        assert!(!c.passed);
        let retries = c.gates.iter().find(|g| g.gate == "retries=+0").unwrap();
        assert_eq!(
            described(retries),
            [
                "`b` retries 1 → 2 (+100.0%)",
                "total retries 1 → 2 (+100.0%)"
            ]
        );
        assert!(c.gates.iter().find(|g| g.gate == "errors=+0").unwrap().held);
    }

    #[test]
    fn the_errors_gate_fails_on_a_new_error() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[0].stats.figures.errors = 1;
        let c = compare(&now, &baseline, &gates(&["errors=+0"]));
        assert!(!c.passed);
        assert_eq!(
            c.gates[0].breaches[0].describe(),
            "`a` errors 0 → 1 (+1 from 0)"
        );
        let lenient = compare(&now, &baseline, &gates(&["errors=+1"]));
        assert!(lenient.passed);
    }

    #[test]
    fn the_definition_tokens_gate_fails_when_a_definition_grows() {
        let mut before = base();
        before.scenarios[0].stats.figures.definition_tokens = 300;
        before.scenarios[1].stats.figures.definition_tokens = 500;
        let baseline = Baseline::of(&before);
        let mut now = before.clone();
        now.scenarios[1].stats.figures.definition_tokens = 512;
        let c = compare(&now, &baseline, &gates(&["definition_tokens=+0"]));
        assert!(!c.passed);
        assert_eq!(
            described(&c.gates[0]),
            [
                "`b` definition_tokens 500 → 512 (+2.4%)",
                "total definition_tokens 800 → 812 (+1.5%)"
            ]
        );
        assert!(compare(&before, &baseline, &gates(&["definition_tokens=+0"])).passed);
    }

    #[test]
    fn a_baseline_without_definition_tokens_is_not_compared_on_it() {
        // A baseline written before the figure: read as 0, so any figure
        // now would be growth; the gate does not compare it and says so.
        let mut baseline = Baseline::of(&base());
        baseline.unrecorded = vec![Metric::DefinitionTokens];
        let mut now = base();
        now.scenarios[0].stats.figures.definition_tokens = 300;
        now.scenarios[1].stats.figures.retries = 2;
        let c = compare(
            &now,
            &baseline,
            &gates(&["definition_tokens=+0", "retries=+0"]),
        );
        assert_eq!(
            c.gates[0],
            GateOutcome {
                gate: "definition_tokens=+0".into(),
                held: true,
                breaches: Vec::new(),
                not_compared: vec![Metric::DefinitionTokens],
            }
        );
        // The figures it has are compared as ever.
        assert_eq!(c.gates[1].breaches.len(), 2);
        assert!(!c.passed);
    }

    #[test]
    fn a_scenario_that_passed_and_now_fails_is_a_regression() {
        let baseline = Baseline::of(&base());
        let mut now = base();
        now.scenarios[1].status = Status::Failed;
        let c = compare(&now, &baseline, &[]);
        assert!(!c.passed);
        assert_eq!(c.regressions, ["b"]);
    }

    #[test]
    fn new_missing_and_skipped_scenarios_are_reported_not_gated() {
        let baseline = Baseline::of(&run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("gone", Status::Passed, 100, 1000, 0),
            outcome("s", Status::Skipped, 0, 0, 0),
        ]));
        let now = run(vec![
            outcome("a", Status::Passed, 100, 1000, 0),
            outcome("fresh", Status::Passed, 900, 9000, 3),
            outcome("s", Status::Passed, 100, 1000, 2),
        ]);
        let c = compare(&now, &baseline, &gates(&["tokens=+0%", "retries=+0"]));
        assert!(c.passed, "{c:#?}");
        assert_eq!(c.new, ["fresh"]);
        assert_eq!(c.missing, ["gone"]);
        assert_eq!(
            c.scenarios
                .iter()
                .map(|s| (s.name.as_str(), s.compared))
                .collect::<Vec<_>>(),
            [("a", true), ("s", false)]
        );
        assert_eq!(c.current_totals.result_tokens, 100);
    }

    #[test]
    fn a_hash_partition_misses_only_its_own_scenarios() {
        let names: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
        let baseline = Baseline::of(&run(names
            .iter()
            .map(|n| outcome(n, Status::Passed, 1, 1, 0))
            .collect()));
        let spec: crate::run::Partition = "hash:1/3".parse().unwrap();
        let mine: Vec<&String> = names.iter().filter(|n| spec.contains(0, n)).collect();
        let mut now = run(mine
            .iter()
            .skip(1)
            .map(|n| outcome(n, Status::Passed, 1, 1, 0))
            .collect());
        now.partition = Some(crate::run::PartitionInfo {
            spec,
            suite_scenarios: 19,
            suite_fingerprint: None,
        });
        let c = compare(&now, &baseline, &[]);
        assert_eq!(c.missing, [mine[0].clone()]);
    }
}
