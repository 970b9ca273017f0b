//! `harness run [PATHS…]`: discover, run, print, exit.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::agent::TokenCounter;
use crate::exit;
use crate::report::Gate;
use crate::report::console;
use crate::report::gate;
use crate::run::LoadError;
use crate::run::Partition;
use crate::run::PartitionInfo;
use crate::run::RunConfig;
use crate::run::RunEvent;
use crate::run::Runner;
use crate::run::Selection;
use crate::run::Status;
use crate::run::discover;

use super::report::GateArgs;
use super::report::OutputArgs;

/// Flags of `harness run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files or directories (default: scenarios/).
    paths: Vec<PathBuf>,
    /// Only scenarios whose name or path contains this text or matches this regex.
    #[arg(long, value_name = "TEXT|REGEX")]
    filter: Option<String>,
    /// Only scenarios with this tag (repeatable: any of them).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// Scenarios run at once (default: harness.yaml `jobs`, else the number of cores).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Stop starting scenarios after the first failure.
    #[arg(long)]
    fail_fast: bool,
    /// Keep each scenario's workspace and print where it is.
    #[arg(long)]
    keep_workspaces: bool,
    /// Accept new and changed snapshots.
    #[arg(long)]
    update_snapshots: bool,
    /// Seconds a scenario may run (default: harness.yaml `timeout`, else 60).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Token counter for figures: o200k (default), cl100k or chars4.
    #[arg(long, value_name = "NAME")]
    tokenizer: Option<String>,
    /// Run one partition of the selection: hash:K/N (by a stable hash of
    /// the scenario name) or slice:K/N (round robin in discovery order).
    #[arg(long, value_name = "hash:K/N|slice:K/N")]
    partition: Option<Partition>,
    #[command(flatten)]
    outputs: OutputArgs,
    #[command(flatten)]
    gates: GateArgs,
}

/// Parses a tokenizer name.
pub fn tokenizer(name: &str) -> Result<Arc<dyn TokenCounter>, String> {
    crate::agent::tokens::tokenizer_by_name(name)
}

pub fn run(args: RunArgs) -> u8 {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        args.paths.clone()
    };
    let selection = Selection {
        filter: args.filter.clone(),
        tags: args.tags.clone(),
    };
    let mut discovery = discover(&paths, &selection);
    for error in &discovery.errors {
        eprintln!("error: {error}");
    }
    let suite = discovery.suites.first();
    let tokenizer_name = args
        .tokenizer
        .clone()
        .or_else(|| suite.and_then(|s| s.doc.tokenizer.clone()))
        .unwrap_or_else(|| "o200k".to_owned());
    let tokens = match tokenizer(&tokenizer_name) {
        Ok(t) => t,
        Err(err) => return super::usage_error(format!("--tokenizer: {err}")),
    };
    if let Some(t) = args.timeout
        && !(t.is_finite() && t > 0.0)
    {
        return super::usage_error("--timeout must be a positive number of seconds");
    }
    let configured: Vec<Gate> = match super::report::suite_gates(
        suite.and_then(|s| s.doc.gates.as_ref()),
        suite.and_then(|s| s.dir.as_deref()),
    ) {
        Ok(gates) => gates,
        Err(err) => return super::usage_error(err),
    };
    let (gates, baseline) = match args.gates.resolve(configured) {
        Ok(resolved) => resolved,
        Err(err) => return super::usage_error(err),
    };
    if let Some(baseline) = &baseline
        && let Some(err) = super::report::tokenizer_mismatch(baseline, tokens.name())
    {
        return super::usage_error(err);
    }
    if let Err(err) = args.outputs.prepare() {
        return super::usage_error(err);
    }
    let config = RunConfig {
        jobs: args
            .jobs
            .or_else(|| suite.and_then(|s| s.doc.jobs))
            .unwrap_or_else(|| RunConfig::default().jobs)
            .max(1),
        fail_fast: args.fail_fast,
        keep_workspaces: args.keep_workspaces,
        update_snapshots: args.update_snapshots,
        timeout: args.timeout.map(Duration::from_secs_f64),
        tokens,
    };
    if discovery.scenarios.is_empty() && discovery.errors.is_empty() {
        eprintln!(
            "error: no scenarios found in {} (with the given --filter/--tag)",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return exit::USAGE;
    }
    if let (Some(partition), Some(file)) = (&args.partition, &args.outputs.save_baseline) {
        eprintln!(
            "note: {} will hold only partition {partition}; to record the whole suite, save the \
             baseline from `harness report merge`",
            file.display()
        );
    }
    let suite_scenarios = discovery.scenarios.len();
    let positions = match args.partition {
        Some(partition) => {
            let positions = discovery.keep_partition(&partition);
            if positions.is_empty() {
                println!(
                    "partition {partition} holds none of the {suite_scenarios} selected scenarios"
                );
            }
            positions
        }
        None => (0..suite_scenarios).collect(),
    };
    let terminal = std::io::stderr().is_terminal();
    let progress = terminal.then(|| {
        let bar = indicatif::ProgressBar::new(discovery.scenarios.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let mut summary = Runner::new(config).run(&discovery.scenarios, |event| match event {
        RunEvent::Started { .. } => {}
        RunEvent::Finished(outcome) => match &progress {
            Some(bar) => {
                if outcome.status == Status::Failed {
                    bar.println(console::scenario_line(outcome));
                }
                bar.set_message(outcome.name.clone());
                bar.inc(1);
            }
            None => println!("{}", console::scenario_line(outcome)),
        },
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    for (outcome, position) in summary.scenarios.iter_mut().zip(&positions) {
        outcome.index = *position;
    }
    summary.partition = args.partition.map(|spec| PartitionInfo {
        spec,
        suite_scenarios,
    });
    summary.load_errors = discovery.errors.iter().map(LoadError::from).collect();
    summary.gates = gates.iter().map(Gate::to_string).collect();
    let comparison = baseline.map(|b| gate::compare(&summary, &b, &gates));
    if args.keep_workspaces {
        for outcome in &summary.scenarios {
            if let Some(ws) = &outcome.workspace {
                println!("workspace of {}: {ws}", outcome.name);
            }
        }
    }
    super::report::print_result(&summary, comparison.as_ref());
    let written = super::report::write_outputs(&args.outputs, &summary, comparison.as_ref());
    if !discovery.errors.is_empty() {
        eprintln!(
            "{} problem{} in scenario files (listed above); fix them and run again",
            discovery.errors.len(),
            if discovery.errors.len() == 1 { "" } else { "s" }
        );
    }
    super::report::exit_code(&summary, comparison.as_ref(), written)
}
