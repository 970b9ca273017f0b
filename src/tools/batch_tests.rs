use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use pretty_assertions::assert_eq;
use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::tools::ExecutionMode;
use crate::tools::Limits;
use crate::tools::Tool;
use crate::tools::ToolContext;
use crate::tools::ToolOutput;
use crate::tools::ToolSpec;
use crate::tools::testutil::Harness;

/// Counts how many of its calls run at once, and the most that did.
struct Overlap {
    mode: ExecutionMode,
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

#[derive(Deserialize)]
struct NoArgs {}

impl Tool for Overlap {
    type Args = NoArgs;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec::new("overlap", "counts", json!({"type": "object"})).execution_mode(self.mode)
    }

    async fn execute(&self, _args: NoArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let running = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(running, Ordering::SeqCst);
        // Give every other call of the batch the chance to start.
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
        self.now.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text(ctx.call_id))
    }
}

fn overlap_registry(mode: ExecutionMode) -> (Registry, Arc<AtomicUsize>) {
    let most = Arc::new(AtomicUsize::new(0));
    let tool = Overlap {
        mode,
        now: Arc::new(AtomicUsize::new(0)),
        most: Arc::clone(&most),
    };
    let workspace = Harness::memory().registry.workspace().clone();
    let registry = Registry::builder(workspace)
        .tool(Arc::new(tool))
        .build()
        .unwrap();
    (registry, most)
}

fn calls(n: usize) -> Vec<ToolCall> {
    (0..n)
        .map(|i| ToolCall::new(format!("c{i}"), "overlap", json!({})))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sequential_tool_runs_one_call_at_a_time_in_call_order() {
    let (registry, most) = overlap_registry(ExecutionMode::Sequential);
    let mut order = Vec::new();
    let results = registry
        .run_batch(&calls(4), &CancellationToken::new(), |event| {
            if let BatchEvent::Finished { index, .. } = event {
                order.push(index);
            }
        })
        .await;
    assert_eq!(most.load(Ordering::SeqCst), 1);
    assert_eq!(order, [0, 1, 2, 3]);
    let texts: Vec<String> = results.iter().map(|r| r.result.text()).collect();
    assert_eq!(texts, ["c0", "c1", "c2", "c3"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_parallel_batch_runs_its_calls_together_with_results_in_call_order() {
    let (registry, _) = overlap_registry(ExecutionMode::Parallel);
    let mut batch = calls(3);
    batch.insert(1, ToolCall::new("bad", "nope", json!({})));
    let mut events = Vec::new();
    let results = registry
        .run_batch(&batch, &CancellationToken::new(), |event| {
            events.push(match event {
                BatchEvent::Preparing { index } => format!("preparing {index}"),
                BatchEvent::Running { index } => format!("running {index}"),
                BatchEvent::Update { index, .. } => format!("update {index}"),
                BatchEvent::Finished { index, .. } => format!("finished {index}"),
            });
        })
        .await;
    let ids: Vec<Option<&str>> = results
        .iter()
        .map(|r| r.result.call_id.as_deref())
        .collect();
    assert_eq!(ids, [Some("c0"), Some("bad"), Some("c1"), Some("c2")]);
    assert_eq!(
        results
            .iter()
            .map(|r| r.result.is_error)
            .collect::<Vec<_>>(),
        [false, true, false, false]
    );
    // Every call is prepared before any runs; the refused one is finished
    // at its preparation.
    assert_eq!(
        events[..8],
        [
            "preparing 0",
            "preparing 1",
            "finished 1",
            "preparing 2",
            "preparing 3",
            "running 0",
            "running 2",
            "running 3",
        ]
    );
    assert_eq!(events.len(), 11);
}

#[tokio::test]
async fn a_cancelled_batch_gives_every_call_its_one_cancelled_result() {
    let (registry, most) = overlap_registry(ExecutionMode::Sequential);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let results = registry.run_batch(&calls(3), &cancel, |_| {}).await;
    assert_eq!(most.load(Ordering::SeqCst), 0);
    let expected: Vec<(Option<String>, String)> = (0..3)
        .map(|i| {
            (
                Some(format!("c{i}")),
                crate::tools::CANCELLED_MESSAGE.to_owned(),
            )
        })
        .collect();
    assert_eq!(
        results
            .into_iter()
            .map(|r| (r.result.call_id.clone(), r.result.text()))
            .collect::<Vec<_>>(),
        expected
    );
}

#[test]
fn outside_a_runtime_every_call_gets_an_internal_error_not_a_panic() {
    let (registry, _) = overlap_registry(ExecutionMode::Parallel);
    let results =
        futures_lite_block_on(registry.run_batch(&calls(2), &CancellationToken::new(), |_| {}));
    for result in &results {
        assert!(result.result.is_error);
        assert!(
            result
                .result
                .internal_error
                .as_deref()
                .unwrap_or_default()
                .contains("outside a Tokio runtime"),
            "{:?}",
            result.result.internal_error
        );
    }
    let call = ToolCall::new("x", "ls", json!({}));
    let prepared = registry.prepare(&call).unwrap();
    let result =
        futures_lite_block_on(prepared.execute(CancellationToken::new(), UpdateSink::discard()));
    assert_eq!(
        result.internal_error.as_deref(),
        Some(
            "the ls tool was run outside a Tokio runtime; the tool layer runs its tools on Tokio \
             tasks, so call it from inside a runtime built with IO and time enabled \
             (tokio::runtime::Builder::enable_all)"
        )
    );
}

#[test]
fn a_runtime_without_io_gets_an_error_that_names_the_driver() {
    let harness = Harness::local();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let call = ToolCall::new("b", "bash", json!({"command": "true"}));
    let result = runtime.block_on(harness.registry.dispatch(
        &call,
        CancellationToken::new(),
        UpdateSink::discard(),
    ));
    assert_eq!(
        result.internal_error.as_deref(),
        Some(
            "the tool needs the Tokio runtime's IO driver, which this runtime was built \
             without; build the runtime with enable_all() (or enable_io() and enable_time())"
        ),
        "{}",
        result.text()
    );
}

/// Polls a future to its end on this thread, with no runtime around it.
fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::Context;
    use std::task::Poll;
    use std::task::Wake;
    use std::task::Waker;

    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => return output,
            Poll::Pending => std::thread::park(),
        }
    }
}
