//! Repeated runs (`harness run --repeat N --min-pass K`): the runs of one
//! scenario folded into one outcome, with its pass count, whether it is
//! flaky, which figures differed between runs (every figure but the
//! durations is deterministic, so one that differs is a finding), its
//! duration statistics, and its pass@k and pass^k.

use serde::Deserialize;
use serde::Serialize;

use crate::scenario::Failure;
use crate::scenario::Figures;

use super::outcome::ScenarioOutcome;
use super::outcome::Status;

/// The most runs `--repeat` takes.
pub const MAX_RUNS: u32 = 1000;

/// How often each scenario runs, and how many runs must pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepeatSpec {
    /// Runs of each scenario (`--repeat`, 1 to 1000).
    pub runs: u32,
    /// Runs that must pass for the scenario to pass (`--min-pass`, 1 to
    /// `runs`; default `runs`).
    pub min_pass: u32,
}

impl RepeatSpec {
    /// `--repeat runs` with `--min-pass min_pass`, checked.
    pub fn new(runs: u32, min_pass: Option<u32>) -> Result<Self, String> {
        if !(1..=MAX_RUNS).contains(&runs) {
            return Err(format!(
                "--repeat: {runs} is not between 1 and {MAX_RUNS} (runs of each scenario)"
            ));
        }
        let min_pass = min_pass.unwrap_or(runs);
        if !(1..=runs).contains(&min_pass) {
            return Err(format!(
                "--min-pass: {min_pass} is not between 1 and {runs} (the --repeat count): a \
                 scenario passes when at least that many of its runs pass"
            ));
        }
        Ok(Self { runs, min_pass })
    }
}

/// The shortest, the median and the longest wall time of a scenario's
/// runs, in milliseconds (of an even count of runs, the median is the
/// lower of the two middle ones).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct DurationStats {
    /// The shortest run.
    pub min: u64,
    /// The median run.
    pub median: u64,
    /// The longest run.
    pub max: u64,
}

impl DurationStats {
    /// The statistics of these durations (all 0 for none).
    pub fn of(durations: &[u64]) -> Self {
        let mut sorted = durations.to_vec();
        sorted.sort_unstable();
        let at = |i: usize| sorted.get(i).copied().unwrap_or(0);
        Self {
            min: at(0),
            median: at(sorted.len().saturating_sub(1) / 2),
            max: at(sorted.len().saturating_sub(1)),
        }
    }
}

/// One failed run of a repeated scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FailedRun {
    /// The run, 1-based, in the order runs were started.
    pub run: u32,
    /// Its failed checks.
    pub failures: Vec<Failure>,
}

/// A repeated scenario's runs, summed up (`scenarios[].repeats` in
/// run.json).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Repeats {
    /// Runs made (those a `--fail-fast` or an interruption kept from
    /// starting are not counted).
    pub runs: u32,
    /// Runs that passed.
    pub passed: u32,
    /// Runs that must pass (`--min-pass`).
    pub min_pass: u32,
    /// Some runs passed and some failed.
    pub flaky: bool,
    /// pass@k: at least one run passed.
    pub pass_at_k: bool,
    /// pass^k: every run passed.
    pub pass_hat_k: bool,
    /// The figures (run.json `stats` names) that were not the same in
    /// every run, in the order of `stats`.
    pub nondeterministic: Vec<String>,
    /// Wall time of the runs.
    pub duration_ms: DurationStats,
    /// The failed runs and their failed checks.
    pub failed_runs: Vec<FailedRun>,
}

/// Folds the runs of one scenario (in the order they started) into one
/// outcome: the first failed run's when the scenario fails (fewer than
/// `min_pass` runs passed), else the first passed run's, with the median
/// wall time and its [`Repeats`]. A scenario none of whose runs was made
/// (`skip:`) stays skipped, without `repeats`.
pub fn fold(runs: Vec<ScenarioOutcome>, spec: RepeatSpec) -> Option<ScenarioOutcome> {
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
    fn the_counts_are_checked() {
        assert_eq!(
            RepeatSpec::new(0, None).unwrap_err(),
            "--repeat: 0 is not between 1 and 1000 (runs of each scenario)"
        );
        assert_eq!(
            RepeatSpec::new(1001, None).unwrap_err(),
            "--repeat: 1001 is not between 1 and 1000 (runs of each scenario)"
        );
        assert_eq!(
            RepeatSpec::new(3, Some(4)).unwrap_err(),
            "--min-pass: 4 is not between 1 and 3 (the --repeat count): a scenario passes when \
             at least that many of its runs pass"
        );
        assert_eq!(
            RepeatSpec::new(3, Some(0)).unwrap_err(),
            "--min-pass: 0 is not between 1 and 3 (the --repeat count): a scenario passes when \
             at least that many of its runs pass"
        );
        assert_eq!(
            spec(5, None),
            RepeatSpec {
                runs: 5,
                min_pass: 5
            }
        );
    }

    #[test]
    fn durations_have_a_lower_median() {
        assert_eq!(
            DurationStats::of(&[9, 1, 5, 3]),
            DurationStats {
                min: 1,
                median: 3,
                max: 9
            }
        );
        assert_eq!(
            DurationStats::of(&[4, 2, 7]),
            DurationStats {
                min: 2,
                median: 4,
                max: 7
            }
        );
        assert_eq!(DurationStats::of(&[]), DurationStats::default());
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
