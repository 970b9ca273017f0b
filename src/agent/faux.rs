//! The faux provider: a scripted model (§faux).
//!
//! It serves the script's steps in order, one assistant message per
//! request. Before serving, it reads the results of the calls it served last
//! turn: captures bind `${name}` variables from result texts, and a call
//! whose result is an error is followed by its `retry` calls (one per turn,
//! in order, until one succeeds). `${name}` references in arguments are
//! substituted when a call is served (`$${` is a literal `${`); inside raw
//! argument text a value is written JSON-escaped, as the content of a JSON
//! string. The variables each call saw are kept for its checks.
//!
//! Usage is reported per response as a real provider would (§faux.3): input
//! tokens of the whole request, output tokens of the response, and the
//! prompt-cache split, where cache-read is the common prefix with the
//! previous request. Tokens are counted through a [`TokenCounter`], each
//! part of a prompt once (see [`super::pricing`]).
//!
//! When the script is exhausted the provider answers with an empty final
//! message, which ends the run. Being called after that is an error in the
//! scenario and is reported as such.

use std::collections::BTreeMap;
use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use crate::base::vars::substitute;
use crate::base::vars::substitute_with;
use crate::tools::CallArguments;
use crate::tools::ToolCall;
use crate::tools::ToolSpec;
use crate::tools::ops::BoxFuture;

use super::message::AssistantBlock;
use super::message::AssistantMessage;
use super::message::Message;
use super::message::StopReason;
use super::message::Usage;
use super::pricing::PART_SEPARATOR;
use super::pricing::PromptPricer;
use super::pricing::priced_call;
use super::pricing::priced_text;
use super::provider::Provider;
use super::provider::ProviderError;
use super::provider::Request;
use super::tokens::TokenCounter;

/// Arguments of a scripted call.
#[derive(Clone, Debug, PartialEq)]
pub enum FauxArgs {
    /// A JSON value; `${var}` is substituted in every string.
    Json(Value),
    /// Literal argument text (it may not even parse); `${var}` substituted,
    /// each value JSON-escaped (the content of a JSON string, no quotes).
    Raw(String),
}

/// A named regex applied to a result's text.
#[derive(Clone, Debug)]
pub struct Capture {
    /// The variable it binds.
    pub name: String,
    /// The first group (or the whole match) becomes the value.
    pub regex: std::sync::Arc<Regex>,
}

/// One scripted tool call.
#[derive(Clone, Debug)]
pub struct FauxCall {
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments.
    pub args: FauxArgs,
    /// Variables bound from the result text.
    pub captures: Vec<Capture>,
    /// Calls sent next, one per turn, only while results are errors.
    pub retry: Vec<FauxCall>,
}

impl FauxCall {
    /// A call with JSON arguments, no captures and no retries.
    pub fn json(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args: FauxArgs::Json(args),
            captures: Vec::new(),
            retry: Vec::new(),
        }
    }
}

/// One step of the script: one assistant message.
#[derive(Clone, Debug)]
pub enum FauxStep {
    /// A message with these tool calls.
    Calls(Vec<FauxCall>),
    /// A plain text message; the run ends after it.
    Say(String),
}

/// The whole script.
#[derive(Clone, Debug, Default)]
pub struct FauxScript {
    /// The steps, in order.
    pub steps: Vec<FauxStep>,
}

/// Which scripted call a served call is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedCall {
    /// The call id as served.
    pub id: String,
    /// The step (0-based) the call belongs to.
    pub step: usize,
    /// `None` for the step's own call; `Some(k)` for its k-th retry.
    pub retry: Option<usize>,
    /// The id of the step's own call (for retries: the call they correct).
    pub origin: String,
}

/// One request the provider answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// Usage reported for it.
    pub usage: Usage,
    /// Whether the message came from the script (`false` for the final
    /// empty message after the script ran out).
    pub scripted: bool,
    /// The calls served in it.
    pub calls: Vec<ServedCall>,
}

/// A capture whose regex did not match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureFailure {
    /// The call whose result was searched.
    pub call_id: String,
    /// The variable.
    pub name: String,
    /// The regex.
    pub regex: String,
    /// The text searched (shortened).
    pub text: String,
}

