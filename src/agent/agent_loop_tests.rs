use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;

use pretty_assertions::assert_eq;
use serde::Deserialize;
use serde_json::Value;
use serde_json::json;
use tokio::sync::Semaphore;

use super::*;
use crate::agent::Chars4;
use crate::agent::FauxCall;
use crate::agent::FauxProvider;
use crate::agent::FauxScript;
use crate::agent::FauxStep;
use crate::tools::ExecutionMode;
use crate::tools::Limits;
use crate::tools::Tool;
use crate::tools::ToolContext;
use crate::tools::ToolError;
use crate::tools::ToolOutput;
use crate::tools::Workspace;
use crate::tools::ops::LocalProcess;
use crate::tools::ops::MemoryFs;

/// A test tool: waits for `wait` permits of a shared semaphore, then adds
/// `release` permits, logs, and returns its name.
struct Gate {
    name: &'static str,
    mode: ExecutionMode,
    semaphore: Arc<Semaphore>,
    log: Arc<Mutex<Vec<String>>>,
}

#[derive(Deserialize)]
struct GateArgs {
    #[serde(default)]
    wait: u32,
    #[serde(default)]
    release: u32,
    /// Streams an update before waiting, too.
    #[serde(default)]
    early: bool,
}

impl Tool for Gate {
    type Args = GateArgs;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            label: self.name.into(),
            description: "test tool".into(),
            prompt_snippet: "test".into(),
            prompt_guidelines: vec![],
            parameters: json!({"type": "object", "properties": {
                "wait": {"type": "integer"}, "release": {"type": "integer"},
                "early": {"type": "boolean"}}}),
            execution_mode: self.mode,
        }
    }

    async fn execute(&self, args: GateArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", ctx.call_id));
        if args.early {
            ctx.updates.emit(ToolUpdate {
                content: vec![crate::tools::Content::text("waiting")],
                details: None,
            });
        }
        if args.wait > 0 {
            tokio::select! {
                permit = self.semaphore.acquire_many(args.wait) => permit.unwrap().forget(),
                () = ctx.cancel.cancelled() => return Err(ToolError::cancelled()),
            }
        }
        ctx.updates.emit(ToolUpdate {
            content: vec![crate::tools::Content::text("partial")],
            details: None,
        });
        self.semaphore.add_permits(args.release as usize);
        self.log
            .lock()
            .unwrap()
            .push(format!("end {}", ctx.call_id));
        Ok(ToolOutput::text(format!("{} done", ctx.call_id)))
    }
}

struct Fixture {
    registry: Registry,
    log: Arc<Mutex<Vec<String>>>,
}

fn fixture() -> Fixture {
    let fs = MemoryFs::new();
    fs.add_file("/ws/a.txt", "alpha\n");
    let workspace =
        Workspace::new(Arc::new(fs), Arc::new(LocalProcess::default()), "/ws", true).unwrap();
    let semaphore = Arc::new(Semaphore::new(0));
    let log = Arc::new(Mutex::new(Vec::new()));
    let gate = |name, mode| {
        Arc::new(Gate {
            name,
            mode,
            semaphore: Arc::clone(&semaphore),
            log: Arc::clone(&log),
        })
    };
    let registry = Registry::builder(workspace)
        .tool(gate("gate", ExecutionMode::Parallel))
        .tool(gate("serial", ExecutionMode::Sequential))
        .build()
        .unwrap();
    Fixture { registry, log }
}

fn call(id: &str, name: &str, args: Value) -> FauxCall {
    FauxCall::json(id, name, args)
}

fn provider(steps: Vec<FauxStep>) -> FauxProvider {
    FauxProvider::new(FauxScript { steps }, Arc::new(Chars4), BTreeMap::new())
}

/// Events as short strings, for whole-sequence comparisons.
fn short(event: &AgentEvent) -> String {
    match event {
        AgentEvent::AgentStart => "agent_start".into(),
        AgentEvent::TurnStart { turn } => format!("turn_start {turn}"),
        AgentEvent::AssistantMessage { message, .. } => {
            format!("assistant {}", message.tool_calls().count())
        }
        AgentEvent::ToolExecutionStart { call_id, .. } => format!("start {call_id}"),
        AgentEvent::ToolExecutionUpdate { call_id, .. } => format!("update {call_id}"),
        AgentEvent::ToolExecutionEnd {
            call_id, result, ..
        } => {
            format!(
                "end {call_id}{}",
                if result.is_error { " error" } else { "" }
            )
        }
        AgentEvent::ToolResultMessage { message } => format!("result {}", message.tool_call_id),
        AgentEvent::TurnEnd { turn } => format!("turn_end {turn}"),
        AgentEvent::AgentEnd { error } => format!("agent_end {error:?}"),
    }
}

