//! Report files, baselines and gates on the command line: the flags that
//! `harness run` and `harness report merge` share, the file writing, and
//! `harness report merge` itself.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use clap::Args;
use clap::Subcommand;

use crate::exit;
use crate::report::Baseline;
use crate::report::Comparison;
use crate::report::Format;
use crate::report::compare;
use crate::report::console;
use crate::report::json;
use crate::report::merge;
use crate::report::read_baseline;
use crate::run::Gate;
use crate::run::RunSummary;
use crate::run::Status;
use crate::scenario::text_file::read_regular;

/// Where reports go.
#[derive(Clone, Debug, Default, Args)]
pub struct OutputArgs {
    /// Write every report into DIR: run.json, junit.xml, scenarios.csv,
    /// calls.csv, summary.md and index.html (created if missing).
    #[arg(long = "report", value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Write the JSON report (the whole run) to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the per-scenario CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the per-call CSV to FILE.
    #[arg(long = "calls-csv", value_name = "FILE")]
    pub calls_csv: Option<PathBuf>,
    /// Write the Markdown summary (for a pull-request comment) to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write the HTML report (one self-contained page with every
    /// scenario's transcript) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the per-scenario figures to FILE, to compare later runs with.
    #[arg(long, value_name = "FILE")]
    pub save_baseline: Option<PathBuf>,
}

/// A baseline to compare with, and the gates to judge.
#[derive(Debug, Default, Args)]
pub struct GateArgs {
    /// Compare with a baseline (a --save-baseline file or a run.json); fail
    /// when a scenario that passed there fails now, or a gate is breached.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// A gate: KEY=+LIMIT, e.g. tokens=+5%, retries=+0, errors=+0
    /// (repeatable; overrides harness.yaml `gates`). Needs --baseline.
    #[arg(long = "gate", value_name = "KEY=+LIMIT")]
    pub gates: Vec<String>,
}

impl OutputArgs {
    /// Whether a report asked for holds the scenarios' transcripts
    /// (`run.json` and `index.html`, also inside `--report DIR`).
    pub fn shows_transcripts(&self) -> bool {
        self.report_dir.is_some() || self.json.is_some() || self.html.is_some()
    }

    /// Every report file to write.
    fn targets(&self) -> Vec<(Format, PathBuf)> {
        let mut targets = Vec::new();
        if let Some(dir) = &self.report_dir {
            for format in Format::ALL {
                targets.push((format, dir.join(format.file_name())));
            }
        }
        for (format, file) in [
            (Format::Json, &self.json),
            (Format::Junit, &self.junit),
            (Format::ScenariosCsv, &self.csv),
            (Format::CallsCsv, &self.calls_csv),
            (Format::Markdown, &self.markdown),
            (Format::Html, &self.html),
        ] {
            if let Some(file) = file {
                targets.push((format, file.clone()));
            }
        }
        targets
    }

    /// Creates the report directory and the parents of report files before
    /// anything runs, so that an unusable place fails at once.
    pub fn prepare(&self) -> Result<(), String> {
        if let Some(dir) = &self.report_dir {
            std::fs::create_dir_all(dir).map_err(|err| {
                format!(
                    "cannot create the report directory {}: {err}",
                    dir.display()
                )
            })?;
        }
        let files = self
            .targets()
            .into_iter()
            .map(|(_, file)| file)
            .chain(self.save_baseline.clone());
        for file in files {
            if let Some(parent) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|err| {
                    format!("cannot create the directory of {}: {err}", file.display())
                })?;
            }
        }
        Ok(())
    }
}

/// Writes `bytes` to `path` through a temporary file in the same
/// directory, so that a reader never sees half a report.
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // A report is for everyone who can read the directory, like any file
    // the user writes.
    crate::tools::ops::write_new_over(&crate::tools::ops::LocalFs, path, bytes, 0o644)
}

impl GateArgs {
    /// The `--gate` gates, parsed.
    pub fn parsed(&self) -> Result<Vec<Gate>, String> {
        self.gates
            .iter()
            .map(|g| g.parse().map_err(|err| format!("--gate: {err}")))
            .collect()
    }

    /// The baseline of `--baseline`, if given, for a run counted with
    /// `tokenizer`; `--gate` without `--baseline` is a usage error.
    pub fn baseline_for(&self, tokenizer: &str) -> Result<Option<Baseline>, String> {
        let Some(path) = &self.baseline else {
            if !self.gates.is_empty() {
                return Err("--gate needs --baseline FILE to compare with".to_owned());
            }
            return Ok(None);
        };
        let text = read_regular(path)
            .map_err(|err| format!("cannot read the baseline {}: {err}", path.display()))?;
        let baseline = read_baseline(&text).map_err(|err| {
            format!(
                "baseline {}",
                crate::report::json_file::in_file(path, err.place(), &err.to_string())
            )
        })?;
        baseline
            .counted_with(tokenizer)
            .map_err(|err| err.to_string())?;
        Ok(Some(baseline))
    }
}

