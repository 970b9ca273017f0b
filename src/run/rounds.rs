//! The runs of a repeated scenario folded into one outcome
//! (`harness run --repeat N`): every figure but the durations is
//! deterministic, so a figure that differs between runs is a finding.

use crate::judge::Failure;
use crate::judge::Figures;

use super::outcome::ScenarioOutcome;
use super::outcome::Status;
use super::repeat::DurationStats;
use super::repeat::FailedRun;
use super::repeat::NondeterministicCall;
use super::repeat::RepeatSpec;
use super::repeat::Repeats;

/// The outcomes of rounds of `count` scenarios (every scenario once per
/// round, round after round) folded into one per scenario.
pub(super) fn fold_rounds(
    runs: Vec<ScenarioOutcome>,
    count: usize,
    spec: RepeatSpec,
) -> Vec<ScenarioOutcome> {
    let mut by_scenario: Vec<Vec<ScenarioOutcome>> = (0..count).map(|_| Vec::new()).collect();
    for (i, outcome) in runs.into_iter().enumerate() {
        if let Some(slot) = by_scenario.get_mut(i % count.max(1)) {
            slot.push(outcome);
        }
    }
    by_scenario
        .into_iter()
        .filter_map(|runs| fold(runs, spec))
        .collect()
}

/// Folds the runs of one scenario (in the order they started) into one
/// outcome: the first failed run's when the scenario fails (fewer than
/// `min_pass` runs passed), else the first passed run's, with the median
/// wall time and its [`Repeats`]. A scenario none of whose runs was made
/// (`skip:`) stays skipped, without `repeats`.
pub(super) fn fold(runs: Vec<ScenarioOutcome>, spec: RepeatSpec) -> Option<ScenarioOutcome> {
    let made: Vec<(u32, ScenarioOutcome)> = runs
        .iter()
        .enumerate()
        .filter(|(_, o)| o.status != Status::Skipped)
        .map(|(i, o)| (u32::try_from(i + 1).unwrap_or(u32::MAX), o.clone()))
        .collect();
    if made.is_empty() {
        return runs.into_iter().next();
    }
    let count = |status: Status| {
        u32::try_from(made.iter().filter(|(_, o)| o.status == status).count()).unwrap_or(u32::MAX)
    };
    let passed = count(Status::Passed);
    let failed = count(Status::Failed);
    let total = passed.saturating_add(failed);
    let durations: Vec<u64> = made.iter().map(|(_, o)| o.stats.duration_ms).collect();
    let figures: Vec<&Figures> = made.iter().map(|(_, o)| &o.stats.figures).collect();
    let failed_runs: Vec<FailedRun> = made
        .iter()
        .filter(|(_, o)| o.status == Status::Failed)
        .map(|(run, o)| FailedRun {
            run: *run,
            failures: o.failures.clone(),
        })
        .collect();
    let repeats = Repeats {
        runs: total,
        passed,
        min_pass: spec.min_pass,
        flaky: passed > 0 && failed > 0,
        pass_at_k: passed > 0,
        pass_hat_k: failed == 0 && total == spec.runs,
        nondeterministic: nondeterministic(&figures),
        nondeterministic_calls: nondeterministic_calls(&made),
        duration_ms: DurationStats::of(&durations),
        failed_runs,
    };
    let passes = passed >= spec.min_pass;
    let wanted = if passes {
        Status::Passed
    } else {
        Status::Failed
    };
    let mut outcome = made
        .iter()
        .find(|(_, o)| o.status == wanted)
        .or(made.first())
        .map(|(_, o)| o.clone())?;
    outcome.stats.duration_ms = repeats.duration_ms.median;
    if passes {
        outcome.status = Status::Passed;
        outcome.failures.clear();
    } else {
        outcome.status = Status::Failed;
        outcome.failures.insert(0, shortfall(&repeats, spec));
    }
    outcome.repeats = Some(repeats);
    Some(outcome)
}

