//! The command line: the only place with clap, stdout/stderr and exit
//! codes. Each subcommand is one file; they parse flags and call the
//! layers.
//!
//! Every command prints through the `print!`/`println!`/`eprint!`/
//! `eprintln!` of `output.rs`, declared first so that they shadow std's in
//! all the files below: a closed pipe (`harness list | head -1`) ends the
//! output quietly instead of panicking, and the command still finishes its
//! work (a run still writes its reports) and exits with its own code.

#[macro_use]
mod output;

mod call;
mod check;
mod completions;
mod guard;
mod import;
mod init;
mod mcp;
mod mcp_fixture;
mod record;
mod report;
mod run;
mod schema;
mod select;
mod tokens;
mod tools;
mod tools_check;
mod variants;

use std::process::ExitCode;

use clap::Parser;
use clap::Subcommand;

use crate::exit;

/// A coding-agent tool layer and a headless batch evaluation harness.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run scenarios and report (exit 0 all pass, 1 a failure, 2 bad input).
    Run(Box<run::RunArgs>),
    /// Load and validate scenarios without running them; list every problem
    /// (what `run` would refuse, harness.yaml's gates included; exit 2).
    Check(check::CheckArgs),
    /// List the scenarios that would run.
    List(check::CheckArgs),
    /// Print the JSON Schema of the scenario format.
    Schema(schema::SchemaArgs),
    /// Run one tool call through the registry and print its result as JSON.
    Call(call::CallArgs),
    /// Print the active tool definitions as a model receives them.
    Tools(tools::ToolsArgs),
    /// Work with report files: merge partition reports.
    Report(report::ReportArgs),
    /// Print the token count of a file (or standard input) as the harness
    /// prices text.
    Tokens(tokens::TokensArgs),
    /// Write a starter suite: scenarios/ with one passing scenario per tool,
    /// harness.yaml and a fixture.
    Init(init::InitArgs),
    /// Turn a recorded agent session into scenario files (pi, claude).
    Import(import::ImportArgs),
    /// Serve the tools over MCP on standard input and output
    /// (docs/mcp.md).
    Mcp(mcp::McpArgs),
    /// Stand between an MCP client and a real server, relay everything
    /// unchanged, and write the tools/calls that passed as a scenario
    /// that replays them (docs/mcp.md).
    Record(record::RecordArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish,
    /// powershell).
    Completions(completions::CompletionsArgs),
    /// A misbehaving MCP server for the tests (hidden).
    #[command(hide = true)]
    McpFixture(mcp_fixture::FixtureArgs),
}

/// The command line's definition (every subcommand, flag and alias), as
/// `--help` and shell completions show it; the docs' audit reads it.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// Parses the command line, runs the command and returns its exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                exit::USAGE
            } else {
                exit::SUCCESS
            };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let code = match cli.command {
        Command::Run(args) => run::run(*args),
        Command::Check(args) => check::check(args),
        Command::List(args) => check::list(args),
        Command::Schema(args) => schema::run(args),
        Command::Call(args) => call::run(args),
        Command::Tools(args) => tools::run(args),
        Command::Report(args) => report::run(args),
        Command::Tokens(args) => tokens::run(args),
        Command::Init(args) => init::run(&args),
        Command::Completions(args) => completions::run(&args),
        Command::Import(args) => import::run(args),
        Command::Mcp(args) => mcp::run(args),
        Command::Record(args) => record::run(&args),
        Command::McpFixture(args) => mcp_fixture::run(&args),
    };
    ExitCode::from(code)
}

/// The most bytes read from standard input or a file given on the command
/// line (`harness call`'s arguments, `harness tokens`): a device such as
/// `/dev/zero` must end in an error, not in exhausted memory.
const MAX_INPUT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads all of `reader` if it holds at most [`MAX_INPUT_BYTES`]; `what`
/// names it in the error ("standard input").
fn read_bounded(reader: impl std::io::Read, what: &str) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read {what}: {err}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "{what} holds more than {} MiB, the most harness reads from it",
            MAX_INPUT_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// Prints an error for a usage problem and returns the usage exit code.
fn usage_error(message: impl std::fmt::Display) -> u8 {
    eprintln!("error: {message}");
    exit::USAGE
}

/// The workspace of `--cwd DIR` (the current directory without it),
/// confined unless `--no-confine`, or what is wrong with it.
fn workspace(
    cwd: Option<std::path::PathBuf>,
    no_confine: bool,
) -> Result<crate::tools::Workspace, String> {
    let root = match cwd {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|err| format!("no current directory: {err}"))?,
    };
    crate::tools::Workspace::local(&root)
        .map(|ws| ws.with_confine(!no_confine))
        .map_err(|err| format!("--cwd {}: {err}", root.display()))
}

/// The registry of `workspace` with the tools `--tools` names (all
/// without it), or what is wrong with the selection.
fn registry(
    workspace: crate::tools::Workspace,
    tools: Option<&str>,
) -> Result<crate::tools::Registry, String> {
    tool_selection(crate::tools::Registry::builder(workspace), tools)
        .and_then(|builder| builder.build().map_err(|err| err.to_string()))
        .map_err(|err| format!("--tools: {err}"))
}

/// Parses `--tools`: a preset name or a comma-separated list of tool names.
/// A preset inside a list is refused (presets cannot be mixed with names),
/// and an unknown name is the one blamed.
fn tool_selection(
    builder: crate::tools::RegistryBuilder,
    spec: Option<&str>,
) -> Result<crate::tools::RegistryBuilder, String> {
    use crate::tools::Preset;
    let Some(text) = spec else {
        return Ok(builder);
    };
    if let Some(preset) = Preset::parse(text.trim()) {
        return Ok(builder.preset(preset));
    }
    let names: Vec<&str> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let presets: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| Preset::parse(name).is_some())
        .collect();
    if presets.is_empty() {
        return Ok(builder.allow(names));
    }
    let known: Vec<String> = crate::tools::builtin_tools()
        .iter()
        .map(|tool| {
            tool.spec(&crate::tools::Limits::default())
                .name
                .into_owned()
        })
        .collect();
    let unknown: Vec<String> = names
        .iter()
        .filter(|name| Preset::parse(name).is_none() && !known.iter().any(|k| k == *name))
        .map(|name| format!("`{name}`"))
        .collect();
    let quoted: Vec<String> = presets.iter().map(|p| format!("`{p}`")).collect();
    let (preset_words, verb) = match quoted.len() {
        1 => (format!("{} is a preset", quoted[0]), "it"),
        _ => (format!("{} are presets", quoted.join(", ")), "they"),
    };
    let mixing = format!(
        "{preset_words}, and {verb} cannot be mixed with tool names: give one preset (coding, \
         readonly, all) or a comma list of tool names"
    );
    Err(match unknown.len() {
        0 => mixing,
        1 => format!(
            "unknown tool {} (known tools: {}); {mixing}",
            unknown[0],
            known.join(", ")
        ),
        _ => format!(
            "unknown tools {} (known tools: {}); {mixing}",
            unknown.join(", "),
            known.join(", ")
        ),
    })
}
