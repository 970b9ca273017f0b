//! What `harness run` and `harness report merge` print on a console: one
//! line per scenario, then every failure with its step, check, expected and
//! actual values (for a long actual text, the lines the check points at; a
//! diff when both are long, coloured on a terminal), a summary line and,
//! with a baseline, the comparison and how each gate fared.

use std::fmt::Write;

use crate::judge::Failure;
use crate::judge::drift::ReplayCounts;
use crate::judge::focus::line_count;
use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::Status;
use crate::run::servers::ServerOutcome;
use crate::tools::show_name;

use super::compare::Comparison;

/// `PASS  name  (3 calls, 12 ms)`.
pub(crate) fn scenario_line(outcome: &ScenarioOutcome) -> String {
    let line = status_line(outcome);
    match &outcome.replay {
        Some(r) => format!(
            "{line}  [replay: is_error agrees on {}/{}, text same {}, paths {}, presentation {}, \
             differs {}]",
            r.counts.error_agree,
            r.counts.calls,
            r.counts.same,
            r.counts.paths,
            r.counts.presentation,
            r.counts.differs
        ),
        None => line,
    }
}

/// The line of a scenario without its replay figures.
fn status_line(outcome: &ScenarioOutcome) -> String {
    match outcome.status {
        Status::Passed => format!(
            "PASS  {}  ({} call{}, {} ms)",
            outcome.name,
            outcome.stats.figures.calls,
            if outcome.stats.figures.calls == 1 {
                ""
            } else {
                "s"
            },
            outcome.stats.duration_ms
        ),
        Status::Failed => format!(
            "FAIL  {}  ({} failed check{})",
            outcome.name,
            outcome.failures.len(),
            if outcome.failures.len() == 1 { "" } else { "s" }
        ),
        Status::Skipped => format!(
            "SKIP  {}  ({})",
            outcome.name,
            outcome.skip_reason.as_deref().unwrap_or("skipped")
        ),
    }
}

/// Whether console text carries colour (ANSI escape codes). The command
/// line decides, from the terminal and `NO_COLOR` / `CLICOLOR_FORCE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Colour {
    /// Plain text (files, pipes, `NO_COLOR`).
    #[default]
    Plain,
    /// Coloured diffs and headers.
    Ansi,
}

impl Colour {
    /// `text` in `style`, or as it is for plain text.
    fn paint(self, style: anstyle::Style, text: &str) -> String {
        match self {
            Self::Plain => text.to_owned(),
            Self::Ansi => format!("{}{text}{}", style.render(), style.render_reset()),
        }
    }
}

const REMOVED: anstyle::Style =
    anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Red)));
const ADDED: anstyle::Style =
    anstyle::Style::new().fg_color(Some(anstyle::Color::Ansi(anstyle::AnsiColor::Green)));
const HEADER: anstyle::Style = REMOVED.bold();
const QUIET: anstyle::Style = anstyle::Style::new().dimmed();

/// The escape sequences text painted in `colour` may hold (none for plain
/// text): what a terminal writer lets through when it shows every other
/// control character.
pub(crate) fn style_sequences(colour: Colour) -> Vec<String> {
    match colour {
        Colour::Plain => Vec::new(),
        Colour::Ansi => [REMOVED, ADDED, HEADER, QUIET]
            .iter()
            .flat_map(|style| [style.render().to_string(), style.render_reset().to_string()])
            .collect(),
    }
}

/// Every failure of the run, grouped by scenario.
pub(crate) fn failure_details(summary: &RunSummary, colour: Colour) -> String {
    let mut out = String::new();
    for outcome in summary
        .scenarios
        .iter()
        .filter(|o| o.status == Status::Failed)
    {
        let header = format!("FAIL {}", outcome.name);
        let _ = writeln!(
            out,
            "\n{}  ({})",
            colour.paint(HEADER, &header),
            outcome.file
        );
        for (i, failure) in outcome.failures.iter().enumerate() {
            out.push_str(&render_nth(&outcome.failures, i, colour));
            if failure.check == "snapshot"
                && failure.step.is_some()
                && let Some(file) = &outcome.snapshot_file
            {
                let _ = writeln!(
                    out,
                    "    the new value is written to {}; accept it with --update-snapshots",
                    crate::scenario::snapshot::new_path(file).display()
                );
            }
        }
        out.push_str(&server_lines(outcome, "  "));
        if let Some(ws) = &outcome.workspace {
            let _ = writeln!(out, "  workspace kept at {ws}");
        }
    }
    out
}

