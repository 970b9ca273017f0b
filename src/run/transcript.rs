//! A scenario's transcript as the report keeps it: each model turn, each
//! tool call with its arguments, and the result as the model read it: a
//! bounded projection of the transcript the agent loop filled
//! ([`agent::Transcript`]), so a scenario that timed out keeps what
//! happened before the budget ran out.
//!
//! What is kept is bounded, and never more than the model saw: of the
//! partial results a call streamed, only the first and the last texts are
//! kept (each within [`Bounds::update`]; how many arrived, and those in
//! between, depend on timing and are left out), a text longer than
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

use crate::agent;
use crate::agent::AssistantBlock;
use crate::agent::AssistantMessage;
use crate::agent::CallRecord;
use crate::agent::FauxReport;
use crate::agent::StopReason;
use crate::tools::Content;

/// How much of a transcript is kept, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// One text block (an assistant text, a result block, arguments).
    pub text: usize,
    /// One image's base64 payload.
    pub image: usize,
    /// One result's `details`, as compact JSON.
    pub details: usize,
    /// The text of one streamed partial result (the first or the last).
    pub update: usize,
    /// All the text, images and details of one scenario together.
    pub scenario: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Self {
            text: 8 * 1024,
            image: 64 * 1024,
            details: 4 * 1024,
            update: 1024,
            scenario: 64 * 1024,
        }
    }
}

/// A text as kept: all of it, or its beginning and its end with the number
/// of bytes left out between them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Clip {
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
pub(crate) enum Block {
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
pub(crate) struct TranscriptCall {
    /// The call id (the `id` of the matching `calls[]` entry).
    pub id: String,
    /// The tool as called.
    pub tool: String,
    /// The arguments as the model sent them (compact JSON, or the raw
    /// text of arguments that were not JSON).
    pub arguments: Clip,
    /// For a retry: the id of the script step's own call, the first of
    /// the chain of attempts this retry belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_of: Option<String>,
    /// For a retry: the id of the call whose error result it answers, the
    /// attempt just before it (the step's own call for the first retry,
    /// retry K - 1 for retry K).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<String>,
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
    /// Whether the tool streamed partial results while it ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub streamed: bool,
    /// The first and last of the partial results it streamed (the model
    /// read only the final result). How many arrived, and the texts
    /// between the first and the last, depend on timing and are not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updates: Option<Updates>,
}

/// What is kept of a call's streamed partial results: the texts of the
/// first and of the last, which do not depend on timing (bash sends an
/// empty one as it starts and, at the end, one with the final tail).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Updates {
    /// The first one's text (its text blocks joined by newlines).
    pub first: Clip,
    /// The last one's text, when more than one arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<Clip>,
}

/// One model turn: its message and the calls it carried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct TranscriptTurn {
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

/// What a scenario's model saw and did, turn by turn, as the report keeps
/// it (`Transcript` in the report's schema).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Transcript")]
pub(crate) struct KeptTranscript {
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

impl KeptTranscript {
    /// Every call, in the order sent (the order of the scenario's `calls`).
    pub(crate) fn calls(&self) -> impl Iterator<Item = &TranscriptCall> {
        self.turns.iter().flat_map(|t| t.calls.iter())
    }
}

/// Keeps a [`KeptTranscript`] within [`Bounds`] while it is made, spending the
/// scenario's budget in conversation order.
#[derive(Debug, Default)]
struct Keeper {
    bounds: Bounds,
    /// Bytes of the scenario's budget used.
    used: usize,
    transcript: KeptTranscript,
    /// Where each call id sits: (turn position, call position).
    places: BTreeMap<String, (usize, usize)>,
}

impl Keeper {
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

    /// A kept text again within the scenario's budget.
    fn reclip(&mut self, kept: &Clip) -> Clip {
        let room = self.bounds.scenario.saturating_sub(self.used);
        let clip = reclip(kept, room);
        if clip != *kept {
            self.transcript.cut = true;
        }
        self.used += clip.text.len() + clip.tail.len();
        clip
    }

    /// The kept call with this id.
    fn call(&mut self, id: &str) -> Option<&mut TranscriptCall> {
        let &(t, c) = self.places.get(id)?;
        self.transcript.turns.get_mut(t)?.calls.get_mut(c)
    }

    /// A model turn: its message's texts and calls' arguments, in the
    /// order of its blocks; `streamed` says which calls streamed.
    fn message(
        &mut self,
        turn: usize,
        message: &AssistantMessage,
        streamed: impl Fn(usize) -> bool,
    ) {
        let position = self.transcript.turns.len();
        let mut text = Vec::new();
        let mut calls = Vec::new();
        for block in &message.content {
            match block {
                AssistantBlock::Text { text: t } => text.push(self.clip(t)),
                AssistantBlock::ToolCall(call) => {
                    self.places.insert(call.id.clone(), (position, calls.len()));
                    calls.push(TranscriptCall {
                        id: call.id.clone(),
                        tool: call.name.clone(),
                        arguments: self.clip(&call.arguments.to_text()),
                        retry_of: None,
                        answers: None,
                        finished: false,
                        is_error: false,
                        content: Vec::new(),
                        details: None,
                        details_omitted_bytes: 0,
                        streamed: streamed(calls.len()),
                        updates: None,
                    });
                }
            }
        }
        self.transcript.turns.push(TranscriptTurn {
            turn: turn as u64,
            stop_reason: stop_reason(message.stop_reason).to_owned(),
            text,
            calls,
        });
    }

