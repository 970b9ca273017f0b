//! `harness import pi|claude|gemini|codex SESSION -o DIR`: a recorded session as
//! scenario files (docs/replay.md).

use std::path::PathBuf;

use clap::Args;
use clap::Subcommand;

use crate::exit;
use crate::import::Format;
use crate::import::ImportOptions;

/// `harness import`.
#[derive(Debug, Args)]
pub(super) struct ImportArgs {
    #[command(subcommand)]
    format: ImportFormat,
}

#[derive(Debug, Subcommand)]
enum ImportFormat {
    /// A pi session file (JSONL).
    Pi(SessionArgs),
    /// A Claude Code transcript (JSONL).
    Claude(ClaudeArgs),
    /// A Gemini CLI session file (JSON).
    Gemini(SessionArgs),
    /// A Codex CLI rollout file (JSONL).
    Codex(SessionArgs),
}

/// Claude Code's flags.
#[derive(Debug, Args)]
pub(super) struct ClaudeArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Also import each side chain (a Task sub-agent's calls) as a
    /// scenario of its own (`<stem>-side-N.yaml`).
    #[arg(long)]
    sidechains: bool,
}

/// Flags shared by both formats.
#[derive(Debug, Args)]
pub(super) struct SessionArgs {
    /// The session file.
    #[arg(value_name = "SESSION")]
    session: PathBuf,
    /// The directory the scenarios are written into.
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,
    /// Follow the branch that ends at this entry id (default: the last
    /// entry's).
    #[arg(long, value_name = "ID")]
    branch: Option<String>,
    /// At most N calls per scenario (a batch is never cut).
    #[arg(long, value_name = "N")]
    split: Option<usize>,
    /// Copy this directory as the workspace (into DIR/fixtures/).
    #[arg(long, value_name = "DIR", conflicts_with = "git")]
    workspace: Option<PathBuf>,
    /// Check out this local repository as the workspace, at --rev, else
    /// at its last commit before the session began (on the session's
    /// recorded branch when the repository has it).
    #[arg(long, value_name = "REPO")]
    git: Option<PathBuf>,
    /// The revision of --git (default: the last commit before the
    /// session's first entry).
    #[arg(long, value_name = "REV", requires = "git")]
    rev: Option<String>,
    /// Before a whole-file read whose recorded result was complete, write
    /// that text into the file.
    #[arg(long)]
    sync_reads: bool,
    /// Seconds given to bash calls recorded without a timeout.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    bash_timeout: f64,
    /// Replace an earlier import of this session in DIR (its scenarios,
    /// sidecars and fixture) instead of refusing to overwrite them.
    #[arg(long)]
    force: bool,
}

