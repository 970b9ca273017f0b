//! `harness run [PATHS…]`: discover, build the runner, run, print, exit.
//! Every setting is resolved and checked by [`RunnerBuilder`]; this file
//! parses flags, reads the baseline, prints and writes the reports, and
//! records the run in `last-run.json` for `--last-failed` (in `.harness/`
//! beside the suite's harness.yaml, or `$HARNESS_STATE_DIR`).

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::Path;
use std::path::PathBuf;

use clap::Args;

use crate::exit;
use crate::report::Baseline;
use crate::report::Format;
use crate::report::compare;
use crate::report::console;
use crate::report::json;
use crate::run::Partition;
use crate::run::RepeatSpec;
use crate::run::RunEvent;
use crate::run::RunnerBuilder;
use crate::run::Status;
use crate::run::VariantRun;
use crate::run::discover;
use crate::run::discover_with;
use crate::run::settings::Budget;
use crate::run::settings::Jobs;
use crate::run::settings::Tokenizer;
use crate::scenario::load::SUITE_FILE;
use crate::scenario::text_file::read_regular;

use crate::report::outputs::Reports;
use crate::report::outputs::shares_a_scenario;
use crate::report::outputs::write_file;
use crate::report::outputs::write_outputs;

use super::outputs::GateArgs;
use super::outputs::OutputArgs;
use super::outputs::exit_code;
use super::outputs::print_result;
use super::outputs::print_written;
use super::select::SelectionArgs;
use super::variants::Variant;

/// Where `harness run` keeps what it records between runs, unless the
/// environment variable of this name says otherwise.
pub(super) const STATE_DIR_VAR: &str = "HARNESS_STATE_DIR";

/// The state directory's name when [`STATE_DIR_VAR`] is not set: beside
/// the suite's `harness.yaml` (see [`state_dir`]).
pub(super) const STATE_DIR_NAME: &str = ".harness";

/// The file in the state directory that holds the last run.
pub(super) const LAST_RUN_FILE: &str = "last-run.json";

/// Flags of `harness run`.
#[derive(Debug, Args)]
pub(super) struct RunArgs {
    /// Scenario files or directories (default: scenarios/).
    paths: Vec<PathBuf>,
    #[command(flatten)]
    select: SelectionArgs,
    /// Only the scenarios that failed in the last run of these paths (as
    /// recorded in .harness/last-run.json beside their harness.yaml),
    /// looked for in the files they were in unless paths are given;
    /// combines with the other selection flags.
    #[arg(long)]
    last_failed: bool,
    /// Scenarios run at once, 1 to 1024 (default: harness.yaml `jobs`,
    /// else the number of cores). With 1, scenarios run in discovery order.
    #[arg(long, short = 'j', value_name = "N", value_parser = Jobs::parse)]
    jobs: Option<Jobs>,
    /// Stop starting scenarios after the first failure.
    #[arg(long)]
    fail_fast: bool,
    /// Keep each scenario's workspace and print where it is.
    #[arg(long)]
    keep_workspaces: bool,
    /// Accept new and changed snapshots (not with --variant).
    #[arg(long)]
    update_snapshots: bool,
    /// Report what the suite exercised of each tool and of the loop, and
    /// what it never did (a `coverage` section in run.json and
    /// summary.md, and a summary on the console).
    #[arg(long)]
    coverage: bool,
    /// Audit each scenario's MCP servers' tool definitions as `harness
    /// tools --check` does; an error-level finding fails the scenario
    /// (check `servers`).
    #[arg(long)]
    audit_servers: bool,
    /// Seconds a scenario may run, more than 0 and at most one day
    /// (default: harness.yaml `timeout`, else 60).
    #[arg(long, value_name = "SECS", value_parser = Budget::parse)]
    timeout: Option<Budget>,
    /// Token counter for figures: o200k (default), cl100k or chars4.
    #[arg(long, value_name = "NAME")]
    tokenizer: Option<String>,
    /// Run one partition of the selection: hash:K/N (by a stable hash of
    /// the scenario name) or slice:K/N (round robin in discovery order).
    #[arg(long, value_name = "hash:K/N|slice:K/N")]
    partition: Option<Partition>,
    /// Print less: no line per scenario and no progress bar; failures, the
    /// summary, the comparison and errors only.
    #[arg(long, short = 'q', conflicts_with = "verbose")]
    quiet: bool,
    /// Print more: the settings, a line for every scenario (no progress
    /// bar) and, under it, one line per tool call.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Run each scenario N times, 1 to 1000; reports give each scenario's
    /// pass count, flaky and nondeterministic scenarios, duration
    /// statistics, pass@k and pass^k.
    #[arg(long, value_name = "N")]
    repeat: Option<u32>,
    /// With --repeat: a scenario passes when at least K of its runs pass
    /// (default: all of them).
    #[arg(long, value_name = "K", requires = "repeat")]
    min_pass: Option<u32>,
    /// Run the selected scenarios once per variant: NAME=FILE, where FILE
    /// is a suite file (harness.yaml keys) that takes the place of each
    /// scenario's suite file (repeatable, at least two; docs/variants.md).
    #[arg(long = "variant", value_name = "NAME=FILE")]
    variants: Vec<String>,
    /// Serve the selected scenarios to a real coding agent: pi,
    /// claude-code, codex, gemini-cli or one of harness.yaml's `agents`
    /// (repeatable: each agent is a lane, side by side in every report;
    /// docs/agents.md).
    #[arg(long = "agent", value_name = "NAME")]
    agents: Vec<String>,
    /// Refuse to run (exit 2) where the kernel cannot fully sandbox the
    /// scenarios' programs (no Landlock, or no user namespaces); without
    /// it, the run says so and goes on with what the kernel can do.
    #[arg(long)]
    require_sandbox: bool,
    #[command(flatten)]
    outputs: OutputArgs,
    #[command(flatten)]
    gates: GateArgs,
}

