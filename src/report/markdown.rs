//! `summary.md`: a summary fit for a pull-request comment: the verdict and
//! totals, the failures, the gates and the changes against a baseline (or,
//! without one, the scenarios that cost the most tokens), and per-tool
//! figures.
//!
//! A failed check shows its expected and actual texts; for a long actual
//! text, the lines the check points at; for two long texts, their diff (a
//! `diff` block).
//!
//! It stays well under the 65 536 characters a GitHub comment holds: long
//! expected/actual texts are cut, and at most [`MAX_FAILED_SCENARIOS`]
//! failed scenarios and [`MAX_ROWS`] rows per table are shown, with a note
//! pointing to `run.json` for the rest.

use std::fmt::Write as _;

use crate::judge::Failure;
use crate::judge::drift::ReplayCounts;
use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::Status;
use crate::run::stats;

use super::compare::Comparison;
use super::compare::ScenarioChange;
use super::console;
use super::verdict::change_text;

/// Failed scenarios shown in full.
pub(crate) const MAX_FAILED_SCENARIOS: usize = 20;
/// Rows of the token tables.
pub(crate) const MAX_ROWS: usize = 15;
/// Characters of one expected or actual text.
const MAX_TEXT: usize = 1200;

/// The longest run of backticks in `text`, which a fence must outgrow.
fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// How many of `total` rows are left out when at most `max` are shown.
fn left_out(total: usize, max: usize) -> Option<usize> {
    total.checked_sub(max).filter(|n| *n > 0)
}

/// Text as inline code, whatever backticks it holds; `|` escaped so that
/// it can sit in a table cell.
fn code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ");
    let fence = "`".repeat(longest_backtick_run(&text) + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}").replace('|', "\\|")
}

/// Plain text for Markdown outside code: no HTML, no emphasis, one line.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '*' | '_' | '`' | '|' | '[' | ']' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A fenced block around `text`, cut to [`MAX_TEXT`] characters.
fn block(text: &str) -> String {
    fenced("text", text)
}

/// A fenced block of `language` around `text`, cut to [`MAX_TEXT`]
/// characters.
fn fenced(language: &str, text: &str) -> String {
    let mut shown: String = text.chars().take(MAX_TEXT).collect();
    let cut = shown.len() < text.len();
    if cut {
        shown.push_str("\n… (cut; the whole text is in run.json)");
    }
    let fence = "`".repeat((longest_backtick_run(&shown) + 1).max(3));
    let body = if shown.is_empty() { "(empty)" } else { &shown };
    format!(
        "{fence}{language}\n{}\n{fence}\n",
        body.trim_end_matches('\n')
    )
}

