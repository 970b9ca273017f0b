//! What a repeated run (`harness run --repeat N`) adds to the reports:
//! the totals of `run.json`'s `repeat`, and the repeats section of the
//! console and of summary.md (pass counts, flaky and nondeterministic
//! scenarios, duration statistics, pass@k and pass^k).

use serde::Deserialize;
use serde::Serialize;

use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::repeat::Repeats;

/// A scenario whose figures were not the same in every run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct Nondeterministic {
    /// The scenario.
    pub name: String,
    /// The figures that differed (run.json `stats` names).
    pub figures: Vec<String>,
}

/// run.json's `repeat`: the repeated run as a whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct RepeatTotals {
    /// Runs of each scenario (`--repeat`).
    pub runs: u32,
    /// Runs a scenario must pass (`--min-pass`).
    pub min_pass: u32,
    /// Scenarios that ran (not skipped).
    pub scenarios: usize,
    /// pass@k: scenarios that passed at least one run.
    pub pass_at_k: usize,
    /// pass^k: scenarios that passed every run.
    pub pass_hat_k: usize,
    /// Scenarios where some runs passed and some failed, in discovery
    /// order.
    pub flaky: Vec<String>,
    /// Scenarios whose figures differed between runs, in discovery order.
    pub nondeterministic: Vec<Nondeterministic>,
}

impl RepeatTotals {
    /// The totals of a repeated run (`None` for a run without `--repeat`).
    pub(crate) fn of(summary: &RunSummary) -> Option<Self> {
        let spec = summary.repeat?;
        let repeated: Vec<(&ScenarioOutcome, &Repeats)> = repeated(summary).collect();
        Some(Self {
            runs: spec.runs,
            min_pass: spec.min_pass,
            scenarios: repeated.len(),
            pass_at_k: repeated.iter().filter(|(_, r)| r.pass_at_k).count(),
            pass_hat_k: repeated.iter().filter(|(_, r)| r.pass_hat_k).count(),
            flaky: repeated
                .iter()
                .filter(|(_, r)| r.flaky)
                .map(|(o, _)| o.name.clone())
                .collect(),
            nondeterministic: repeated
                .iter()
                .filter(|(_, r)| !r.nondeterministic.is_empty())
                .map(|(o, r)| Nondeterministic {
                    name: o.name.clone(),
                    figures: r.nondeterministic.clone(),
                })
                .collect(),
        })
    }
}

/// The calls whose figures differed listed under a nondeterministic
/// scenario on the console.
const CALLS_SHOWN: usize = 5;

/// The scenarios that ran repeatedly, with their repeats.
fn repeated(summary: &RunSummary) -> impl Iterator<Item = (&ScenarioOutcome, &Repeats)> {
    summary
        .scenarios
        .iter()
        .filter_map(|o| o.repeats.as_ref().map(|r| (o, r)))
}

/// The most failed runs of a flaky scenario the console and summary.md
/// show the checks of; the others are counted.
const SHOWN_RUNS: usize = 3;

