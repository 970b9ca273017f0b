//! The agent loop (§loop.1–§loop.7, D15, D16).
//!
//! Each turn: send the conversation to the provider, append its message,
//! and run the message's tool calls as one batch through the tool layer's
//! batch executor ([`Registry::run_batch`]). A batch runs in parallel
//! unless it contains a sequential tool (then one call at a time, in source
//! order). In a parallel batch every call is prepared (looked up,
//! normalised, validated, queued) in source order before any runs; the calls
//! then run together and their `ToolExecutionEnd` events come in completion
//! order, while their result messages are appended in source order.
//!
//! Every call gets exactly one result (D16): a call the loop did not start
//! because the run was cancelled gets an error result saying so. A message
//! cut by the output limit (`StopReason::Length`) executes none of its calls;
//! each gets an error result asking for the call again (§loop.1).
//!
//! The loop's [`Presenter`] stands between the tools and the conversation:
//! a call executes with its arguments' stable names mapped to real paths,
//! and its result and updates are presented before anything records them,
//! so the transcript, the events and every price hold only what the model
//! sees (docs/scenarios.md, "What the model sees").

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::tools::BatchEvent;
use crate::tools::Registry;
use crate::tools::ToolCall;
use crate::tools::ToolResult;
use crate::tools::ToolSpec;
use crate::tools::ToolUpdate;

use super::events::AgentEvent;
use super::faux::FauxReport;
use super::message::AssistantMessage;
use super::message::Message;
use super::message::StopReason;
use super::message::ToolResultMessage;
use super::present::Presenter;
use super::pricing::priced_call;
use super::pricing::priced_text;
use super::provider::Provider;
use super::provider::Request;
use super::tokens::Chars4;
use super::tokens::TokenCounter;

/// How a run is set up.
#[derive(Clone, Debug)]
pub struct LoopOptions {
    /// The system prompt (the tool section is appended by the loop).
    pub system_prompt: String,
    /// The user's first message.
    pub prompt: String,
    /// Stop after this many turns (a runaway model is an error; default
    /// 200). The runner gives a scenario's `max_turns`, or no limit.
    pub max_turns: usize,
    /// Cancels the run: running calls are cancelled, unstarted calls get
    /// cancelled results, and no further turn starts.
    pub cancel: CancellationToken,
    /// Calls, by id, that the loop cancels this long after they start, as
    /// a user's Esc would: `cancel` itself is cancelled, so every running
    /// call of the batch is cancelled, and the run ends after the batch
    /// ([`Transcript::aborted`]). A call that finishes first is not
    /// cancelled.
    pub cancel_after: BTreeMap<String, Duration>,
    /// The names under which the model sees the machine's directories:
    /// results and updates are presented with it, and calls execute with
    /// its real paths. The default changes nothing.
    pub presenter: Presenter,
    /// Prices each call and its result once, as the model reads them
    /// ([`CallRecord::args_tokens`], [`CallRecord::result_tokens`]); the
    /// default is [`Chars4`].
    pub tokens: Arc<dyn TokenCounter>,
    /// The calls, by id, whose streamed updates are kept whole
    /// ([`Streamed::kept`]), at most [`MAX_KEPT_UPDATE_BYTES`] in a run;
    /// of the others only the first and the last are kept.
    pub keep_update_texts: std::collections::BTreeSet<String>,
}

/// The most bytes of update text a run keeps for
/// [`LoopOptions::keep_update_texts`]; later updates are counted
/// ([`Streamed::unkept`]) but not kept.
pub const MAX_KEPT_UPDATE_BYTES: usize = 16 * 1024 * 1024;

impl Default for LoopOptions {
    fn default() -> Self {
        Self {
            system_prompt: DEFAULT_SYSTEM_PROMPT.to_owned(),
            prompt: "Begin.".to_owned(),
            max_turns: 200,
            cancel: CancellationToken::new(),
            cancel_after: BTreeMap::new(),
            presenter: Presenter::default(),
            tokens: Arc::new(Chars4),
            keep_update_texts: std::collections::BTreeSet::new(),
        }
    }
}

/// The built-in system prompt that precedes the tool section.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You are an expert coding assistant. You help with \
coding tasks by reading files, running commands, editing code and writing new files, using the \
tools below. Work inside the workspace, be concise, and check your changes.";