pub(super) fn run(args: ImportArgs) -> u8 {
    let (format, a, sidechains) = match args.format {
        ImportFormat::Pi(a) => (Format::Pi, a, false),
        ImportFormat::Claude(a) => (Format::Claude, a.session, a.sidechains),
        ImportFormat::Gemini(a) => (Format::Gemini, a, false),
        ImportFormat::Codex(a) => (Format::Codex, a, false),
    };
    if a.split == Some(0) {
        return super::common::usage_error("--split: give at least 1 call per scenario");
    }
    if !crate::base::bounds::seconds_fit(a.bash_timeout) {
        return super::common::usage_error(format!(
            "--bash-timeout: must be a positive number of seconds, at most {}",
            crate::base::bounds::ONE_DAY
        ));
    }
    if let Some(rev) = &a.rev
        && (rev.is_empty() || rev.starts_with('-'))
    {
        return super::common::usage_error(format!("--rev: `{rev}` is not a revision"));
    }
    let options = ImportOptions {
        format,
        session: a.session.clone(),
        out: a.out.clone(),
        branch: a.branch,
        split: a.split,
        workspace: a.workspace,
        git: a.git.map(|repo| (repo, a.rev)),
        sync_reads: a.sync_reads,
        bash_timeout: a.bash_timeout,
        sidechains,
        force: a.force,
    };
    let report = match crate::import::import(&options) {
        Ok(report) => report,
        Err(err) => return super::common::usage_error(err),
    };
    for note in &report.recording.notes {
        eprintln!(
            "{}:{}: {}",
            a.session.display(),
            note.line,
            crate::import::write::comment(&note.message)
        );
    }
    for (n, (rec, _)) in report.sides.iter().enumerate() {
        for note in &rec.notes {
            eprintln!(
                "{}:{}: side chain {}: {}",
                a.session.display(),
                note.line,
                n + 1,
                crate::import::write::comment(&note.message)
            );
        }
    }
    if let Some(start) = &report.start_commit {
        let started = report.recording.started.as_deref().unwrap_or_default();
        let mut line = format!(
            "--rev: {}, the last commit on {} before the session began ({})",
            start.commit,
            start.searched.escape_debug(),
            started.escape_debug()
        );
        if let Some(branch) = &start.missing_branch {
            line.push_str(&format!(
                "; the session's branch `{}` is not in the repository",
                branch.escape_debug()
            ));
        }
        eprintln!("{line}");
    }
    if let Some((top, sub)) = &report.started_in {
        eprintln!(
            "the session began in `{}`, a directory of the repository (its top was recorded as \
             {}): the replay starts there",
            sub.escape_debug(),
            top.escape_debug()
        );
    }
    let w = &report.written;
    let mut line = format!(
        "wrote {} scenario{} to {}: {} call{} replayed, {} not replayed",
        w.scenarios.len(),
        if w.scenarios.len() == 1 { "" } else { "s" },
        a.out.display(),
        w.calls,
        if w.calls == 1 { "" } else { "s" },
        report.recording.skipped.len(),
    );
    if w.sidecars > 0 {
        line.push_str(&if w.sidecars == 1 {
            ", 1 recorded text in a sidecar file".to_owned()
        } else {
            format!(", {} recorded texts in sidecar files", w.sidecars)
        });
    }
    if options.sync_reads {
        line.push_str(&format!(", {} reads synced", w.synced_reads));
        if w.synced_edits > 0 {
            line.push_str(&format!(
                " and {} edit{} (the file as recorded before it)",
                w.synced_edits,
                if w.synced_edits == 1 { "" } else { "s" }
            ));
        }
        let unsynced: usize = w.unsynced_reads.values().sum();
        if unsynced > 0 {
            let why: Vec<String> = w
                .unsynced_reads
                .iter()
                .map(|(why, n)| format!("{n}: {why}"))
                .collect();
            line.push_str(&format!(", {unsynced} not ({})", why.join("; ")));
        }
    }
    if !report.recording.notes.is_empty() {
        line.push_str(&format!(
            ", {} problem{} in the session (above)",
            report.recording.notes.len(),
            if report.recording.notes.len() == 1 {
                ""
            } else {
                "s"
            }
        ));
    }
    if let Some(sides) = &report.recording.sidechains {
        if sides.imported {
            let calls: usize = report.sides.iter().map(|(_, w)| w.calls).sum();
            let skipped: usize = report.sides.iter().map(|(r, _)| r.skipped.len()).sum();
            line.push_str(&format!(
                "; {} side chain{} as scenarios of their own: {calls} call{} replayed, {skipped} \
                 not replayed",
                sides.chains,
                if sides.chains == 1 { "" } else { "s" },
                if calls == 1 { "" } else { "s" },
            ));
        } else {
            line.push_str(&format!(
                "; {} side chain{} ({} call{}) not imported (--sidechains imports them)",
                sides.chains,
                if sides.chains == 1 { "" } else { "s" },
                sides.calls,
                if sides.calls == 1 { "" } else { "s" },
            ));
        }
    }
    if !report.replaced.is_empty() {
        line.push_str(&format!(
            "; --force: replaced {} of an earlier import",
            crate::import::rerun::count(&report.replaced)
        ));
        if !report.removed.is_empty() {
            line.push_str(&format!(
                ", and removed those this import does not write ({})",
                report.removed.join(", ")
            ));
        }
    }
    println!("{line}");
    println!("{}", report.accounting.line());
    if let Some(problem) = report.accounting.problem() {
        eprintln!("harness import: {problem}");
        return exit::FAILED;
    }
    exit::SUCCESS
}
