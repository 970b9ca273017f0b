//! The report flags `harness run` and `harness report merge` share
//! (`--report`, `--json` … `--save-baseline`, `--baseline`, `--gate`), and
//! what both print at the end of a run and the exit code they pick.

use std::path::PathBuf;

use clap::Args;

use crate::exit;
use crate::report::Baseline;
use crate::report::Comparison;
use crate::report::Format;
use crate::report::console;
use crate::report::outputs::Outputs;
use crate::report::outputs::Written;
use crate::report::read_baseline;
use crate::run::Gate;
use crate::run::RunSummary;
use crate::run::Status;
use crate::scenario::text_file::read_regular;

/// Where reports go.
#[derive(Clone, Debug, Default, Args)]
pub(super) struct OutputArgs {
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
pub(super) struct GateArgs {
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
    pub(super) fn shows_transcripts(&self) -> bool {
        self.report_dir.is_some() || self.json.is_some() || self.html.is_some()
    }

    /// Every report file to write, and the baseline.
    pub(super) fn outputs(&self) -> Outputs {
        Outputs {
            files: self.targets(),
            baseline: self.save_baseline.clone(),
        }
    }

    /// Every report file to write.
    pub(super) fn targets(&self) -> Vec<(Format, PathBuf)> {
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
    pub(super) fn prepare(&self) -> Result<(), String> {
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

impl GateArgs {
    /// The `--gate` gates, parsed.
    pub(super) fn parsed(&self) -> Result<Vec<Gate>, String> {
        self.gates
            .iter()
            .map(|g| g.parse().map_err(|err| format!("--gate: {err}")))
            .collect()
    }

    /// The baseline of `--baseline`, if given, for a run counted with
    /// `tokenizer`; `--gate` without `--baseline` is a usage error.
    pub(super) fn baseline_for(&self, tokenizer: &str) -> Result<Option<Baseline>, String> {
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

/// Prints the end of a run: failures, the summary line and the
/// comparison.
pub(super) fn print_result(summary: &RunSummary, comparison: Option<&Comparison>) {
    let colour = stdout_colour();
    let details = console::failure_details(summary, colour);
    if !details.is_empty() {
        super::output::write_out_styled(
            &format!("\nfailures:{details}\n"),
            &console::style_sequences(colour),
        );
    }
    println!("\n{}", console::summary_line(summary));
    for line in crate::report::servers::console_lines(summary) {
        println!("{line}");
    }
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

/// The exit code: 2 for bad input or unwritten reports, else 1 for a
/// failure, an interruption, a regression or a breached gate, else 0.
pub(super) fn exit_code(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    written: bool,
) -> u8 {
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

/// Prints what could not be written (stderr) and, when `list` is set,
/// the files written (`wrote …`).
pub(super) fn print_written(written: &Written, summary: &RunSummary, list: bool) {
    for error in written.errors() {
        eprintln!("error: {error}");
    }
    if list && !written.files().is_empty() {
        println!("wrote {}", written.files().join(", "));
    }
    if !written.ok() {
        eprintln!(
            "error: some reports could not be written (exit {}); the run's own result is \
             above: {}",
            exit::USAGE,
            console::summary_line(summary)
        );
    }
}