/// What the run did to snapshot files, one line per file with new or
/// changed snapshots: written into the file with `update`, otherwise into
/// its `.snap.yaml.new` for review.
pub(crate) fn snapshot_lines(summary: &RunSummary, update: bool) -> Vec<String> {
    let mut changed: std::collections::BTreeMap<&std::path::Path, usize> = Default::default();
    for outcome in &summary.scenarios {
        if let Some(file) = &outcome.snapshot_file {
            let count = outcome.snapshots.iter().filter(|s| !s.matched).count();
            if count > 0 {
                *changed.entry(file.as_path()).or_default() += count;
            }
        }
    }
    changed
        .into_iter()
        .map(|(file, count)| {
            let what = if count == 1 {
                "1 new or changed snapshot".to_owned()
            } else {
                format!("{count} new or changed snapshots")
            };
            if update {
                format!("snapshots: wrote {what} into {}", file.display())
            } else {
                format!(
                    "snapshots: {what} of {} written to {} for review; accept with \
                     --update-snapshots",
                    file.display(),
                    crate::scenario::snapshot::new_path(file).display()
                )
            }
        })
        .collect()
}

/// Lines of one value shown on the console: the first and the last half of
/// them; the rest is summarised (the report files keep each whole, within
/// the bound of an actual text).
const MAX_SHOWN_LINES: usize = 40;

#[cfg(test)]
use crate::judge::focus::MAX_LINE_CHARS;
pub(crate) use crate::judge::focus::cut_line;

fn indent(text: &str, prefix: &str) -> String {
    indent_cut(text, prefix, false)
}

