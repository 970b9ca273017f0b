//! What a real agent did, read from the requests it sent the served
//! model, as the [`Transcript`] the judge reads: one call record per
//! scripted call the agent returned a result for (the result as it sent
//! it in its next request, presented), the conversation, and one turn per
//! request answered from the script, priced with the run's tokenizer.
//!
//! The request that went furthest (the most tool calls in its history,
//! the latest of those) holds every result: the script is replayed over
//! it (`agent::serve::replay`, as the server did) to know which scripted
//! call each of the agent's calls was, and the variables each was sent
//! with. Side calls (requests without tools) are counted apart.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::agent::AssistantBlock;
use crate::agent::AssistantMessage;
use crate::agent::CallRecord;
use crate::agent::FauxReport;
use crate::agent::FauxScript;
use crate::agent::Message;
use crate::agent::Presenter;
use crate::agent::StopReason;
use crate::agent::TokenCounter;
use crate::agent::ToolResultMessage;
use crate::agent::Transcript;
use crate::agent::Usage;
use crate::agent::faux::ServedCall;
use crate::agent::faux::Turn;
use crate::agent::pricing::priced_call;
use crate::agent::pricing::priced_text;
use crate::agent::serve::AnswerKind;
use crate::agent::serve::ErrorRule;
use crate::agent::serve::Exchange;
use crate::agent::serve::prompt_text;
use crate::agent::serve::replay;
use crate::agent::wire::CallInput;
use crate::tools::CallArguments;
use crate::tools::Content;
use crate::tools::ToolCall;
use crate::tools::ToolResult;

/// What [`build`] reads.
pub(crate) struct Served<'a> {
    /// Every exchange, in the order received.
    pub exchanges: &'a [Exchange],
    /// The script served.
    pub script: &'a FauxScript,
    /// The variables it was served with (`workspace`: the real path).
    pub vars: &'a BTreeMap<String, String>,
    /// How results without a flag are read.
    pub errors: ErrorRule,
    /// How every text is presented before it is checked or priced.
    pub presenter: &'a Presenter,
    /// The run's tokenizer.
    pub tokens: &'a dyn TokenCounter,
    /// The task the agent was given.
    pub prompt: &'a str,
}

/// The transcript, and what the judge does not read.
#[derive(Debug, Default)]
pub(crate) struct Built {
    /// The transcript.
    pub transcript: Transcript,
    /// Requests received (answered or not, side calls included).
    pub requests: u64,
    /// Side calls answered.
    pub side_calls: u64,
    /// Whether the script's final answer was sent.
    pub finished: bool,
    /// The labels of the scripted calls sent that got no result back,
    /// by call id.
    pub unanswered: Vec<String>,
}