/// A baseline that has none of the scenarios about to run compares
/// nothing: most likely the baseline of another suite, or a wrong path.
pub fn shares_a_scenario<'a>(
    baseline: &Baseline,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), String> {
    let names: Vec<&str> = names.collect();
    if names.is_empty() || names.iter().any(|n| baseline.scenarios.contains_key(*n)) {
        return Ok(());
    }
    Err(format!(
        "the baseline shares no scenario with this run ({} scenario{} to run, {} in the \
         baseline), so it would compare nothing; is it the baseline of another suite?",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        baseline.scenarios.len()
    ))
}

/// Prints the end of a run: failures, the summary line and the
/// comparison.
pub fn print_result(summary: &RunSummary, comparison: Option<&Comparison>) {
    let colour = stdout_colour();
    let details = console::failure_details(summary, colour);
    if !details.is_empty() {
        super::output::write_out_styled(
            &format!("\nfailures:{details}\n"),
            &console::style_sequences(colour),
        );
    }
    println!("\n{}", console::summary_line(summary));
    if let Some(line) = console::replay_line(summary) {
        println!("{line}");
    }
    if let Some(table) = console::replay_table(summary) {
        print!("{table}");
    }
    if let Some(c) = comparison {
        print!("{}", console::comparison_text(c));
    }
}

/// Whether standard output gets colour, by the usual conventions
/// (no-color.org, bixense.com/clicolors): never with `NO_COLOR` set to
/// anything; always with `CLICOLOR_FORCE` set to anything but `0`; never
/// with `CLICOLOR=0`; else on a terminal that is not `TERM=dumb`.
fn stdout_colour() -> console::Colour {
    use std::io::IsTerminal as _;
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let terminal =
        || std::io::stdout().is_terminal() && var("TERM").is_none_or(|term| term != "dumb");
    let colour = if var("NO_COLOR").is_some() {
        false
    } else if var("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        true
    } else if var("CLICOLOR").is_some_and(|v| v == "0") {
        false
    } else {
        terminal()
    };
    if colour {
        console::Colour::Ansi
    } else {
        console::Colour::Plain
    }
}

/// What [`write_outputs`] wrote, and what it could not.
#[derive(Debug, Default)]
pub struct Written {
    /// The files written.
    files: Vec<String>,
    /// One message per file that could not be written.
    errors: Vec<String>,
}

impl Written {
    /// Notes that `path` (a `what`: report, baseline) was written, or why
    /// it was not.
    pub fn record(&mut self, path: &Path, what: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.files.push(path.display().to_string()),
            Err(err) => self
                .errors
                .push(format!("cannot write the {what} {}: {err}", path.display())),
        }
    }

    /// Whether every file was written.
    pub fn ok(&self) -> bool {
        self.errors.is_empty()
    }

    /// Prints what could not be written (stderr) and, when `list` is set,
    /// the files written (`wrote …`).
    pub fn print(&self, summary: &RunSummary, list: bool) {
        for error in &self.errors {
            eprintln!("error: {error}");
        }
        if list && !self.files.is_empty() {
            println!("wrote {}", self.files.join(", "));
        }
        if !self.ok() {
            eprintln!(
                "error: some reports could not be written (exit {}); the run's own result is \
                 above: {}",
                exit::USAGE,
                console::summary_line(summary)
            );
        }
    }
}

/// The reports of one run, each rendered at most once: one `run.json`
/// serves `--report DIR`, `--json FILE` and the record of the last run.
pub struct Reports<'a> {
    summary: &'a RunSummary,
    comparison: Option<&'a Comparison>,
    /// With `--variant`: each variant's comparison with its own baseline.
    variants: &'a [Option<Comparison>],
    rendered: BTreeMap<Format, Result<Vec<u8>, String>>,
}

impl<'a> Reports<'a> {
    /// The reports of `summary` (compared as `comparison` says), none
    /// rendered yet.
    pub fn new(summary: &'a RunSummary, comparison: Option<&'a Comparison>) -> Self {
        Self {
            summary,
            comparison,
            variants: &[],
            rendered: BTreeMap::new(),
        }
    }

    /// The reports of a run of variants, `variants[i]` comparing
    /// `summary.variants[i]` with its own baseline.
    pub fn of_variants(
        summary: &'a RunSummary,
        comparison: Option<&'a Comparison>,
        variants: &'a [Option<Comparison>],
    ) -> Self {
        Self {
            variants,
            ..Self::new(summary, comparison)
        }
    }

    /// The bytes of `format`, rendered on first use.
    pub fn bytes(&mut self, format: Format) -> Result<&[u8], String> {
        let (summary, comparison, variants) = (self.summary, self.comparison, self.variants);
        match self.rendered.entry(format).or_insert_with(|| {
            crate::report::render(format, summary, comparison, variants)
                .map_err(|err| err.to_string())
        }) {
            Ok(bytes) => Ok(bytes),
            Err(err) => Err(err.clone()),
        }
    }
}