async fn run(
    f: &Fixture,
    p: &mut FauxProvider,
    options: &LoopOptions,
) -> (Transcript, Vec<String>) {
    let mut events = Vec::new();
    let mut transcript = Transcript::default();
    run_loop(p, &f.registry, options, &mut transcript, &mut |e| {
        events.push(short(&e));
    })
    .await;
    (transcript, events)
}

#[tokio::test]
async fn one_call_has_the_pinned_event_order() {
    let f = fixture();
    let mut p = provider(vec![FauxStep::Calls(vec![call(
        "c1",
        "read",
        json!({"path": "a.txt"}),
    )])]);
    let (t, events) = run(&f, &mut p, &LoopOptions::default()).await;
    assert_eq!(
        events,
        vec![
            "agent_start",
            "turn_start 1",
            "assistant 1",
            "start c1",
            "end c1",
            "result c1",
            "turn_end 1",
            "turn_start 2",
            "assistant 0",
            "turn_end 2",
            "agent_end None",
        ]
    );
    assert_eq!(t.calls.len(), 1);
    assert_eq!(t.calls[0].result.text(), "alpha\n");
    assert_eq!(t.error, None);
}

#[tokio::test]
async fn each_call_and_result_is_priced_once_with_the_loops_counter() {
    let f = fixture();
    let mut p = provider(vec![FauxStep::Calls(vec![
        call("c1", "read", json!({"path": "a.txt"})),
        call("c2", "read", json!({"path": "missing.txt"})),
    ])]);
    // A counter of bytes, so the prices say which texts were priced.
    #[derive(Debug)]
    struct Bytes;
    impl TokenCounter for Bytes {
        fn name(&self) -> &str {
            "bytes"
        }
        fn count(&self, text: &str) -> u64 {
            text.len() as u64
        }
    }
    let options = LoopOptions {
        tokens: Arc::new(Bytes),
        ..LoopOptions::default()
    };
    let (t, _) = run(&f, &mut p, &options).await;
    let priced: Vec<(u64, u64, u64)> = t
        .calls
        .iter()
        .map(|r| {
            let result = r.result.text().len() as u64;
            (r.args_tokens, r.result_tokens, result)
        })
        .collect();
    // `read:{"path":"a.txt"}` is 21 bytes; each result is priced as its text.
    assert_eq!(priced[0], (21, 6, 6));
    assert_eq!(priced[1].0, 27);
    assert_eq!(priced[1].1, priced[1].2);
    assert!(priced[1].1 > 0);
}

/// Issue 42, item 2: pricing is work without an await of its own, and
/// the last stretch of a run (the last results priced, the final request
/// priced, the loop's end) had none either, so a timeout around the loop
/// (the scenario's budget) could not end it there: a run whose pricing
/// overran the budget passed. The loop now gives the runtime a turn after
/// each call it prices, and the budget ends it.
#[tokio::test]
async fn pricing_past_the_time_budget_is_ended_by_it() {
    let f = fixture();
    let mut p = provider(vec![FauxStep::Calls(vec![call(
        "c1",
        "read",
        json!({"path": "a.txt"}),
    )])]);
    // Counting a text with the file's content in it (the result) takes
    // until past the budget, as a huge text would.
    #[derive(Debug)]
    struct Slow {
        until: std::time::Instant,
        slow: std::sync::atomic::AtomicUsize,
    }
    impl TokenCounter for Slow {
        fn name(&self) -> &str {
            "slow"
        }
        fn count(&self, text: &str) -> u64 {
            if text.contains("alpha") {
                self.slow.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let now = std::time::Instant::now();
                std::thread::sleep(self.until.saturating_duration_since(now));
            }
            1
        }
    }
    let budget = Duration::from_millis(500);
    let slow = Arc::new(Slow {
        until: std::time::Instant::now() + 2 * budget,
        slow: Default::default(),
    });
    let options = LoopOptions {
        tokens: Arc::clone(&slow) as Arc<dyn TokenCounter>,
        ..LoopOptions::default()
    };
    let mut transcript = Transcript::default();
    let finished = tokio::time::timeout(
        budget,
        run_loop(&mut p, &f.registry, &options, &mut transcript, &mut |_| {}),
    )
    .await;
    // Ended after the call's price, before the final request was priced.
    assert_eq!(
        (
            finished.is_err(),
            transcript.calls.len(),
            slow.slow.load(std::sync::atomic::Ordering::SeqCst)
        ),
        (true, 1, 1)
    );
}