/// What the provider did, for checks and statistics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FauxReport {
    /// Every request answered, in order.
    pub turns: Vec<Turn>,
    /// Retry calls sent.
    pub retries_sent: usize,
    /// Calls with a `retry` that succeeded, so no retry was needed.
    pub retries_avoided: usize,
    /// Captures that failed (the run stops at the first).
    pub capture_failures: Vec<CaptureFailure>,
    /// The variables at the end of the run.
    pub vars: BTreeMap<String, String>,
    /// The variables bound when each call was sent, by call id: what its
    /// `expect` sees.
    pub call_vars: BTreeMap<String, BTreeMap<String, String>>,
    /// Set when the model was called after the script ended.
    pub overrun: Option<String>,
}

impl FauxReport {
    /// The ids of the calls that were sent as retries.
    pub fn retry_ids(&self) -> std::collections::BTreeSet<&str> {
        self.turns
            .iter()
            .flat_map(|t| t.calls.iter())
            .filter(|c| c.retry.is_some())
            .map(|c| c.id.as_str())
            .collect()
    }
}

/// What [`FauxProvider::advance`] sends next.
#[derive(Clone, Debug, PartialEq)]
pub struct Advance {
    /// The message, its usage zero.
    pub message: AssistantMessage,
    /// Which scripted call each of its calls is, in order.
    pub calls: Vec<ServedCall>,
    /// False for the empty message past the end of the script.
    pub scripted: bool,
}

/// A call waiting for its result to be read.
#[derive(Clone, Debug)]
struct Pending {
    call: FauxCall,
    served: ServedCall,
    /// For retries: the retries after this one.
    rest: Vec<FauxCall>,
}

/// The scripted model.
#[derive(Debug)]
pub struct FauxProvider {
    steps: Vec<FauxStep>,
    next_step: usize,
    pending: Vec<Pending>,
    retry_queue: std::collections::VecDeque<Pending>,
    tokens: Arc<dyn TokenCounter>,
    pricer: PromptPricer,
    /// The tools part of the last request and the tools it was made of:
    /// the tools rarely change between turns, and serialising them every
    /// turn cost more than comparing them.
    tools_part: Option<(Vec<ToolSpec>, String)>,
    ended: bool,
    report: FauxReport,
}

impl FauxProvider {
    /// A provider serving `script`, with `vars` bound up front (the runner
    /// binds `workspace`).
    pub fn new(
        script: FauxScript,
        tokens: Arc<dyn TokenCounter>,
        vars: BTreeMap<String, String>,
    ) -> Self {
        Self {
            steps: script.steps,
            next_step: 0,
            pending: Vec::new(),
            retry_queue: std::collections::VecDeque::new(),
            tokens,
            pricer: PromptPricer::default(),
            tools_part: None,
            ended: false,
            report: FauxReport {
                vars,
                ..FauxReport::default()
            },
        }
    }

    /// What happened so far.
    pub fn report(&self) -> &FauxReport {
        &self.report
    }

    /// Consumes the provider for its report.
    pub fn into_report(self) -> FauxReport {
        self.report
    }