/// The figures that are not the same in every run.
fn nondeterministic(figures: &[&Figures]) -> Vec<String> {
    let Some(first) = figures.first() else {
        return Vec::new();
    };
    let first = first.values();
    Figures::NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| figures.iter().any(|f| f.values().get(*i) != first.get(*i)))
        .map(|(_, name)| (*name).to_owned())
        .collect()
}

/// The calls whose figures are not the same in every run that made them
/// all (matched by id; wall time aside).
fn nondeterministic_calls(runs: &[(u32, ScenarioOutcome)]) -> Vec<NondeterministicCall> {
    let Some(((_, first), others)) = runs.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for call in &first.calls {
        let mut differ = [false; 5];
        for (_, other) in others {
            let Some(o) = other.calls.iter().find(|c| c.id == call.id) else {
                continue;
            };
            let pairs = [
                call.tool != o.tool,
                call.is_error != o.is_error,
                call.truncated != o.truncated,
                call.args_tokens != o.args_tokens,
                call.result_tokens != o.result_tokens,
            ];
            for (seen, now) in differ.iter_mut().zip(pairs) {
                *seen |= now;
            }
        }
        let figures: Vec<String> = [
            "tool",
            "is_error",
            "truncated",
            "args_tokens",
            "result_tokens",
        ]
        .iter()
        .zip(differ)
        .filter(|(_, d)| *d)
        .map(|(name, _)| (*name).to_owned())
        .collect();
        if !figures.is_empty() {
            out.push(NondeterministicCall {
                id: call.id.clone(),
                tool: call.tool.clone(),
                figures,
            });
        }
    }
    out
}

/// The most failed runs a failure names; the rest are counted.
const NAMED_RUNS: usize = 10;

