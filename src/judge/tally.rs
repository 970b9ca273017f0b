//! One pass over a finished run: each answered call seen once for the
//! figures, its per-call statistics and (with `--coverage`) the behaviours
//! it showed; each request the faux model answered seen once for the
//! figures and its usage. Nothing is priced here: the loop priced each
//! call and result once, on its record.

use crate::agent::CallRecord;
use crate::agent::Transcript;
use crate::judge::Figures;

use serde::Deserialize;
use serde::Serialize;

use super::coverage;
use super::coverage::ScenarioCoverage;
use super::drift::Agreement;

/// One tool call's figures.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct CallStat {
    /// The call id.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The turn that sent it (1-based).
    pub turn: u64,
    /// Whether it was a retry.
    pub retry: bool,
    /// Whether the result was an error.
    pub is_error: bool,
    /// Whether the tool reported truncation.
    pub truncated: bool,
    /// Tokens of the arguments (model output).
    pub args_tokens: u64,
    /// Tokens of the result (model input).
    pub result_tokens: u64,
    /// Wall time.
    pub duration_ms: u64,
    /// Replayed sessions: tokens of the recorded result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_tokens: Option<u64>,
    /// Replayed sessions: whether the recorded result was an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_is_error: Option<bool>,
    /// Replayed sessions: how the result's text compares with the
    /// recorded one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agreement: Option<Agreement>,
}

/// One request's usage.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub(crate) struct TurnStat {
    /// Input tokens not served from the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_tokens: u64,
    /// Whether the response came from the script.
    pub scripted: bool,
}

/// What the pass derives.
#[derive(Debug)]
pub(crate) struct Tally {
    /// The scenario's figures.
    pub figures: Figures,
    /// Each call's statistics, in the order sent.
    pub calls: Vec<CallStat>,
    /// Each request's usage, in order.
    pub turns: Vec<TurnStat>,
    /// The calls' behaviours, when asked for.
    pub coverage: Option<ScenarioCoverage>,
}

/// The pass over `transcript` and the faux model's `report`; `coverage`:
/// the behaviours are wanted, with these MCP servers' active tools.
pub(crate) fn tally(transcript: &Transcript, coverage: Option<&[(String, Vec<String>)]>) -> Tally {
    let report = &transcript.model;
    let retries = report.retry_ids();
    let mut figures = Figures::default();
    figures.count_retries(report);
    let mut observer = coverage.map(coverage::Observer::new);
    let mut calls = Vec::with_capacity(transcript.calls.len());
    for record in &transcript.calls {
        let retry = retries.contains(record.call.id.as_str());
        figures.count_call(record);
        calls.push(call_stat(record, retry));
        if let Some(observer) = &mut observer {
            observer.call(record, retry);
        }
    }
    let mut turns = Vec::with_capacity(report.turns.len());
    for turn in &report.turns {
        figures.count_turn(turn);
        turns.push(TurnStat {
            input_tokens: turn.usage.input,
            output_tokens: turn.usage.output,
            cache_read_tokens: turn.usage.cache_read,
            cache_write_tokens: turn.usage.cache_write,
            scripted: turn.scripted,
        });
    }
    Tally {
        figures,
        calls,
        turns,
        coverage: observer.map(|o| o.finish(report)),
    }
}

fn call_stat(record: &CallRecord, retry: bool) -> CallStat {
    CallStat {
        id: record.call.id.clone(),
        tool: record.call.name.clone(),
        turn: record.turn as u64,
        retry,
        is_error: record.result.is_error,
        truncated: crate::judge::truncation(&record.call.name, &record.result)
            .is_some_and(|t| t.truncated),
        args_tokens: record.args_tokens,
        result_tokens: record.result_tokens,
        duration_ms: u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
        recorded_tokens: None,
        recorded_is_error: None,
        agreement: None,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;
    use crate::agent::FauxReport;
    use crate::agent::Usage;
    use crate::agent::faux::ServedCall;
    use crate::agent::faux::Turn;
    use crate::tools::ToolCall;
    use crate::tools::ToolOutput;
    use crate::tools::ToolResult;

    fn record(turn: usize, index: usize, id: &str, result: ToolResult, tokens: u64) -> CallRecord {
        CallRecord {
            turn,
            index,
            call: ToolCall::new(id, "ls", json!({})),
            result,
            duration: Duration::from_millis(3),
            updates: Default::default(),
            completion: index,
            cancelled: false,
            args_tokens: tokens,
            result_tokens: tokens * 10,
        }
    }

    fn turn(scripted: bool, n: u64, calls: Vec<ServedCall>) -> Turn {
        Turn {
            usage: Usage {
                input: n,
                output: n + 1,
                cache_read: n + 2,
                cache_write: n + 3,
            },
            scripted,
            calls,
        }
    }

    #[test]
    fn one_pass_gives_the_figures_the_calls_and_the_turns_from_the_records() {
        let ok = || ToolResult::ok(ToolOutput::text("a"));
        let mut transcript = Transcript {
            calls: vec![
                record(1, 0, "a", ToolResult::error("no", None), 1),
                record(1, 1, "b", ok(), 2),
                record(2, 0, "a-1", ok(), 3),
            ],
            ..Transcript::default()
        };
        let retry = ServedCall {
            id: "a-1".into(),
            step: 0,
            retry: Some(0),
            origin: "a".into(),
        };
        let report = FauxReport {
            turns: vec![
                turn(true, 10, vec![]),
                turn(true, 20, vec![retry]),
                turn(false, 30, vec![]),
            ],
            retries_sent: 1,
            retries_avoided: 1,
            ..FauxReport::default()
        };
        transcript.model = report;
        let tally = tally(&transcript, None);
        assert_eq!(
            tally.figures,
            Figures {
                turns: 2,
                calls: 3,
                errors: 1,
                retries: 1,
                retries_avoided: 1,
                result_tokens: 60,
                input_tokens: 60,
                output_tokens: 63,
                cache_read_tokens: 66,
                cache_write_tokens: 69,
                // The run layer's, which knows the tools.
                definition_tokens: 0,
            }
        );
        let calls: Vec<(&str, u64, bool, bool, u64, u64, u64)> = tally
            .calls
            .iter()
            .map(|c| {
                let tokens = (c.args_tokens, c.result_tokens);
                (
                    c.id.as_str(),
                    c.turn,
                    c.retry,
                    c.is_error,
                    tokens.0,
                    tokens.1,
                    c.duration_ms,
                )
            })
            .collect();
        assert_eq!(
            calls,
            vec![
                ("a", 1, false, true, 1, 10, 3),
                ("b", 1, false, false, 2, 20, 3),
                ("a-1", 2, true, false, 3, 30, 3),
            ]
        );
        let turns: Vec<(u64, bool)> = tally
            .turns
            .iter()
            .map(|t| (t.input_tokens, t.scripted))
            .collect();
        assert_eq!(turns, vec![(10, true), (20, true), (30, false)]);
        assert_eq!(tally.coverage, None);
        let with = super::tally(&transcript, Some(&[]));
        let of_loop = with.coverage.and_then(|c| c.get(coverage::LOOP).cloned());
        let count = |b: &str| of_loop.as_ref().and_then(|l| l.get(b).copied());
        assert_eq!(
            (
                count("parallel batch"),
                count("one call in a message"),
                count("retry sent"),
                count("retry that succeeded"),
                count("retry avoided"),
            ),
            (Some(1), Some(1), Some(1), Some(1), Some(1))
        );
    }
}