/// `text` as [`indent`] shows it; with `cut`, each line cut to
/// [`MAX_LINE_CHARS`](crate::judge::focus::MAX_LINE_CHARS) characters (a text that was itself cut to its bound
/// may be one line of 64 KiB).
fn indent_cut(text: &str, prefix: &str, cut: bool) -> String {
    if text.is_empty() {
        return "(empty)".to_owned();
    }
    let shown_line = |line: &str| {
        if cut {
            cut_line(line).into_owned()
        } else {
            line.to_owned()
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut shown: Vec<String> = Vec::new();
    if lines.len() > MAX_SHOWN_LINES {
        let half = MAX_SHOWN_LINES / 2;
        shown.extend(lines[..half].iter().map(|l| shown_line(l)));
        shown.push(format!(
            "… {} lines not shown …",
            lines.len() - MAX_SHOWN_LINES
        ));
        shown.extend(lines[lines.len() - half..].iter().map(|l| shown_line(l)));
    } else {
        shown.extend(lines.iter().map(|l| shown_line(l)));
    }
    shown.join(&format!("\n{prefix}"))
}

/// Whether a value is long enough for a diff: more than 3 lines or 160
/// bytes.
pub(crate) fn is_long(text: &str) -> bool {
    text.lines().count() > 3 || text.len() > 160
}

/// For a failure with a focus: a line saying which lines of `actual` are
/// shown and why, and those lines, numbered (`2998 │ text`). The lines are
/// counted in the whole text, also when `actual` keeps only part of it.
pub(crate) fn focus_window(failure: &Failure) -> Option<(String, Vec<String>)> {
    let focus = failure.focus.as_ref()?;
    let total = failure
        .actual_cut
        .map_or_else(|| line_count(&failure.actual) as u64, |cut| cut.lines);
    let lines = focus.window(&failure.actual);
    let width = focus.last_line.to_string().len();
    let numbered = lines
        .iter()
        .map(|(n, line)| format!("{n:>width$} │ {line}"))
        .collect();
    let range = if focus.first_line == focus.last_line {
        format!("line {}", focus.first_line)
    } else {
        format!("lines {}-{}", focus.first_line, focus.last_line)
    };
    Some((
        format!("{total} lines, showing {range}: {}", focus.reason),
        numbered,
    ))
}

/// The unified diff of `expected` and `actual` (3 lines of context), as
/// `(sign, line)` pairs with `-`, `+` or ` `, at most `max` of them; the
/// flag says whether it was cut.
pub(crate) fn diff_lines(expected: &str, actual: &str, max: usize) -> (Vec<(char, String)>, bool) {
    let diff = similar::TextDiff::from_lines(expected, actual);
    let mut lines = Vec::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        for change in hunk.iter_changes() {
            if lines.len() == max {
                return (lines, true);
            }
            let sign = match change.tag() {
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
                similar::ChangeTag::Equal => ' ',
            };
            let text = change.to_string_lossy();
            lines.push((sign, text.trim_end_matches('\n').to_owned()));
        }
    }
    (lines, false)
}

/// One failure: where, which check, expected and actual (or their diff),
/// as plain text.
#[cfg(test)]
pub(crate) fn render_failure(failure: &Failure) -> String {
    render_failure_in(failure, Colour::Plain)
}

/// The failures of one scenario, in order, as [`render_failure_in`] shows
/// each; a failure whose cut `actual` (a text over the bound) is the very
/// text of the failure before it, and that has no focus, says so instead
/// of showing it again.
pub(crate) fn render_failures(failures: &[Failure], colour: Colour) -> String {
    (0..failures.len())
        .map(|i| render_nth(failures, i, colour))
        .collect()
}

/// Failure `i` of `failures`, as [`render_failures`] shows it.
fn render_nth(failures: &[Failure], i: usize, colour: Colour) -> String {
    let failure = &failures[i];
    let repeated = i > 0
        && failure.focus.is_none()
        && failure.actual_cut.is_some()
        && failures[i - 1].actual_cut == failure.actual_cut
        && failures[i - 1].actual == failure.actual;
    if repeated {
        same_as_before(failure)
    } else {
        render_failure_in(failure, colour)
    }
}

/// A failure on the same cut text as the one before it.
fn same_as_before(failure: &Failure) -> String {
    let step = failure.step.as_deref().unwrap_or("scenario");
    let bytes = failure.actual_cut.map_or(0, |cut| cut.bytes);
    format!(
        "  {step} · {}\n    expected: {}\n    actual:   the same {bytes}-byte text as the \
         failure above\n",
        failure.check,
        indent(&failure.expected, "              ")
    )
}

/// One failure: where, which check, expected and actual. A long actual
/// text with a focus shows the lines the check points at; when both texts
/// are long, their diff is shown instead. An actual text that was cut to
/// its bound shows its lines cut to [`MAX_LINE_CHARS`](crate::judge::focus::MAX_LINE_CHARS) characters.
pub(crate) fn render_failure_in(failure: &Failure, colour: Colour) -> String {
    let mut out = String::new();
    let step = failure.step.as_deref().unwrap_or("scenario");
    let cut = failure.actual_cut.is_some();
    let _ = writeln!(out, "  {step} · {}", failure.check);
    if let Some((about, lines)) = focus_window(failure) {
        let _ = writeln!(
            out,
            "    expected: {}",
            indent(&failure.expected, "              ")
        );
        let _ = writeln!(out, "    actual:   {}", colour.paint(QUIET, &about));
        for line in lines {
            let _ = writeln!(out, "              {line}");
        }
    } else if is_long(&failure.expected) && is_long(&failure.actual) {
        let whitespace = only_whitespace_differs(&failure.expected, &failure.actual);
        let _ = writeln!(
            out,
            "    diff (- expected, + actual{}):",
            if whitespace {
                "; they differ only in whitespace, each line quoted"
            } else {
                ""
            }
        );
        let (lines, cut_diff) = diff_lines(&failure.expected, &failure.actual, MAX_SHOWN_LINES * 2);
        for (sign, line) in lines {
            let line = if cut {
                cut_line(&line).into_owned()
            } else {
                line
            };
            let text = if whitespace {
                format!("{sign}{line:?}")
            } else {
                format!("{sign}{line}")
            };
            let painted = match sign {
                '-' => colour.paint(REMOVED, &text),
                '+' => colour.paint(ADDED, &text),
                _ => text,
            };
            let _ = writeln!(out, "      {painted}");
        }
        if cut_diff {
            let _ = writeln!(out, "      … (diff cut at {} lines)", MAX_SHOWN_LINES * 2);
        }
    } else if only_whitespace_differs(&failure.expected, &failure.actual) {
        let _ = writeln!(out, "    expected: {:?}", failure.expected);
        let _ = writeln!(out, "    actual:   {:?}", failure.actual);
        let _ = writeln!(
            out,
            "              (they differ only in whitespace: both are quoted, \\n is a newline)"
        );
    } else {
        let _ = writeln!(
            out,
            "    expected: {}",
            indent(&failure.expected, "              ")
        );
        let _ = writeln!(
            out,
            "    actual:   {}",
            indent_cut(&failure.actual, "              ", cut)
        );
    }
    out
}

/// Whether two different texts hold the same characters but whitespace
/// (a final newline, trailing spaces, a tab for spaces), so that printed
/// as they are they would look the same.
fn only_whitespace_differs(expected: &str, actual: &str) -> bool {
    let visible = |text: &str| {
        text.chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
    };
    expected != actual && visible(expected) == visible(actual)
}

/// `60 scenarios: 58 passed, 1 failed, 1 skipped in 3.2 s`.
pub(crate) fn summary_line(summary: &RunSummary) -> String {
    let total = summary.scenarios.len();
    format!(
        "{total} scenario{}: {} passed, {} failed, {} skipped in {:.1} s{}",
        if total == 1 { "" } else { "s" },
        summary.count(Status::Passed),
        summary.count(Status::Failed),
        summary.count(Status::Skipped),
        summary.duration_ms as f64 / 1000.0,
        if summary.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    )
}

/// The replay totals of a run that replayed imported sessions:
/// `replay: 12 calls compared (3 skipped at import) · is_error agrees on 11 · text same 8, paths 2, presentation 1, differs 1 · result tokens 1200 recorded, 1100 now (0.9167x)`.
pub(crate) fn replay_line(summary: &RunSummary) -> Option<String> {
    let r = summary.replay_totals()?;
    let c = &r.counts;
    let ratio = r
        .token_ratio
        .map(|x| format!(" ({x}x)"))
        .unwrap_or_default();
    let not_reached = if r.not_replayed > 0 {
        format!(", {} not reached", r.not_replayed)
    } else {
        String::new()
    };
    Some(format!(
        "replay: {} call{} compared ({} skipped at import{not_reached}) · is_error agrees on {} · \
         text same {}, paths {}, presentation {}, differs {} · result tokens {} recorded, {} \
         now{ratio}",
        c.calls,
        if c.calls == 1 { "" } else { "s" },
        r.skipped,
        c.error_agree,
        c.same,
        c.paths,
        c.presentation,
        c.differs,
        c.recorded_tokens,
        c.current_tokens,
    ))
}

/// The replay figures of a run per tool, as summary.md's Replay table
/// has them, for the console: a header, one row per tool and the total
/// (`None` when nothing was replayed).
///
/// ```text
///   tool   calls  is_error agrees  disagrees  same  paths  presentation  differs  recorded tokens  current tokens  ratio
///   bash       2                2          0     1      1             0        0               26              23   0.88
///   total      6                6          0     4      1             0        1               73              69   0.95
/// ```
pub(crate) fn replay_table(summary: &RunSummary) -> Option<String> {
    let r = summary.replay_totals()?;
    const HEADERS: [&str; 11] = [
        "tool",
        "calls",
        "is_error agrees",
        "disagrees",
        "same",
        "paths",
        "presentation",
        "differs",
        "recorded tokens",
        "current tokens",
        "ratio",
    ];
    let cells = |name: &str, c: &ReplayCounts| -> [String; 11] {
        [
            name.to_owned(),
            c.calls.to_string(),
            c.error_agree.to_string(),
            c.error_disagree.to_string(),
            c.same.to_string(),
            c.paths.to_string(),
            c.presentation.to_string(),
            c.differs.to_string(),
            c.recorded_tokens.to_string(),
            c.current_tokens.to_string(),
            c.token_ratio()
                .map_or_else(|| "–".to_owned(), |x| format!("{x:.2}")),
        ]
    };
    let mut rows: Vec<[String; 11]> = vec![HEADERS.map(str::to_owned)];
    // A server's tool name may hold a line break: one cell, one line.
    rows.extend(
        r.tools
            .iter()
            .map(|(tool, c)| cells(&show_name(tool.as_bytes()), c)),
    );
    rows.push(cells("total", &r.counts));
    let mut widths = [0; 11];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::from(" ");
        for (i, (cell, w)) in row.iter().zip(widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if i == 0 {
                let _ = write!(line, " {cell}{pad}");
            } else {
                let _ = write!(line, "  {pad}{cell}");
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    Some(out)
}

/// The comparison with a baseline: what was compared, new and missing
/// scenarios, regressions, and each gate with its breaches.
pub(crate) fn comparison_text(comparison: &Comparison) -> String {
    let mut out = String::new();
    let list = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let compared = comparison.scenarios.iter().filter(|c| c.compared).count();
    let _ = write!(
        out,
        "baseline: {compared} scenario{} compared",
        if compared == 1 { "" } else { "s" }
    );
    if !comparison.new.is_empty() {
        let _ = write!(out, "; new: {}", list(&comparison.new));
    }
    if !comparison.missing.is_empty() {
        let _ = write!(out, "; missing: {}", list(&comparison.missing));
    }
    out.push('\n');
    for name in &comparison.regressions {
        let _ = writeln!(
            out,
            "regression: `{name}` passed in the baseline and fails now"
        );
    }
    for gate in &comparison.gates {
        let note = gate.not_compared_note();
        if gate.held {
            match &note {
                Some(note) => {
                    let _ = writeln!(out, "gate {}: not compared: {note}", gate.gate);
                }
                None => {
                    let _ = writeln!(out, "gate {}: held", gate.gate);
                }
            }
        } else {
            let _ = writeln!(
                out,
                "gate {}: BREACHED ({})",
                gate.gate,
                gate.breaches.len()
            );
            for breach in &gate.breaches {
                let _ = writeln!(out, "  {}", breach.describe());
            }
            if let Some(note) = &note {
                let _ = writeln!(out, "  not compared: {note}");
            }
        }
    }
    out
}

/// One line per tool call of a scenario, for `harness run --verbose`:
/// One MCP server of a scenario in one line: `server fs: stdio,
/// secure-filesystem-server 0.2.0, protocol 2025-11-25, started in 412 ms,
/// exit status 0, tool definitions 930 tokens` (what is known of it), or
/// why it did not start.
pub(crate) fn server_line(server: &ServerOutcome) -> String {
    let mut parts = vec![server.transport.clone()];
    if server.shared {
        parts.push("shared".to_owned());
    }
    parts.extend(server.identity());
    if let Some(protocol) = &server.protocol_version {
        parts.push(format!("protocol {protocol}"));
    }
    if let Some(ms) = server.startup_ms {
        parts.push(format!("started in {ms} ms"));
    }
    if let Some(error) = &server.error {
        parts.push(format!("did not start: {error}"));
    }
    if let Some(status) = &server.exit_status {
        parts.push(if server.ended_early {
            format!("ended early: {status}")
        } else {
            status.clone()
        });
    }
    if server.junk_lines > 0 {
        parts.push(format!("{} junk lines on stdout", server.junk_lines));
    }
    if let Some(tokens) = server.definition_tokens {
        parts.push(format!("tool definitions {tokens} tokens"));
    }
    format!("server {}: {}", server.name, parts.join(", "))
}

/// The lines of a scenario's servers, each with its last stderr lines
/// when the report kept them, indented by `prefix`.
pub(crate) fn server_lines(outcome: &ScenarioOutcome, prefix: &str) -> String {
    let mut out = String::new();
    for server in &outcome.servers {
        let _ = writeln!(out, "{prefix}{}", server_line(server));
        if let Some(tail) = &server.stderr_tail {
            let _ = writeln!(out, "{prefix}  its last stderr lines:");
            for line in tail.lines() {
                let _ = writeln!(out, "{prefix}    {line}");
            }
        }
        if !server.refused_writes.is_empty() {
            let _ = writeln!(
                out,
                "{prefix}  it could not write outside its workspace (the sandbox lets it write \
                 only there and in its TMPDIR; give it a data path under ${{workspace}}, or \
                 add the place to `sandbox.write`):"
            );
            for path in &server.refused_writes {
                let _ = writeln!(out, "{prefix}    {path}");
            }
        }
    }
    out
}

/// `    1. read  ok, 12 result tokens, 3 ms`, and for a replayed call how
/// it compares with the recorded one (`, replay: text same, is_error
/// agrees`).
pub(crate) fn call_lines(outcome: &ScenarioOutcome) -> String {
    let mut out = String::new();
    for (seq, call) in outcome.calls.iter().enumerate() {
        let mut notes = vec![if call.is_error { "error" } else { "ok" }.to_owned()];
        if call.retry {
            notes.push("retry".to_owned());
        }
        if call.truncated {
            notes.push("truncated".to_owned());
        }
        notes.push(format!("{} result tokens", call.result_tokens));
        notes.push(format!("{} ms", call.duration_ms));
        if let (Some(agreement), Some(recorded_error)) = (call.agreement, call.recorded_is_error) {
            notes.push(format!(
                "replay: text {}, is_error {}",
                agreement.as_str(),
                if recorded_error == call.is_error {
                    "agrees"
                } else {
                    "differs"
                }
            ));
        }
        let _ = writeln!(out, "    {}. {}  {}", seq + 1, call.tool, notes.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_that_differ_only_in_whitespace_are_quoted() {
        let short = Failure::new(Some("step 1 (bash)"), "equals", "hi", "hi\n");
        assert_eq!(
            render_failure(&short),
            "  step 1 (bash) · equals\n    expected: \"hi\"\n    actual:   \"hi\\n\"\n              \
             (they differ only in whitespace: both are quoted, \\n is a newline)\n"
        );
        let long = Failure::new(
            Some("step 3 (bash)"),
            "equals",
            "1\n2\n3\n4\n5\nx\n",
            "1\n2\n3\n4\n5\nx \n",
        );
        assert_eq!(
            render_failure(&long),
            "  step 3 (bash) · equals\n    diff (- expected, + actual; they differ only in \
             whitespace, each line quoted):\n       \"3\"\n       \"4\"\n       \"5\"\n      \
             -\"x\"\n      +\"x \"\n"
        );
        let different = Failure::new(None, "equals", "hi", "ho");
        assert_eq!(
            render_failure(&different),
            "  scenario · equals\n    expected: hi\n    actual:   ho\n"
        );
    }

    #[test]
    fn short_failures_show_expected_and_actual() {
        let f = Failure::new(
            Some("step 2 (read)"),
            "contains",
            "text containing \"x\"",
            "a\nb",
        );
        assert_eq!(
            render_failure(&f),
            "  step 2 (read) · contains\n    expected: text containing \"x\"\n    actual:   a\n              b\n"
        );
    }

    #[test]
    fn very_long_values_show_their_beginning_and_end() {
        let long: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let f = Failure::new(None, "ok", "a successful result", long);
        let text = render_failure(&f);
        let shown: Vec<&str> = text.lines().skip(2).map(str::trim).collect();
        let mut expected: Vec<String> = vec!["actual:   1".into()];
        expected.extend((2..=20).map(|i| i.to_string()));
        expected.push("… 60 lines not shown …".into());
        expected.extend((81..=100).map(|i| i.to_string()));
        assert_eq!(shown, expected);
    }

    #[test]
    fn a_long_text_shows_the_lines_a_contains_points_at() {
        let mut actual: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        actual.push_str(
            "\n[Showing lines 2001-3000 of 3000. Full output: /scratch/bash-call_1_1.log]",
        );
        let needle = "[Showing lines 1001-3000 of 3000. Full output: ";
        let f = Failure::new(
            Some("step 1 (bash)"),
            "contains",
            format!("text containing {needle:?}"),
            &actual,
        )
        .with_focus(
            crate::judge::focus::for_contains(
                &actual,
                needle,
                &crate::judge::deadline::Deadline::never(),
            )
            .unwrap(),
        );
        assert_eq!(
            render_failure(&f),
            "  step 1 (bash) · contains\n\
             \x20   expected: text containing \"[Showing lines 1001-3000 of 3000. Full output: \"\n\
             \x20   actual:   3002 lines, showing lines 3000-3002: line 3002 has the last 31 of the 47 characters expected\n\
             \x20             3000 │ 3000\n\
             \x20             3001 │ \n\
             \x20             3002 │ [Showing lines 2001-3000 of 3000. Full output: /scratch/bash-call_1_1.log]\n"
        );
    }

    /// Issue 21 item 2: 200 failures on a 20 MB file printed the file 200
    /// times (4 GB). An actual cut to its bound shows its lines cut, and a
    /// failure on the same cut text as the one before it says so instead
    /// of showing it again.
    #[test]
    fn a_cut_text_is_shown_once_with_its_lines_cut() {
        use crate::judge::Actual;
        use crate::judge::MAX_ACTUAL_BYTES;
        let actual = Actual::of(&"x".repeat(200_000));
        let failures: Vec<Failure> = ["a", "b"]
            .iter()
            .map(|n| {
                Failure::new(
                    Some("files: big.txt"),
                    "contains",
                    format!("content containing {n:?}"),
                    actual.clone(),
                )
            })
            .collect();
        let omitted = 200_000 - (MAX_ACTUAL_BYTES - 256);
        let x = "x".repeat(MAX_LINE_CHARS);
        assert_eq!(
            render_failures(&failures, Colour::Plain),
            format!(
                "  files: big.txt · contains\n    expected: content containing \"a\"\n    actual:   \
                 {x} … (48720 more characters)\n              [… {omitted} of 200000 bytes not \
                 shown: part of line 1 of 1 …]\n              {x} … (16080 more characters)\n  \
                 files: big.txt · contains\n    expected: content containing \"b\"\n    actual:   \
                 the same 200000-byte text as the failure above\n"
            )
        );
        // Texts within the bound are shown whole, every time.
        let short: Vec<Failure> = ["a", "b"]
            .iter()
            .map(|n| Failure::new(None, "contains", format!("containing {n:?}"), "same"))
            .collect();
        assert_eq!(
            render_failures(&short, Colour::Plain),
            "  scenario · contains\n    expected: containing \"a\"\n    actual:   same\n  \
             scenario · contains\n    expected: containing \"b\"\n    actual:   same\n"
        );
    }

    #[test]
    fn long_failures_show_a_diff_coloured_on_request() {
        let f = Failure::new(None, "equals", "1\n2\n3\n4\n5\n", "1\n2\nthree\n4\n5\n");
        let plain = "  scenario · equals\n    diff (- expected, + actual):\n       1\n       2\n      -3\n      +three\n       4\n       5\n";
        assert_eq!(render_failure(&f), plain);
        assert_eq!(
            render_failure_in(&f, Colour::Ansi),
            plain
                .replace("-3\n", "\x1b[31m-3\x1b[0m\n")
                .replace("+three\n", "\x1b[32m+three\x1b[0m\n")
        );
    }

    /// Issue 14 audit: `--verbose` did not say how each replayed call
    /// compares with the recorded one, though docs/replay.md said so.
    #[test]
    fn verbose_call_lines_say_how_each_replayed_call_compares() {
        use crate::judge::drift::Agreement;
        use crate::judge::tally::CallStat;
        let mut outcome = ScenarioOutcome::empty("s", "s.yaml", &[], Status::Passed);
        let call = |tool: &str, is_error: bool, recorded: Option<(bool, Agreement)>| CallStat {
            tool: tool.to_owned(),
            is_error,
            result_tokens: 12,
            duration_ms: 3,
            recorded_is_error: recorded.map(|r| r.0),
            agreement: recorded.map(|r| r.1),
            ..CallStat::default()
        };
        outcome.calls = vec![
            call("read", false, Some((false, Agreement::Same))),
            call("bash", true, Some((false, Agreement::Differs))),
            call("edit", true, Some((true, Agreement::Paths))),
            call("ls", false, None),
        ];
        assert_eq!(
            call_lines(&outcome),
            "    1. read  ok, 12 result tokens, 3 ms, replay: text same, is_error agrees\n\
             \x20   2. bash  error, 12 result tokens, 3 ms, replay: text differs, is_error differs\n\
             \x20   3. edit  error, 12 result tokens, 3 ms, replay: text paths, is_error agrees\n\
             \x20   4. ls  ok, 12 result tokens, 3 ms\n"
        );
    }

    /// Issue 14 asks for the per-tool replay table on the console too.
    #[test]
    fn the_replay_table_has_a_row_per_tool_and_the_total() {
        use crate::judge::drift::ReplayStats;
        let counts = |calls, agree, same, differs, recorded, current| ReplayCounts {
            calls,
            error_agree: agree,
            error_disagree: calls - agree,
            same,
            paths: calls - same - differs,
            presentation: 0,
            differs,
            recorded_tokens: recorded,
            current_tokens: current,
        };
        let mut outcome = ScenarioOutcome::empty("s", "s.yaml", &[], Status::Passed);
        outcome.replay = Some(ReplayStats {
            counts: counts(3, 2, 1, 1, 120, 90),
            tools: [
                ("bash".to_owned(), counts(1, 0, 0, 1, 0, 10)),
                ("read".to_owned(), counts(2, 2, 1, 0, 120, 80)),
            ]
            .into(),
            ..ReplayStats::default()
        });
        let summary = RunSummary {
            scenarios: vec![outcome],
            ..RunSummary::default()
        };
        let lines = [
            "  tool   calls  is_error agrees  disagrees  same  paths  presentation  differs  recorded tokens  current tokens  ratio",
            "  bash       1                0          1     0      0             0        1                0              10      –",
            "  read       2                2          0     1      1             0        0              120              80   0.67",
            "  total      3                2          1     1      1             0        1              120              90   0.75",
        ];
        assert_eq!(
            replay_table(&summary).unwrap(),
            lines.map(|l| format!("{l}\n")).concat()
        );
        assert_eq!(replay_table(&RunSummary::default()), None);
    }

    /// Issue 42, item 10: a tool name (from an MCP server) with a line
    /// break or a tab is one cell on one line, its controls shown.
    #[test]
    fn a_tool_name_with_a_line_break_is_one_cell_of_the_replay_table() {
        use crate::judge::drift::ReplayStats;
        let counts = ReplayCounts {
            calls: 1,
            error_agree: 1,
            same: 1,
            ..ReplayCounts::default()
        };
        let mut outcome = ScenarioOutcome::empty("s", "s.yaml", &[], Status::Passed);
        outcome.replay = Some(ReplayStats {
            counts: counts.clone(),
            tools: [("line\nbreak\tx".to_owned(), counts)].into(),
            ..ReplayStats::default()
        });
        let summary = RunSummary {
            scenarios: vec![outcome],
            ..RunSummary::default()
        };
        let lines = [
            "  tool          calls  is_error agrees  disagrees  same  paths  presentation  differs  recorded tokens  current tokens  ratio",
            "  line␊break␉x      1                1          0     1      0             0        0                0               0      –",
            "  total             1                1          0     1      0             0        0                0               0      –",
        ];
        assert_eq!(
            replay_table(&summary).unwrap(),
            lines.map(|l| format!("{l}\n")).concat()
        );
    }

    #[test]
    fn the_comparison_names_new_and_missing_scenarios() {
        use crate::report::Baseline;
        use crate::report::compare::compare;
        let outcome = |name: &str| ScenarioOutcome::empty(name, "f.yaml", &[], Status::Passed);
        let run = |names: &[&str]| RunSummary {
            scenarios: names.iter().map(|n| outcome(n)).collect(),
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        };
        let c = compare(
            &run(&["a", "fresh"]),
            &Baseline::of(&run(&["a", "gone"])),
            &[],
        );
        assert!(
            comparison_text(&c)
                .starts_with("baseline: 1 scenario compared; new: `fresh`; missing: `gone`\n")
        );
    }

    #[test]
    fn a_gate_on_a_figure_the_baseline_lacks_says_it_was_not_compared() {
        use crate::report::Baseline;
        use crate::report::compare::compare;
        let outcome = |name: &str, retries: u64| {
            let mut o = ScenarioOutcome::empty(name, "f.yaml", &[], Status::Passed);
            o.stats.figures.retries = retries;
            o.stats.figures.definition_tokens = 300;
            o
        };
        let run = |retries: u64| RunSummary {
            scenarios: vec![outcome("a", 0), outcome("b", retries)],
            tokenizer: "o200k".into(),
            ..RunSummary::default()
        };
        let mut baseline = Baseline::of(&run(1));
        baseline.unrecorded = vec![crate::run::Metric::DefinitionTokens];
        let gates: Vec<crate::run::Gate> = ["definition_tokens=+0", "retries=+0"]
            .iter()
            .map(|g| g.parse().unwrap())
            .collect();
        assert_eq!(
            comparison_text(&compare(&run(2), &baseline, &gates)),
            "baseline: 2 scenarios compared\n\
             gate definition_tokens=+0: not compared: the baseline has no definition_tokens \
             (written before that figure existed); save a new baseline to gate on it\n\
             gate retries=+0: BREACHED (2)\n  `b` retries 1 → 2 (+100.0%)\n  total retries \
             1 → 2 (+100.0%)\n"
        );
    }
}
