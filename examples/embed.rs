//! The tool layer embedded as an outside crate would embed it: only
//! `harness::tools`, built without the `cli` feature
//! (`cargo run --example embed --no-default-features`; CI runs it).
//!
//! It builds a registry over a temporary directory with a tool of its own
//! (named at run time) in place of the built-in `ls`, lists the
//! definitions a provider gets, runs one model message's calls as a batch,
//! and streams a bash command's output as it runs. Every step checks what
//! it got, so the example fails (exit 1) when the library breaks its
//! word.

use std::error::Error;
use std::sync::Arc;
use std::sync::Mutex;

use harness::tools::BatchEvent;
use harness::tools::CancellationToken;
use harness::tools::ExecutionMode;
use harness::tools::Limits;
use harness::tools::PrepareError;
use harness::tools::Preset;
use harness::tools::Registry;
use harness::tools::Tool;
use harness::tools::ToolCall;
use harness::tools::ToolContext;
use harness::tools::ToolError;
use harness::tools::ToolOutput;
use harness::tools::ToolSpec;
use harness::tools::UpdateSink;
use harness::tools::Value;
use harness::tools::Workspace;
use harness::tools::run_blocking;
use serde::Deserialize;
use serde_json::json;

/// Lists a directory's names, one a line: a tool of our own, named at run
/// time, that replaces the built-in `ls`.
struct Names {
    name: String,
}

#[derive(Deserialize)]
struct NamesArgs {
    path: String,
}

impl Tool for Names {
    type Args = NamesArgs;

    fn spec(&self, _limits: &Limits) -> ToolSpec {
        ToolSpec::new(
            self.name.clone(),
            "List the names in a directory, one a line.",
            json!({
                "type": "object",
                "properties": { "path": { "type": "string" } },
                "required": ["path"],
                "additionalProperties": false,
            }),
        )
        .label("Names")
        .prompt_snippet("List a directory's names")
        .execution_mode(ExecutionMode::Sequential)
    }

    async fn execute(&self, args: NamesArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        // Blocking disk work off the runtime's threads.
        run_blocking("names", args, ctx, list_names).await
    }
}

/// The blocking half of `Names`: through the workspace's operations,
/// confined to its root.
#[allow(
    clippy::result_large_err,
    reason = "ToolError is what a tool returns; the tool layer's own blocking halves return it too"
)]
fn list_names(args: &NamesArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let resolved = ctx.workspace.resolve(&args.path)?;
    let entries = ctx
        .workspace
        .fs()
        .read_dir(&resolved.real)
        .map_err(|err| ToolError::io("list", &resolved.display, &err))?;
    let mut names: Vec<String> = entries
        .iter()
        .map(|entry| entry.name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(ToolOutput::text(names.join("\n")))
}

fn check(what: &str, ok: bool) -> Result<(), Box<dyn Error>> {
    if ok {
        println!("ok: {what}");
        Ok(())
    } else {
        Err(format!("failed: {what}").into())
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("notes.txt"), "alpha\nbeta\n")?;
    let name = String::from("ls"); // as an MCP server's tools/list would give it
    let registry = Registry::builder(Workspace::local(dir.path())?)
        .tool(Arc::new(Names { name }))
        .preset(Preset::All)
        .build()?;

    // What a provider gets: each active tool's name, description and schema.
    let definitions: Vec<Value> = registry
        .specs()
        .map(|spec| serde_json::to_value(spec.definition()))
        .collect::<Result<_, _>>()?;
    println!("{}", serde_json::to_string_pretty(&definitions)?);
    let names: Vec<&str> = registry.active_names();
    check(
        "the seven tools, ours in the built-in ls's place",
        names == ["read", "bash", "edit", "write", "grep", "find", "ls"]
            && registry
                .spec("ls")
                .is_some_and(|s| s.description.starts_with("List the names")),
    )?;

    // A refused call is an Error (`?` works) that holds the model's result.
    let refused: Result<_, PrepareError> =
        registry.prepare(&ToolCall::new("x", "read", json!({"path": 5})));
    let err = refused.err().ok_or("a read of path 5 was accepted")?;
    check(
        "a refused call says why, as an error and as the model's result",
        err.to_string().contains("path") && err.result().call_id.as_deref() == Some("x"),
    )?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;

    // One model message's calls, run by the batch rules. Our tool is
    // sequential, so this batch runs one call at a time, in order: the
    // edit sees the write, and the listing sees both files.
    let calls = [
        ToolCall::new(
            "c1",
            "write",
            json!({"path": "todo.txt", "content": "one\n"}),
        ),
        ToolCall::new(
            "c2",
            "edit",
            json!({"path": "todo.txt", "edits": [{"oldText": "one", "newText": "two"}]}),
        ),
        ToolCall::new("c3", "ls", json!({"path": "."})),
        ToolCall::new("c4", "read", json!({"path": "todo.txt"})),
        ToolCall::new("c5", "nope", json!({})),
    ];
    let mut finished = Vec::new();
    let results =
        runtime.block_on(
            registry.run_batch(&calls, &CancellationToken::new(), |event| {
                if let BatchEvent::Finished { index, .. } = event {
                    finished.push(index);
                }
            }),
        );
    for (call, done) in calls.iter().zip(&results) {
        println!(
            "{} {}: error={} {:?}",
            call.id,
            call.name,
            done.result.is_error,
            done.result.text()
        );
    }
    let ids: Vec<Option<&str>> = results
        .iter()
        .map(|r| r.result.call_id.as_deref())
        .collect();
    check(
        "one result per call, in call order, each with its call's id",
        ids == [Some("c1"), Some("c2"), Some("c3"), Some("c4"), Some("c5")],
    )?;
    check(
        "a sequential batch finishes in call order",
        finished == [0, 1, 2, 3, 4],
    )?;
    check(
        "the results",
        results[2].result.text() == "notes.txt\ntodo.txt"
            && results[3].result.text() == "two\n"
            && results[4].result.is_error
            && results[..4].iter().all(|r| !r.result.is_error),
    )?;

    // bash's output streamed while it runs.
    let streamed = Arc::new(Mutex::new(Vec::new()));
    let sink = {
        let streamed = Arc::clone(&streamed);
        UpdateSink::new(move |update| {
            if let Ok(mut texts) = streamed.lock() {
                texts.push(update.text());
            }
        })
    };
    let call = ToolCall::new(
        "b1",
        "bash",
        json!({"command": "echo start; sleep 1; echo done"}),
    );
    let result = runtime.block_on(registry.dispatch(&call, CancellationToken::new(), sink));
    let streamed = streamed.lock().map(|t| t.clone()).unwrap_or_default();
    for text in &streamed {
        println!("update: {text:?}");
    }
    println!("result: {:?}", result.text());
    check(
        "bash streamed its output, then answered with all of it",
        result.text() == "start\ndone\n" && streamed.iter().any(|t| t == "start\n"),
    )?;

    // Outside a runtime: an internal error, not a panic.
    let prepared = registry.prepare(&ToolCall::new("r1", "read", json!({"path": "notes.txt"})))?;
    let outside =
        block_on_without_runtime(prepared.execute(CancellationToken::new(), UpdateSink::discard()));
    check(
        "outside a runtime a call is answered with an internal error",
        outside.is_error
            && outside
                .internal_error
                .as_deref()
                .is_some_and(|e| e.contains("outside a Tokio runtime")),
    )?;
    Ok(())
}

/// Polls a future on this thread with no runtime around it.
fn block_on_without_runtime<F: std::future::Future>(future: F) -> F::Output {
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
