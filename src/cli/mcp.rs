//! `harness mcp [--cwd DIR] [--tools PRESET|LIST] [--no-confine]
//! [--limits FILE] [--no-sandbox] [--no-network]`: the tool registry served
//! over MCP on standard input and output (docs/mcp.md), bash in a sandbox
//! (sandbox.rs) for the whole session unless `--no-sandbox`.
//!
//! Only MCP goes to standard output; problems go to standard error. The
//! session ends when the client closes standard input (calls still running
//! get a moment to finish, then are cancelled) or on SIGTERM, SIGINT or
//! SIGHUP (calls are cancelled at once); either way every command's process
//! group is killed before the process exits with 0. Bad flags or a bad
//! limits file exit with 2 before anything is served; a session that breaks
//! exits with 1.

use std::path::PathBuf;

use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::exit;
use crate::mcp::McpServer;
use crate::scenario::load::load_limits;
use crate::tools::Limits;
use crate::tools::Registry;

/// Flags of `harness mcp`.
#[derive(Debug, Args)]
pub(super) struct McpArgs {
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Served tools: a preset (coding, readonly, all) or a comma list
    /// (default: all, in that order).
    #[arg(long, value_name = "TOOLS")]
    tools: Option<String>,
    /// Let paths reach outside the workspace (pi's behaviour).
    #[arg(long)]
    no_confine: bool,
    #[command(flatten)]
    sandbox: super::sandbox::SandboxFlags,
    /// A YAML file of `limits:` keys (max_lines, max_bytes, …), as in a
    /// scenario.
    #[arg(long, value_name = "FILE")]
    limits: Option<PathBuf>,
}

pub(super) fn run(args: McpArgs) -> u8 {
    super::guard::not_dumpable();
    let limits = match &args.limits {
        Some(path) => match load_limits(path) {
            Ok(limits) => limits,
            Err(errors) => {
                for error in &errors {
                    eprintln!("error: {error}");
                }
                return exit::USAGE;
            }
        },
        None => Limits::default(),
    };
    let workspace = match super::common::workspace(args.cwd, args.no_confine, args.sandbox) {
        Ok(ws) => ws,
        Err(err) => return super::common::usage_error(err),
    };
    let registry = match super::common::tool_selection(
        Registry::builder(workspace).limits(limits),
        args.tools.as_deref(),
    )
    .and_then(|builder| builder.build().map_err(|err| err.to_string()))
    {
        Ok(registry) => registry,
        Err(err) => return super::common::usage_error(format!("--tools: {err}")),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return super::common::usage_error(format!("cannot start the async runtime: {err}"));
        }
    };
    let server = McpServer::new(registry);
    let outcome = runtime.block_on(async {
        // The handlers are in place before the first message is read.
        let stop = CancellationToken::new();
        let stops = crate::base::signals::stop_signals();
        let on_stop = stop.clone();
        tokio::spawn(async move {
            stops.await;
            on_stop.cancel();
        });
        let (read, write) = rmcp::transport::stdio_pipes();
        server.serve(read, write, stop).await
    });
    // Every call has ended; dropping the server drops the registry, which
    // kills what commands left running in the background.
    drop(server);
    // A read of standard input may still be waiting on a blocking thread.
    runtime.shutdown_background();
    match outcome {
        Ok(_) => exit::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            exit::FAILED
        }
    }
}
