//! `harness mcp [--cwd DIR] [--tools PRESET|LIST] [--no-confine]
//! [--limits FILE] [--no-sandbox] [--no-network] [--http ADDR]`: the tool
//! registry served over MCP on standard input and output (docs/mcp.md), or
//! over Streamable HTTP at `http://ADDR/mcp` with `--http` (its URL said
//! on standard error once it listens), bash in a sandbox (sandbox.rs) for
//! the whole session unless `--no-sandbox`.
//!
//! Only MCP goes to standard output; problems go to standard error. The
//! session ends when the client closes standard input (calls still running
//! get a moment to finish, then are cancelled) or on SIGTERM, SIGINT or
//! SIGHUP (calls are cancelled at once); either way every command's process
//! group is killed before the process exits with 0. Over HTTP only the
//! signals end it. Bad flags, a bad limits file or an address it cannot
//! listen on exit with 2 before anything is served; a session that breaks
//! exits with 1.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tokio_util::sync::CancellationToken;

use crate::exit;
use crate::mcp::McpServer;
use crate::mcp::http::HttpListener;
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
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio
    /// (ADDR: IP:PORT, e.g. 127.0.0.1:8931; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
}

/// How long the HTTP server's leftover tasks get at the end: dropping them
/// drops the registry, whose process backend kills what commands left.
const HTTP_END_WAIT: Duration = Duration::from_secs(2);

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
    // What the kernel cannot enforce of bash's sandbox, said on standard
    // error already, is also each session's first warning (docs/mcp.md).
    let warnings = registry
        .workspace()
        .process()
        .sandbox()
        .map(|sandbox| {
            sandbox
                .report()
                .shortfalls()
                .into_iter()
                .map(|shortfall| format!("bash's commands run with a partial sandbox: {shortfall}"))
                .collect()
        })
        .unwrap_or_default();
    let server = McpServer::with_warnings(registry, warnings);
    if let Some(addr) = args.http {
        return serve_http(runtime, server, addr);
    }
    let outcome = runtime.block_on(async {
        // The handlers are in place before the first message is read.
        let stop = stop_on_signals();
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

/// A token cancelled on SIGTERM, SIGINT or SIGHUP (the handlers are in
/// place when it returns); called on the runtime.
fn stop_on_signals() -> CancellationToken {
    let stop = CancellationToken::new();
    let stops = crate::base::signals::stop_signals();
    let on_stop = stop.clone();
    tokio::spawn(async move {
        stops.await;
        on_stop.cancel();
    });
    stop
}

/// `--http ADDR`: serves until SIGTERM, SIGINT or SIGHUP.
fn serve_http(runtime: tokio::runtime::Runtime, server: McpServer, addr: SocketAddr) -> u8 {
    let served = runtime.block_on(async {
        let stop = stop_on_signals();
        let listener = HttpListener::bind(addr).await?;
        eprintln!("harness mcp: serving on {}", listener.url());
        listener.serve(&server, stop).await;
        Ok::<(), String>(())
    });
    drop(server);
    // rmcp's session tasks may still hold the server: dropped with the
    // runtime, they drop the registry.
    runtime.shutdown_timeout(HTTP_END_WAIT);
    match served {
        Ok(()) => exit::SUCCESS,
        Err(err) => super::common::usage_error(err),
    }
}
