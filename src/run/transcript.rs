//! A scenario's transcript as the report keeps it: each model turn, each
//! tool call with its arguments, and the result as the model read it,
//! recorded from the loop's events while the scenario runs (so a scenario
//! that timed out keeps what happened before the budget ran out).
//!
//! What is kept is bounded, and never more than the model saw: streamed
//! partial results are only noted, a text longer than
//! [`Bounds::text`] keeps its beginning and its end with the number of
//! bytes left out between them, an image larger than [`Bounds::image`]
//! keeps only its type and size, `details` larger than [`Bounds::details`]
//! only their size, and once a scenario's transcript holds
//! [`Bounds::scenario`] bytes of text, later blocks keep only their sizes.
//! Everything kept is deterministic: results are the presented ones
//! (`/workspace`), and nothing depends on completion order or time.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::agent::AgentEvent;
use crate::agent::AssistantBlock;
use crate::agent::FauxReport;
use crate::agent::StopReason;
use crate::tools::CallArguments;
use crate::tools::Content;

/// How much of a transcript is kept, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// One text block (an assistant text, a result block, arguments).
    pub text: usize,
    /// One image's base64 payload.
    pub image: usize,
    /// One result's `details`, as compact JSON.
    pub details: usize,
    /// All the text, images and details of one scenario together.
    pub scenario: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            text: 8 * 1024,
            image: 64 * 1024,
            details: 4 * 1024,
            scenario: 64 * 1024,
        }
    }
}

/// A text as kept: all of it, or its beginning and its end with the number
/// of bytes left out between them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Clip {
    /// The text, or its beginning.
    pub text: String,
    /// Bytes left out after `text` (0: the text is whole).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted_bytes: u64,
    /// The end of the text, after the bytes left out.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tail: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One block of a result, as the model read it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text.
    Text {
        /// The text as kept.
        #[serde(flatten)]
        clip: Clip,
    },
    /// An image.
    Image {
        /// Its MIME type.
        mime_type: String,
        /// The base64 payload; absent when it was too large to keep.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        /// The size of the base64 payload the model read.
        bytes: u64,
    },
}

/// One tool call and its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TranscriptCall {
    /// The call id (the `id` of the matching `calls[]` entry).
    pub id: String,
    /// The tool as called.
    pub tool: String,
    /// The arguments as the model sent them (compact JSON, or the raw
    /// text of arguments that were not JSON).
    pub arguments: Clip,
    /// For a retry: the id of the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<String>,
    /// Whether a result arrived (false: the scenario stopped while the
    /// call ran).
    pub finished: bool,
    /// Whether the result was an error.
    pub is_error: bool,
    /// The result's blocks, as the model read them.
    pub content: Vec<Block>,
    /// The result's `details`, when small enough to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// The size of `details` left out (compact JSON bytes); 0 when kept
    /// or absent.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub details_omitted_bytes: u64,
    /// Whether the tool streamed partial results while it ran. They are not
    /// kept (the model read only the final result), nor counted: how many
    /// a tool sends depends on timing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub streamed: bool,
}

/// One model turn: its message and the calls it carried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TranscriptTurn {
    /// The turn (from 1); `turns[turn - 1]` of the scenario has its usage.
    pub turn: u64,
    /// Why the message ended: `stop`, `tool_use`, `length`, `error` or
    /// `aborted`.
    pub stop_reason: String,
    /// The message's text blocks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub text: Vec<Clip>,
    /// The calls it carried, in the order sent (one batch).
    pub calls: Vec<TranscriptCall>,
}

/// What a scenario's model saw and did, turn by turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Transcript {
    /// Every turn whose message arrived, in order.
    pub turns: Vec<TranscriptTurn>,
    /// Why the loop ended early (a provider error, the turn limit, a
    /// cancellation), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the scenario's byte budget ran out, so that later blocks
    /// keep only their sizes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut: bool,
}

impl Transcript {
    /// Every call, in the order sent (the order of the scenario's `calls`).
    pub fn calls(&self) -> impl Iterator<Item = &TranscriptCall> {
        self.turns.iter().flat_map(|t| t.calls.iter())
    }
}

/// Builds a [`Transcript`] from the loop's events, within [`Bounds`].
#[derive(Debug, Default)]
pub struct Recorder {
    bounds: Bounds,
    /// Bytes of the scenario's budget used.
    used: usize,
    transcript: Transcript,
    /// Where each call id sits: (turn position, call position).
    places: BTreeMap<String, (usize, usize)>,
}