/// Where a run of `paths` keeps its state: [`STATE_DIR_VAR`] when set,
/// else `.harness/` beside the `harness.yaml` that governs the first path
/// (the one its scenarios load with), else `.harness/` in the first path
/// itself when it is a directory, or beside it when it is a file. So the
/// state of a suite stays with the suite, wherever the run starts from,
/// and a project that is not Rust gets no `target/`.
pub(super) fn state_dir(paths: &[PathBuf]) -> PathBuf {
    if let Some(dir) = std::env::var_os(STATE_DIR_VAR).filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    let first = paths
        .first()
        .map_or(Path::new("scenarios"), PathBuf::as_path);
    let home = if first.is_dir() {
        first.to_path_buf()
    } else {
        first.parent().unwrap_or(Path::new("")).to_path_buf()
    };
    // The suite file is looked for from inside `home` upwards.
    let suite = crate::run::discover::suite_file_for(&home.join(SUITE_FILE));
    suite
        .as_deref()
        .and_then(Path::parent)
        .map_or(home, Path::to_path_buf)
        .join(STATE_DIR_NAME)
}

/// Where the last run of `paths` is recorded.
pub(super) fn last_run_file(paths: &[PathBuf]) -> PathBuf {
    state_dir(paths).join(LAST_RUN_FILE)
}

/// The names of the scenarios that failed in the recorded last run, and
/// the files they are in (as that run found them).
fn last_failed(file: &Path) -> Result<(BTreeSet<String>, BTreeSet<PathBuf>), String> {
    let text = read_regular(file).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            let hint = if std::env::var_os(STATE_DIR_VAR).is_some_and(|d| !d.is_empty()) {
                ""
            } else {
                " (a run's state is kept in .harness/ beside its suite's harness.yaml: give \
                 --last-failed the paths that run was given)"
            };
            format!(
                "--last-failed: no last run is recorded ({} does not exist); run `harness run` \
                 first{hint}",
                file.display()
            )
        } else {
            format!("--last-failed: cannot read {}: {err}", file.display())
        }
    })?;
    let report = json::parse(&text).map_err(|err| {
        format!(
            "--last-failed: {}",
            crate::report::json_file::in_file(file, err.place(), &err.to_string())
        )
    })?;
    // With variants, what failed in any of them.
    let variants = report.variants.into_iter().flat_map(|v| v.scenarios);
    Ok(report
        .scenarios
        .into_iter()
        .chain(variants)
        .filter(|s| s.status == Status::Failed)
        .map(|s| (s.name, PathBuf::from(s.file)))
        .unzip())
}

/// Records the run for `--last-failed`; a failure is only a warning.
fn record_last_run(reports: &mut Reports<'_>, file: &Path) {
    let result = reports.bytes(Format::Json).and_then(|bytes| {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            create_state_dir(dir).map_err(|err| err.to_string())?;
        }
        write_file(file, bytes).map_err(|err| err.to_string())
    });
    if let Err(err) = result {
        eprintln!(
            "warning: cannot record the last run in {} (for --last-failed): {err}",
            file.display()
        );
    }
}

