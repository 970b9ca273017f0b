//! Repeated runs (`harness run --repeat N --min-pass K`): the setting, and
//! what a repeated scenario's outcome says of its runs (its pass count,
//! whether it is flaky, which figures differed between runs, its duration
//! statistics, its pass@k and pass^k). `rounds` folds the runs.

use serde::Deserialize;
use serde::Serialize;

use crate::judge::Failure;

/// The most runs `--repeat` takes.
pub(crate) const MAX_RUNS: u32 = 1000;

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
pub(crate) struct DurationStats {
    /// The shortest run.
    pub min: u64,
    /// The median run.
    pub median: u64,
    /// The longest run.
    pub max: u64,
}

impl DurationStats {
    /// The statistics of these durations (all 0 for none).
    pub(crate) fn of(durations: &[u64]) -> Self {
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
pub(crate) struct FailedRun {
    /// The run, 1-based, in the order runs were started.
    pub run: u32,
    /// Its failed checks.
    pub failures: Vec<Failure>,
}

/// A call of a repeated scenario whose figures differed between runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct NondeterministicCall {
    /// The call id (`calls[].id`).
    pub id: String,
    /// The tool, as the first run called it.
    pub tool: String,
    /// The figures (`calls[]` names) that differed: `tool`, `is_error`,
    /// `truncated`, `args_tokens`, `result_tokens`, in that order.
    pub figures: Vec<String>,
}

/// A repeated scenario's runs, summed up (`scenarios[].repeats` in
/// run.json).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Repeats {
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
    /// The calls whose figures were not the same in every run (by call
    /// id, in the order of the first run's calls; a call some run did not
    /// make is not listed); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nondeterministic_calls: Vec<NondeterministicCall>,
    /// Wall time of the runs.
    pub duration_ms: DurationStats,
    /// The failed runs and their failed checks.
    pub failed_runs: Vec<FailedRun>,
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

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
}
