//! The agent loop (§loop.1–§loop.7, D15, D16).
//!
//! Each turn: send the conversation to the provider, append its message,
//! and run the message's tool calls as one batch. A batch runs in parallel
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
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::tools::ExecutionMode;
use crate::tools::PreparedCall;
use crate::tools::Registry;
use crate::tools::ToolCall;
use crate::tools::ToolError;
use crate::tools::ToolResult;
use crate::tools::ToolSpec;
use crate::tools::ToolUpdate;
use crate::tools::UpdateSink;

use super::events::AgentEvent;
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
}

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
/// (those between depend on timing). Updates that arrive after the call
/// ended are dropped, so are not counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Streamed {
    /// How many arrived.
    pub count: usize,
    /// The first one.
    pub first: Option<ToolUpdate>,
    /// The last one, when more than one arrived.
    pub last: Option<ToolUpdate>,
}

impl Streamed {
    fn push(&mut self, update: ToolUpdate) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(update);
        } else {
            self.last = Some(update);
        }
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
            run_batch(registry, &calls, options, &aborted, running, on_event).await
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
        }
        on_event(AgentEvent::TurnEnd { turn });
    }
    on_event(AgentEvent::AgentEnd {
        error: transcript.error.clone(),
    });
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

/// Runs one message's calls and returns their results in source order,
/// recording what each streams in `running` (the same calls). Events and
/// results show the calls as the model sent them and the results
/// presented; the tools get the calls with real paths.
async fn run_batch(
    registry: &Registry,
    calls: &[ToolCall],
    options: &LoopOptions,
    aborted: &Arc<AtomicBool>,
    running: &mut [RunningCall],
    on_event: &mut (dyn FnMut(AgentEvent) + Send),
) -> Vec<Outcome> {
    let cancel = &options.cancel;
    let sequential = calls
        .iter()
        .any(|c| registry.execution_mode(&c.name) == ExecutionMode::Sequential);
    let mut batch = Batch::new(options, aborted, running);
    if sequential {
        for (index, call) in calls.iter().enumerate() {
            if let Some(prepared) = batch.prepare(registry, index, call, cancel, on_event) {
                batch.spawn(index, &call.id, prepared, cancel);
                batch.drain(calls, on_event).await;
            }
        }
    } else {
        // Every call is prepared (and queued) in source order before any runs.
        let prepared: Vec<(usize, PreparedCall)> = calls
            .iter()
            .enumerate()
            .filter_map(|(index, call)| {
                batch
                    .prepare(registry, index, call, cancel, on_event)
                    .map(|p| (index, p))
            })
            .collect();
        for (index, p) in prepared {
            batch.spawn(index, &calls[index].id, p, cancel);
        }
        batch.drain(calls, on_event).await;
    }
    batch.into_outcomes(calls)
}

/// Bookkeeping of one batch: running tasks, streamed updates, results.
struct Batch<'p> {
    presenter: &'p Presenter,
    /// The run's cancellation.
    cancel: CancellationToken,
    /// Scripted cancellations by call id, and the flag they set.
    cancel_after: &'p BTreeMap<String, Duration>,
    aborted: Arc<AtomicBool>,
    /// The timers of scripted cancellations, by call index; all are
    /// aborted when the batch is dropped.
    timers: tokio::task::JoinSet<()>,
    timer_of: Vec<Option<tokio::task::AbortHandle>>,
    tasks: tokio::task::JoinSet<(usize, ToolResult, Duration)>,
    updates_tx: mpsc::UnboundedSender<(usize, ToolUpdate)>,
    updates_rx: mpsc::UnboundedReceiver<(usize, ToolUpdate)>,
    finished: HashSet<usize>,
    results: Vec<Option<Outcome>>,
    /// The batch's calls in the transcript, where their updates go.
    running: &'p mut [RunningCall],
    completions: usize,
}

impl<'p> Batch<'p> {
    fn new(
        options: &'p LoopOptions,
        aborted: &Arc<AtomicBool>,
        running: &'p mut [RunningCall],
    ) -> Self {
        let (updates_tx, updates_rx) = mpsc::unbounded_channel();
        let len = running.len();
        Self {
            presenter: &options.presenter,
            cancel: options.cancel.clone(),
            cancel_after: &options.cancel_after,
            aborted: Arc::clone(aborted),
            timers: tokio::task::JoinSet::new(),
            timer_of: (0..len).map(|_| None).collect(),
            tasks: tokio::task::JoinSet::new(),
            updates_tx,
            updates_rx,
            finished: HashSet::new(),
            results: (0..len).map(|_| None).collect(),
            running,
            completions: 0,
        }
    }