/// Writes every requested report and the baseline, and says which it
/// wrote and which it could not; nothing is printed here, so that the
/// files are written before anything reaches the console.
pub fn write_outputs(outputs: &OutputArgs, reports: &mut Reports<'_>) -> Written {
    let summary = reports.summary;
    let mut written = Written::default();
    for (format, path) in outputs.targets() {
        let result = reports
            .bytes(format)
            .and_then(|bytes| write_file(&path, bytes).map_err(|err| err.to_string()));
        match result {
            Ok(()) => written.files.push(path.display().to_string()),
            Err(err) => written
                .errors
                .push(format!("cannot write the report {}: {err}", path.display())),
        }
    }
    if let Some(path) = &outputs.save_baseline {
        let result = Baseline::of(summary)
            .to_json()
            .map_err(|err| err.to_string())
            .and_then(|bytes| write_file(path, &bytes).map_err(|err| err.to_string()));
        match result {
            Ok(()) => written.files.push(path.display().to_string()),
            Err(err) => written.errors.push(format!(
                "cannot write the baseline {}: {err}",
                path.display()
            )),
        }
    }
    written
}

/// The exit code: 2 for bad input or unwritten reports, else 1 for a
/// failure, an interruption, a regression or a breached gate, else 0.
pub fn exit_code(summary: &RunSummary, comparison: Option<&Comparison>, written: bool) -> u8 {
    if !written || !summary.load_errors.is_empty() {
        return exit::USAGE;
    }
    if summary.count(Status::Failed) > 0
        || summary.interrupted
        || comparison.is_some_and(|c| !c.passed)
    {
        return exit::FAILED;
    }
    exit::SUCCESS
}

/// Flags of `harness report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(Debug, Subcommand)]
enum ReportCommand {
    /// Combine partition reports (run.json files) into one run and write
    /// every format (exit 0 all passed and gates held, 1 a failure or a
    /// breached gate, 2 bad input).
    Merge(MergeArgs),
}

/// Flags of `harness report merge`.
#[derive(Debug, Args)]
struct MergeArgs {
    /// The run.json of each partition.
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    #[command(flatten)]
    outputs: OutputArgs,
    #[command(flatten)]
    gates: GateArgs,
}

pub fn run(args: ReportArgs) -> u8 {
    match args.command {
        ReportCommand::Merge(args) => merge_reports(&args),
    }
}

fn merge_reports(args: &MergeArgs) -> u8 {
    // First, so that a refusal can say why in summary.md.
    if let Err(err) = args.outputs.prepare() {
        return super::usage_error(err);
    }
    match merged(args) {
        Ok((summary, comparison)) => {
            let mut reports = Reports::new(&summary, comparison.as_ref());
            let written = write_outputs(&args.outputs, &mut reports);
            for error in &summary.load_errors {
                eprintln!("error: {error}");
            }
            print_result(&summary, comparison.as_ref());
            written.print(&summary, true);
            exit_code(&summary, comparison.as_ref(), written.ok())
        }
        Err(reason) => {
            eprintln!("error: {reason}");
            refuse(args, &reason);
            exit::USAGE
        }
    }
}

/// The merged run and its comparison, or why the files cannot be merged.
fn merged(args: &MergeArgs) -> Result<(RunSummary, Option<Comparison>), String> {
    let mut parts = Vec::new();
    for file in &args.files {
        let text =
            read_regular(file).map_err(|err| format!("cannot read {}: {err}", file.display()))?;
        let report = json::parse(&text).map_err(|err| {
            crate::report::json_file::in_file(file, err.place(), &err.to_string())
        })?;
        parts.push(merge::Part {
            source: file.display().to_string(),
            schema_version: report.schema_version,
            summary: report.into_summary(),
        });
    }
    let mut summary = merge::merge(parts).map_err(|err| format!("cannot merge: {err}"))?;
    let given = args.gates.parsed()?;
    let gates = merge::with_gates(&mut summary, given)
        .map_err(|err| format!("the reports' gates: {err}"))?;
    let baseline = args.gates.baseline_for(&summary.tokenizer)?;
    if let Some(baseline) = &baseline {
        shares_a_scenario(baseline, summary.scenarios.iter().map(|s| s.name.as_str()))?;
    }
    let comparison = baseline.map(|baseline| compare(&summary, &baseline, &gates));
    Ok((summary, comparison))
}

/// Writes the summary of a refused merge wherever the Markdown summary
/// was asked for (`--report DIR`, `--markdown FILE`), and nothing else.
fn refuse(args: &MergeArgs, reason: &str) {
    let files: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let bytes = merge::refusal_markdown(reason, &files);
    let mut written = Vec::new();
    for (_, path) in args
        .outputs
        .targets()
        .into_iter()
        .filter(|(format, _)| *format == Format::Markdown)
    {
        match write_file(&path, &bytes) {
            Ok(()) => written.push(path.display().to_string()),
            Err(err) => eprintln!("error: cannot write the report {}: {err}", path.display()),
        }
    }
    if !written.is_empty() {
        println!("wrote {} (why the merge was refused)", written.join(", "));
    }
}