/// Makes the state directory; a `.harness` one made here gets a
/// `.gitignore` of `*`, so that version control passes it by without the
/// project having to say so.
fn create_state_dir(dir: &Path) -> std::io::Result<()> {
    let made = !dir.exists();
    std::fs::create_dir_all(dir)?;
    if made && dir.file_name() == Some(std::ffi::OsStr::new(STATE_DIR_NAME)) {
        write_file(
            &dir.join(".gitignore"),
            b"# written by harness run: its state, not to commit\n*\n",
        )?;
    }
    Ok(())
}

pub(super) fn run(args: RunArgs) -> u8 {
    super::guard::not_dumpable();
    if let Err(err) = super::sandbox::check_run(args.require_sandbox) {
        return super::common::usage_error(err);
    }
    let mut paths = if args.paths.is_empty() {
        vec![PathBuf::from("scenarios")]
    } else {
        args.paths.clone()
    };
    // Decided before --last-failed turns the paths into the failed files.
    let last_run = last_run_file(&paths);
    let mut selection = match args.select.selection() {
        Ok(selection) => selection,
        Err(err) => return super::common::usage_error(err),
    };
    if args.last_failed {
        let (names, files) = match last_failed(&last_run) {
            Ok(failed) => failed,
            Err(err) => return super::common::usage_error(err),
        };
        // Without paths, what failed is looked for where it was.
        if args.paths.is_empty() && !files.is_empty() {
            paths = files.into_iter().collect();
        }
        if names.is_empty() {
            println!(
                "no scenario failed in the last run ({}); nothing to run",
                last_run.display()
            );
            return exit::SUCCESS;
        }
        selection.only = Some(names);
    }
    // A plain run's files are found before its flags are read, so their
    // problems are listed first.
    let plain = args
        .variants
        .is_empty()
        .then(|| discover(&paths, &selection));
    for error in plain.iter().flat_map(|d| &d.errors) {
        eprintln!("error: {error}");
    }
    let tokenizer = match args.tokenizer.as_deref().map(Tokenizer::parse).transpose() {
        Ok(tokenizer) => tokenizer,
        Err(err) => return super::common::usage_error(format!("--tokenizer: {err}")),
    };
    let repeat = match args
        .repeat
        .map(|runs| RepeatSpec::new(runs, args.min_pass))
        .transpose()
    {
        Ok(repeat) => repeat,
        Err(err) => return super::common::usage_error(err),
    };
    let gates = match args.gates.parsed() {
        Ok(gates) => gates,
        Err(err) => return super::common::usage_error(err),
    };
    if !args.agents.is_empty() && !args.variants.is_empty() {
        return super::common::usage_error(super::agents::NO_VARIANTS);
    }
    if args.agents.len() > 1 && args.update_snapshots {
        return super::common::usage_error(super::variants::NO_SNAPSHOT_UPDATES);
    }
    let lanes = match plain {
        Some(discovery) if !args.agents.is_empty() => {
            match super::agents::lanes(&args.agents, discovery, &paths, &selection) {
                Ok(mut lanes) if lanes.len() == 1 => {
                    let Some((_, discovery)) = lanes.pop() else {
                        return super::common::usage_error("--agent: no agent to run");
                    };
                    vec![Lane::Plain(discovery)]
                }
                Ok(lanes) => lanes
                    .into_iter()
                    .map(|(name, discovery)| Lane::Agent(name, Box::new(discovery)))
                    .collect(),
                Err(err) => return super::common::usage_error(err),
            }
        }
        Some(discovery) => vec![Lane::Plain(discovery)],
        None => {
            if args.update_snapshots {
                return super::common::usage_error(super::variants::NO_SNAPSHOT_UPDATES);
            }
            match super::variants::parse(&args.variants) {
                Ok(variants) => variants
                    .into_iter()
                    .map(|v| Lane::Variant(Box::new(v)))
                    .collect(),
                Err(err) => return super::common::usage_error(err),
            }
        }
    };
    let lab = super::variants::Lab {
        paths: &paths,
        selection: &selection,
        tokenizer,
        gates,
        repeat,
    };
    match run_lanes(&args, &lab, lanes) {
        Ok(runs) => finish(&args, runs, &last_run),
        Err(code) => code,
    }
}