    /// Starts a call: its start event, then preparation. A call that fails
    /// preparation, or that the run's cancellation reached first, gets its
    /// result at once.
    fn prepare(
        &mut self,
        registry: &Registry,
        index: usize,
        call: &ToolCall,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Option<PreparedCall> {
        on_event(AgentEvent::ToolExecutionStart {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.arguments.clone(),
        });
        if cancel.is_cancelled() {
            self.finish_now(
                index,
                call,
                ToolResult::from(ToolError::cancelled()),
                on_event,
            );
            return None;
        }
        match registry.prepare(&self.presenter.for_execution(call)) {
            Ok(prepared) => Some(prepared),
            Err(result) => {
                self.finish_now(index, call, *result, on_event);
                None
            }
        }
    }

    fn finish_now(
        &mut self,
        index: usize,
        call: &ToolCall,
        result: ToolResult,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) {
        self.record(index, call, result, Duration::ZERO, on_event);
    }

    fn record(
        &mut self,
        index: usize,
        call: &ToolCall,
        result: ToolResult,
        duration: Duration,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) {
        if let Some(timer) = self.timer_of[index].take() {
            timer.abort();
        }
        let cancelled = result.is_error && self.cancel.is_cancelled();
        let result = self.presenter.result_for(call, result);
        on_event(AgentEvent::ToolExecutionEnd {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            result: result.clone(),
            duration,
        });
        self.finished.insert(index);
        self.results[index] = Some(Outcome {
            result,
            duration,
            completion: self.completions,
            cancelled,
        });
        self.completions += 1;
    }

    fn spawn(
        &mut self,
        index: usize,
        id: &str,
        prepared: PreparedCall,
        cancel: &CancellationToken,
    ) {
        if let Some(&after) = self.cancel_after.get(id) {
            let cancel = cancel.clone();
            let aborted = Arc::clone(&self.aborted);
            self.timer_of[index] = Some(self.timers.spawn(async move {
                tokio::time::sleep(after).await;
                aborted.store(true, Ordering::SeqCst);
                cancel.cancel();
            }));
        }
        let tx = self.updates_tx.clone();
        let sink = UpdateSink::new(move |update| {
            // The receiver lives as long as the batch; a send can only fail
            // after the batch is over, when updates are dropped anyway.
            let _ = tx.send((index, update));
        });
        let cancel = cancel.clone();
        self.tasks.spawn(async move {
            let started = Instant::now();
            let result = prepared.execute(cancel, sink).await;
            (index, result, started.elapsed())
        });
    }

    fn forward_update(
        &mut self,
        index: usize,
        update: ToolUpdate,
        calls: &[ToolCall],
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) {
        // Updates after a call settled are dropped (§loop.3).
        if self.finished.contains(&index) {
            return;
        }
        let update = self.presenter.update(update);
        self.running[index].updates.push(update.clone());
        let call = &calls[index];
        on_event(AgentEvent::ToolExecutionUpdate {
            call_id: call.id.clone(),
            tool_name: call.name.clone(),
            update,
        });
    }

    /// Waits for every running call, forwarding updates as they come.
    async fn drain(&mut self, calls: &[ToolCall], on_event: &mut (dyn FnMut(AgentEvent) + Send)) {
        loop {
            tokio::select! {
                biased;
                Some((index, update)) = self.updates_rx.recv() => {
                    self.forward_update(index, update, calls, on_event);
                }
                joined = self.tasks.join_next() => {
                    let Some(joined) = joined else { break };
                    // Updates sent before the call returned come first.
                    while let Ok((index, update)) = self.updates_rx.try_recv() {
                        self.forward_update(index, update, calls, on_event);
                    }
                    match joined {
                        Ok((index, result, duration)) => {
                            self.record(index, &calls[index], result, duration, on_event);
                        }
                        Err(err) => {
                            // The task itself died (PreparedCall::execute
                            // catches tool panics, so this is the loop's own
                            // failure); the calls without a result get one
                            // below.
                            let _ = err;
                        }
                    }
                }
            }
        }
    }

    fn into_outcomes(self, calls: &[ToolCall]) -> Vec<Outcome> {
        self.results
            .into_iter()
            .zip(calls)
            .zip(self.running.iter_mut())
            .map(|((outcome, call), running)| {
                outcome.unwrap_or_else(|| {
                    // A call without a result keeps no updates either.
                    running.updates = Streamed::default();
                    let mut result = ToolResult::error(
                        format!(
                            "Tool call \"{}\" got no result because the loop's task for it \
                             failed. Try the call again.",
                            call.name
                        ),
                        None,
                    );
                    result.internal_error = Some("a tool task ended without a result".to_owned());
                    Outcome {
                        result,
                        duration: Duration::ZERO,
                        completion: usize::MAX,
                        cancelled: false,
                    }
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "agent_loop_tests.rs"]
mod tests;
