//! The run-level checks: the loop's own contract (on every scenario), and
//! the run's `expect:` of `order` and `stats`.

use crate::agent::Message;
use crate::scenario::expect::Figure;
use crate::scenario::expect::StatBound;

use super::failure::Failure;
use super::input::CheckInput;
use super::kind::CheckKind;

/// The loop's own contract, checked on every scenario.
pub(super) fn loop_contract(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let contract = Some("loop contract");
    let messages = &input.transcript.messages;
    for (i, message) in messages.iter().enumerate() {
        let Message::Assistant(a) = message else {
            continue;
        };
        let expected: Vec<&str> = a.tool_calls().map(|c| c.id.as_str()).collect();
        let got: Vec<&str> = messages[i + 1..]
            .iter()
            .map_while(|m| match m {
                Message::ToolResult(r) => Some(r.tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        if expected != got {
            failures.push(Failure::new(
                contract,
                CheckKind::ResultOrder,
                format!("results for {expected:?}"),
                format!("results for {got:?}"),
            ));
        }
    }
    for record in &input.transcript.calls {
        if record.result.is_error && record.result.text().trim().is_empty() {
            failures.push(Failure::new(
                contract,
                CheckKind::ErrorText,
                format!("a text for the error result of {}", record.call.id),
                "an empty text",
            ));
        }
        if let Some(internal) = &record.result.internal_error {
            failures.push(Failure::new(
                Some(label_of(input, &record.call.id).as_str()),
                CheckKind::ToolLayer,
                "no internal error",
                format!("internal error: {internal}"),
            ));
        }
    }
    for failure in &input.transcript.model.capture_failures {
        failures.push(Failure::new(
            Some(label_of(input, &failure.call_id).as_str()),
            CheckKind::Capture(failure.name.clone()),
            format!("a match for /{}/", failure.regex),
            format!("no match in: {}", failure.text),
        ));
    }
    if let Some(overrun) = &input.transcript.model.overrun {
        failures.push(Failure::new(
            contract,
            CheckKind::ScriptLength,
            "the run ends with the script",
            overrun.clone(),
        ));
    }
    if let Some(error) = &input.transcript.error
        && input.transcript.model.overrun.is_none()
    {
        failures.push(Failure::new(
            contract,
            CheckKind::Run,
            "the run ends normally",
            error.clone(),
        ));
    }
}

fn label_of(input: &CheckInput<'_>, id: &str) -> String {
    input
        .scenario
        .call_labels
        .get(id)
        .cloned()
        .unwrap_or_else(|| format!("call {id}"))
}

/// `order`: the tools called, in order.
pub(super) fn order_check(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    if let Some(want) = &input.scenario.run_check.order {
        let got: Vec<&str> = input
            .transcript
            .calls
            .iter()
            .map(|r| r.call.name.as_str())
            .collect();
        if got != want.iter().map(String::as_str).collect::<Vec<_>>() {
            failures.push(Failure::new(
                Some("order"),
                CheckKind::Order,
                format!("{want:?}"),
                format!("{got:?}"),
            ));
        }
    }
}

/// `stats`: the run's figures, exactly or at most.
pub(super) fn stats_checks(input: &CheckInput<'_>, failures: &mut Vec<Failure>) {
    let f = input.figures;
    let step = Some("stats");
    for stat in &input.scenario.run_check.stats {
        let got = match stat.figure {
            Figure::Retries => f.retries,
            Figure::Errors => f.errors,
            Figure::Turns => f.turns,
            Figure::ResultTokens => f.result_tokens,
            Figure::InputTokens => f.input_tokens + f.cache_read_tokens,
            Figure::OutputTokens => f.output_tokens,
        };
        match stat.want {
            StatBound::Exactly(want) if want != got => {
                failures.push(Failure::new(
                    step,
                    CheckKind::Stats(stat.key.to_owned()),
                    want.to_string(),
                    got.to_string(),
                ));
            }
            StatBound::AtMost(max) if got > max => {
                failures.push(Failure::new(
                    step,
                    CheckKind::Stats(stat.key.to_owned()),
                    format!("at most {max}"),
                    got.to_string(),
                ));
            }
            _ => {}
        }
    }
}