/// One failed check under its heading: the lines of a long actual text
/// the check points at, the diff of two long texts, or both texts.
fn failure(out: &mut String, f: &Failure) {
    let _ = writeln!(
        out,
        "**{} · {}**\n",
        text(f.step.as_deref().unwrap_or("scenario")),
        text(&f.check.to_string())
    );
    if let Some((about, lines)) = console::focus_window(f) {
        let _ = writeln!(
            out,
            "expected:\n{}\nactual ({}):\n{}",
            block(&f.expected),
            text(&about),
            block(&lines.join("\n"))
        );
    } else if console::is_long(&f.expected) && console::is_long(&f.actual) {
        // The block is cut to MAX_TEXT characters, so no line cap here.
        let (lines, _) = console::diff_lines(&f.expected, &f.actual, usize::MAX);
        let diff: String = lines
            .iter()
            .map(|(sign, line)| format!("{sign}{line}\n"))
            .collect();
        let _ = writeln!(
            out,
            "diff (`-` expected, `+` actual):\n{}",
            fenced("diff", &diff)
        );
    } else {
        let _ = writeln!(
            out,
            "expected:\n{}\nactual:\n{}",
            block(&f.expected),
            block(&f.actual)
        );
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `… and 3 failed scenarios more (see run.json)` under a cut list of
/// `what`, pointing to the file (`see`) that holds them all.
fn more_note(out: &mut String, left_out: Option<usize>, (what, see): (&str, &str)) {
    if let Some(n) = left_out {
        let _ = writeln!(out, "… and {} more (see {see})\n", plural(n, what));
    }
}

fn heading(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> String {
    // With variants, every variant's run and comparison counts.
    let ok = summary.count(Status::Failed) == 0
        && summary
            .variants
            .iter()
            .all(|v| v.summary.count(Status::Failed) == 0 && !v.summary.interrupted)
        && !summary.interrupted
        && summary.load_errors.is_empty()
        && comparison.is_none_or(|c| c.passed)
        && variants.iter().flatten().all(|c| c.passed);
    let scope = match &summary.partition {
        Some(info) => format!(" (partition {})", info.spec),
        None => String::new(),
    };
    format!(
        "## harness{scope}: {}\n\n",
        if ok { "✅ passed" } else { "❌ failed" }
    )
}

fn totals_table(out: &mut String, summary: &RunSummary) {
    let t = summary.totals().figures;
    let _ = writeln!(
        out,
        "{}: {} passed, {} failed, {} skipped · tokenizer {} · {:.1} s{}\n",
        plural(summary.scenarios.len(), "scenario"),
        summary.count(Status::Passed),
        summary.count(Status::Failed),
        summary.count(Status::Skipped),
        code(&summary.tokenizer),
        summary.duration_ms as f64 / 1000.0,
        if summary.interrupted {
            " · **interrupted**"
        } else {
            ""
        }
    );
    out.push_str(
        "| turns | calls | errors | retries | retries avoided | result tokens | input tokens | \
         output tokens | cache read | cache write | definition tokens |\n",
    );
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
        t.turns,
        t.calls,
        t.errors,
        t.retries,
        t.retries_avoided,
        t.result_tokens,
        t.input_tokens,
        t.output_tokens,
        t.cache_read_tokens,
        t.cache_write_tokens,
        t.definition_tokens
    );
}

fn failures(out: &mut String, summary: &RunSummary) {
    if !summary.load_errors.is_empty() {
        out.push_str("### Scenario files that could not be loaded\n\n");
        for e in &summary.load_errors {
            let _ = writeln!(
                out,
                "- {}: {}",
                code(&format!("{}:{}:{}", e.file, e.line, e.column)),
                text(&e.message)
            );
        }
        out.push('\n');
    }
    let failed: Vec<&ScenarioOutcome> = summary
        .scenarios
        .iter()
        .filter(|o| o.status == Status::Failed)
        .collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("### Failures\n\n");
    for o in failed.iter().take(MAX_FAILED_SCENARIOS) {
        let _ = writeln!(out, "#### {} ({})\n", code(&o.name), code(&o.file));
        for f in &o.failures {
            failure(out, f);
        }
    }
    more_note(
        out,
        left_out(failed.len(), MAX_FAILED_SCENARIOS),
        ("failed scenario", "run.json"),
    );
}

fn gates(out: &mut String, c: &Comparison) {
    gates_titled(out, "Baseline", c);
}

/// The baseline section under the heading `title`.
fn gates_titled(out: &mut String, title: &str, c: &Comparison) {
    let compared = c.scenarios.iter().filter(|s| s.compared).count();
    let _ = writeln!(out, "### {title}\n");
    let _ = writeln!(
        out,
        "{} compared · {} new · {} missing\n",
        plural(compared, "scenario"),
        c.new.len(),
        c.missing.len()
    );
    if !c.gates.is_empty() || !c.regressions.is_empty() {
        out.push_str("| gate | result | breaches |\n|---|---|---|\n");
        for g in &c.gates {
            let breaches: Vec<String> = g
                .breaches
                .iter()
                .take(MAX_ROWS)
                .map(|b| b.describe().replace('|', "\\|"))
                .collect();
            let more = left_out(g.breaches.len(), MAX_ROWS)
                .map(|n| format!("<br>… and {n} more"))
                .unwrap_or_default();
            let note = g.not_compared_note();
            let result = match (g.held, &note) {
                (false, _) => "❌ breached",
                (true, Some(_)) => "➖ not compared",
                (true, None) => "✅ held",
            };
            let mut breaches = breaches.join("<br>");
            if let Some(note) = note {
                let sep = if breaches.is_empty() { "" } else { "<br>" };
                breaches = format!("{breaches}{sep}{}", text(&note));
            }
            let _ = writeln!(out, "| {} | {result} | {breaches}{more} |", code(&g.gate),);
        }
        let _ = writeln!(
            out,
            "| regressions | {} | {} |",
            if c.regressions.is_empty() {
                "✅ none"
            } else {
                "❌ passed before, fail now"
            },
            c.regressions
                .iter()
                .map(|n| code(n))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.push('\n');
    }
    for (label, names) in [("New", &c.new), ("Missing", &c.missing)] {
        if !names.is_empty() {
            let shown: Vec<String> = names.iter().take(MAX_ROWS).map(|n| code(n)).collect();
            let more = left_out(names.len(), MAX_ROWS)
                .map(|n| format!(" … and {n} more"))
                .unwrap_or_default();
            let _ = writeln!(out, "{label}: {}{more}\n", shown.join(", "));
        }
    }
}

fn delta(before: u64, now: u64) -> String {
    let diff = i128::from(now) - i128::from(before);
    if diff == 0 {
        "±0".to_owned()
    } else {
        format!("{diff:+} ({})", change_text(before, now))
    }
}

fn token_changes(out: &mut String, c: &Comparison) {
    let size = |s: &ScenarioChange| {
        let r = i128::from(s.current.result_tokens) - i128::from(s.baseline.result_tokens);
        let i = i128::from(s.current.input_tokens) - i128::from(s.baseline.input_tokens);
        r.abs().max(i.abs())
    };
    let mut changed: Vec<&ScenarioChange> = c
        .scenarios
        .iter()
        .filter(|s| s.compared && size(s) > 0)
        .collect();
    changed.sort_by(|a, b| size(b).cmp(&size(a)).then_with(|| a.name.cmp(&b.name)));
    out.push_str("### Largest token changes\n\n");
    if changed.is_empty() {
        out.push_str("No token figure changed against the baseline.\n\n");
        return;
    }
    out.push_str(
        "| scenario | result tokens | change | input tokens | change | retries | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for s in changed.iter().take(MAX_ROWS) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} → {} | {} → {} |",
            code(&s.name),
            s.current.result_tokens,
            delta(s.baseline.result_tokens, s.current.result_tokens),
            s.current.input_tokens,
            delta(s.baseline.input_tokens, s.current.input_tokens),
            s.baseline.retries,
            s.current.retries,
            s.baseline.errors,
            s.current.errors
        );
    }
    let (b, n) = (&c.baseline_totals, &c.current_totals);
    let _ = writeln!(
        out,
        "| **total (compared)** | {} | {} | {} | {} | {} → {} | {} → {} |\n",
        n.result_tokens,
        delta(b.result_tokens, n.result_tokens),
        n.input_tokens,
        delta(b.input_tokens, n.input_tokens),
        b.retries,
        n.retries,
        b.errors,
        n.errors
    );
    more_note(
        out,
        left_out(changed.len(), MAX_ROWS),
        ("changed scenario", "scenarios.csv"),
    );
}

fn most_tokens(out: &mut String, summary: &RunSummary) {
    let mut ran: Vec<&ScenarioOutcome> = summary
        .scenarios
        .iter()
        .filter(|o| o.status != Status::Skipped)
        .collect();
    if ran.is_empty() {
        return;
    }
    ran.sort_by(|a, b| {
        let (fa, fb) = (&a.stats.figures, &b.stats.figures);
        fb.input_tokens
            .cmp(&fa.input_tokens)
            .then_with(|| fb.result_tokens.cmp(&fa.result_tokens))
            .then_with(|| a.name.cmp(&b.name))
    });
    out.push_str("### Most tokens\n\n");
    out.push_str(
        "| scenario | input tokens | result tokens | output tokens | calls | retries | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|\n",
    );
    for o in ran.iter().take(MAX_ROWS) {
        let s = &o.stats.figures;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            code(&o.name),
            s.input_tokens,
            s.result_tokens,
            s.output_tokens,
            s.calls,
            s.retries,
            s.errors
        );
    }
    out.push('\n');
}

fn tools(out: &mut String, summary: &RunSummary) {
    let tools = stats::per_tool(summary);
    if tools.is_empty() {
        return;
    }
    out.push_str("### Tools\n\n");
    out.push_str(
        "| tool | calls | errors | error rate | truncated | result tokens | p50 | p95 | max |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for t in &tools {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1}% | {} | {} | {} | {} | {} |",
            code(&t.tool),
            t.calls,
            t.errors,
            t.error_rate * 100.0,
            t.truncations,
            t.result_tokens,
            t.result_tokens_p50,
            t.result_tokens_p95,
            t.result_tokens_max
        );
    }
    out.push('\n');
}

