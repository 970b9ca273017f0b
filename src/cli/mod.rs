//! The command line: the only place with clap, stdout/stderr and exit
//! codes. Each subcommand is one file; they parse flags and call the
//! rooms below (docs/architecture.md, "The command line").
//!
//! What the subcommand files share sits below them, and none of them
//! imports from this file, which only parses and dispatches:
//!
//! | module | holds |
//! | --- | --- |
//! | `output` | `print!`, `println!`, `eprint!`, `eprintln!` for every command |
//! | `common` | `usage_error`, bounded reads, the workspace and registry of `--cwd`, `--no-confine` and `--tools`, a tokenizer by name, a server's tools |
//! | `outputs` | the report flags `run` and `report merge` share, what the end of a run prints, `exit_code` |
//! | `select` | the selection flags `run`, `check` and `list` share |
//! | `sandbox` | `--no-sandbox` and `--no-network` of `call` and `mcp` |
//! | `guard` | `run`, `call` and `mcp` made not dumpable |
//! | `variants` | the `--variant` flags and each variant's baseline file |
//!
//! `run.rs` has one run flow: each lane (the plain run, or one `--variant`)
//! is built, checked against its baseline and executed by `run_lanes`;
//! `finish` writes the reports (`report::outputs`) and prints.
//!
//! Every command prints through the `print!`/`println!`/`eprint!`/
//! `eprintln!` of `output.rs`, declared first so that they shadow std's in
//! all the files below: a closed pipe (`harness list | head -1`) ends the
//! output quietly instead of panicking, and the command still finishes its
//! work (a run still writes its reports) and exits with its own code.

#[macro_use]
mod output;

mod agents;
mod call;
mod check;
mod common;
mod completions;
mod fuzz;
mod guard;
mod import;
mod init;
mod mcp;
mod outputs;
mod record;
mod report;
mod run;
mod sandbox;
mod schema;
mod select;
mod serve_model;
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
    /// Turn a recorded agent session into scenario files (pi, claude, gemini,
    /// codex).
    Import(import::ImportArgs),
    /// Serve the tools over MCP on standard input and output
    /// (docs/mcp.md).
    Mcp(mcp::McpArgs),
    /// Stand between an MCP client and a real server, relay everything
    /// unchanged, and write the tools/calls that passed as a scenario
    /// that replays them (docs/mcp.md).
    Record(record::RecordArgs),
    /// Serve one scenario's script as a model over HTTP on 127.0.0.1, for
    /// a real agent to run against; print its URL (docs/agents.md).
    ServeModel(serve_model::ServeModelArgs),
    /// Send adversarial calls made from each tool's input schema to an MCP
    /// server and report every call not answered (exit 0 all answered, 1 a
    /// failure, 2 bad input; docs/mcp.md).
    Fuzz(fuzz::FuzzArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish,
    /// powershell).
    Completions(completions::CompletionsArgs),
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
        Command::Fuzz(args) => fuzz::run(&args),
        Command::ServeModel(args) => serve_model::run(args),
    };
    ExitCode::from(code)
}