/// One run of the selection within `harness run`: the plain run, or one
/// `--variant` (its suite file in the place of each scenario file's).
enum Lane {
    /// The plain run, over what discovery found.
    Plain(crate::run::Discovery),
    /// A variant.
    Variant(Box<Variant>),
    /// One `--agent` of several: its name, and the selection served to it.
    Agent(String, Box<crate::run::Discovery>),
}

/// A lane run: its name and file (a variant's), its summary, its
/// comparison with its baseline.
struct LaneRun {
    variant: Option<(String, String)>,
    summary: crate::run::RunSummary,
    comparison: Option<crate::report::Comparison>,
}

/// Runs each lane in turn: its runner built, its baseline read and
/// checked, the report places prepared before the first scenario runs.
/// A usage problem ends it with the exit code to return.
fn run_lanes(
    args: &RunArgs,
    lab: &super::variants::Lab<'_>,
    lanes: Vec<Lane>,
) -> Result<Vec<LaneRun>, u8> {
    let verbosity = verbosity_of(args);
    let plural = lanes.len() > 1 || matches!(lanes.first(), Some(Lane::Variant(_)));
    let mut runs = Vec::new();
    let mut prepared = false;
    for lane in lanes {
        let (discovery, variant) = match lane {
            Lane::Plain(discovery) => (discovery, None),
            Lane::Agent(name, discovery) => {
                let file = format!("--agent {name}");
                (*discovery, Some((name, file)))
            }
            Lane::Variant(variant) => {
                let variant = *variant;
                let discovery = discover_with(lab.paths, lab.selection, Some(&variant.suite));
                for error in &discovery.errors {
                    eprintln!("error: variant {}: {error}", variant.name);
                }
                let file = variant.file.display().to_string();
                (discovery, Some((variant.name, file)))
            }
        };
        // An agent's lane is named as one (`agent pi (--agent pi)`).
        let kind = match &variant {
            Some((_, file)) if file.starts_with("--agent ") => "agent",
            _ => "variant",
        };
        let named = |err: String| match &variant {
            Some((name, _)) => format!("{kind} {name}: {err}"),
            None => err,
        };
        if plural && !prepared {
            // A run of variants checks the report places first.
            prepare_outputs(args)?;
            prepared = true;
        }
        let runner = builder(args, discovery, lab.tokenizer.clone(), lab.gates.clone())
            .repeat(lab.repeat)
            .transcripts(args.outputs.shows_transcripts())
            .build()
            .map_err(|err| super::common::usage_error(named(err.to_string())))?;
        let baseline = match &variant {
            Some((name, _)) => variant_baseline(args, name, runner.tokenizer()),
            None => args.gates.baseline_for(runner.tokenizer()),
        }
        .map_err(super::common::usage_error)?;
        if let Some(baseline) = &baseline
            && let Err(err) = shares_a_scenario(baseline, runner.scenario_names())
        {
            return Err(super::common::usage_error(named(err)));
        }
        if !prepared {
            prepare_outputs(args)?;
            prepared = true;
        }
        let gates = runner.gates().to_vec();
        match &variant {
            Some((name, file)) if verbosity != Verbosity::Quiet => {
                println!("{kind} {name} ({file}):");
            }
            None if verbosity == Verbosity::Verbose => {
                println!("{}", settings_line(&runner, &gates));
            }
            _ => {}
        }
        // A partition's note names the baseline file of a plain run.
        let save_baseline = match variant {
            None => args.outputs.save_baseline.as_deref(),
            Some(_) => None,
        };
        let summary = execute(runner, save_baseline, verbosity)
            .map_err(|err| super::common::usage_error(named(err.to_string())))?;
        let comparison = baseline.map(|b| compare(&summary, &b, &gates));
        runs.push(LaneRun {
            variant,
            summary,
            comparison,
        });
    }
    Ok(runs)
}

/// Creates the report places before anything runs.
fn prepare_outputs(args: &RunArgs) -> Result<(), u8> {
    args.outputs.prepare().map_err(super::common::usage_error)
}