/// The drift of replayed sessions: one row per tool and the total.
fn replay(out: &mut String, summary: &RunSummary) {
    let Some(totals) = summary.replay_totals() else {
        return;
    };
    out.push_str(
        "### Replay

",
    );
    let not_reached = if totals.not_replayed > 0 {
        format!(
            ", {} not reached (the run ended first)",
            totals.not_replayed
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} compared, {} left out at import, {} unrecorded{not_reached}, {} synced.\n",
        plural(totals.counts.calls as usize, "call"),
        totals.skipped,
        totals.unrecorded,
        plural(totals.synced_files as usize, "file"),
    );
    out.push_str(
        "| tool | calls | is_error agrees | disagrees | same | paths | presentation | differs | recorded tokens | current tokens | ratio |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let ratio = |c: &ReplayCounts| {
        c.token_ratio()
            .map_or_else(|| "–".to_owned(), |r| format!("{r:.2}"))
    };
    let row = |out: &mut String, name: &str, c: &ReplayCounts| {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            c.calls,
            c.error_agree,
            c.error_disagree,
            c.same,
            c.paths,
            c.presentation,
            c.differs,
            c.recorded_tokens,
            c.current_tokens,
            ratio(c)
        );
    };
    for (tool, counts) in &totals.tools {
        row(out, &code(tool), counts);
    }
    row(out, "**total**", &totals.counts);
    out.push('\n');
}

