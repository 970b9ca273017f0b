//! `harness completions SHELL`: a completion script for the shell, written
//! to standard output by clap_complete from the same clap definitions the
//! command line parses with.

use clap::Args;
use clap::CommandFactory as _;
use clap_complete::Shell;

use crate::exit;

/// Flags of `harness completions`.
#[derive(Debug, Args)]
pub(super) struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

pub(super) fn run(args: &CompletionsArgs) -> u8 {
    let mut command = super::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "harness", &mut script);
    print!("{}", String::from_utf8_lossy(&script));
    exit::SUCCESS
}
