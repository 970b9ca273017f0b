//! `harness report merge`: partition reports combined into one run,
//! judged by their gates and a baseline, and written in every format.

use std::path::PathBuf;

use clap::Args;
use clap::Subcommand;

use crate::exit;
use crate::report::Comparison;
use crate::report::Format;
use crate::report::compare;
use crate::report::json;
use crate::report::merge;
use crate::report::outputs::Reports;
use crate::report::outputs::shares_a_scenario;
use crate::report::outputs::write_file;
use crate::report::outputs::write_outputs;
use crate::run::RunSummary;
use crate::scenario::text_file::read_regular;

use super::outputs::GateArgs;
use super::outputs::OutputArgs;
use super::outputs::exit_code;
use super::outputs::print_result;
use super::outputs::print_written;

/// Flags of `harness report`.
#[derive(Debug, Args)]
pub(super) struct ReportArgs {
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

pub(super) fn run(args: ReportArgs) -> u8 {
    match args.command {
        ReportCommand::Merge(args) => merge_reports(&args),
    }
}

fn merge_reports(args: &MergeArgs) -> u8 {
    // First, so that a refusal can say why in summary.md.
    if let Err(err) = args.outputs.prepare() {
        return super::common::usage_error(err);
    }
    match merged(args) {
        Ok((summary, comparison)) => {
            let mut reports = Reports::new(&summary, comparison.as_ref());
            let written = write_outputs(&args.outputs.outputs(), &mut reports);
            for error in &summary.load_errors {
                eprintln!("error: {error}");
            }
            print_result(&summary, comparison.as_ref());
            print_written(&written, &summary, true);
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
