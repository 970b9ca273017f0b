//! `harness serve-model FILE [--api API] [--port N] [--workspace DIR]
//! [--log FILE]`: one scenario's script served as a model over HTTP on
//! 127.0.0.1, for an agent pointed at it (docs/agents.md).
//!
//! The URL is the one line on standard output, printed once the server
//! listens. The command ends when the script's final answer has been sent
//! (exit 0), or on SIGTERM, SIGINT or SIGHUP (exit 0 when the script was
//! done, 1 when it was not). A bad file or flag exits with 2 before
//! anything is served.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use clap::Args;

use crate::agent::serve::ErrorRule;
use crate::agent::serve::Exchange;
use crate::agent::serve::ModelServer;
use crate::agent::serve::ScriptResponder;
use crate::agent::serve::ServeConfig;
use crate::agent::wire::Api;
use crate::exit;
use crate::run::Selection;
use crate::run::discover;

/// Flags of `harness serve-model`.
#[derive(Debug, Args)]
pub(super) struct ServeModelArgs {
    /// The scenario file whose script is served (one scenario).
    file: PathBuf,
    /// Serve one wire format only: anthropic-messages, openai-responses,
    /// openai-chat or gemini (default: all four, each at its path).
    #[arg(long, value_name = "API", value_parser = parse_api)]
    api: Option<Api>,
    /// The port on 127.0.0.1 (default: a free one).
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// The directory `${workspace}` stands for in the script (default:
    /// the current directory), as its real path.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Write every request received to FILE, one JSON line each (bodies
    /// cut at 1 MiB).
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
}

fn parse_api(text: &str) -> Result<Api, String> {
    Api::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Api::ALL.iter().map(|api| api.name()).collect();
        format!("unknown API `{text}` (known: {})", names.join(", "))
    })
}

/// The most bytes of a request body a `--log` line holds.
const LOG_BODY_BYTES: usize = 1024 * 1024;

/// The `--log` file, written a line at a time; the first write error is
/// kept for the end.
struct Log {
    file: std::io::BufWriter<std::fs::File>,
    error: Option<String>,
}

pub(super) fn run(args: ServeModelArgs) -> u8 {
    let discovery = discover(std::slice::from_ref(&args.file), &Selection::default());
    if !discovery.errors.is_empty() {
        for error in &discovery.errors {
            eprintln!("error: {error}");
        }
        return exit::USAGE;
    }
    let scenario = match discovery.scenarios.as_slice() {
        [one] => one,
        [] => {
            return super::common::usage_error(format!(
                "{} holds no scenario to serve",
                args.file.display()
            ));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|s| s.name.as_str()).collect();
            return super::common::usage_error(format!(
                "{} holds {} scenarios ({}); serve-model serves one: put it in a file of its own",
                args.file.display(),
                many.len(),
                names.join(", ")
            ));
        }
    };
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(err) => return super::common::usage_error(format!("no current directory: {err}")),
        },
    };
    let workspace = match std::fs::canonicalize(&workspace) {
        Ok(path) if path.is_dir() => path,
        Ok(path) => {
            return super::common::usage_error(format!(
                "--workspace {}: not a directory",
                path.display()
            ));
        }
        Err(err) => {
            return super::common::usage_error(format!(
                "--workspace {}: {err}",
                workspace.display()
            ));
        }
    };
    let Some(workspace_text) = workspace.to_str().map(str::to_owned) else {
        return super::common::usage_error(format!(
            "--workspace {}: the path is not UTF-8, so the script cannot name it",
            workspace.display()
        ));
    };
    // The usage an answer reports is what the agent is told it spent:
    // characters / 4 is close enough for that, and costs nothing to load
    // or count (o200k takes a debug build 0.6 s to load and tens of ms a
    // request).
    let tokens: Arc<dyn crate::agent::TokenCounter> = Arc::new(crate::agent::Chars4);
    let log = match &args.log {
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Some(Arc::new(Mutex::new(Log {
                file: std::io::BufWriter::new(file),
                error: None,
            }))),
            Err(err) => {
                return super::common::usage_error(format!("--log {}: {err}", path.display()));
            }
        },
        None => None,
    };
    let vars = std::collections::BTreeMap::from([("workspace".to_owned(), workspace_text)]);
    let responder = ScriptResponder::new(scenario.script.clone(), vars, tokens, ErrorRule::Flag);
    let config = ServeConfig {
        port: args.port.unwrap_or(0),
        apis: args.api.map_or_else(|| Api::ALL.to_vec(), |api| vec![api]),
        keep_bodies: log.is_some(),
        ..ServeConfig::default()
    };
    let on_exchange = log.clone().map(|log| {
        Box::new(move |exchange: &Exchange| write_line(&log, exchange))
            as crate::agent::serve::OnExchange
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            return super::common::usage_error(format!("cannot start the async runtime: {err}"));
        }
    };
    let code = runtime.block_on(async {
        let stops = crate::base::signals::stop_signals();
        let server = match ModelServer::start(config, Arc::new(responder), on_exchange).await {
            Ok(server) => server,
            Err(err) => {
                let port = args.port.unwrap_or(0);
                return super::common::usage_error(format!(
                    "cannot listen on 127.0.0.1:{port}: {err}"
                ));
            }
        };
        println!("{}", server.url());
        tokio::select! {
            () = server.finished() => {}
            () = stops => {}
        }
        let done = server.is_finished();
        let exchanges = server.stop().await;
        if done {
            exit::SUCCESS
        } else {
            let answered = exchanges.iter().filter(|e| e.answer.is_some()).count();
            eprintln!(
                "stopped before the script was done ({answered} request{} answered)",
                if answered == 1 { "" } else { "s" }
            );
            exit::FAILED
        }
    });
    runtime.shutdown_background();
    if let Some(log) = log {
        let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(err) = log.file.flush() {
            log.error.get_or_insert_with(|| err.to_string());
        }
        if let Some(err) = &log.error {
            eprintln!("error: cannot write the --log file: {err}");
            return exit::FAILED;
        }
    }
    code
}

fn write_line(log: &Mutex<Log>, exchange: &Exchange) {
    let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
    if log.error.is_some() {
        return;
    }
    let line = exchange.log_line(LOG_BODY_BYTES);
    let written = writeln!(log.file, "{line}").and_then(|()| log.file.flush());
    if let Err(err) = written {
        log.error = Some(err.to_string());
    }
}