#[tokio::test]
async fn a_run_stopped_from_outside_leaves_its_partial_run_in_the_callers_transcript() {
    let f = fixture();
    // A waits for a permit nobody gives; B ends at once.
    let mut p = provider(vec![
        FauxStep::Calls(vec![call("first", "read", json!({"path": "a.txt"}))]),
        FauxStep::Calls(vec![
            call("A", "gate", json!({"wait": 1, "early": true})),
            call("B", "gate", json!({})),
        ]),
    ]);
    let mut t = Transcript::default();
    let events = Arc::new(Mutex::new(Vec::new()));
    let stopped = {
        let seen = Arc::clone(&events);
        let options = LoopOptions::default();
        let mut on_event = |e: AgentEvent| seen.lock().unwrap().push(short(&e));
        let run = run_loop(&mut p, &f.registry, &options, &mut t, &mut on_event);
        // Stopped once A has streamed and B has ended, as a timeout would.
        let both = async {
            loop {
                {
                    let events = events.lock().unwrap();
                    if ["update A", "end B"]
                        .iter()
                        .all(|e| events.iter().any(|seen| seen == e))
                    {
                        break;
                    }
                }
                tokio::task::yield_now().await;
            }
        };
        let stopped = async {
            tokio::select! {
                biased;
                () = both => true,
                () = run => false,
            }
        };
        tokio::time::timeout(Duration::from_secs(60), stopped)
            .await
            .expect("A streams and B ends")
    };
    assert!(stopped);
    // The first turn is answered; the second's message is in and its
    // calls are running: B has ended, but its result is not in the
    // conversation yet.
    let answered: Vec<&str> = t.calls.iter().map(|r| r.call.id.as_str()).collect();
    assert_eq!(answered, vec!["first"]);
    assert_eq!(t.assistant_messages().count(), 2);
    let running: Vec<(usize, usize, &str, usize)> = t
        .running
        .iter()
        .map(|r| (r.turn, r.index, r.call.id.as_str(), r.updates.count))
        .collect();
    assert_eq!(running, vec![(2, 0, "A", 1), (2, 1, "B", 1)]);
    assert_eq!(
        t.running[0]
            .updates
            .first
            .as_ref()
            .map(|u| u.content.clone()),
        Some(vec![crate::tools::Content::text("waiting")])
    );
    assert_eq!(t.error, None);
}

#[tokio::test]
async fn parallel_batch_ends_in_completion_order_and_results_in_call_order() {
    let f = fixture();
    // A waits for B's permit, so B must finish first.
    let mut p = provider(vec![FauxStep::Calls(vec![
        call("A", "gate", json!({"wait": 1})),
        call("B", "gate", json!({"release": 1})),
    ])]);
    let (t, events) = run(&f, &mut p, &LoopOptions::default()).await;
    // A's update may be forwarded before or after B's end; the rest is fixed.
    let fixed: Vec<&String> = events.iter().filter(|e| !e.starts_with("update")).collect();
    assert_eq!(
        fixed[3..9],
        [
            "start A", "start B", "end B", "end A", "result A", "result B"
        ]
    );
    let ids: Vec<&str> = t.calls.iter().map(|c| c.call.id.as_str()).collect();
    assert_eq!(ids, vec!["A", "B"]);
    assert_eq!(t.calls[0].completion, 1);
    assert_eq!(t.calls[1].completion, 0);
    assert_eq!(t.calls[0].updates.count, 1);
}

#[tokio::test]
async fn a_sequential_tool_makes_the_whole_batch_sequential() {
    let f = fixture();
    let mut p = provider(vec![FauxStep::Calls(vec![
        call("A", "gate", json!({"release": 0})),
        call("B", "serial", json!({})),
        call("C", "gate", json!({})),
    ])]);
    let (_, events) = run(&f, &mut p, &LoopOptions::default()).await;
    assert_eq!(
        events[3..12],
        [
            "start A", "update A", "end A", "start B", "update B", "end B", "start C", "update C",
            "end C"
        ]
    );
    assert_eq!(
        *f.log.lock().unwrap(),
        vec!["start A", "end A", "start B", "end B", "start C", "end C"]
    );
}

