//! The faux script as a [`Responder`]: stateless, each answer decided by
//! the conversation the agent sent.
//!
//! The tool calls already in a request's history say how far the agent
//! is: the script is replayed through [`FauxProvider::advance`], one
//! scripted message per batch of calls the history holds, with the
//! agent's results of those calls fed back in (so captures bind and a
//! failed call's `retry` is sent, as in a harness run). The message after
//! the last batch is the answer. For a script without retries that is the
//! step numbered by the count of calls already made; an agent that asks
//! twice (a retry after a broken stream) gets the same answer twice, and
//! a side call (a request without tools) never moves the script.
//!
//! `${var}` is substituted as the faux provider does (the one
//! implementation, `faux::substitute`); the caller binds `workspace` to
//! the path the agent works in. A call to a tool the agent declared
//! freeform (Codex's `apply_patch`) is sent as that tool's raw input: its
//! `raw_args` with the variables written as they are.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::agent::faux::Advance;
use crate::agent::faux::FauxArgs;
use crate::agent::faux::FauxCall;
use crate::agent::faux::FauxProvider;
use crate::agent::faux::FauxReport;
use crate::agent::faux::FauxScript;
use crate::agent::faux::FauxStep;
use crate::agent::faux::ServedCall;
use crate::agent::message::Message;
use crate::agent::message::ToolResultMessage;
use crate::agent::tokens::Chars4;
use crate::agent::tokens::TokenCounter;
use crate::agent::wire::CallInput;
use crate::agent::wire::Item;
use crate::agent::wire::ReplyCall;
use crate::agent::wire::ReplyUsage;
use crate::agent::wire::WireReply;
use crate::agent::wire::WireRequest;
use crate::base::vars::substitute;
use crate::tools::CallArguments;
use crate::tools::Content;

use super::responder::Answer;
use super::responder::AnswerKind;
use super::responder::ErrorRule;
use super::responder::Responder;
use super::responder::ScriptedCall;

/// The answer to a side call.
pub const SIDE_TEXT: &str = "OK";

/// The answer after a script's last calls, when it ends without `say`.
pub const DONE_TEXT: &str = "Done.";

/// A script replayed over a conversation.
#[derive(Debug)]
pub struct Replay {
    /// The message after the conversation.
    pub next: Advance,
    /// What the replay saw: the variables bound, the variables each call
    /// was sent with, retries, captures that found nothing.
    pub report: FauxReport,
    /// Which scripted call each tool call of the history was, in the
    /// order of [`WireRequest::answered_calls`] (calls past the script's
    /// end have none): how the agent's results are matched to the
    /// script's checks.
    pub made: Vec<ServedCall>,
}

/// Replays `script` over the tool calls of `request` and their results
/// (`errors` reads a result without a flag), with `vars` bound up front.
pub fn replay(
    script: &FauxScript,
    vars: &BTreeMap<String, String>,
    request: &WireRequest,
    errors: ErrorRule,
) -> Replay {
    let mut provider = FauxProvider::new(script.clone(), Arc::new(Chars4), vars.clone());
    let answered = request.answered_calls();
    let mut messages = vec![Message::User {
        text: String::new(),
    }];
    let mut used = 0;
    let mut made = Vec::new();
    loop {
        let next = provider.advance(&messages);
        let count = next.calls.len();
        if count == 0 || used >= answered.len() {
            return Replay {
                next,
                report: provider.into_report(),
                made,
            };
        }
        // The agent ran these calls already: their results go back in.
        let batch = &answered[used..answered.len().min(used + count)];
        messages.push(Message::Assistant(next.message.clone()));
        made.extend(next.calls.iter().take(batch.len()).cloned());
        for (served, call) in next.calls.iter().zip(batch) {
            let Some(result) = call.result else {
                continue;
            };
            let mut content = vec![Content::text(result.text.clone())];
            content.extend(result.images.iter().map(|image| Content::Image {
                data: image.data.clone(),
                mime_type: image.media_type.clone(),
            }));
            messages.push(Message::ToolResult(ToolResultMessage {
                tool_call_id: served.id.clone(),
                tool_name: call.call.name.clone(),
                content,
                details: None,
                is_error: errors.is_error(result).unwrap_or(false),
            }));
        }
        used += count;
    }
}

/// The faux script as a responder.
#[derive(Debug)]
pub struct ScriptResponder {
    script: FauxScript,
    vars: BTreeMap<String, String>,
    tokens: Arc<dyn TokenCounter>,
    errors: ErrorRule,
}

impl ScriptResponder {
    /// A responder serving `script` with `vars` bound (`workspace`: the
    /// agent's real workspace path), reporting usage counted by `tokens`
    /// and reading results without a flag by `errors`.
    pub fn new(
        script: FauxScript,
        vars: BTreeMap<String, String>,
        tokens: Arc<dyn TokenCounter>,
        errors: ErrorRule,
    ) -> Self {
        Self {
            script,
            vars,
            tokens,
            errors,
        }
    }

