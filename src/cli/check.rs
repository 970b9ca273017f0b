//! `harness check [PATHS…]` and `harness list [PATHS…]`: load and validate
//! only. What loading refuses is what `harness run` refuses before it
//! starts a scenario (the suite's gates and tokenizer are checked where
//! the suite file loads), so `check` serves as a lint step.

use std::path::PathBuf;

use clap::Args;

use crate::exit;
use crate::run::Selection;
use crate::run::discover;
use crate::run::runner::no_scenarios;

use super::select::SelectionArgs;

/// Flags of `harness check` and `harness list`.
#[derive(Debug, Args)]
pub(super) struct CheckArgs {
    /// Scenario files or directories (default: scenarios/).
    paths: Vec<PathBuf>,
    #[command(flatten)]
    select: SelectionArgs,
}

impl CheckArgs {
    fn paths(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() {
            vec![PathBuf::from("scenarios")]
        } else {
            self.paths.clone()
        }
    }

    fn selection(&self) -> Result<Selection, String> {
        self.select.selection()
    }
}

pub(super) fn check(args: CheckArgs) -> u8 {
    let selection = match args.selection() {
        Ok(selection) => selection,
        Err(err) => return super::common::usage_error(err),
    };
    let discovery = discover(&args.paths(), &selection);
    for error in &discovery.errors {
        println!("{error}");
    }
    let count = discovery.scenarios.len();
    if discovery.errors.is_empty() {
        println!("{count} scenario{} OK", if count == 1 { "" } else { "s" });
        exit::SUCCESS
    } else {
        println!(
            "{} problem{} found ({count} valid scenario{})",
            discovery.errors.len(),
            if discovery.errors.len() == 1 { "" } else { "s" },
            if count == 1 { "" } else { "s" }
        );
        exit::USAGE
    }
}

pub(super) fn list(args: CheckArgs) -> u8 {
    let selection = match args.selection() {
        Ok(selection) => selection,
        Err(err) => return super::common::usage_error(err),
    };
    let discovery = discover(&args.paths(), &selection);
    for scenario in &discovery.scenarios {
        let mut line = format!("{}  ({})", scenario.name, scenario.file.display());
        if !scenario.tags.is_empty() {
            line.push_str(&format!("  [{}]", scenario.tags.join(", ")));
        }
        if let Some(reason) = &scenario.skip {
            line.push_str(&format!("  skip: {reason}"));
        }
        println!("{line}");
    }
    for error in &discovery.errors {
        eprintln!("error: {error}");
    }
    if discovery.scenarios.is_empty() && discovery.errors.is_empty() {
        // Like `harness run`: nothing to list is bad input.
        return super::common::usage_error(no_scenarios(&discovery.paths, discovery.narrowed));
    }
    if discovery.errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::USAGE
    }
}
