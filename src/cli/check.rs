//! `harness check [PATHS…]` and `harness list [PATHS…]`: load and validate
//! only.

use std::path::PathBuf;

use clap::Args;

use crate::exit;
use crate::run::Selection;
use crate::run::discover;

/// Flags of `harness check` and `harness list`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files or directories (default: scenarios/).
    paths: Vec<PathBuf>,
    /// Only scenarios whose name or path contains this text or matches this regex.
    #[arg(long, value_name = "TEXT|REGEX")]
    filter: Option<String>,
    /// Only scenarios with this tag (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
}

impl CheckArgs {
    fn paths(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() {
            vec![PathBuf::from("scenarios")]
        } else {
            self.paths.clone()
        }
    }

    fn selection(&self) -> Selection {
        Selection {
            filter: self.filter.clone(),
            tags: self.tags.clone(),
        }
    }
}

pub fn check(args: CheckArgs) -> u8 {
    let discovery = discover(&args.paths(), &args.selection());
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

pub fn list(args: CheckArgs) -> u8 {
    let discovery = discover(&args.paths(), &args.selection());
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
    if discovery.errors.is_empty() {
        exit::SUCCESS
    } else {
        exit::USAGE
    }
}