#[tokio::test]
async fn validation_errors_and_unknown_tools_get_results_and_the_loop_goes_on() {
    let f = fixture();
    let mut p = provider(vec![
        FauxStep::Calls(vec![
            call("bad", "read", json!({"offset": 1})),
            call("unknown", "frobnicate", json!({})),
        ]),
        FauxStep::Say("done".into()),
    ]);
    let (t, events) = run(&f, &mut p, &LoopOptions::default()).await;
    assert_eq!(
        events[3..9],
        [
            "start bad",
            "end bad error",
            "start unknown",
            "end unknown error",
            "result bad",
            "result unknown"
        ]
    );
    assert!(
        t.calls[1]
            .result
            .text()
            .starts_with("Tool \"frobnicate\" not found. Available tools: read, bash, edit, write, grep, find, ls, gate, serial.")
    );
    assert_eq!(t.assistant_messages().count(), 2);
}

#[tokio::test]
async fn cancelling_mid_batch_still_gives_every_call_one_result() {
    let f = fixture();
    let options = LoopOptions::default();
    let cancel = options.cancel.clone();
    // Both calls wait forever; cancel once both have started.
    let mut p = provider(vec![FauxStep::Calls(vec![
        call("A", "gate", json!({"wait": 5})),
        call("B", "gate", json!({"wait": 5})),
    ])]);
    let mut events = Vec::new();
    let mut transcript = Transcript::default();
    run_loop(&mut p, &f.registry, &options, &mut transcript, &mut |e| {
        if let AgentEvent::ToolExecutionStart { call_id, .. } = &e
            && call_id == "B"
        {
            cancel.cancel();
        }
        events.push(short(&e));
    })
    .await;
    assert_eq!(transcript.calls.len(), 2);
    for record in &transcript.calls {
        assert!(record.result.is_error);
        assert!(
            record.result.text().starts_with("Operation aborted"),
            "{}",
            record.result.text()
        );
    }
    assert_eq!(transcript.error.as_deref(), Some("the run was cancelled"));
}

#[tokio::test]
async fn a_message_cut_by_the_output_limit_executes_none_of_its_calls() {
    let f = fixture();
    struct Cut(bool);
    impl Provider for Cut {
        fn complete<'a>(
            &'a mut self,
            _request: Request<'a>,
        ) -> crate::tools::ops::BoxFuture<'a, Result<AssistantMessage, crate::agent::ProviderError>>
        {
            let first = !self.0;
            self.0 = true;
            Box::pin(async move {
                if first {
                    Ok(AssistantMessage {
                        content: vec![crate::agent::AssistantBlock::ToolCall(ToolCall::new(
                            "w",
                            "write",
                            json!({"path": "x.txt", "content": "hi"}),
                        ))],
                        stop_reason: StopReason::Length,
                        usage: Default::default(),
                        error_message: None,
                    })
                } else {
                    Ok(AssistantMessage::text("ok"))
                }
            })
        }
    }
    let mut events = Vec::new();
    let mut t = Transcript::default();
    run_loop(
        &mut Cut(false),
        &f.registry,
        &LoopOptions::default(),
        &mut t,
        &mut |e| events.push(short(&e)),
    )
    .await;
    assert_eq!(
        t.calls[0].result.text(),
        "Tool call \"write\" was not executed: the response hit the output token limit, so its \
         arguments may be truncated. Re-issue the tool call with complete arguments."
    );
    assert!(
        f.registry
            .workspace()
            .fs()
            .metadata(std::path::Path::new("/ws/x.txt"))
            .is_err()
    );
}

#[tokio::test]
async fn the_turn_limit_stops_a_runaway_model() {
    let f = fixture();
    let steps = (0..5)
        .map(|i| {
            FauxStep::Calls(vec![call(
                &format!("c{i}"),
                "read",
                json!({"path": "a.txt"}),
            )])
        })
        .collect();
    let mut p = provider(steps);
    let options = LoopOptions {
        max_turns: 3,
        ..LoopOptions::default()
    };
    let (t, _) = run(&f, &mut p, &options).await;
    assert_eq!(t.calls.len(), 3);
    assert_eq!(
        t.error.as_deref(),
        Some("the model kept calling tools after 3 turns (max_turns); the loop stopped it")
    );
}

