//! The batch executor: the calls of one model message, run by the batch
//! rules (§loop.4, D15, D16).
//!
//! - Every call is prepared in the order sent, so the mutation queue keeps
//!   that order for writes to one file.
//! - The calls run in parallel, unless one of them is to a
//!   [`ExecutionMode::Sequential`] tool: then one at a time, in the order
//!   sent, each prepared just before it runs.
//! - Every call gets exactly one result, returned in call order whatever
//!   the order they finished in; a call the batch did not start because
//!   `cancel` fired gets the cancellation result, and one whose task died
//!   an internal error.

use std::collections::HashMap;
use std::collections::HashSet;
use std::time::Duration;
use std::time::Instant;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::contract::ExecutionMode;
use super::contract::ToolResult;
use super::contract::ToolUpdate;
use super::contract::UpdateSink;
use super::error::ToolError;
use super::registry::PreparedCall;
use super::registry::Registry;
use super::registry::ToolCall;
use super::task::no_runtime;

/// What happens to the calls of a batch, as it happens
/// ([`Registry::run_batch`]). `index` is the call's position in the batch.
#[derive(Debug)]
#[non_exhaustive]
pub enum BatchEvent<'a> {
    /// The call is about to be prepared; every call gets this first, in
    /// call order for a parallel batch.
    Preparing {
        /// The call's position.
        index: usize,
    },
    /// The call passed preparation and its tool starts running.
    Running {
        /// The call's position.
        index: usize,
    },
    /// A partial result the call's tool streamed; none comes after the
    /// call's [`Finished`](Self::Finished).
    Update {
        /// The call's position.
        index: usize,
        /// What the tool streamed.
        update: ToolUpdate,
    },
    /// The call has its one result, in the order calls finish. The handler
    /// may rewrite the result (what the batch returns is the rewritten
    /// one).
    Finished {
        /// The call's position.
        index: usize,
        /// Its result.
        result: &'a mut ToolResult,
        /// How long it ran (zero for a call that never started).
        duration: Duration,
    },
}

/// One call's outcome in a batch.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BatchResult {
    /// Its one result (carrying the call's id).
    pub result: ToolResult,
    /// How long it ran (zero for a call that never started).
    pub duration: Duration,
    /// Its place among the batch's completions (0 finished first).
    pub completion: usize,
}

impl Registry {
    /// Runs one message's tool calls by the batch rules and returns one
    /// result per call, in call order; `on_event` sees each call prepared,
    /// started, streaming and finished as it happens.
    ///
    /// This is what an agent loop does with a model's tool calls (the
    /// harness's own loop uses it): prepare every call in the order sent,
    /// then run them together, unless one is to a
    /// [`Sequential`](ExecutionMode::Sequential) tool, when they run one at a
    /// time in the order sent. `cancel` cancels the running calls, and a
    /// call not yet started gets the cancellation result. Dropping the
    /// future stops every call of the batch.
    ///
    /// Outside a Tokio runtime it does not panic: every call is answered
    /// with an internal error (see [the runtime contract](super#the-runtime)).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use harness::tools::{BatchEvent, CancellationToken, LocalProcess, MemoryFs, Registry};
    /// use harness::tools::{ToolCall, Workspace};
    /// use serde_json::json;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let fs = MemoryFs::new();
    /// fs.add_dir("/ws");
    /// let process = Arc::new(LocalProcess::default());
    /// let registry = Registry::builder(Workspace::new(Arc::new(fs), process, "/ws", true)?).build()?;
    /// let calls = [
    ///     ToolCall::new("a", "write", json!({"path": "x.txt", "content": "hi\n"})),
    ///     ToolCall::new("b", "read", json!({"path": "x.txt"})),
    ///     ToolCall::new("c", "nope", json!({})),
    /// ];
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let mut finished = Vec::new();
    /// let results = runtime.block_on(registry.run_batch(&calls, &CancellationToken::new(), |event| {
    ///     if let BatchEvent::Finished { index, .. } = event {
    ///         finished.push(index);
    ///     }
    /// }));
    /// // One result per call, in call order, each with its call's id.
    /// let ids: Vec<_> = results.iter().map(|r| r.result.call_id.as_deref()).collect();
    /// assert_eq!(ids, [Some("a"), Some("b"), Some("c")]);
    /// assert!(results[2].result.is_error); // no tool "nope"
    /// assert_eq!(finished.len(), 3);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_batch(
        &self,
        calls: &[ToolCall],
        cancel: &CancellationToken,
        mut on_event: impl FnMut(BatchEvent<'_>),
    ) -> Vec<BatchResult> {
        let mut batch = Batch::new(calls.len(), cancel);
        let sequential = calls
            .iter()
            .any(|c| self.execution_mode(&c.name) == ExecutionMode::Sequential);
        if sequential {
            for (index, call) in calls.iter().enumerate() {
                if let Some(prepared) = batch.prepare(self, index, call, &mut on_event) {
                    batch.spawn(index, prepared, &mut on_event);
                    batch.drain(calls, &mut on_event).await;
                }
            }
        } else {
            let prepared: Vec<(usize, PreparedCall)> = calls
                .iter()
                .enumerate()
                .filter_map(|(index, call)| {
                    batch
                        .prepare(self, index, call, &mut on_event)
                        .map(|p| (index, p))
                })
                .collect();
            for (index, prepared) in prepared {
                batch.spawn(index, prepared, &mut on_event);
            }
            batch.drain(calls, &mut on_event).await;
        }
        batch.into_results(calls)
    }
}

