//! The judge: every check of a scenario (its expectations, and the loop's
//! own contract) applied to what a run left, and read from nothing else: the
//! finished [`agent::Transcript`](crate::agent::Transcript) (messages, and a
//! call record per answered call with its result's typed facts, its first
//! and last update and what it was priced at), and the workspace for file
//! checks. It names nothing of `run`, `cli`, `mcp`, `report` or `import`
//! (`tests/integration/layering.rs`), so a transcript from any source is
//! judged by the same checks (docs/architecture.md, "The judge").
//!
//! Every failure says where (the step), which check, what was expected and
//! what happened. A failure keeps at most [`MAX_ACTUAL_BYTES`] of what
//! happened, shared by the failures on one text; the checks stop at the
//! scenario's deadline ([`CheckInput::deadline`]) with a `timeout` failure
//! that says where.
//!
//! | module | holds |
//! | --- | --- |
//! | `input` | [`CheckInput`]: what the checks look at; `${var}` values |
//! | `expand` | `${var}` in the checks, expanded with the run's values |
//! | `contract` | the loop's contract, `order` and `stats` |
//! | `call` | the checks of each call |
//! | `files` | `expect.files`, read inside the workspace only |
//! | `exact` | exact-byte, SHA-256 and symlink file checks |
//! | `pointer` | `details_at`: JSON pointers and their matchers |
//! | `images` | `image` and `images`: a result's image blocks |
//! | `failure` | [`Failure`], [`CheckOutput`], the wording parts share |
//! | `actual` | [`Actual`]: what a failure keeps of a text, bounded and shared |
//! | `kind` | [`CheckKind`]: which check a failure is of, written as its name |
//! | `focus` | where to look in a long text that failed a check |
//! | `deadline` | when a scenario's time budget ends, for the loop and the checks |
//! | `figures` | [`Figures`]: turns, calls, errors, retries, tokens |
//! | `tally` | the one judging pass: figures, per-call statistics, behaviours |
//! | `coverage` | a call's behaviours from its typed facts, and the catalogue |
//! | `drift` | an imported session's results against the recorded ones |
//! | `presentation` | today's result put in the form of a recorded answer |

mod actual;
mod call;
mod contract;
pub(crate) mod coverage;
pub(crate) mod deadline;
pub(crate) mod drift;
pub(crate) mod exact;
mod expand;
mod failure;
pub(crate) mod figures;
mod files;
pub(crate) mod focus;
pub(crate) mod images;
mod input;
mod kind;
pub(crate) mod pointer;
pub(crate) mod presentation;
pub(crate) mod tally;

use std::collections::HashMap;

use call::call_checks;
use contract::loop_contract;
use contract::order_check;
use contract::stats_checks;
use files::file_checks;

pub(crate) use actual::Actual;
#[cfg(test)]
pub(crate) use actual::MAX_ACTUAL_BYTES;
pub(crate) use call::truncation;
pub(crate) use failure::CheckOutput;
pub(crate) use failure::Failure;
pub(crate) use failure::SnapshotOutcome;
pub use figures::Figures;
pub(crate) use input::CheckInput;
pub(crate) use kind::CheckKind;

/// Runs every check, until the deadline: once it passes, the checks not
/// yet made are left out and a `timeout` failure says where they stopped.
pub(crate) fn check(input: &CheckInput<'_>) -> CheckOutput {
    let mut out = CheckOutput::default();
    loop_contract(input, &mut out.failures);
    let results: HashMap<&str, &crate::agent::CallRecord> = input
        .transcript
        .calls
        .iter()
        .map(|r| (r.call.id.as_str(), r))
        .collect();
    // In step order: the ids are `call_{step}_{n}` (`_retry{k}` after), so
    // their order as text puts step 10 before step 7.
    let mut in_order: Vec<_> = input.scenario.call_checks.iter().collect();
    in_order.sort_by_cached_key(|(id, _)| step_order(id));
    for (id, check) in in_order {
        if input.deadline.passed() {
            out.failures.push(out_of_time(input, &check.label));
            return out;
        }
        match results.get(id.as_str()) {
            Some(record) => {
                call_checks(input, id, check, record, &mut out);
            }
            // A retry that was not needed is not a failure.
            None if check.retry => {}
            None => out.failures.push(Failure::new(
                Some(&check.label),
                CheckKind::Sent,
                "the call was sent and has a result",
                "the call was never sent (the run ended before this step)",
            )),
        }
    }
    if let Err(at) = file_checks(input, &mut out.failures) {
        out.failures.push(out_of_time(input, &at));
        return out;
    }
    order_check(input, &mut out.failures);
    stats_checks(input, &mut out.failures);
    out
}

/// A call id as the numbers in it, in order (`call_10_2_retry1` is
/// 10, 2, 1), then the id itself: ids sort by step, call and retry.
fn step_order(id: &str) -> (Vec<u64>, &str) {
    let numbers = id
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|part| part.parse().ok())
        .collect();
    (numbers, id)
}

/// The failure of checks stopped at the deadline, in (or before) those of
/// `at`.
fn out_of_time(input: &CheckInput<'_>, at: &str) -> Failure {
    let secs = input.deadline.budget().as_secs_f64();
    Failure::new(
        None,
        CheckKind::Timeout,
        format!("the scenario finishes within {secs:.1} s"),
        format!(
            "it timed out after {secs:.1} s while its checks ran, at {at}; the checks from there \
             on were not made"
        ),
    )
}

#[cfg(test)]
mod tests;