    /// Reads the results of the calls served last turn.
    fn read_results(&mut self, messages: &[Message]) {
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return;
        }
        let results: BTreeMap<&str, (bool, String)> = messages
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::Assistant(_)))
            .filter_map(|m| match m {
                Message::ToolResult(r) => Some((r.tool_call_id.as_str(), (r.is_error, r.text()))),
                _ => None,
            })
            .collect();
        let mut new_retries = Vec::new();
        for item in pending {
            let Some((is_error, text)) = results.get(item.served.id.as_str()) else {
                continue;
            };
            for capture in &item.call.captures {
                match capture.regex.captures(text) {
                    Some(found) => {
                        let value = found
                            .get(1)
                            .or_else(|| found.get(0))
                            .map_or("", |m| m.as_str());
                        self.report
                            .vars
                            .insert(capture.name.clone(), value.to_owned());
                    }
                    None => self.report.capture_failures.push(CaptureFailure {
                        call_id: item.served.id.clone(),
                        name: capture.name.clone(),
                        regex: capture.regex.as_str().to_owned(),
                        text: crate::tools::args::shorten(text, 500),
                    }),
                }
            }
            let retries = match item.served.retry {
                None => item.call.retry.clone(),
                Some(_) => item.rest.clone(),
            };
            if *is_error {
                if let Some((first, rest)) = retries.split_first() {
                    let k = item.served.retry.map_or(0, |k| k + 1);
                    new_retries.push(Pending {
                        served: ServedCall {
                            id: first.id.clone(),
                            step: item.served.step,
                            retry: Some(k),
                            origin: item.served.origin.clone(),
                        },
                        call: first.clone(),
                        rest: rest.to_vec(),
                    });
                }
            } else if item.served.retry.is_none() && !item.call.retry.is_empty() {
                self.report.retries_avoided += 1;
            }
        }
        // Retries of this turn go before any left from earlier turns.
        for retry in new_retries.into_iter().rev() {
            self.retry_queue.push_front(retry);
        }
    }

    /// The next message for a conversation that ends with `messages`,
    /// as [`Provider::complete`] serves it but neither priced nor counted
    /// as a turn: the results of the calls served last are read first
    /// (captures bind, errors queue retries), then the next retry or step
    /// is sent with its variables substituted. Past the end of the script
    /// (or after a failed capture) the message is empty and `scripted` is
    /// false. The HTTP model server replays a conversation through this,
    /// one assistant message at a time (`agent::serve`).
    pub fn advance(&mut self, messages: &[Message]) -> Advance {
        self.read_results(messages);
        let (message, calls, scripted) = self.next_message();
        Advance {
            message,
            calls,
            scripted,
        }
    }

    /// The next message of the script.
    fn next_message(&mut self) -> (AssistantMessage, Vec<ServedCall>, bool) {
        if !self.report.capture_failures.is_empty() {
            return (end_message(), Vec::new(), false);
        }
        if let Some(retry) = self.retry_queue.pop_front() {
            self.report.retries_sent += 1;
            let call = self.substitute(&retry.call);
            let served = vec![retry.served.clone()];
            self.pending.push(retry);
            return (tool_message(vec![call]), served, true);
        }
        let Some(step) = self.steps.get(self.next_step).cloned() else {
            return (end_message(), Vec::new(), false);
        };
        let step_index = self.next_step;
        self.next_step += 1;
        match step {
            FauxStep::Say(text) => (
                AssistantMessage::text(self.substitute_text(&text)),
                Vec::new(),
                true,
            ),
            FauxStep::Calls(calls) => {
                let mut served = Vec::new();
                let mut sent = Vec::new();
                for call in calls {
                    let info = ServedCall {
                        id: call.id.clone(),
                        step: step_index,
                        retry: None,
                        origin: call.id.clone(),
                    };
                    sent.push(self.substitute(&call));
                    served.push(info.clone());
                    self.pending.push(Pending {
                        call,
                        served: info,
                        rest: Vec::new(),
                    });
                }
                (tool_message(sent), served, true)
            }
        }
    }

    fn substitute_text(&self, text: &str) -> String {
        substitute(text, &self.report.vars)
    }

    /// The call as sent, its variables substituted; remembers the variables
    /// it saw, for its checks.
    fn substitute(&mut self, call: &FauxCall) -> ToolCall {
        self.report
            .call_vars
            .insert(call.id.clone(), self.report.vars.clone());
        let arguments = match &call.args {
            FauxArgs::Json(value) => {
                CallArguments::Json(substitute_value(value, &self.report.vars))
            }
            FauxArgs::Raw(text) => CallArguments::Text(substitute_with(
                text,
                &self.report.vars,
                json_string_content,
            )),
        };
        ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments,
        }
    }

    async fn usage(&mut self, parts: &[String], message: &AssistantMessage) -> Usage {
        let output = self.tokens.count(&serialize_assistant(message));
        self.pricer.usage(self.tokens.as_ref(), parts, output).await
    }
}

impl Provider for FauxProvider {
    fn complete<'a>(
        &'a mut self,
        request: Request<'a>,
    ) -> BoxFuture<'a, Result<AssistantMessage, ProviderError>> {
        Box::pin(async move {
            if self.ended {
                let message = format!(
                    "the model was called {} times but the script has only {} steps (plus {} \
                     retries); the loop asked for more after the script ended",
                    self.report.turns.len() + 1,
                    self.steps.len(),
                    self.report.retries_sent
                );
                self.report.overrun = Some(message.clone());
                return Err(ProviderError(message));
            }
            let Advance {
                mut message,
                calls,
                scripted,
            } = self.advance(request.messages);
            if !scripted {
                self.ended = true;
            }
            let tools = match self.tools_part.take() {
                Some((specs, part)) if same_definitions(&specs, request.tools) => (specs, part),
                _ => (request.tools.to_vec(), tools_part(request.tools)),
            };
            let parts = parts_with_tools(&request, Some(&tools.1));
            self.tools_part = Some(tools);
            message.usage = self.usage(&parts, &message).await;
            self.report.turns.push(Turn {
                usage: message.usage,
                scripted,
                calls,
            });
            Ok(message)
        })
    }
}

