//! `harness fuzz --mcp CMD [ARGS…]`: adversarial calls made from each
//! tool's input schema, sent to the server as written (`mcp::fuzz`); the
//! answers tallied per tool, each failure printed with its call, and
//! optionally written as a scenario that replays it (`--write DIR`) and
//! as JSON (`--json FILE`). Exit 0: every call answered and the server
//! up; 1: a failure; 2: bad usage.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::Value;
use serde_json::json;

use super::output::terminal_text;
use crate::exit;
use crate::mcp::fuzz;

/// Flags of `harness fuzz`.
#[derive(Debug, Args)]
pub(super) struct FuzzArgs {
    /// The MCP server to fuzz: the command and its arguments (everything
    /// after --mcp; give the other flags before it).
    #[arg(
        long,
        value_name = "CMD",
        num_args = 1..,
        allow_hyphen_values = true,
        required = true
    )]
    mcp: Vec<String>,
    /// The seed of the generator: the same seed sends the same calls.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
    /// Calls per tool (1 to 10000).
    #[arg(long, value_name = "N", default_value_t = fuzz::DEFAULT_CASES as u64,
          value_parser = clap::value_parser!(u64).range(1..=fuzz::generate::MAX_CASES as u64))]
    cases: u64,
    /// Seconds each call (and the ping after it) may take (1 to 3600).
    #[arg(long, value_name = "SECS", default_value_t = fuzz::DEFAULT_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=fuzz::MAX_TIMEOUT_SECS))]
    timeout: u64,
    /// Only this tool (repeatable).
    #[arg(long = "tool", value_name = "NAME")]
    tools: Vec<String>,
    /// Write each failing call as a scenario that replays it into DIR
    /// (with a harness.yaml declaring the server); nothing is written
    /// over existing files.
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The sandbox the server starts in (writes in a temporary workspace
    /// and a private TMPDIR, the network kept); give these before --mcp.
    #[command(flatten)]
    sandbox: super::sandbox::SandboxFlags,
}

pub(super) fn run(args: &FuzzArgs) -> u8 {
    let Some(program) = args.mcp.first() else {
        return super::common::usage_error("--mcp needs a command");
    };
    let workspace = match tempfile::Builder::new().prefix("harness-fuzz-").tempdir() {
        Ok(tmp) => tmp,
        Err(err) => {
            return super::common::usage_error(format!("cannot make a temporary directory: {err}"));
        }
    };
    let real = match workspace.path().canonicalize() {
        Ok(real) => real,
        Err(err) => {
            return super::common::usage_error(format!(
                "cannot use the temporary directory: {err}"
            ));
        }
    };
    let sandbox = match args.sandbox.sandbox(&real) {
        Ok(sandbox) => sandbox,
        Err(err) => return super::common::usage_error(err),
    };
    let server = crate::import::server_suite::server_name(program);
    let mut config = crate::mcp::client::ServerConfig::new(
        server.clone(),
        crate::mcp::client::Launch::Command(crate::mcp::client::Command {
            program: program.clone(),
            args: args.mcp[1..].to_vec(),
            env: Vec::new(),
            cwd: real,
        }),
    );
    config.startup_timeout = Duration::from_secs(args.timeout.max(10));
    let options = fuzz::Options {
        seed: args.seed,
        cases: usize::try_from(args.cases).unwrap_or(fuzz::generate::MAX_CASES),
        timeout: Duration::from_secs(args.timeout),
        tools: args.tools.clone(),
        max_restarts: 5,
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return exit::FAILED;
        }
    };
    let outcome = runtime.block_on(async {
        let start = || {
            let config = config.clone();
            let sandbox = sandbox.clone();
            async move {
                crate::mcp::client::McpClient::start_in(config, sandbox)
                    .await
                    .map_err(|err| err.to_string())
            }
        };
        let first = start().await?;
        let all = first.tools().to_vec();
        let tools = match fuzz::selected(&all, &options.tools) {
            Ok(tools) => tools,
            Err(missing) => {
                first.stop().await;
                let names: Vec<String> = all.iter().map(|t| t.name.to_string()).collect();
                return Err(format!(
                    "usage: the server has no tool {} (its tools: {})",
                    missing.join(", "),
                    names.join(", ")
                ));
            }
        };
        let report = fuzz::run(&tools, &options, start, first).await;
        Ok((tools.into_iter().cloned().collect::<Vec<_>>(), report))
    });
    if let Some(sandbox) = &sandbox {
        sandbox.end();
    }
    let (tools, report) = match outcome {
        Ok(done) => done,
        Err(why) => {
            let why = terminal_text(&why, &[]).into_owned();
            if let Some(usage) = why.strip_prefix("usage: ") {
                return super::common::usage_error(usage);
            }
            eprintln!("error: {why}");
            return exit::FAILED;
        }
    };
    print_report(&server, &report, &options);
    if let Some(path) = &args.json
        && let Err(err) = write_json(path, &server, &report, &options)
    {
        return super::common::usage_error(err);
    }
    if let Some(dir) = &args.write
        && !report.failures.is_empty()
    {
        let files = scenarios(&server, &args.mcp, &tools, &report, options.timeout);
        match crate::import::out::write_new_tree(dir, &files, |_| Ok(())) {
            Ok(()) => println!(
                "wrote {} scenario(s) replaying the failures into {}",
                files.len() - 1,
                dir.display()
            ),
            Err(err) => {
                return super::common::usage_error(format!(
                    "--write {}: {}",
                    dir.display(),
                    new_tree_error(err)
                ));
            }
        }
    }
    if report.passed() {
        exit::SUCCESS
    } else {
        exit::FAILED
    }
}