/// The `repeat` failure of a scenario that passed too few runs.
fn shortfall(repeats: &Repeats, spec: RepeatSpec) -> Failure {
    let mut runs: Vec<String> = repeats
        .failed_runs
        .iter()
        .take(NAMED_RUNS)
        .map(|r| r.run.to_string())
        .collect();
    if repeats.failed_runs.len() > NAMED_RUNS {
        runs.push(format!(
            "… and {} more",
            repeats.failed_runs.len() - NAMED_RUNS
        ));
    }
    let failed = if runs.is_empty() {
        String::new()
    } else {
        format!(
            "; failed: run{} {}",
            if repeats.failed_runs.len() == 1 {
                ""
            } else {
                "s"
            },
            runs.join(", ")
        )
    };
    Failure::new(
        None,
        "repeat",
        format!(
            "at least {} of {} runs pass (--min-pass {})",
            spec.min_pass, spec.runs, spec.min_pass
        ),
        format!(
            "{} of {} runs passed{failed}; the checks below are those of run {}",
            repeats.passed,
            repeats.runs,
            repeats.failed_runs.first().map_or(0, |r| r.run)
        ),
    )
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::judge::tally::CallStat;

    fn run(status: Status, result_tokens: u64, duration_ms: u64) -> ScenarioOutcome {
        let mut o = ScenarioOutcome::empty("s", "s.yaml", &[], status);
        o.stats.figures.result_tokens = result_tokens;
        o.stats.figures.calls = 1;
        o.stats.duration_ms = duration_ms;
        if status == Status::Failed {
            o.failures.push(Failure::new(
                Some("step 1 (bash)"),
                "ok",
                "an ok result",
                "an error",
            ));
        }
        o
    }

    fn spec(runs: u32, min_pass: Option<u32>) -> RepeatSpec {
        RepeatSpec::new(runs, min_pass).unwrap()
    }

    #[test]
    fn a_flaky_scenario_fails_below_min_pass_with_its_failed_runs() {
        let runs = vec![
            run(Status::Passed, 10, 4),
            run(Status::Failed, 12, 2),
            run(Status::Passed, 10, 8),
            run(Status::Failed, 12, 6),
        ];
        let folded = fold(runs.clone(), spec(4, None)).unwrap();
        assert_eq!(folded.status, Status::Failed);
        assert_eq!(folded.stats.figures.result_tokens, 12);
        assert_eq!(folded.stats.duration_ms, 4);
        let failures: Vec<(String, String, String)> = folded
            .failures
            .iter()
            .map(|f| {
                (
                    f.check.to_string(),
                    f.expected.clone(),
                    f.actual.to_string(),
                )
            })
            .collect();
        assert_eq!(
            failures,
            [
                (
                    "repeat".to_owned(),
                    "at least 4 of 4 runs pass (--min-pass 4)".to_owned(),
                    "2 of 4 runs passed; failed: runs 2, 4; the checks below are those of run 2"
                        .to_owned()
                ),
                (
                    "ok".to_owned(),
                    "an ok result".to_owned(),
                    "an error".to_owned()
                ),
            ]
        );
        let repeats = folded.repeats.unwrap();
        assert_eq!(
            (
                repeats.runs,
                repeats.passed,
                repeats.flaky,
                repeats.pass_at_k,
                repeats.pass_hat_k
            ),
            (4, 2, true, true, false)
        );
        assert_eq!(repeats.nondeterministic, ["result_tokens"]);
        assert_eq!(
            repeats
                .failed_runs
                .iter()
                .map(|r| r.run)
                .collect::<Vec<_>>(),
            [2, 4]
        );
        assert_eq!(
            repeats.duration_ms,
            DurationStats {
                min: 2,
                median: 4,
                max: 8
            }
        );

        let lenient = fold(runs, spec(4, Some(1))).unwrap();
        assert_eq!(lenient.status, Status::Passed);
        assert_eq!(lenient.failures, []);
        assert_eq!(lenient.stats.figures.result_tokens, 10);
        assert_eq!(lenient.repeats.unwrap().failed_runs.len(), 2);
    }

    #[test]
    fn the_calls_whose_figures_differ_are_named() {
        let call = |id: &str, tool: &str, result_tokens: u64, is_error: bool| CallStat {
            id: id.into(),
            tool: tool.into(),
            result_tokens,
            is_error,
            duration_ms: result_tokens,
            ..CallStat::default()
        };
        let with = |calls: Vec<CallStat>| {
            let mut o = run(Status::Passed, 10, 3);
            o.calls = calls;
            o
        };
        let runs = vec![
            with(vec![
                call("a", "read", 5, false),
                call("b", "bash", 7, false),
            ]),
            with(vec![
                call("a", "read", 5, false),
                call("b", "bash", 9, true),
            ]),
            // A run that made only the first call.
            with(vec![call("a", "read", 5, false)]),
        ];
        let repeats = fold(runs, spec(3, None)).unwrap().repeats.unwrap();
        assert_eq!(
            repeats.nondeterministic_calls,
            [NondeterministicCall {
                id: "b".into(),
                tool: "bash".into(),
                figures: vec!["is_error".into(), "result_tokens".into()],
            }]
        );
    }

    #[test]
    fn steady_runs_are_deterministic_and_pass_every_time() {
        let runs = vec![run(Status::Passed, 10, 3); 5];
        let folded = fold(runs, spec(5, None)).unwrap();
        let repeats = folded.repeats.unwrap();
        assert_eq!(folded.status, Status::Passed);
        assert_eq!(repeats.nondeterministic, Vec::<String>::new());
        assert!(repeats.pass_hat_k && repeats.pass_at_k && !repeats.flaky);
    }

    #[test]
    fn a_skipped_scenario_stays_skipped_and_unmade_runs_are_not_counted() {
        let skipped = ScenarioOutcome::empty("s", "s.yaml", &[], Status::Skipped);
        let folded = fold(vec![skipped.clone(), skipped], spec(2, None)).unwrap();
        assert_eq!((folded.status, folded.repeats), (Status::Skipped, None));

        let runs = vec![
            run(Status::Passed, 10, 3),
            ScenarioOutcome::empty("s", "s.yaml", &[], Status::Skipped),
        ];
        let folded = fold(runs, spec(2, Some(1))).unwrap();
        let repeats = folded.repeats.unwrap();
        assert_eq!(folded.status, Status::Passed);
        assert_eq!((repeats.runs, repeats.pass_hat_k), (1, false));
    }
}