    fn usage(&self, request: &WireRequest, reply: &WireReply) -> ReplyUsage {
        ReplyUsage {
            input: self.tokens.count(&prompt_text(request)),
            cache_read: 0,
            output: self.tokens.count(&reply.priced_text()),
        }
    }
}

impl Responder for ScriptResponder {
    fn respond(&self, request: &WireRequest) -> Answer {
        let (mut reply, kind, note) = if request.is_side_call() {
            (WireReply::text(SIDE_TEXT), AnswerKind::Side, None)
        } else {
            let Replay { next, report, .. } =
                replay(&self.script, &self.vars, request, self.errors);
            let note = report.capture_failures.first().map(|failure| {
                format!(
                    "the script ended early: capture `{}` ({}) found nothing in the result of {}",
                    failure.name, failure.regex, failure.call_id
                )
            });
            if next.calls.is_empty() {
                let text = next
                    .message
                    .content
                    .iter()
                    .find_map(|block| match block {
                        crate::agent::message::AssistantBlock::Text { text } => Some(text.clone()),
                        crate::agent::message::AssistantBlock::ToolCall(_) => None,
                    })
                    .unwrap_or_else(|| DONE_TEXT.to_owned());
                (WireReply::text(text), AnswerKind::Final, note)
            } else {
                let calls = reply_calls(&self.script, request, &next, &report);
                let scripted = next
                    .calls
                    .iter()
                    .map(|served| ScriptedCall {
                        id: served.id.clone(),
                        step: served.step,
                        retry: served.retry,
                    })
                    .collect();
                (
                    WireReply {
                        text: None,
                        calls,
                        usage: ReplyUsage::default(),
                    },
                    AnswerKind::Calls { calls: scripted },
                    note,
                )
            }
        };
        reply.usage = self.usage(request, &reply);
        Answer { reply, kind, note }
    }
}

/// The calls of `next` as sent: a freeform tool's input as raw text.
fn reply_calls(
    script: &FauxScript,
    request: &WireRequest,
    next: &Advance,
    report: &FauxReport,
) -> Vec<ReplyCall> {
    next.message
        .tool_calls()
        .zip(&next.calls)
        .map(|(call, served)| {
            let freeform = request.tool(&call.name).is_some_and(|tool| tool.freeform);
            let input = if freeform {
                let raw = match scripted_call(script, served).map(|c| &c.args) {
                    Some(FauxArgs::Raw(text)) => {
                        let vars = report.call_vars.get(&served.id);
                        Some(substitute(text, vars.unwrap_or(&report.vars)))
                    }
                    _ => None,
                };
                CallInput::Freeform(raw.unwrap_or_else(|| match &call.arguments {
                    CallArguments::Json(Value::String(text)) | CallArguments::Text(text) => {
                        text.clone()
                    }
                    CallArguments::Json(value) => value.to_string(),
                }))
            } else {
                match &call.arguments {
                    CallArguments::Json(value) => CallInput::Json(value.clone()),
                    CallArguments::Text(text) => CallInput::Text(text.clone()),
                }
            };
            ReplyCall {
                id: call.id.clone(),
                name: call.name.clone(),
                input,
            }
        })
        .collect()
}

/// The scripted call a served call is.
fn scripted_call<'a>(script: &'a FauxScript, served: &ServedCall) -> Option<&'a FauxCall> {
    let FauxStep::Calls(calls) = script.steps.get(served.step)? else {
        return None;
    };
    let origin = calls.iter().find(|call| call.id == served.origin)?;
    match served.retry {
        None => Some(origin),
        Some(k) => origin.retry.get(k),
    }
}

/// The text a request is counted as: the system prompt, each item of the
/// history, the tool definitions as sent, joined by blank lines.
pub fn prompt_text(request: &WireRequest) -> String {
    let mut parts = Vec::new();
    if !request.system.is_empty() {
        parts.push(format!("system:{}", request.system));
    }
    for item in &request.history {
        parts.push(match item {
            Item::User { text, .. } => format!("user:{text}"),
            Item::Assistant { text } => format!("assistant:{text}"),
            Item::ToolCall(call) => format!("assistant:{}:{}", call.name, call.input.to_text()),
            Item::ToolResult(result) => format!("toolResult:\n{}", result.text),
        });
    }
    if !request.tools.is_empty() {
        let definitions: Vec<&Value> = request.tools.iter().map(|t| &t.definition).collect();
        parts.push(format!(
            "tools:{}",
            serde_json::to_string(&definitions).unwrap_or_default()
        ));
    }
    parts.join("\n\n")
}