/// The end of `harness run`: the reports written first (whatever happens
/// to the console, a closed pipe, they are written; each is rendered once
/// and let go once written), then what the console shows, and the exit
/// code (a run of variants: the worst variant's).
fn finish(args: &RunArgs, mut runs: Vec<LaneRun>, last_run: &Path) -> u8 {
    let verbosity = verbosity_of(args);
    let is_plain = runs.len() == 1 && runs[0].variant.is_none();
    if is_plain {
        let Some(run) = runs.pop() else {
            return super::common::usage_error("no run");
        };
        let (summary, comparison) = (run.summary, run.comparison);
        let written = {
            let mut reports = Reports::new(&summary, comparison.as_ref());
            let written = write_outputs(&args.outputs.outputs(), &mut reports);
            record_last_run(&mut reports, last_run);
            written
        };
        print_lane(args, &summary, comparison.as_ref());
        for line in console::snapshot_lines(&summary, args.update_snapshots) {
            println!("{line}");
        }
        print!("{}", crate::report::repeats::console(&summary));
        if args.coverage {
            print!("{}", crate::report::coverage::console(&summary));
        }
        print_written(&written, &summary, verbosity != Verbosity::Quiet);
        say_load_problems(&summary);
        return exit_code(&summary, comparison.as_ref(), written.ok());
    }
    let comparisons: Vec<_> = runs.iter().map(|r| r.comparison.clone()).collect();
    let runs: Vec<VariantRun> = runs
        .into_iter()
        .map(|run| {
            let (name, file) = run.variant.unwrap_or_default();
            VariantRun {
                name,
                file,
                summary: run.summary,
            }
        })
        .collect();
    let Some(first) = runs.first() else {
        return super::common::usage_error("--variant: no variant to run");
    };
    let mut summary = first.summary.clone();
    summary.load_errors = runs
        .iter()
        .flat_map(|r| r.summary.load_errors.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    summary.variants = runs;
    let comparison = comparisons.first().cloned().flatten();
    let outputs = OutputArgs {
        save_baseline: None,
        ..args.outputs.clone()
    };
    let mut written = {
        let mut reports = Reports::of_variants(&summary, comparison.as_ref(), &comparisons);
        let written = write_outputs(&outputs.outputs(), &mut reports);
        record_last_run(&mut reports, last_run);
        written
    };
    if let Some(file) = &args.outputs.save_baseline {
        for run in &summary.variants {
            let path = super::variants::baseline_file(file, &run.name);
            let mut baseline = Baseline::of(&run.summary);
            baseline.variant = Some(run.name.clone());
            let result = baseline
                .to_json()
                .map_err(|err| err.to_string())
                .and_then(|bytes| write_file(&path, &bytes).map_err(|err| err.to_string()));
            written.record(&path, "baseline", result);
        }
    }
    let mut code = exit::SUCCESS;
    for (run, comparison) in summary.variants.iter().zip(&comparisons) {
        let kind = if run.file.starts_with("--agent ") {
            "agent"
        } else {
            "variant"
        };
        println!("\n== {kind} {} ({}) ==", run.name, run.file);
        print_lane(args, &run.summary, comparison.as_ref());
        print!("{}", crate::report::repeats::console(&run.summary));
        if args.coverage {
            print!("{}", crate::report::coverage::console(&run.summary));
        }
        code = code.max(exit_code(&run.summary, comparison.as_ref(), true));
    }
    print!("{}", crate::report::variants::console(&summary));
    print_written(&written, &summary, verbosity != Verbosity::Quiet);
    say_load_problems(&summary);
    code.max(exit_code(&summary, None, written.ok()))
}

/// What the console shows of one lane's run: the workspaces kept, the
/// failures, the summary line and the comparison.
fn print_lane(
    args: &RunArgs,
    summary: &crate::run::RunSummary,
    comparison: Option<&crate::report::Comparison>,
) {
    if args.keep_workspaces {
        for outcome in &summary.scenarios {
            if let Some(ws) = &outcome.workspace {
                println!("workspace of {}: {ws}", outcome.name);
            }
        }
    }
    print_result(summary, comparison);
}

/// The baseline of variant `name` (`--baseline FILE` with the name
/// inserted before the extension), which must record that variant or
/// none.
fn variant_baseline(
    args: &RunArgs,
    name: &str,
    tokenizer: &str,
) -> Result<Option<Baseline>, String> {
    let gates = GateArgs {
        baseline: args
            .gates
            .baseline
            .as_deref()
            .map(|file| super::variants::baseline_file(file, name)),
        gates: args.gates.gates.clone(),
    };
    let baseline = gates.baseline_for(tokenizer)?;
    if let Some(recorded) = baseline.as_ref().and_then(|b| b.variant.as_deref())
        && recorded != name
    {
        return Err(format!(
            "the baseline {} records variant `{recorded}`, not `{name}`",
            gates
                .baseline
                .as_deref()
                .map(Path::display)
                .map(|d| d.to_string())
                .unwrap_or_default()
        ));
    }
    Ok(baseline)
}

/// How much the flags ask `harness run` to print.
fn verbosity_of(args: &RunArgs) -> Verbosity {
    if args.quiet {
        Verbosity::Quiet
    } else if args.verbose {
        Verbosity::Verbose
    } else {
        Verbosity::Normal
    }
}

/// The runner the flags ask for, over what discovery found, with the
/// `--tokenizer` and `--gate` the flags give, parsed.
fn builder(
    args: &RunArgs,
    discovery: crate::run::Discovery,
    tokenizer: Option<Tokenizer>,
    gates: Vec<crate::run::Gate>,
) -> RunnerBuilder {
    RunnerBuilder::discovered(discovery)
        .tokenizer(tokenizer)
        .timeout(args.timeout)
        .gates(gates)
        .jobs(args.jobs)
        .partition(args.partition)
        .fail_fast(args.fail_fast)
        .keep_workspaces(args.keep_workspaces)
        .update_snapshots(args.update_snapshots)
        .coverage(args.coverage)
        .audit_servers(args.audit_servers)
}

/// `--verbose`'s first line: how the run is set up.
fn settings_line(runner: &crate::run::Runner, gates: &[crate::run::Gate]) -> String {
    let gates = if gates.is_empty() {
        String::new()
    } else {
        let written: Vec<String> = gates.iter().map(ToString::to_string).collect();
        format!(", gates {}", written.join(" "))
    };
    format!(
        "running with {} job{}, the {} tokenizer{gates}",
        runner.jobs(),
        if runner.jobs() == 1 { "" } else { "s" },
        runner.tokenizer(),
    )
}

/// How much `harness run` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verbosity {
    /// `--quiet`.
    Quiet,
    /// The default.
    Normal,
    /// `--verbose`.
    Verbose,
}