/// One tool call and its one result.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    /// The turn (1-based) whose message carried the call.
    pub turn: usize,
    /// Position of the call in its message.
    pub index: usize,
    /// The call as the model sent it (before the presenter mapped its
    /// arguments to real paths for execution).
    pub call: ToolCall,
    /// Its result, as the model read it (presented).
    pub result: ToolResult,
    /// How long it ran.
    pub duration: Duration,
    /// The partial results it streamed while it ran (presented).
    pub updates: Streamed,
    /// Position among the batch's completions (0 = finished first).
    pub completion: usize,
    /// The run was cancelled before the call ended, and its result is an
    /// error: the cancellation reached it (or it never started).
    pub cancelled: bool,
    /// What the call cost the model, priced once with
    /// [`LoopOptions::tokens`]: its [`priced_call`] text.
    pub args_tokens: u64,
    /// What its result cost the model: the [`priced_text`] of the result
    /// as presented.
    pub result_tokens: u64,
}

/// What is kept of the partial results a call streamed while it ran:
/// how many arrived, the first, and the last when more than one did
/// (those between depend on timing); for the calls named in
/// [`LoopOptions::keep_update_texts`], every text too, within the run's
/// [`MAX_KEPT_UPDATE_BYTES`]. Updates that arrive after the call ended are
/// dropped, so are not counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Streamed {
    /// How many arrived.
    pub count: usize,
    /// The first one.
    pub first: Option<ToolUpdate>,
    /// The last one, when more than one arrived.
    pub last: Option<ToolUpdate>,
    /// Every update's text, in order, while the run's budget lasts (only
    /// for the calls whose texts are kept).
    pub kept: Vec<String>,
    /// How many of those calls' updates came after the budget was spent
    /// and were not kept.
    pub unkept: usize,
}

impl Streamed {
    /// Records `update`; its text is kept when `keep`, within `budget`
    /// (the bytes the run may still keep).
    fn push(&mut self, update: ToolUpdate, keep: bool, budget: &mut usize) {
        self.count += 1;
        if keep {
            let text = update.text();
            match budget.checked_sub(text.len()) {
                Some(left) => {
                    *budget = left;
                    self.kept.push(text);
                }
                None => self.unkept += 1,
            }
        }
        if self.first.is_none() {
            self.first = Some(update);
        } else {
            self.last = Some(update);
        }
    }

    /// The text of the last update that arrived (the first, when only one
    /// did).
    pub fn last_text(&self) -> Option<String> {
        self.last
            .as_ref()
            .or(self.first.as_ref())
            .map(ToolUpdate::text)
    }
}

/// A call of the batch that is running: sent, its result not yet in the
/// conversation. When a run is stopped from outside (a timeout drops the
/// loop's future), [`Transcript::running`] keeps these.
#[derive(Clone, Debug, PartialEq)]
pub struct RunningCall {
    /// The turn (1-based) whose message carried the call.
    pub turn: usize,
    /// Position of the call in its message.
    pub index: usize,
    /// The call as the model sent it.
    pub call: ToolCall,
    /// What it streamed so far.
    pub updates: Streamed,
}

/// What a run produced. [`run_loop`] fills one the caller owns, as the
/// run goes: a run stopped from outside (a timeout) leaves the messages
/// and answered calls so far, and the batch that was running.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The system prompt as sent.
    pub system: String,
    /// Every message, in conversation order.
    pub messages: Vec<Message>,
    /// Every tool call with its result, in the order they were sent.
    pub calls: Vec<CallRecord>,
    /// Why the run ended early, if it did (provider error, turn limit).
    pub error: Option<String>,
    /// The run ended because a call's scripted cancellation
    /// ([`LoopOptions::cancel_after`]) fired, as when a user presses Esc:
    /// not an error.
    pub aborted: bool,
    /// The calls of the batch running when the run was stopped from
    /// outside, in the order sent; empty when [`run_loop`] returned.
    pub running: Vec<RunningCall>,
    /// What the scripted model did: each request it answered with its
    /// usage, the calls it served, the variables bound. The loop leaves it
    /// empty; the caller takes it from its provider when the run is over
    /// ([`FauxProvider::into_report`](super::FauxProvider::into_report)),
    /// so that a finished transcript is all a judge reads.
    pub model: FauxReport,
}

impl Transcript {
    /// The assistant messages.
    pub fn assistant_messages(&self) -> impl Iterator<Item = &AssistantMessage> {
        self.messages.iter().filter_map(|m| match m {
            Message::Assistant(a) => Some(a),
            _ => None,
        })
    }
}