/// The repeats section of the console (empty without `--repeat`).
pub(crate) fn console(summary: &RunSummary) -> String {
    let Some(totals) = RepeatTotals::of(summary) else {
        return String::new();
    };
    let mut out = format!(
        "\nrepeats: each scenario ran {} time{}, passing with at least {} passed run{}\n\
         pass@{k}: {} of {} scenarios passed at least once; pass^{k}: {} passed every run\n",
        totals.runs,
        plural(totals.runs as usize),
        totals.min_pass,
        plural(totals.min_pass as usize),
        totals.pass_at_k,
        totals.scenarios,
        totals.pass_hat_k,
        k = totals.runs,
    );
    out.push_str("  passed  min ms  median ms  max ms  scenario\n");
    for (outcome, r) in repeated(summary) {
        out.push_str(&format!(
            "  {:>6}  {:>6}  {:>9}  {:>6}  {}\n",
            format!("{}/{}", r.passed, r.runs),
            r.duration_ms.min,
            r.duration_ms.median,
            r.duration_ms.max,
            outcome.name
        ));
    }
    if totals.flaky.is_empty() {
        out.push_str("flaky: none\n");
    } else {
        out.push_str(&format!("flaky ({}):\n", totals.flaky.len()));
        for (outcome, r) in repeated(summary).filter(|(_, r)| r.flaky) {
            out.push_str(&format!(
                "  {}: passed {} of {} runs\n",
                outcome.name, r.passed, r.runs
            ));
            for run in r.failed_runs.iter().take(SHOWN_RUNS) {
                let checks: Vec<String> = run
                    .failures
                    .iter()
                    .map(|f| match &f.step {
                        Some(step) => format!("{step}: {}", f.check),
                        None => f.check.to_string(),
                    })
                    .collect();
                out.push_str(&format!(
                    "    run {} failed: {}\n",
                    run.run,
                    checks.join(", ")
                ));
            }
            if r.failed_runs.len() > SHOWN_RUNS {
                out.push_str(&format!(
                    "    … and {} more failed runs\n",
                    r.failed_runs.len() - SHOWN_RUNS
                ));
            }
        }
    }
    if totals.nondeterministic.is_empty() {
        out.push_str("nondeterministic figures: none\n");
    } else {
        out.push_str(&format!(
            "nondeterministic figures ({} scenario{}):\n",
            totals.nondeterministic.len(),
            plural(totals.nondeterministic.len())
        ));
        for n in &totals.nondeterministic {
            out.push_str(&format!(
                "  {}: {} differed between runs\n",
                n.name,
                n.figures.join(", ")
            ));
            let calls = repeated(summary)
                .find(|(o, _)| o.name == n.name)
                .map(|(_, r)| r.nondeterministic_calls.as_slice())
                .unwrap_or_default();
            for call in calls.iter().take(CALLS_SHOWN) {
                out.push_str(&format!(
                    "    call {} ({}): {}\n",
                    call.id,
                    call.tool,
                    call.figures.join(", ")
                ));
            }
            if calls.len() > CALLS_SHOWN {
                out.push_str(&format!(
                    "    … and {} more calls (run.json: repeats.nondeterministic_calls)\n",
                    calls.len() - CALLS_SHOWN
                ));
            }
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The repeats section of summary.md (empty without `--repeat`); `cell`
/// escapes a text for a table cell.
pub(crate) fn markdown(summary: &RunSummary, cell: impl Fn(&str) -> String) -> String {
    let Some(totals) = RepeatTotals::of(summary) else {
        return String::new();
    };
    let k = totals.runs;
    let mut out = format!(
        "\n### Repeats\n\nEach scenario ran {k} times and passes with at least {} passed \
         runs. pass@{k}: **{}** of {} scenarios; pass^{k}: **{}**.\n\n\
         | scenario | passed | min ms | median ms | max ms | flaky | nondeterministic |\n\
         | --- | ---: | ---: | ---: | ---: | --- | --- |\n",
        totals.min_pass, totals.pass_at_k, totals.scenarios, totals.pass_hat_k,
    );
    for (outcome, r) in repeated(summary) {
        let failing: Vec<String> = r
            .failed_runs
            .iter()
            .take(SHOWN_RUNS)
            .map(|run| {
                let checks: Vec<String> =
                    run.failures.iter().map(|f| f.check.to_string()).collect();
                format!("run {}: {}", run.run, checks.join(", "))
            })
            .collect();
        out.push_str(&format!(
            "| {} | {}/{} | {} | {} | {} | {} | {} |\n",
            cell(&outcome.name),
            r.passed,
            r.runs,
            r.duration_ms.min,
            r.duration_ms.median,
            r.duration_ms.max,
            if r.flaky {
                cell(&format!("yes ({})", failing.join("; ")))
            } else {
                String::new()
            },
            cell(&r.nondeterministic.join(", ")),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::judge::Failure;
    use crate::run::RepeatSpec;
    use crate::run::Status;
    use crate::run::repeat::DurationStats;
    use crate::run::repeat::FailedRun;
    use crate::run::repeat::NondeterministicCall;

    fn summary() -> RunSummary {
        let mut steady = ScenarioOutcome::empty("steady", "a.yaml", &[], Status::Passed);
        steady.repeats = Some(Repeats {
            runs: 4,
            passed: 4,
            min_pass: 1,
            flaky: false,
            pass_at_k: true,
            pass_hat_k: true,
            nondeterministic: Vec::new(),
            nondeterministic_calls: Vec::new(),
            duration_ms: DurationStats {
                min: 1,
                median: 2,
                max: 3,
            },
            failed_runs: Vec::new(),
        });
        let mut coin = ScenarioOutcome::empty("coin", "b.yaml", &[], Status::Passed);
        coin.repeats = Some(Repeats {
            runs: 4,
            passed: 2,
            min_pass: 1,
            flaky: true,
            pass_at_k: true,
            pass_hat_k: false,
            nondeterministic: vec!["errors".into(), "result_tokens".into()],
            nondeterministic_calls: vec![NondeterministicCall {
                id: "call_1_1".into(),
                tool: "bash".into(),
                figures: vec!["is_error".into(), "result_tokens".into()],
            }],
            duration_ms: DurationStats {
                min: 5,
                median: 6,
                max: 9,
            },
            failed_runs: [2, 4]
                .map(|run| FailedRun {
                    run,
                    failures: vec![Failure::new(Some("step 1 (bash)"), "ok", "ok", "error")],
                })
                .to_vec(),
        });
        RunSummary {
            scenarios: vec![steady, coin],
            repeat: Some(RepeatSpec {
                runs: 4,
                min_pass: 1,
            }),
            ..RunSummary::default()
        }
    }

    #[test]
    fn the_totals_count_pass_at_k_and_pass_hat_k() {
        assert_eq!(
            RepeatTotals::of(&summary()),
            Some(RepeatTotals {
                runs: 4,
                min_pass: 1,
                scenarios: 2,
                pass_at_k: 2,
                pass_hat_k: 1,
                flaky: vec!["coin".into()],
                nondeterministic: vec![Nondeterministic {
                    name: "coin".into(),
                    figures: vec!["errors".into(), "result_tokens".into()],
                }],
            })
        );
        assert_eq!(RepeatTotals::of(&RunSummary::default()), None);
        assert_eq!(console(&RunSummary::default()), "");
    }

    #[test]
    fn the_console_lists_flaky_and_nondeterministic_scenarios() {
        assert_eq!(
            console(&summary()),
            "\nrepeats: each scenario ran 4 times, passing with at least 1 passed run\n\
             pass@4: 2 of 2 scenarios passed at least once; pass^4: 1 passed every run\n  \
             passed  min ms  median ms  max ms  scenario\n     \
             4/4       1          2       3  steady\n     \
             2/4       5          6       9  coin\n\
             flaky (1):\n  coin: passed 2 of 4 runs\n    \
             run 2 failed: step 1 (bash): ok\n    \
             run 4 failed: step 1 (bash): ok\n\
             nondeterministic figures (1 scenario):\n  \
             coin: errors, result_tokens differed between runs\n    \
             call call_1_1 (bash): is_error, result_tokens\n"
        );
    }

    #[test]
    fn summary_md_has_a_row_per_scenario() {
        assert_eq!(
            markdown(&summary(), str::to_owned),
            "\n### Repeats\n\nEach scenario ran 4 times and passes with at least 1 passed runs. \
             pass@4: **2** of 2 scenarios; pass^4: **1**.\n\n\
             | scenario | passed | min ms | median ms | max ms | flaky | nondeterministic |\n\
             | --- | ---: | ---: | ---: | ---: | --- | --- |\n\
             | steady | 4/4 | 1 | 2 | 3 |  |  |\n\
             | coin | 2/4 | 5 | 6 | 9 | yes (run 2: ok; run 4: ok) | errors, result_tokens |\n"
        );
    }
}