/// The transcript of an agent's run from what it sent.
pub(crate) fn build(served: &Served<'_>) -> Built {
    let present = |text: &str| served.presenter.text(text);
    let answered: Vec<&Exchange> = served
        .exchanges
        .iter()
        .filter(|e| e.answer.is_some() && e.request.is_some() && !e.is_side_call())
        .collect();
    let mut built = Built {
        requests: served.exchanges.len() as u64,
        side_calls: served.exchanges.iter().filter(|e| e.is_side_call()).count() as u64,
        ..Built::default()
    };
    // Which turn first served each call, and each turn's calls.
    let mut first_turn: BTreeMap<String, usize> = BTreeMap::new();
    let mut turns = Vec::new();
    for (index, exchange) in answered.iter().enumerate() {
        let (Some(request), Some(answer)) = (&exchange.request, &exchange.answer) else {
            continue;
        };
        let calls: Vec<ServedCall> = match &answer.kind {
            AnswerKind::Calls { calls } => calls
                .iter()
                .map(|c| ServedCall {
                    id: c.id.clone(),
                    step: c.step,
                    retry: c.retry,
                    origin: c.id.clone(),
                })
                .collect(),
            AnswerKind::Final => {
                built.finished = true;
                Vec::new()
            }
            AnswerKind::Side => Vec::new(),
        };
        for call in &calls {
            first_turn.entry(call.id.clone()).or_insert(index + 1);
        }
        turns.push(Turn {
            usage: Usage {
                input: served.tokens.count(&present(&prompt_text(request))),
                output: served.tokens.count(&present(&answer.reply.priced_text())),
                cache_read: 0,
                cache_write: 0,
            },
            scripted: true,
            calls,
        });
    }
    // The request that went furthest holds every result.
    let furthest = answered
        .iter()
        .filter_map(|e| e.request.as_ref())
        .enumerate()
        .max_by_key(|(i, r)| (r.call_count(), *i))
        .map(|(_, r)| r);
    let mut transcript = Transcript {
        messages: vec![Message::User {
            text: served.prompt.to_owned(),
        }],
        ..Transcript::default()
    };
    let mut report = FauxReport::default();
    if let Some(request) = furthest {
        transcript.system = present(&request.system);
        let replayed = replay(served.script, served.vars, request, served.errors);
        let calls = request.answered_calls();
        // Calls grouped by the turn that served them, in order.
        let mut batch: Vec<(CallRecord, usize)> = Vec::new();
        for (position, (made, answered)) in replayed.made.iter().zip(&calls).enumerate() {
            let turn = first_turn.get(&made.id).copied().unwrap_or(position + 1);
            let Some(result) = answered.result else {
                built.unanswered.push(made.id.clone());
                continue;
            };
            let arguments = match &answered.call.input {
                CallInput::Json(value) => CallArguments::Json(served.presenter.value(value)),
                CallInput::Text(text) | CallInput::Freeform(text) => {
                    CallArguments::Text(present(text))
                }
            };
            let call = ToolCall {
                id: made.id.clone(),
                name: answered.call.name.clone(),
                arguments,
            };
            let mut content = vec![Content::text(present(&result.text))];
            content.extend(result.images.iter().map(|image| Content::Image {
                data: image.data.clone(),
                mime_type: image.media_type.clone(),
            }));
            let is_error = served.errors.is_error(result).unwrap_or(false);
            let result = ToolResult {
                is_error,
                content,
                details: None,
                internal_error: None,
                facts: None,
                call_id: Some(made.id.clone()),
            };
            let record = CallRecord {
                turn,
                index: 0,
                args_tokens: served.tokens.count(&priced_call(&call)),
                result_tokens: served.tokens.count(&priced_text(&result.content)),
                call,
                result,
                duration: Duration::ZERO,
                updates: Default::default(),
                completion: 0,
                cancelled: false,
            };
            batch.push((record, turn));
        }
        // One assistant message per turn, its results after it.
        let mut position = 0;
        while position < batch.len() {
            let turn = batch[position].1;
            let end = batch[position..]
                .iter()
                .position(|(_, t)| *t != turn)
                .map_or(batch.len(), |n| position + n);
            let group = &mut batch[position..end];
            let mut content = Vec::new();
            for (index, (record, _)) in group.iter_mut().enumerate() {
                record.index = index;
                record.completion = index;
                content.push(AssistantBlock::ToolCall(record.call.clone()));
            }
            transcript
                .messages
                .push(Message::Assistant(AssistantMessage {
                    content,
                    stop_reason: StopReason::ToolUse,
                    usage: Usage::default(),
                    error_message: None,
                }));
            for (record, _) in group.iter() {
                transcript
                    .messages
                    .push(Message::ToolResult(ToolResultMessage {
                        tool_call_id: record.call.id.clone(),
                        tool_name: record.call.name.clone(),
                        content: record.result.content.clone(),
                        details: None,
                        is_error: record.result.is_error,
                    }));
            }
            position = end;
        }
        transcript.calls = batch.into_iter().map(|(record, _)| record).collect();
        let present_vars = |vars: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            vars.iter().map(|(k, v)| (k.clone(), present(v))).collect()
        };
        report.retries_sent = replayed.report.retries_sent;
        report.retries_avoided = replayed.report.retries_avoided;
        report.capture_failures = replayed.report.capture_failures;
        for failure in &mut report.capture_failures {
            failure.text = present(&failure.text);
        }
        report.vars = present_vars(&replayed.report.vars);
        report.call_vars = replayed
            .report
            .call_vars
            .iter()
            .map(|(id, vars)| (id.clone(), present_vars(vars)))
            .collect();
    }
    if built.finished
        && let Some(text) = answered.iter().rev().find_map(|e| {
            e.answer
                .as_ref()
                .filter(|a| a.kind == AnswerKind::Final)
                .and_then(|a| a.reply.text.clone())
        })
    {
        transcript
            .messages
            .push(Message::Assistant(AssistantMessage::text(text)));
    }
    report.turns = turns;
    transcript.model = report;
    built.transcript = transcript;
    built
}
