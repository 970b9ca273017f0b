//! `harness run [PATHS…]`: discover, build the runner, run, print, exit.
//! Every setting is resolved and checked by [`RunnerBuilder`]; this file
//! parses flags, reads the baseline, prints and writes the reports.

use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::agent::TokenCounter;
use crate::report::compare;
use crate::report::console;
use crate::run::Partition;
use crate::run::RunEvent;
use crate::run::RunnerBuilder;
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
    let discovery = discover(&paths, &selection);
    for error in &discovery.errors {
        eprintln!("error: {error}");
    }
    let runner = RunnerBuilder::discovered(discovery)
        .tokenizer(args.tokenizer.clone())
        .timeout(args.timeout)
        .gates(args.gates.gates.clone())
        .jobs(args.jobs)
        .partition(args.partition)
        .fail_fast(args.fail_fast)
        .keep_workspaces(args.keep_workspaces)
        .update_snapshots(args.update_snapshots)
        .build();
    let runner = match runner {
        Ok(runner) => runner,
        Err(err) => return super::usage_error(err),
    };
    let baseline = match args.gates.baseline_for(runner.tokenizer()) {
        Ok(baseline) => baseline,
        Err(err) => return super::usage_error(err),
    };
    if let Err(err) = args.outputs.prepare() {
        return super::usage_error(err);
    }
    let gates = runner.gates().to_vec();
    let mut progress = Progress {
        save_baseline: args.outputs.save_baseline.as_deref(),
        bar: None,
    };
    let summary = runner.execute(|event| progress.show(event));
    progress.finish();
    let summary = match summary {
        Ok(summary) => summary,
        Err(err) => return super::usage_error(err),
    };
    let comparison = baseline.map(|b| compare(&summary, &b, &gates));
    if args.keep_workspaces {
        for outcome in &summary.scenarios {
            if let Some(ws) = &outcome.workspace {
                println!("workspace of {}: {ws}", outcome.name);
            }
        }
    }
    super::report::print_result(&summary, comparison.as_ref());
    let written = super::report::write_outputs(&args.outputs, &summary, comparison.as_ref());
    let problems = summary.load_errors.len();
    if problems > 0 {
        eprintln!(
            "{problems} problem{} in scenario files (listed above); fix them and run again",
            if problems == 1 { "" } else { "s" }
        );
    }
    super::report::exit_code(&summary, comparison.as_ref(), written)
}

/// What `harness run` shows while it runs: a progress bar on a terminal
/// (standard error), elsewhere one line per scenario.
struct Progress<'a> {
    /// `--save-baseline`, which a partition's note names.
    save_baseline: Option<&'a Path>,
    /// The bar, once the run started on a terminal.
    bar: Option<indicatif::ProgressBar>,
}

impl Progress<'_> {
    fn show(&mut self, event: RunEvent<'_>) {
        match event {
            RunEvent::Started { total, partition } => {
                if let Some(info) = partition {
                    if let Some(file) = self.save_baseline {
                        eprintln!(
                            "note: {} will hold only partition {}; to record the whole suite, \
                             save the baseline from `harness report merge`",
                            file.display(),
                            info.spec
                        );
                    }
                    if total == 0 {
                        println!(
                            "partition {} holds none of the {} selected scenarios",
                            info.spec, info.suite_scenarios
                        );
                    }
                }
                self.bar = progress_bar(total);
            }
            RunEvent::Finished(outcome) => match &self.bar {
                Some(bar) => {
                    if outcome.status == Status::Failed {
                        bar.println(console::scenario_line(outcome));
                    }
                    bar.set_message(outcome.name.clone());
                    bar.inc(1);
                }
                None => println!("{}", console::scenario_line(outcome)),
            },
        }
    }

    fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A progress bar on a terminal (standard error); `None` elsewhere, where
/// each scenario gets a line instead.
fn progress_bar(total: usize) -> Option<indicatif::ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let bar = indicatif::ProgressBar::new(total as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    })
}