fn new_tree_error(err: crate::import::out::NewTreeError) -> String {
    use crate::import::out::NewTreeError;
    match err {
        NewTreeError::Exist(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            format!(
                "nothing is written over existing files, and these exist: {}",
                paths.join(", ")
            )
        }
        NewTreeError::Link(path) => format!("{} is a symlink", path.display()),
        NewTreeError::Failed(why) => format!("{why}; nothing was written"),
    }
}

fn print_report(server: &str, report: &fuzz::Report, options: &fuzz::Options) {
    println!(
        "harness fuzz: {} tool(s) of `{}`, {} call(s) each, seed {}, timeout {} s",
        report.tools.len(),
        terminal_text(server, &[]),
        options.cases,
        options.seed,
        options.timeout.as_secs()
    );
    for line in fuzz::text::lines(report, " (--json FILE lists them all)") {
        println!("{}", terminal_text(&line, &[]));
    }
    let seconds = report.elapsed_ms as f64 / 1000.0;
    let rate = if report.elapsed_ms == 0 {
        0.0
    } else {
        report.calls as f64 / seconds
    };
    println!(
        "{} call(s) and {} ping(s) in {seconds:.2} s ({rate:.0} calls/s), {} restart(s)",
        report.calls, report.pings, report.restarts
    );
    println!("{}", fuzz::text::verdict(report));
}

fn write_json(
    path: &Path,
    server: &str,
    report: &fuzz::Report,
    options: &fuzz::Options,
) -> Result<(), String> {
    let value = fuzz::text::report_json(
        server,
        report,
        options,
        json!({
            "failures": report.failures.iter().map(fuzz::text::failure_json).collect::<Vec<_>>(),
            "internal_errors_on_plausible_input": report
                .internal_errors_on_plausible_input
                .iter()
                .map(fuzz::text::failure_json)
                .collect::<Vec<_>>(),
            "restarts": report.restarts,
            "stopped_early": report.stopped_early,
            "calls": report.calls,
            "pings": report.pings,
            "elapsed_ms": report.elapsed_ms,
        }),
    );
    let text = serde_json::to_string_pretty(&value).map_err(|err| err.to_string())?;
    std::fs::write(path, format!("{text}\n"))
        .map_err(|err| format!("--json {}: cannot write it: {err}", path.display()))
}

/// `value` with every `${` in its strings written `$${` (scenario
/// variables are `${name}`).
fn escaped(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::from(s.replace("${", "$${")),
        Value::Array(items) => Value::Array(items.iter().map(escaped).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (escaped_key(k), escaped(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn escaped_key(key: &str) -> String {
    key.replace("${", "$${")
}

/// The files `--write` writes: `harness.yaml` declaring the server, and
/// one scenario per failing call that sends it again and expects an
/// answer (a result or a JSON-RPC error other than an internal error),
/// not an exit, a timeout or an unreadable answer.
fn scenarios(
    server: &str,
    command: &[String],
    tools: &[rmcp::model::Tool],
    report: &fuzz::Report,
    timeout: Duration,
) -> Vec<(String, String)> {
    use crate::import::write::comment;
    use crate::import::yaml::to_yaml;
    let suite = json!({
        "servers": { server: {
            "command": command,
            "startup_timeout": timeout.as_secs().max(10),
            "call_timeout": timeout.as_secs(),
        }}
    });
    let mut files = vec![(
        "harness.yaml".to_owned(),
        format!(
            "# Written by `harness fuzz --write`: the server each replay scenario starts.\n{}",
            to_yaml(&suite)
        ),
    )];
    for failure in &report.failures {
        let name = failure.tool.as_str();
        let stem: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        let tools_entry = if name.contains('/') || !tools.iter().any(|t| t.name == name) {
            server.to_owned()
        } else {
            format!("{server}/{name}")
        };
        let mut call = serde_json::Map::new();
        call.insert("call".to_owned(), Value::from(name));
        match &failure.case.arguments {
            Value::Object(_) => {
                call.insert("args".to_owned(), escaped(&failure.case.arguments));
            }
            other => {
                let raw = serde_json::to_string(other).unwrap_or_default();
                call.insert("raw_args".to_owned(), Value::from(raw.replace("${", "$${")));
            }
        }
        call.insert(
            "expect".to_owned(),
            json!({ "not_contains": [
                "exited during the call",
                "is not running",
                "took longer than its call_timeout",
                "could not be read",
                "JSON-RPC error -32603",
            ]}),
        );
        let body = json!({
            "name": format!("fuzz {name} #{}", failure.index),
            "tags": ["mcp", "fuzz", server],
            "tools": [tools_entry],
            "model": [Value::Object(call)],
        });
        let header = format!(
            "# Written by `harness fuzz --write`: case #{} of `{}` ({}{}) failed: {}.\n# It \
             passes when the server answers this call with a result or a JSON-RPC error other \
             than an internal error.",
            failure.index,
            comment(name),
            failure.case.class.name(),
            failure
                .case
                .field
                .as_deref()
                .map_or_else(String::new, |f| format!(" `{}`", comment(f))),
            failure.kind.name()
        );
        files.push((
            format!("{stem}-{}.yaml", failure.index),
            format!("{header}\n{}", to_yaml(&body)),
        ));
    }
    files
}