impl Recorder {
    /// A recorder keeping at most `bounds`.
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            ..Self::default()
        }
    }

    /// Takes `want` bytes of the scenario's budget; false (and the
    /// transcript marked cut) when they do not fit.
    fn take(&mut self, want: usize) -> bool {
        if self.used.saturating_add(want) > self.bounds.scenario {
            self.transcript.cut = true;
            return false;
        }
        self.used += want;
        true
    }

    /// `text` within the text bound and the scenario's budget.
    fn clip(&mut self, text: &str) -> Clip {
        let room = self.bounds.scenario.saturating_sub(self.used);
        let limit = self.bounds.text.min(room);
        if limit < text.len() && room < self.bounds.text {
            self.transcript.cut = true;
        }
        let clip = clip(text, limit);
        self.used += clip.text.len() + clip.tail.len();
        clip
    }

    /// The recorded call with this id.
    fn call(&mut self, id: &str) -> Option<&mut TranscriptCall> {
        let &(t, c) = self.places.get(id)?;
        self.transcript.turns.get_mut(t)?.calls.get_mut(c)
    }

    /// Records one event.
    pub fn see(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::AssistantMessage { turn, message } => {
                let position = self.transcript.turns.len();
                let mut text = Vec::new();
                let mut calls = Vec::new();
                for block in &message.content {
                    match block {
                        AssistantBlock::Text { text: t } => text.push(self.clip(t)),
                        AssistantBlock::ToolCall(call) => {
                            let raw = match &call.arguments {
                                CallArguments::Json(v) => v.to_string(),
                                CallArguments::Text(t) => t.clone(),
                            };
                            self.places.insert(call.id.clone(), (position, calls.len()));
                            calls.push(TranscriptCall {
                                id: call.id.clone(),
                                tool: call.name.clone(),
                                arguments: self.clip(&raw),
                                retry_of: None,
                                finished: false,
                                is_error: false,
                                content: Vec::new(),
                                details: None,
                                details_omitted_bytes: 0,
                                streamed: false,
                            });
                        }
                    }
                }
                self.transcript.turns.push(TranscriptTurn {
                    turn: *turn as u64,
                    stop_reason: stop_reason(message.stop_reason).to_owned(),
                    text,
                    calls,
                });
            }
            AgentEvent::ToolExecutionUpdate { call_id, .. } => {
                if let Some(call) = self.call(call_id) {
                    call.streamed = true;
                }
            }
            AgentEvent::ToolResultMessage { message } => {
                let content: Vec<Block> = message
                    .content
                    .iter()
                    .map(|block| self.block(block))
                    .collect();
                let (details, details_omitted_bytes) = match &message.details {
                    None => (None, 0),
                    Some(value) => {
                        let size = value.to_string().len();
                        if size <= self.bounds.details && self.take(size) {
                            (Some(value.clone()), 0)
                        } else {
                            (None, size as u64)
                        }
                    }
                };
                let is_error = message.is_error;
                if let Some(call) = self.call(&message.tool_call_id) {
                    call.finished = true;
                    call.is_error = is_error;
                    call.content = content;
                    call.details = details;
                    call.details_omitted_bytes = details_omitted_bytes;
                }
            }
            AgentEvent::AgentEnd { error } => self.transcript.error.clone_from(error),
            _ => {}
        }
    }

    fn block(&mut self, block: &Content) -> Block {
        match block {
            Content::Text { text } => Block::Text {
                clip: self.clip(text),
            },
            Content::Image { data, mime_type } => {
                let keep = data.len() <= self.bounds.image && self.take(data.len());
                Block::Image {
                    mime_type: mime_type.clone(),
                    data: keep.then(|| data.clone()),
                    bytes: data.len() as u64,
                }
            }
        }
    }

    /// The transcript, with retries linked to the calls they answer (from
    /// the faux provider's report).
    pub fn finish(mut self, report: &FauxReport) -> Transcript {
        for served in report.turns.iter().flat_map(|t| t.calls.iter()) {
            if served.retry.is_some()
                && let Some(call) = self.call(&served.id)
            {
                call.retry_of = Some(served.origin.clone());
            }
        }
        self.transcript
    }
}

fn stop_reason(reason: StopReason) -> &'static str {
    match reason {
        StopReason::Stop => "stop",
        StopReason::ToolUse => "tool_use",
        StopReason::Length => "length",
        StopReason::Error => "error",
        StopReason::Aborted => "aborted",
    }
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `text` at or above `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// `text` cut to at most `limit` bytes: three quarters from its beginning,
/// a quarter from its end, on character boundaries.
pub fn clip(text: &str, limit: usize) -> Clip {
    if text.len() <= limit {
        return Clip {
            text: text.to_owned(),
            ..Clip::default()
        };
    }
    let head = floor_boundary(text, limit / 4 * 3);
    let tail = ceil_boundary(text, text.len() - (limit - limit / 4 * 3));
    let tail = tail.max(head);
    Clip {
        text: text[..head].to_owned(),
        omitted_bytes: (tail - head) as u64,
        tail: text[tail..].to_owned(),
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