#[tokio::test]
async fn the_presenter_stands_between_the_tools_and_the_conversation() {
    let h = crate::tools::testutil::Harness::memory();
    h.add_file("notes.txt", "see /ws/notes.txt\n");
    let presenter = crate::agent::Presenter::default().with_root("/workspace", ["/ws"]);
    let options = LoopOptions {
        presenter,
        ..LoopOptions::default()
    };
    let vars = BTreeMap::from([("workspace".to_owned(), "/workspace".to_owned())]);
    let steps = vec![
        FauxStep::Calls(vec![call(
            "c1",
            "read",
            json!({"path": "${workspace}/notes.txt"}),
        )]),
        FauxStep::Calls(vec![call("c2", "ls", json!({"path": "/workspace/../etc"}))]),
    ];
    let mut p = FauxProvider::new(FauxScript { steps }, Arc::new(Chars4), vars);
    let mut events = Vec::new();
    let mut t = Transcript::default();
    run_loop(&mut p, &h.registry, &options, &mut t, &mut |e| {
        events.push(e)
    })
    .await;
    // The calls are recorded as sent; they executed in the real root.
    let sent: Vec<Value> = t
        .calls
        .iter()
        .map(|r| serde_json::from_str(&r.call.arguments.to_text()).unwrap())
        .collect();
    assert_eq!(
        sent,
        [
            json!({"path": "/workspace/notes.txt"}),
            json!({"path": "/workspace/../etc"})
        ]
    );
    let texts: Vec<String> = t.calls.iter().map(|r| r.result.text()).collect();
    assert_eq!(
        texts,
        [
            "see /workspace/notes.txt\n".to_owned(),
            "Path \"/workspace/../etc\" is outside the workspace: it resolves to a path outside \
             the workspace root, but tools may only touch files under the workspace root \
             /workspace. Use a path relative to the workspace root."
                .to_owned(),
        ]
    );
    // What the model reads next, and every event, is the presented form.
    let results: Vec<String> = t
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some(r.text()),
            _ => None,
        })
        .collect();
    assert_eq!(results, texts);
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { result, .. } => Some(result.text()),
            _ => None,
        })
        .collect();
    assert_eq!(ends, texts);
    let starts: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionStart { args, .. } => Some(args.to_text()),
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        [
            r#"{"path":"/workspace/notes.txt"}"#,
            r#"{"path":"/workspace/../etc"}"#
        ]
    );
}

/// What a test reads of each call: id, whether the cancellation reached
/// it, and its text.
fn cancellations(t: &Transcript) -> Vec<(String, bool, String)> {
    t.calls
        .iter()
        .map(|r| (r.call.id.clone(), r.cancelled, r.result.text()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_scripted_cancellation_aborts_the_batch_and_ends_the_run() {
    let f = fixture();
    let mut p = provider(vec![
        FauxStep::Calls(vec![
            call("c1", "gate", json!({"wait": 1})),
            call("c2", "gate", json!({})),
        ]),
        FauxStep::Calls(vec![call("c3", "gate", json!({}))]),
    ]);
    let options = LoopOptions {
        cancel_after: BTreeMap::from([("c1".to_owned(), Duration::from_millis(20))]),
        ..LoopOptions::default()
    };
    let (t, _) = run(&f, &mut p, &options).await;
    assert_eq!(
        cancellations(&t),
        [
            (
                "c1".to_owned(),
                true,
                crate::tools::error::CANCELLED_MESSAGE.to_owned()
            ),
            ("c2".to_owned(), false, "c2 done".to_owned()),
        ]
    );
    assert_eq!((t.aborted, t.error.as_deref()), (true, None));
    // The model was asked once: the run ended with the batch.
    assert_eq!(t.assistant_messages().count(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_call_that_ends_before_its_cancellation_is_not_cancelled() {
    let f = fixture();
    let mut p = provider(vec![
        FauxStep::Calls(vec![call("c1", "gate", json!({}))]),
        FauxStep::Calls(vec![call("c2", "gate", json!({}))]),
    ]);
    let options = LoopOptions {
        cancel_after: BTreeMap::from([("c1".to_owned(), Duration::from_secs(3600))]),
        ..LoopOptions::default()
    };
    let (t, _) = run(&f, &mut p, &options).await;
    assert_eq!(
        cancellations(&t),
        [
            ("c1".to_owned(), false, "c1 done".to_owned()),
            ("c2".to_owned(), false, "c2 done".to_owned()),
        ]
    );
    assert_eq!((t.aborted, t.error.as_deref()), (false, None));
    assert!(!options.cancel.is_cancelled());
}