fn tool_message(calls: Vec<ToolCall>) -> AssistantMessage {
    AssistantMessage {
        content: calls.into_iter().map(AssistantBlock::ToolCall).collect(),
        stop_reason: StopReason::ToolUse,
        usage: Usage::default(),
        error_message: None,
    }
}

fn end_message() -> AssistantMessage {
    AssistantMessage {
        content: Vec::new(),
        stop_reason: StopReason::Stop,
        usage: Usage::default(),
        error_message: None,
    }
}

/// A value as the inside of a JSON string: what `${var}` in `raw_args`
/// becomes, so a captured value cannot add JSON fields.
fn json_string_content(value: &str, out: &mut String) {
    let quoted = serde_json::Value::String(value.to_owned()).to_string();
    out.push_str(&quoted[1..quoted.len() - 1]);
}

fn substitute_value(value: &Value, vars: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(s) => Value::String(substitute(s, vars)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute_value(v, vars)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute_value(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The text a provider would be charged for (§faux.3): `system:…`, one part
/// per message, then `tools:[…]`, joined by blank lines.
pub fn serialize_prompt(request: &Request<'_>) -> String {
    prompt_parts(request).join(PART_SEPARATOR)
}

/// The parts of [`serialize_prompt`], before they are joined.
pub fn prompt_parts(request: &Request<'_>) -> Vec<String> {
    parts_with_tools(request, None)
}

/// The tools part of a prompt (`tools:[…]`, the definitions of `tools` in
/// their order), empty without tools; also what `run::stats` prices as a
/// scenario's (or one server's) tool definitions.
pub(crate) fn tools_part<'a>(tools: impl IntoIterator<Item = &'a ToolSpec>) -> String {
    let definitions: Vec<_> = tools.into_iter().map(ToolSpec::definition).collect();
    if definitions.is_empty() {
        return String::new();
    }
    let json = serde_json::to_string(&definitions).unwrap_or_default();
    format!("tools:{json}")
}

/// Whether two tool lists give the same tools part: the same names,
/// descriptions and parameter schemas, in the same order, keys of objects
/// included (`==` on JSON objects ignores their order, the part does not).
fn same_definitions(a: &[ToolSpec], b: &[ToolSpec]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a.name == b.name
                && a.description == b.description
                && same_json(&a.parameters, &b.parameters)
        })
}

/// Whether two JSON values serialise the same.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_json(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_json(a, b))
        }
        _ => a == b,
    }
}

/// [`prompt_parts`], with the tools part made already when `tools` is
/// given (it must be [`tools_part`] of the request's tools).
fn parts_with_tools(request: &Request<'_>, tools: Option<&str>) -> Vec<String> {
    let mut parts = Vec::new();
    if !request.system.is_empty() {
        parts.push(format!("system:{}", request.system));
    }
    for message in request.messages {
        parts.push(match message {
            Message::User { text } => format!("user:{text}"),
            Message::Assistant(a) => format!("assistant:{}", serialize_assistant(a)),
            Message::ToolResult(r) => {
                let mut text = format!("toolResult:{}", r.tool_name);
                if !r.content.is_empty() {
                    text.push('\n');
                    text.push_str(&priced_text(&r.content));
                }
                text
            }
        });
    }
    if !request.tools.is_empty() {
        parts.push(match tools {
            Some(part) => part.to_owned(),
            None => tools_part(request.tools),
        });
    }
    parts
}

/// An assistant message as priced: blocks joined by newlines, tool calls as
/// `name:{json}`.
pub fn serialize_assistant(message: &AssistantMessage) -> String {
    message
        .content
        .iter()
        .map(|block| match block {
            AssistantBlock::Text { text } => text.clone(),
            AssistantBlock::ToolCall(call) => priced_call(call),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[path = "faux_tests.rs"]
mod tests;