/// Bookkeeping of one batch: running tasks, streamed updates, results.
struct Batch {
    cancel: CancellationToken,
    runtime: Option<tokio::runtime::Handle>,
    tasks: tokio::task::JoinSet<(usize, ToolResult, Duration)>,
    /// The call of each task, for a task that dies without its result.
    task_of: HashMap<tokio::task::Id, usize>,
    updates_tx: mpsc::UnboundedSender<(usize, ToolUpdate)>,
    updates_rx: mpsc::UnboundedReceiver<(usize, ToolUpdate)>,
    finished: HashSet<usize>,
    results: Vec<Option<BatchResult>>,
    completions: usize,
}

impl Batch {
    fn new(len: usize, cancel: &CancellationToken) -> Self {
        let (updates_tx, updates_rx) = mpsc::unbounded_channel();
        Self {
            cancel: cancel.clone(),
            runtime: tokio::runtime::Handle::try_current().ok(),
            tasks: tokio::task::JoinSet::new(),
            task_of: HashMap::new(),
            updates_tx,
            updates_rx,
            finished: HashSet::new(),
            results: (0..len).map(|_| None).collect(),
            completions: 0,
        }
    }

    /// Prepares a call; one that fails preparation, or that the batch's
    /// cancellation reached first, gets its result at once.
    fn prepare(
        &mut self,
        registry: &Registry,
        index: usize,
        call: &ToolCall,
        on_event: &mut impl FnMut(BatchEvent<'_>),
    ) -> Option<PreparedCall> {
        on_event(BatchEvent::Preparing { index });
        let early = if self.runtime.is_none() {
            ToolResult::from(no_runtime("Registry::run_batch"))
        } else if self.cancel.is_cancelled() {
            ToolResult::from(ToolError::cancelled())
        } else {
            match registry.prepare(call) {
                Ok(prepared) => return Some(prepared),
                Err(err) => err.into_result(),
            }
        };
        self.record(
            index,
            early.with_call_id(&call.id),
            Duration::ZERO,
            on_event,
        );
        None
    }

    fn spawn(
        &mut self,
        index: usize,
        prepared: PreparedCall,
        on_event: &mut impl FnMut(BatchEvent<'_>),
    ) {
        let Some(runtime) = self.runtime.clone() else {
            return;
        };
        on_event(BatchEvent::Running { index });
        let tx = self.updates_tx.clone();
        let sink = UpdateSink::new(move |update| {
            // The receiver lives as long as the batch; a send can only fail
            // after the batch is over, when updates are dropped anyway.
            let _ = tx.send((index, update));
        });
        let cancel = self.cancel.clone();
        let handle = self.tasks.spawn_on(
            async move {
                let started = Instant::now();
                let result = prepared.execute(cancel, sink).await;
                (index, result, started.elapsed())
            },
            &runtime,
        );
        self.task_of.insert(handle.id(), index);
    }

    fn record(
        &mut self,
        index: usize,
        mut result: ToolResult,
        duration: Duration,
        on_event: &mut impl FnMut(BatchEvent<'_>),
    ) {
        on_event(BatchEvent::Finished {
            index,
            result: &mut result,
            duration,
        });
        self.finished.insert(index);
        self.results[index] = Some(BatchResult {
            result,
            duration,
            completion: self.completions,
        });
        self.completions += 1;
    }

    fn forward_update(
        &mut self,
        index: usize,
        update: ToolUpdate,
        on_event: &mut impl FnMut(BatchEvent<'_>),
    ) {
        // Updates after a call settled are dropped (§loop.3).
        if !self.finished.contains(&index) {
            on_event(BatchEvent::Update { index, update });
        }
    }

    /// Waits for every running call, forwarding updates as they come.
    async fn drain(&mut self, calls: &[ToolCall], on_event: &mut impl FnMut(BatchEvent<'_>)) {
        loop {
            tokio::select! {
                biased;
                Some((index, update)) = self.updates_rx.recv() => {
                    self.forward_update(index, update, on_event);
                }
                joined = self.tasks.join_next_with_id() => {
                    let Some(joined) = joined else { break };
                    // Updates sent before the call returned come first.
                    while let Ok((index, update)) = self.updates_rx.try_recv() {
                        self.forward_update(index, update, on_event);
                    }
                    match joined {
                        Ok((_, (index, result, duration))) => {
                            self.record(index, result, duration, on_event);
                        }
                        Err(err) => {
                            // PreparedCall::execute turns a tool's panic into
                            // a result, so only the batch's own task can die.
                            if let Some(&index) = self.task_of.get(&err.id()) {
                                let call = &calls[index];
                                let mut result = ToolResult::error(
                                    format!(
                                        "Tool call \"{}\" got no result because the batch's \
                                         task for it failed. Try the call again.",
                                        call.name
                                    ),
                                    None,
                                );
                                result.internal_error =
                                    Some(format!("a tool task ended without a result: {err}"));
                                self.record(index, result.with_call_id(&call.id), Duration::ZERO, on_event);
                            }
                        }
                    }
                }
            }
        }
    }

    fn into_results(self, calls: &[ToolCall]) -> Vec<BatchResult> {
        self.results
            .into_iter()
            .zip(calls)
            .map(|(outcome, call)| {
                outcome.unwrap_or_else(|| {
                    // Unreachable by the rules above: every call is recorded
                    // when prepared, finished or dead. Kept so that a call
                    // still gets its one result if that ever breaks.
                    let mut result = ToolResult::error(
                        format!(
                            "Tool call \"{}\" got no result. Try the call again.",
                            call.name
                        ),
                        None,
                    );
                    result.internal_error = Some("a batch call was left without a result".into());
                    BatchResult {
                        result: result.with_call_id(&call.id),
                        duration: Duration::ZERO,
                        completion: usize::MAX,
                    }
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