/// `summary.md` of a run; with variants, `variants[i]` is the comparison
/// of `summary.variants[i]` with its own baseline: the heading judges
/// every variant, and after the variants' table each compared variant
/// has its baseline section (`### Baseline, variant NAME`). Without
/// variants, `variants` is empty.
pub(crate) fn render(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> Vec<u8> {
    let mut out = heading(summary, comparison, variants);
    totals_table(&mut out, summary);
    failures(&mut out, summary);
    out.push_str(&super::servers::markdown(summary, code));
    let per_variant = !summary.variants.is_empty() && !variants.is_empty();
    match comparison {
        Some(c) if !per_variant => {
            gates(&mut out, c);
            token_changes(&mut out, c);
        }
        _ => most_tokens(&mut out, summary),
    }
    tools(&mut out, summary);
    replay(&mut out, summary);
    out.push_str(&super::variants::markdown(summary, text));
    if per_variant {
        for (v, c) in summary.variants.iter().zip(variants) {
            if let Some(c) = c {
                out.push('\n');
                gates_titled(&mut out, &format!("Baseline, variant {}", text(&v.name)), c);
            }
        }
    }
    out.push_str(&super::repeats::markdown(summary, text));
    out.push_str(&super::coverage::markdown(summary));
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn inline_code_survives_backticks_and_pipes() {
        assert_eq!(code("plain"), "`plain`");
        assert_eq!(code("a `b` c"), "``a `b` c``");
        assert_eq!(code("`x`"), "`` `x` ``");
        assert_eq!(code("a|b"), "`a\\|b`");
    }

    #[test]
    fn plain_text_cannot_turn_into_html_or_emphasis() {
        assert_eq!(
            text("files: <a>_b_ *c* | `d`\nx"),
            "files: &lt;a&gt;\\_b\\_ \\*c\\* \\| \\`d\\` x"
        );
    }

    #[test]
    fn blocks_use_a_longer_fence_and_cut_long_text() {
        assert_eq!(block("a\n```\nb\n"), "````text\na\n```\nb\n````\n");
        assert_eq!(block(""), "```text\n(empty)\n```\n");
        let long = "x".repeat(MAX_TEXT + 10);
        let shown = block(&long);
        assert!(
            shown.contains("… (cut; the whole text is in run.json)"),
            "{shown}"
        );
        assert!(shown.len() < MAX_TEXT + 80);
    }
}