/// The system prompt the loop sends: `system` followed by the registry's
/// tool section.
pub fn system_prompt(system: &str, registry: &Registry) -> String {
    format!("{system}\n\n{}", registry.prompt_section())
}

/// Runs the loop until the model stops calling tools, the provider fails,
/// the turn limit is hit, or the run is cancelled, recording it in
/// `transcript` (whatever it held is replaced) as it goes: each message as
/// it is sent or arrives, each batch's calls while they run, and their
/// records once their results are in the conversation.
pub async fn run_loop(
    provider: &mut dyn Provider,
    registry: &Registry,
    options: &LoopOptions,
    transcript: &mut Transcript,
    on_event: &mut (dyn FnMut(AgentEvent) + Send),
) {
    let specs: Vec<ToolSpec> = registry.specs().cloned().collect();
    *transcript = Transcript {
        system: system_prompt(&options.system_prompt, registry),
        ..Transcript::default()
    };
    on_event(AgentEvent::AgentStart);
    transcript.messages.push(Message::User {
        text: options.prompt.clone(),
    });
    let mut turn = 0;
    let aborted = Arc::new(AtomicBool::new(false));
    let mut kept_budget = MAX_KEPT_UPDATE_BYTES;
    loop {
        if options.cancel.is_cancelled() {
            if aborted.load(Ordering::SeqCst) {
                transcript.aborted = true;
            } else {
                transcript.error = Some("the run was cancelled".to_owned());
            }
            break;
        }
        if turn >= options.max_turns {
            transcript.error = Some(format!(
                "the model kept calling tools after {} turns (max_turns); the loop stopped it",
                options.max_turns
            ));
            break;
        }
        turn += 1;
        on_event(AgentEvent::TurnStart { turn });
        let request = Request {
            system: &transcript.system,
            messages: &transcript.messages,
            tools: &specs,
        };
        let message = tokio::select! {
            biased;
            () = options.cancel.cancelled() => {
                transcript.error = Some("the run was cancelled".to_owned());
                on_event(AgentEvent::TurnEnd { turn });
                break;
            }
            response = provider.complete(request) => match response {
                Ok(message) => message,
                Err(err) => {
                    transcript.error = Some(err.0);
                    on_event(AgentEvent::TurnEnd { turn });
                    break;
                }
            },
        };
        on_event(AgentEvent::AssistantMessage {
            turn,
            message: message.clone(),
        });
        transcript
            .messages
            .push(Message::Assistant(message.clone()));
        if matches!(message.stop_reason, StopReason::Error | StopReason::Aborted) {
            transcript.error = message.error_message.clone();
            on_event(AgentEvent::TurnEnd { turn });
            break;
        }
        let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
        if calls.is_empty() {
            on_event(AgentEvent::TurnEnd { turn });
            break;
        }
        transcript.running = calls
            .iter()
            .enumerate()
            .map(|(index, call)| RunningCall {
                turn,
                index,
                call: call.clone(),
                updates: Streamed::default(),
            })
            .collect();
        let results = if message.stop_reason == StopReason::Length {
            not_executed(&calls, on_event)
        } else {
            let running = &mut transcript.running;
            let batch = Batch {
                aborted: &aborted,
                kept_budget: &mut kept_budget,
            };
            run_batch(registry, &calls, options, batch, running, on_event).await
        };
        let running = std::mem::take(&mut transcript.running);
        for (running, outcome) in running.into_iter().zip(results) {
            let message = ToolResultMessage::new(&running.call, &outcome.result);
            on_event(AgentEvent::ToolResultMessage {
                message: message.clone(),
            });
            transcript.messages.push(Message::ToolResult(message));
            transcript.calls.push(CallRecord {
                turn,
                index: running.index,
                args_tokens: options.tokens.count(&priced_call(&running.call)),
                result_tokens: options.tokens.count(&priced_text(&outcome.result.content)),
                call: running.call,
                result: outcome.result,
                duration: outcome.duration,
                updates: running.updates,
                completion: outcome.completion,
                cancelled: outcome.cancelled,
            });
            // Pricing is work without an await of its own: the runtime
            // gets a turn after each call's, so a time budget around the
            // loop ends a run whose pricing overruns it (issue 42).
            tokio::task::yield_now().await;
        }
        on_event(AgentEvent::TurnEnd { turn });
    }
    on_event(AgentEvent::AgentEnd {
        error: transcript.error.clone(),
    });
}

