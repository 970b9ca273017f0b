//! `harness call TOOL [ARGS_JSON] [--cwd DIR] [--no-confine] [--no-sandbox]
//! [--no-network]`.
//!
//! Ctrl-C, SIGTERM and SIGHUP cancel the call (a running bash command's
//! process group is killed), and the aborted result is printed as usual.
//! bash runs in a sandbox (sandbox.rs) unless `--no-sandbox`: when the call
//! ends, what its command left running is killed and its `TMPDIR` removed.

use std::path::PathBuf;

use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::exit;
use crate::tools::CallArguments;
use crate::tools::ToolCall;
use crate::tools::UpdateSink;

/// Flags of `harness call`.
#[derive(Debug, Args)]
pub(super) struct CallArgs {
    /// The tool to call (read, write, edit, bash, grep, find, ls).
    tool: String,
    /// The arguments as JSON text; read from stdin when absent or `-`.
    args_json: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Let paths reach outside the workspace (pi's behaviour).
    #[arg(long)]
    no_confine: bool,
    #[command(flatten)]
    sandbox: super::sandbox::SandboxFlags,
    /// Active tools: a preset (coding, readonly, all) or a comma list.
    #[arg(long, value_name = "TOOLS")]
    tools: Option<String>,
}

pub(super) fn run(args: CallArgs) -> u8 {
    super::guard::not_dumpable();
    let text = match args.args_json.as_deref() {
        Some("-") | None => {
            let bytes = match super::common::read_bounded(std::io::stdin().lock(), "standard input")
            {
                Ok(bytes) => bytes,
                Err(err) => return super::common::usage_error(format!("arguments: {err}")),
            };
            match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(err) => {
                    return super::common::usage_error(format!(
                        "arguments: standard input is not UTF-8 text (invalid byte at offset {})",
                        err.utf8_error().valid_up_to()
                    ));
                }
            }
        }
        Some(text) => text.to_owned(),
    };
    // Only bash starts programs.
    let sandbox = if args.tool == "bash" {
        args.sandbox
    } else {
        args.sandbox.unused()
    };
    let workspace = match super::common::workspace(args.cwd, args.no_confine, sandbox) {
        Ok(ws) => ws,
        Err(err) => return super::common::usage_error(err),
    };
    let registry = match super::common::registry(workspace, args.tools.as_deref()) {
        Ok(registry) => registry,
        Err(err) => return super::common::usage_error(err),
    };
    // One call needs no pool of workers: the call runs on this thread
    // (its blocking work on the blocking pool, its walks on their own
    // threads), which saves starting two at every `harness call`.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return super::common::usage_error(format!("cannot start the async runtime: {err}"));
        }
    };
    let call = ToolCall {
        id: "call_1".to_owned(),
        name: args.tool,
        arguments: CallArguments::Text(text),
    };
    let cancel = CancellationToken::new();
    let result = runtime.block_on(async {
        // Ctrl-C, SIGTERM and SIGHUP cancel the call: a running command's
        // process group is killed, and the result says it was aborted.
        // The handlers are in place before the call starts.
        let stops = crate::base::signals::stop_signals();
        let on_stop = cancel.clone();
        tokio::spawn(async move {
            stops.await;
            on_stop.cancel();
        });
        registry
            .dispatch(&call, cancel, UpdateSink::discard())
            .await
    });
    // The registry goes first: dropping it kills what the command left
    // running in the background.
    drop(registry);
    // A search stopped inside one huge line may still be finishing it on a
    // blocking thread; the result is in, so the process does not wait.
    runtime.shutdown_background();
    match serde_json::to_string(&result) {
        Ok(json) => {
            println!("{}", super::output::json_text(&json));
            exit::SUCCESS
        }
        Err(err) => super::common::usage_error(format!("cannot encode the result: {err}")),
    }
}