    /// A call's result as it went into the conversation, then the first
    /// and the last of its updates, into the latest turn.
    fn result(&mut self, record: &CallRecord) {
        let result = &record.result;
        let content: Vec<Block> = result
            .content
            .iter()
            .map(|block| self.block(block))
            .collect();
        let (details, details_omitted_bytes) = match &result.details {
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
        // Each update within its own bound first, then the budget's.
        let bound = self.bounds.update;
        let streamed = &record.updates;
        let updates = streamed.first.as_ref().map(|first| Updates {
            first: self.reclip(&clip(&first.text(), bound)),
            last: streamed
                .last
                .as_ref()
                .map(|last| self.reclip(&clip(&last.text(), bound))),
        });
        let Some(turn) = self.transcript.turns.last_mut() else {
            return;
        };
        if let Some(call) = turn.calls.get_mut(record.index) {
            call.finished = true;
            call.is_error = result.is_error;
            call.content = content;
            call.details = details;
            call.details_omitted_bytes = details_omitted_bytes;
            call.updates = updates;
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
    /// the faux provider's report). The provider sends a step's retries one
    /// at a time, each after the attempt before it failed, so retry K
    /// answers the attempt served last in its chain.
    fn finish(mut self, report: &FauxReport) -> KeptTranscript {
        // The attempt served last in each chain: (step, origin) -> id.
        let mut latest: BTreeMap<(usize, &str), &str> = BTreeMap::new();
        for served in report.turns.iter().flat_map(|t| t.calls.iter()) {
            let chain = (served.step, served.origin.as_str());
            let answered = latest.insert(chain, served.id.as_str());
            if served.retry.is_some()
                && let Some(call) = self.call(&served.id)
            {
                call.retry_of = Some(served.origin.clone());
                call.answers = Some(answered.unwrap_or(&served.origin).to_owned());
            }
        }
        self.transcript
    }
}

impl KeptTranscript {
    /// What the report keeps of a run the loop recorded (finished, or
    /// stopped part way by a timeout), within `bounds`, spent in the
    /// conversation's order: each turn's texts and arguments, then each
    /// answered call's result, details and updates. A call sent but not
    /// answered is kept unfinished. Retries are linked from the faux
    /// provider's `report`.
    pub(crate) fn of(run: &agent::Transcript, bounds: Bounds) -> Self {
        let report = &run.model;
        let mut keeper = Keeper {
            bounds,
            ..Keeper::default()
        };
        // Whether each call, answered or still running, streamed.
        let running = run.running.iter().map(|r| (r.turn, r.index, &r.updates));
        let streamed: BTreeMap<(usize, usize), bool> = run
            .calls
            .iter()
            .map(|r| (r.turn, r.index, &r.updates))
            .chain(running)
            .map(|(turn, index, updates)| ((turn, index), updates.count > 0))
            .collect();
        let mut answered = run.calls.iter().peekable();
        for (position, message) in run.assistant_messages().enumerate() {
            // The loop sends one message a turn, from turn 1.
            let turn = position + 1;
            keeper.message(turn, message, |index| {
                streamed.get(&(turn, index)).copied().unwrap_or(false)
            });
            while let Some(record) = answered.next_if(|r| r.turn == turn) {
                keeper.result(record);
            }
        }
        keeper.transcript.error.clone_from(&run.error);
        keeper.finish(report)
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

/// `text` cut to at most `limit` bytes: three quarters from its beginning,
/// a quarter from its end, on character boundaries.
pub(crate) fn clip(text: &str, limit: usize) -> Clip {
    if text.len() <= limit {
        return Clip {
            text: text.to_owned(),
            ..Clip::default()
        };
    }
    let head = text.floor_char_boundary(limit / 4 * 3);
    let tail = text.ceil_char_boundary(text.len() - (limit - limit / 4 * 3));
    let tail = tail.max(head);
    Clip {
        text: text[..head].to_owned(),
        omitted_bytes: (tail - head) as u64,
        tail: text[tail..].to_owned(),
    }
}

/// A kept text cut again to at most `limit` bytes of kept text: the
/// beginning keeps up to three quarters, the end the rest (either takes
/// what the other does not need), and the bytes left out add up.
pub(crate) fn reclip(kept: &Clip, limit: usize) -> Clip {
    if kept.text.len() + kept.tail.len() <= limit {
        return kept.clone();
    }
    if kept.omitted_bytes == 0 && kept.tail.is_empty() {
        return clip(&kept.text, limit);
    }
    let tail_room = (limit - (limit / 4 * 3).min(kept.text.len())).min(kept.tail.len());
    let head = kept.text.floor_char_boundary(limit - tail_room);
    let tail = kept.tail.ceil_char_boundary(kept.tail.len() - tail_room);
    Clip {
        text: kept.text[..head].to_owned(),
        omitted_bytes: kept.omitted_bytes + (kept.text.len() - head + tail) as u64,
        tail: kept.tail[tail..].to_owned(),
    }
}

/// What a kept text costs of a budget: the bytes of its two parts.
fn cost(clip: &Clip) -> usize {
    clip.text.len() + clip.tail.len()
}

/// A budget of kept bytes being spent, for [`KeptTranscript::within`].
struct Spend {
    left: usize,
    cut: bool,
}

impl Spend {
    fn clip(&mut self, kept: &Clip) -> Clip {
        let clip = reclip(kept, self.left);
        self.cut |= clip != *kept;
        self.left -= cost(&clip);
        clip
    }

    /// Whether `bytes` fit (then they are spent).
    fn take(&mut self, bytes: usize) -> bool {
        if bytes > self.left {
            self.cut = true;
            return false;
        }
        self.left -= bytes;
        true
    }
}

impl KeptTranscript {
    /// The bytes it keeps: every text's kept parts, every image's data and
    /// every `details` as compact JSON.
    pub(crate) fn kept_bytes(&self) -> usize {
        let mut bytes = 0;
        for turn in &self.turns {
            bytes += turn.text.iter().map(cost).sum::<usize>();
            for call in &turn.calls {
                bytes += cost(&call.arguments);
                for block in &call.content {
                    bytes += match block {
                        Block::Text { clip } => cost(clip),
                        Block::Image { data, .. } => data.as_ref().map_or(0, String::len),
                    };
                }
                bytes += call.details.as_ref().map_or(0, |d| d.to_string().len());
                if let Some(updates) = &call.updates {
                    bytes += cost(&updates.first) + updates.last.as_ref().map_or(0, cost);
                }
            }
        }
        bytes
    }

    /// The transcript within `bytes` of kept text, images and details
    /// ([`KeptTranscript::kept_bytes`]), spent in order: each turn's texts and
    /// arguments, then each call's result, details and updates. What does
    /// not fit is cut as [`KeptTranscript::of`] cuts (texts keep their ends, images
    /// and details only their sizes) and the transcript is marked `cut`.
    /// The HTML report uses it to keep a large suite's page within its
    /// bound; `within(t.kept_bytes())` is `t` itself.
    pub(crate) fn within(&self, bytes: usize) -> KeptTranscript {
        let mut spend = Spend {
            left: bytes,
            cut: false,
        };
        let mut turns = Vec::with_capacity(self.turns.len());
        for turn in &self.turns {
            let text = turn.text.iter().map(|c| spend.clip(c)).collect();
            let arguments: Vec<Clip> = turn
                .calls
                .iter()
                .map(|c| spend.clip(&c.arguments))
                .collect();
            let mut calls = Vec::with_capacity(turn.calls.len());
            for (call, arguments) in turn.calls.iter().zip(arguments) {
                let content = call
                    .content
                    .iter()
                    .map(|block| match block {
                        Block::Text { clip } => Block::Text {
                            clip: spend.clip(clip),
                        },
                        Block::Image {
                            mime_type,
                            data,
                            bytes,
                        } => Block::Image {
                            mime_type: mime_type.clone(),
                            data: data.clone().filter(|d| spend.take(d.len())),
                            bytes: *bytes,
                        },
                    })
                    .collect();
                let (details, details_omitted_bytes) = match &call.details {
                    Some(value) => {
                        let size = value.to_string().len();
                        if spend.take(size) {
                            (Some(value.clone()), call.details_omitted_bytes)
                        } else {
                            (None, size as u64)
                        }
                    }
                    None => (None, call.details_omitted_bytes),
                };
                let updates = call.updates.as_ref().map(|u| Updates {
                    first: spend.clip(&u.first),
                    last: u.last.as_ref().map(|l| spend.clip(l)),
                });
                calls.push(TranscriptCall {
                    arguments,
                    content,
                    details,
                    details_omitted_bytes,
                    updates,
                    ..call.clone_head()
                });
            }
            turns.push(TranscriptTurn {
                turn: turn.turn,
                stop_reason: turn.stop_reason.clone(),
                text,
                calls,
            });
        }
        KeptTranscript {
            turns,
            error: self.error.clone(),
            cut: self.cut || spend.cut,
        }
    }
}

impl TranscriptCall {
    /// The call without its arguments, result, details and updates.
    fn clone_head(&self) -> TranscriptCall {
        TranscriptCall {
            id: self.id.clone(),
            tool: self.tool.clone(),
            arguments: Clip::default(),
            retry_of: self.retry_of.clone(),
            answers: self.answers.clone(),
            finished: self.finished,
            is_error: self.is_error,
            content: Vec::new(),
            details: None,
            details_omitted_bytes: 0,
            streamed: self.streamed,
            updates: None,
        }
    }
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