/// The line under the console's end that counts the scenario files'
/// problems (listed above it), when there were any.
fn say_load_problems(summary: &crate::run::RunSummary) {
    let problems = summary.load_errors.len();
    if problems > 0 {
        eprintln!(
            "{problems} problem{} in scenario files (listed above); fix them and run again",
            if problems == 1 { "" } else { "s" }
        );
    }
}

/// Runs `runner` with the console's progress for `verbosity`.
fn execute(
    runner: crate::run::Runner,
    save_baseline: Option<&Path>,
    verbosity: Verbosity,
) -> Result<crate::run::RunSummary, crate::run::RunError> {
    let mut progress = Progress {
        save_baseline,
        verbosity,
        bar: None,
    };
    let summary = runner.execute(|event| progress.show(event));
    progress.finish();
    summary
}

/// What `harness run` shows while it runs: a progress bar on a terminal
/// (standard error), elsewhere one line per scenario.
struct Progress<'a> {
    /// `--save-baseline`, which a partition's note names.
    save_baseline: Option<&'a Path>,
    /// How much to print.
    verbosity: Verbosity,
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
                if self.verbosity == Verbosity::Normal {
                    self.bar = progress_bar(total);
                }
            }
            RunEvent::Interrupted { signal } => {
                let text = format!(
                    "{signal} received: stopping the running scenarios and starting no more"
                );
                match &self.bar {
                    Some(bar) => bar.suspend(|| eprintln!("{text}")),
                    None => eprintln!("{text}"),
                }
            }
            RunEvent::Finished(outcome) => match (&self.bar, self.verbosity) {
                (Some(bar), _) => {
                    if outcome.status == Status::Failed {
                        bar.println(super::output::terminal_text(
                            &console::scenario_line(outcome),
                            &[],
                        ));
                    }
                    bar.set_message(super::output::terminal_text(&outcome.name, &[]).into_owned());
                    bar.inc(1);
                }
                (None, Verbosity::Quiet) => {}
                (None, Verbosity::Normal) => println!("{}", console::scenario_line(outcome)),
                (None, Verbosity::Verbose) => {
                    println!("{}", console::scenario_line(outcome));
                    print!("{}", console::call_lines(outcome));
                    print!("{}", console::server_lines(outcome, "    "));
                }
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