/// What a batch shares with the run around it.
struct Batch<'a> {
    /// Set when a scripted cancellation ends the run.
    aborted: &'a Arc<AtomicBool>,
    /// The bytes of update text the run may still keep.
    kept_budget: &'a mut usize,
}

/// The result of one call of a batch.
struct Outcome {
    result: ToolResult,
    duration: Duration,
    completion: usize,
    cancelled: bool,
}

/// Results for the calls of a message cut by the output limit.
fn not_executed(calls: &[ToolCall], on_event: &mut (dyn FnMut(AgentEvent) + Send)) -> Vec<Outcome> {
    calls
        .iter()
        .enumerate()
        .map(|(completion, call)| {
            on_event(AgentEvent::ToolExecutionStart {
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                args: call.arguments.clone(),
            });
            let result = ToolResult::error(
                format!(
                    "Tool call \"{}\" was not executed: the response hit the output token limit, \
                     so its arguments may be truncated. Re-issue the tool call with complete \
                     arguments.",
                    call.name
                ),
                None,
            );
            on_event(AgentEvent::ToolExecutionEnd {
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                result: result.clone(),
                duration: Duration::ZERO,
            });
            Outcome {
                result,
                duration: Duration::ZERO,
                completion,
                cancelled: false,
            }
        })
        .collect()
}

/// Runs one message's calls by the batch rules ([`Registry::run_batch`])
/// and returns their results in source order, recording what each streams
/// in `running` (the same calls). Events and results show the calls as the
/// model sent them and the results presented; the tools get the calls
/// with real paths. A scripted cancellation's timer starts when its call
/// starts running and stops when the call ends.
async fn run_batch(
    registry: &Registry,
    calls: &[ToolCall],
    options: &LoopOptions,
    batch: Batch<'_>,
    running: &mut [RunningCall],
    on_event: &mut (dyn FnMut(AgentEvent) + Send),
) -> Vec<Outcome> {
    let presenter = &options.presenter;
    let cancel = &options.cancel;
    let executed: Vec<ToolCall> = calls.iter().map(|c| presenter.for_execution(c)).collect();
    let mut timers = tokio::task::JoinSet::new();
    let mut timer_of: Vec<Option<tokio::task::AbortHandle>> = calls.iter().map(|_| None).collect();
    let mut cancelled = vec![false; calls.len()];
    let results = registry
        .run_batch(&executed, cancel, |event| match event {
            BatchEvent::Preparing { index } => {
                let call = &calls[index];
                on_event(AgentEvent::ToolExecutionStart {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    args: call.arguments.clone(),
                });
            }
            BatchEvent::Running { index } => {
                if let Some(&after) = options.cancel_after.get(&calls[index].id) {
                    let cancel = cancel.clone();
                    let aborted = Arc::clone(batch.aborted);
                    timer_of[index] = Some(timers.spawn(async move {
                        tokio::time::sleep(after).await;
                        aborted.store(true, Ordering::SeqCst);
                        cancel.cancel();
                    }));
                }
            }
            BatchEvent::Update { index, update } => {
                let update = presenter.update(update);
                let keep = options.keep_update_texts.contains(&calls[index].id);
                running[index]
                    .updates
                    .push(update.clone(), keep, batch.kept_budget);
                let call = &calls[index];
                on_event(AgentEvent::ToolExecutionUpdate {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    update,
                });
            }
            BatchEvent::Finished {
                index,
                result,
                duration,
            } => {
                if let Some(timer) = timer_of[index].take() {
                    timer.abort();
                }
                let call = &calls[index];
                cancelled[index] = result.is_error && cancel.is_cancelled();
                let raw = std::mem::replace(result, ToolResult::error(String::new(), None));
                *result = presenter.result_for(call, raw);
                on_event(AgentEvent::ToolExecutionEnd {
                    call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    result: result.clone(),
                    duration,
                });
            }
        })
        .await;
    results
        .into_iter()
        .zip(cancelled)
        .map(|(done, cancelled)| Outcome {
            result: done.result,
            duration: done.duration,
            completion: done.completion,
            cancelled,
        })
        .collect()
}

#[cfg(test)]
#[path = "agent_loop_tests.rs"]
mod tests;
