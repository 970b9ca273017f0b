//! `index.html`: one self-contained page to look at a run. The style, the
//! script and the run itself are inline (no network, no CDN; a Content
//! Security Policy forbids fetching anything), so the file opens from disk
//! or from a CI artifact viewer.
//!
//! The overview (counts, totals, gates, regressions, the biggest token
//! movers) and the charts are rendered here as HTML and SVG, so the first
//! screen needs no script. The whole run (`run.json`'s document, with each
//! scenario's transcript) is a data island: the JSON, gzip-compressed and
//! in base64 (a tenth of the size, so a 10,000-scenario page stays small
//! and quick to open), which the script unpacks with the browser's own
//! `DecompressionStream` and from which it builds the scenario list
//! (filtered, sorted, rendered lazily) and each scenario's page. Text from
//! the run cannot add markup: in HTML it is escaped as entities, the
//! island's alphabet is base64's, and the script only ever sets text,
//! never markup, from the data.
//!
//! The page has a bound: its data island takes at most
//! [`MAX_ISLAND_BYTES`], whatever the scenarios' outputs. A run whose
//! island would be larger keeps less of each transcript in the page (an
//! equal share of the bytes, given first to the scenarios that need less,
//! see [`Transcript::within`]) and cuts long failure texts, halving the
//! share until the island fits; the island then says so (`trim`), and
//! `run.json` still has everything.
//!
//! The page is deterministic: identical runs give identical pages except
//! for durations.

use std::fmt::Write as _;
use std::io::Write as _;

use base64::Engine as _;

use serde::Serialize;

use crate::run::RunSummary;
use crate::run::Status;
use crate::run::stats::ToolStats;
use crate::run::stats::percentile;
use crate::run::transcript::Transcript;
use crate::scenario::Failure;
use crate::scenario::Figures;

use super::compare::Comparison;
use super::console;
use super::json::RunReport;
use super::verdict::change_text;

/// The page around everything; `{{name}}` marks where each part goes.
const TEMPLATE: &str = include_str!("html/template.html");
/// The style sheet.
const STYLE: &str = include_str!("html/style.css");
/// The script.
const SCRIPT: &str = include_str!("html/app.js");

/// Lines of one failure's diff in the page.
const MAX_DIFF_LINES: usize = 400;
/// Rows of the movers table.
const MAX_MOVERS: usize = 15;
/// Breaches listed under each gate, and files that did not load, in the
/// overview (the island has them all).
const MAX_LISTED: usize = 20;
/// The most bytes of the page's data island (base64 of the gzip'd JSON);
/// with the rest of the page (a few hundred KB at most: the overview's
/// lists are bounded) the page stays under 30 MB.
pub const MAX_ISLAND_BYTES: usize = 26 * 1024 * 1024;
/// A failure text keeps at least this many bytes in a trimmed page.
const MIN_FAILURE_BYTES: usize = 512;
/// And at most this many.
const MAX_FAILURE_BYTES: usize = 16 * 1024;
/// A scenario's transcript share below this is no share: in a page
/// trimmed that far, transcripts keep only their sizes.
const MIN_SHARE: usize = 256;

/// A failed check's line diff, for the scenario page.
#[derive(Debug, Serialize)]
struct FailureDiff {
    /// The scenario's position in `run.scenarios`.
    scenario: usize,
    /// The failure's position in its `failures`.
    failure: usize,
    /// `-`, `+` or ` ` and the line.
    lines: Vec<String>,
    /// Whether lines were left out.
    cut: bool,
}

/// What the data island holds.
#[derive(Debug, Serialize)]
struct PageData<'a> {
    /// The run, as `run.json` has it (but for `trim`).
    run: &'a RunReport,
    /// Diffs of failed checks whose expected and actual texts are both long.
    diffs: &'a [FailureDiff],
    /// `null`, or how the page was trimmed to keep within its bound.
    trim: Option<Trim>,
}

/// How a page too large for [`MAX_ISLAND_BYTES`] was trimmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Trim {
    /// The most bytes of text, images and details each scenario's
    /// transcript keeps in the page (0: only their sizes).
    pub transcript_bytes: usize,
    /// The most bytes each failure's `expected` and `actual` keep.
    pub failure_bytes: usize,
    /// The most lines of each diff, each line cut to 240 characters.
    pub diff_lines: usize,
}

/// A rendered page and how it was trimmed, if it was.
#[derive(Debug)]
pub struct Page {
    /// The page.
    pub bytes: Vec<u8>,
    /// `None` when the island holds the run whole.
    pub trim: Option<Trim>,
}

/// Why a page could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// The run could not be serialised.
    #[error("cannot render the HTML report's data: {0}")]
    Json(#[from] serde_json::Error),
    /// The data could not be compressed.
    #[error("cannot compress the HTML report's data: {0}")]
    Compress(#[from] std::io::Error),
}

/// The page of a run.
pub fn render(summary: &RunSummary, comparison: Option<&Comparison>) -> Result<Vec<u8>, HtmlError> {
    Ok(render_within(summary, comparison, MAX_ISLAND_BYTES)?.bytes)
}

/// The page of a run whose data island takes at most `island_bytes`
/// (whatever the outputs: only the scenarios' names, figures and calls
/// are never trimmed).
pub fn render_within(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    island_bytes: usize,
) -> Result<Page, HtmlError> {
    let report = RunReport::new(summary, comparison);
    let (data, trim) = island(&report, island_bytes)?;
    let mut out = String::with_capacity(data.len() + 128 * 1024);
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        match &after[..end] {
            "title" => out.push_str(&escape(&title(summary, comparison))),
            "style" => out.push_str(STYLE),
            "body" => out.push_str(&body(&report, comparison)),
            "data" => out.push_str(&data),
            "script" => out.push_str(SCRIPT),
            other => {
                out.push_str("{{");
                out.push_str(other);
                out.push_str("}}");
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(Page {
        bytes: out.into_bytes(),
        trim,
    })
}

/// The data island of `report`, within `budget` bytes: whole when it fits,
/// else trimmed. The floor (transcripts keeping only their sizes) is
/// packed first; the share the rest of the budget affords is estimated
/// from how the whole run packed, and lowered by a quarter until the
/// island fits (or the share is too small to keep, and the floor is it).
fn island(report: &RunReport, budget: usize) -> Result<(String, Option<Trim>), HtmlError> {
    let whole = diffs(&report.scenarios, MAX_DIFF_LINES, false);
    let json = serde_json::to_vec(&PageData {
        run: report,
        diffs: &whole,
        trim: None,
    })?;
    let packed = pack(&json)?;
    if packed.len() <= budget {
        return Ok((packed, None));
    }
    let sizes: Vec<usize> = report
        .scenarios
        .iter()
        .map(|s| s.transcript.as_ref().map_or(0, Transcript::kept_bytes))
        .collect();
    let floor = trimmed_island(report, 0)?;
    if floor.0.len() >= budget {
        return Ok(floor);
    }
    // Bytes of island per byte of JSON, as the whole run packed.
    let rate = packed.len() as f64 / json.len().max(1) as f64;
    let mut target = ((budget - floor.0.len()) as f64 / rate * 0.95) as usize;
    loop {
        let share = water_level(&sizes, target);
        if share < MIN_SHARE {
            return Ok(floor);
        }
        let page = trimmed_island(report, share)?;
        if page.0.len() <= budget {
            return Ok(page);
        }
        target = target / 4 * 3;
    }
}

/// The island of `report` with each transcript within `share` bytes.
fn trimmed_island(report: &RunReport, share: usize) -> Result<(String, Option<Trim>), HtmlError> {
    let trim = Trim {
        transcript_bytes: share,
        failure_bytes: (share / 2).clamp(MIN_FAILURE_BYTES, MAX_FAILURE_BYTES),
        diff_lines: (share / 64).clamp(20, MAX_DIFF_LINES),
    };
    let trimmed = trimmed(report, trim);
    let cut = diffs(&trimmed.scenarios, trim.diff_lines, true);
    let json = serde_json::to_vec(&PageData {
        run: &trimmed,
        diffs: &cut,
        trim: Some(trim),
    })?;
    Ok((pack(&json)?, Some(trim)))
}

/// The largest share such that every scenario keeping at most that many
/// bytes keeps `target` bytes or fewer in all (scenarios that need less
/// leave their rest to the others).
fn water_level(sizes: &[usize], target: usize) -> usize {
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    let mut left = target;
    for (i, &size) in sorted.iter().enumerate() {
        let others = sorted.len() - i;
        if size.saturating_mul(others) > left {
            return left / others;
        }
        left -= size;
    }
    sorted.last().copied().unwrap_or(0)
}

/// `report` as a trimmed page keeps it: transcripts within the share,
/// failure texts cut.
fn trimmed(report: &RunReport, trim: Trim) -> RunReport {
    let mut out = report.clone();
    for scenario in &mut out.scenarios {
        if let Some(t) = &scenario.transcript {
            scenario.transcript = Some(t.within(trim.transcript_bytes));
        }
        for failure in &mut scenario.failures {
            cut_failure(failure, trim.failure_bytes);
        }
    }
    out
}

/// A failure's texts cut to `bytes` each: three quarters from the start
/// and a quarter from the end around a line saying how much is left out;
/// a focus on lines no longer kept is dropped.
fn cut_failure(failure: &mut Failure, bytes: usize) {
    failure.expected = cut_text(&failure.expected, bytes);
    let actual = cut_text(&failure.actual, bytes);
    if actual.len() != failure.actual.len() {
        let head_lines = actual.split('\n').count().saturating_sub(1);
        failure.actual = actual;
        if failure
            .focus
            .as_ref()
            .is_some_and(|f| f.last_line > head_lines)
        {
            failure.focus = None;
        }
    }
}

fn cut_text(text: &str, bytes: usize) -> String {
    let clip = crate::run::transcript::clip(text, bytes);
    if clip.omitted_bytes == 0 {
        return clip.text;
    }
    format!(
        "{}\n[… {} bytes not kept in this page; run.json has the whole text …]\n{}",
        clip.text, clip.omitted_bytes, clip.tail
    )
}

/// Text for HTML: `&`, `<`, `>`, `"` and `'` as entities.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match super::markup::entity(c, true) {
            Some(entity) => out.push_str(entity),
            None => out.push(c),
        }
    }
    out
}

/// The data island's text: `json` gzip-compressed (no file name, no
/// time, so the same run gives the same bytes), in base64.
pub fn pack(json: &[u8]) -> std::io::Result<String> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(json)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(gz.finish()?))
}

fn verdict(summary: &RunSummary, comparison: Option<&Comparison>) -> bool {
    summary.count(Status::Failed) == 0
        && !summary.interrupted
        && summary.load_errors.is_empty()
        && comparison.is_none_or(|c| c.passed)
}

fn title(summary: &RunSummary, comparison: Option<&Comparison>) -> String {
    format!(
        "harness: {} ({} scenarios)",
        if verdict(summary, comparison) {
            "passed"
        } else {
            "failed"
        },
        summary.scenarios.len()
    )
}

/// The diffs of failures whose two texts are long (as on the console), at
/// most `max` lines each; `cut_lines` cuts each line as the console does.
fn diffs(
    scenarios: &[crate::run::ScenarioOutcome],
    max: usize,
    cut_lines: bool,
) -> Vec<FailureDiff> {
    let mut out = Vec::new();
    for (scenario, outcome) in scenarios.iter().enumerate() {
        for (failure, f) in outcome.failures.iter().enumerate() {
            if console::is_long(&f.expected) && console::is_long(&f.actual) {
                let (lines, cut) = console::diff_lines(&f.expected, &f.actual, max);
                out.push(FailureDiff {
                    scenario,
                    failure,
                    lines: lines
                        .into_iter()
                        .map(|(sign, line)| {
                            if cut_lines {
                                format!("{sign}{}", console::cut_line(&line))
                            } else {
                                format!("{sign}{line}")
                            }
                        })
                        .collect(),
                    cut,
                });
            }
        }
    }
    out
}

/// A number with a `data-figure` name, for people and for tests.
fn figure(name: &str, value: u64) -> String {
    format!(
        "<td class=\"num\" data-figure=\"{}\">{value}</td>",
        escape(name)
    )
}

fn body(report: &RunReport, comparison: Option<&Comparison>) -> String {
    let mut out = String::new();
    let passed = report.counts.failed == 0
        && !report.interrupted
        && report.load_errors.is_empty()
        && comparison.is_none_or(|c| c.passed);
    let _ = write!(
        out,
        "<header class=\"top\"><h1><a href=\"#\">harness</a> <span class=\"run-verdict\" \
         title=\"the verdict of the whole run\">run <span id=\"verdict\" class=\"badge \
         {0}\">{0}</span></span></h1><p class=\"meta\">{1} scenarios · tokenizer {2} · \
         harness {3}{4}{5} · <span class=\"duration\">{6:.1} s</span></p></header>",
        if passed { "passed" } else { "failed" },
        report.counts.scenarios,
        escape(&report.tokenizer),
        escape(&report.harness_version),
        report
            .partition
            .as_ref()
            .map(|p| format!(" · partition {}", escape(&p.spec.to_string())))
            .unwrap_or_default(),
        if report.interrupted {
            " · <strong>interrupted</strong>"
        } else {
            ""
        },
        report.duration_ms as f64 / 1000.0,
    );
    out.push_str("<main id=\"overview-view\"><section id=\"overview\"><h2>Overview</h2>");
    counts(&mut out, report);
    out.push_str("<div class=\"panels\"><div class=\"panel\">");
    totals(&mut out, report, comparison);
    out.push_str("</div><div class=\"panel\">");
    gates(&mut out, report, comparison);
    load_errors(&mut out, report);
    if let Some(c) = comparison {
        out.push_str("</div><div class=\"panel\">");
        changes(&mut out, c);
    }
    out.push_str("</div></div>");
    out.push_str("</section><section id=\"charts\"><h2>Pictures</h2><div class=\"charts\">");
    tool_chart(&mut out, &report.tools);
    distribution_chart(&mut out, report);
    scenario_chart(&mut out, report);
    if let Some(c) = comparison {
        baseline_chart(&mut out, c);
    }
    out.push_str("</div></section>");
    out.push_str(
        "<section id=\"scenarios\"><h2>Scenarios</h2><form id=\"filters\" \
         autocomplete=\"off\"><label>status <select id=\"f-status\"><option \
         value=\"\">any</option><option>passed</option><option>failed</option><option>skipped\
         </option></select></label> <label>tag <select id=\"f-tag\"><option \
         value=\"\">any</option></select></label> <label>tool <select id=\"f-tool\"><option \
         value=\"\">any</option></select></label> <label>text <input id=\"f-text\" \
         type=\"search\" placeholder=\"name, file, failure, call\"></label> <label>sort <select \
         id=\"f-sort\"><option value=\"index\">run order</option><option \
         value=\"tokens\">result tokens</option><option value=\"input\">input \
         tokens</option><option value=\"duration\">duration</option><option \
         value=\"retries\">retries</option><option value=\"change\">token \
         change</option></select></label></form><p id=\"list-count\" class=\"meta\"></p><div \
         id=\"list\" class=\"list\"></div><div id=\"list-more\"></div><noscript><p>The scenario \
         list and the scenario pages need JavaScript; run.json has the same \
         data.</p></noscript></section></main><main id=\"scenario-view\" hidden></main>",
    );
    out
}

fn counts(out: &mut String, report: &RunReport) {
    out.push_str("<table class=\"counts\"><tr>");
    for (name, value) in [
        ("scenarios", report.counts.scenarios),
        ("passed", report.counts.passed),
        ("failed", report.counts.failed),
        ("skipped", report.counts.skipped),
    ] {
        let _ = write!(
            out,
            "<td class=\"count {name}\"><span class=\"num\" \
             data-figure=\"counts.{name}\">{value}</span><span>{name}</span></td>"
        );
    }
    out.push_str("</tr></table>");
}

fn totals(out: &mut String, report: &RunReport, comparison: Option<&Comparison>) {
    out.push_str("<h3>Totals</h3><table class=\"totals\"><thead><tr><th>figure</th><th>run</th>");
    if comparison.is_some() {
        out.push_str("<th>baseline (compared)</th><th>now (compared)</th><th>change</th>");
    }
    out.push_str("</tr></thead><tbody>");
    let compared = comparison.map(|c| {
        (
            c.baseline_totals.named().collect::<Vec<_>>(),
            c.current_totals.named().collect::<Vec<_>>(),
        )
    });
    for (i, (name, value)) in report.totals.figures.named().enumerate() {
        let _ = write!(
            out,
            "<tr><th>{name}</th>{}",
            figure(&format!("totals.{name}"), value)
        );
        if let Some((before, now)) = &compared {
            let (b, n) = (before[i].1, now[i].1);
            let _ = write!(
                out,
                "{}{}<td class=\"num {}\">{}</td>",
                figure(&format!("baseline_totals.{name}"), b),
                figure(&format!("current_totals.{name}"), n),
                direction(b, n),
                escape(&change_text(b, n))
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
}

/// `up`, `down` or `same`, for colour.
fn direction(before: u64, now: u64) -> &'static str {
    match now.cmp(&before) {
        std::cmp::Ordering::Greater => "up",
        std::cmp::Ordering::Less => "down",
        std::cmp::Ordering::Equal => "same",
    }
}

fn gates(out: &mut String, report: &RunReport, comparison: Option<&Comparison>) {
    out.push_str("<h3>Gates</h3>");
    match comparison {
        None if report.gates.is_empty() => {
            out.push_str("<p class=\"meta\">No gates configured.</p>");
        }
        None => {
            out.push_str(
                "<p class=\"meta\">Not judged: gates apply when a baseline is given \
                 (<code>--baseline</code>).</p><table class=\"gates\"><thead><tr><th>gate</th>\
                 <th>limit</th></tr></thead><tbody>",
            );
            for gate in &report.gates {
                let (key, limit) = gate.split_once('=').unwrap_or((gate, ""));
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{}</td></tr>",
                    escape(key),
                    escape(limit)
                );
            }
            out.push_str("</tbody></table>");
        }
        Some(c) => {
            out.push_str(
                "<table class=\"gates\"><thead><tr><th>gate</th><th>limit</th><th>verdict</th>\
                 <th>breaches</th></tr></thead><tbody>",
            );
            for g in &c.gates {
                let (key, limit) = g.gate.split_once('=').unwrap_or((&g.gate, ""));
                let mut breaches: Vec<String> = g
                    .breaches
                    .iter()
                    .take(MAX_LISTED)
                    .map(|b| escape(&b.describe()))
                    .collect();
                if g.breaches.len() > MAX_LISTED {
                    breaches.push(format!(
                        "<span class=\"meta\">and {} more (run.json has them all)</span>",
                        g.breaches.len() - MAX_LISTED
                    ));
                }
                let _ = write!(
                    out,
                    "<tr data-gate=\"{}\"><td>{}</td><td>{}</td><td><span class=\"badge {}\">{}\
                     </span></td><td>{}</td></tr>",
                    escape(&g.gate),
                    escape(key),
                    escape(limit),
                    if g.held { "passed" } else { "failed" },
                    if g.held { "held" } else { "breached" },
                    breaches.join("<br>")
                );
            }
            let _ = write!(
                out,
                "<tr data-gate=\"regressions\"><td>regressions</td><td>none</td><td><span \
                 class=\"badge {}\">{}</span></td><td>{}</td></tr></tbody></table>",
                if c.regressions.is_empty() {
                    "passed"
                } else {
                    "failed"
                },
                if c.regressions.is_empty() {
                    "held"
                } else {
                    "breached"
                },
                c.regressions.len()
            );
        }
    }
}

/// Result and input tokens together: what a mover moved.
fn moved(figures: &Figures) -> u64 {
    figures.result_tokens.saturating_add(figures.input_tokens)
}

/// The compared scenarios whose tokens moved most, largest first (ties
/// in run order).
fn movers(c: &Comparison) -> Vec<&super::compare::ScenarioChange> {
    let mut movers: Vec<_> = c
        .scenarios
        .iter()
        .filter(|s| s.compared && moved(&s.baseline) != moved(&s.current))
        .collect();
    movers.sort_by_key(|s| std::cmp::Reverse(moved(&s.baseline).abs_diff(moved(&s.current))));
    movers.truncate(MAX_MOVERS);
    movers
}

fn changes(out: &mut String, c: &Comparison) {
    let _ = write!(
        out,
        "<h3>Against the baseline</h3><p class=\"meta\">{} compared · {} new · {} missing</p>",
        c.scenarios.iter().filter(|s| s.compared).count(),
        c.new.len(),
        c.missing.len()
    );
    out.push_str("<h4>Passed → failed</h4>");
    if c.regressions.is_empty() {
        out.push_str("<p class=\"meta\" id=\"regressions\">None.</p>");
    } else {
        out.push_str("<ul id=\"regressions\">");
        for name in &c.regressions {
            let _ = write!(
                out,
                "<li><a data-scenario=\"{0}\" href=\"#\">{0}</a></li>",
                escape(name)
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("<h4>Biggest token movers</h4>");
    let movers = movers(c);
    if movers.is_empty() {
        out.push_str("<p class=\"meta\">No scenario's tokens changed.</p>");
        return;
    }
    out.push_str(
        "<table class=\"movers\"><thead><tr><th>scenario</th><th>result tokens</th><th>input \
         tokens</th><th>retries</th><th>errors</th></tr></thead><tbody>",
    );
    for s in movers {
        let cell = |b: u64, n: u64| {
            format!(
                "<td class=\"num {}\">{b} → {n} ({})</td>",
                direction(b, n),
                escape(&change_text(b, n))
            )
        };
        let _ = write!(
            out,
            "<tr><td><a data-scenario=\"{0}\" href=\"#\">{0}</a></td>{1}{2}{3}{4}</tr>",
            escape(&s.name),
            cell(s.baseline.result_tokens, s.current.result_tokens),
            cell(s.baseline.input_tokens, s.current.input_tokens),
            cell(s.baseline.retries, s.current.retries),
            cell(s.baseline.errors, s.current.errors),
        );
    }
    out.push_str("</tbody></table>");
}

fn load_errors(out: &mut String, report: &RunReport) {
    if report.load_errors.is_empty() {
        return;
    }
    out.push_str("<h3>Files that did not load</h3><ul class=\"load-errors\">");
    for e in report.load_errors.iter().take(MAX_LISTED) {
        let _ = write!(out, "<li><code>{}</code></li>", escape(&e.to_string()));
    }
    if report.load_errors.len() > MAX_LISTED {
        let _ = write!(
            out,
            "<li class=\"meta\">and {} more (run.json has them all)</li>",
            report.load_errors.len() - MAX_LISTED
        );
    }
    out.push_str("</ul>");
}

/// The width of a bar of `value` out of `max` in `width` pixels.
fn bar(value: u64, max: u64, width: f64) -> f64 {
    if max == 0 {
        return 0.0;
    }
    (value as f64 / max as f64 * width).max(if value > 0 { 1.0 } else { 0.0 })
}

const CHART_WIDTH: f64 = 560.0;
const LABEL_WIDTH: f64 = 150.0;

fn tool_chart(out: &mut String, tools: &[ToolStats]) {
    let row = 26.0;
    let height = 30.0 + row * tools.len().max(1) as f64;
    let max = tools
        .iter()
        .map(|t| t.result_tokens.max(t.args_tokens))
        .max()
        .unwrap_or(0);
    let _ = write!(
        out,
        "<figure id=\"chart-tools\"><figcaption>Tokens by tool: results (model input) and \
         arguments (model output)</figcaption><svg role=\"img\" viewBox=\"0 0 {w} {height}\" \
         width=\"{w}\" height=\"{height}\"><g class=\"legend\"><rect x=\"{LABEL_WIDTH}\" y=\"4\" \
         width=\"10\" height=\"10\" class=\"s-result\"/><text x=\"{lx}\" y=\"13\">result \
         tokens</text><rect x=\"{ax}\" y=\"4\" width=\"10\" height=\"10\" \
         class=\"s-args\"/><text x=\"{atx}\" y=\"13\">argument tokens</text></g>",
        w = LABEL_WIDTH + CHART_WIDTH,
        lx = LABEL_WIDTH + 14.0,
        ax = LABEL_WIDTH + 120.0,
        atx = LABEL_WIDTH + 134.0,
    );
    if tools.is_empty() {
        let _ = write!(out, "<text x=\"0\" y=\"44\">no tool calls</text>");
    }
    let bars = CHART_WIDTH - 110.0;
    for (i, t) in tools.iter().enumerate() {
        let y = 26.0 + row * i as f64;
        let (r, a) = (
            bar(t.result_tokens, max, bars),
            bar(t.args_tokens, max, bars),
        );
        let _ = write!(
            out,
            "<g data-tool=\"{name}\"><title>{name}: {calls} calls, {res} result tokens, {args} \
             argument tokens, p50 {p50}, p95 {p95}</title><text x=\"{tx}\" y=\"{ty}\" \
             text-anchor=\"end\">{name}</text><rect x=\"{LABEL_WIDTH}\" y=\"{y}\" width=\"{r:.1}\" \
             height=\"12\" class=\"s-result\"/><rect x=\"{LABEL_WIDTH}\" y=\"{y2}\" \
             width=\"{a:.1}\" height=\"6\" class=\"s-args\"/><text x=\"{vx:.1}\" \
             y=\"{ty}\">{res} / {args}</text></g>",
            name = escape(&t.tool),
            calls = t.calls,
            res = t.result_tokens,
            args = t.args_tokens,
            p50 = t.result_tokens_p50,
            p95 = t.result_tokens_p95,
            tx = LABEL_WIDTH - 6.0,
            ty = y + 11.0,
            y2 = y + 13.0,
            vx = LABEL_WIDTH + r.max(a) + 6.0,
        );
    }
    out.push_str("</svg></figure>");
}

fn distribution_chart(out: &mut String, report: &RunReport) {
    let mut sizes: Vec<u64> = report
        .scenarios
        .iter()
        .flat_map(|s| s.calls.iter().map(|c| c.result_tokens))
        .collect();
    sizes.sort_unstable();
    // Bins by powers of two: 0, 1, 2-3, 4-7, … up to the largest result.
    let bin_of = |v: u64| 64 - v.leading_zeros() as usize;
    let bins = sizes.last().map_or(1, |&max| bin_of(max) + 1);
    let mut counts = vec![0u64; bins];
    for &v in &sizes {
        counts[bin_of(v)] += 1;
    }
    let (p50, p95) = (percentile(&sizes, 50), percentile(&sizes, 95));
    // The markers' labels sit in two lines above the bars, so that they
    // never cross one.
    let top = 30.0;
    let plot = 110.0;
    let bottom = top + plot;
    let height = bottom + 40.0;
    let width = LABEL_WIDTH + CHART_WIDTH;
    let step = (CHART_WIDTH - 20.0) / bins as f64;
    let max = counts.iter().copied().max().unwrap_or(0);
    let _ = write!(
        out,
        "<figure id=\"chart-distribution\"><figcaption>Result tokens per call: {n} calls, \
         <span data-figure=\"calls.result_tokens_p50\">p50 {p50}</span>, <span \
         data-figure=\"calls.result_tokens_p95\">p95 {p95}</span> (bins by powers of \
         two)</figcaption><svg role=\"img\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" \
         height=\"{height}\">",
        n = sizes.len()
    );
    let x0 = LABEL_WIDTH;
    for (i, &count) in counts.iter().enumerate() {
        let (lo, hi) = if i == 0 {
            (0, 0)
        } else {
            (1u64 << (i - 1), (1u64 << (i - 1)).saturating_mul(2) - 1)
        };
        let h = bar(count, max, plot);
        let x = x0 + step * i as f64;
        let _ = write!(
            out,
            "<g><title>{lo}–{hi} tokens: {count} calls</title><rect x=\"{x:.1}\" y=\"{y:.1}\" \
             width=\"{w:.1}\" height=\"{h:.1}\" class=\"s-result\"/>{label}</g>",
            y = bottom - h,
            w = (step - 2.0).max(1.0),
            label = if bins <= 24 || i % 2 == 0 {
                format!(
                    "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" class=\"small\">{lo}</text>",
                    x + step / 2.0,
                    bottom + 14.0
                )
            } else {
                String::new()
            }
        );
    }
    for (name, value, ty) in [("p50", p50, 10.0), ("p95", p95, 22.0)] {
        let x = x0 + step * bin_of(value) as f64 + step / 2.0;
        let label = format!("{name} {value}");
        // Right of the marker, or left of it near the chart's right edge
        // (about 6 px a character).
        let (tx, anchor) = if x + 3.0 + 6.0 * label.len() as f64 > width {
            (x - 3.0, "end")
        } else {
            (x + 3.0, "start")
        };
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{y1}\" y2=\"{bottom}\" class=\"marker\"/><text \
             x=\"{tx:.1}\" y=\"{ty}\" text-anchor=\"{anchor}\" class=\"small marker-label\">{label}</text>",
            y1 = ty - 9.0,
        );
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"small\">calls (max {max})</text>\
         <text x=\"{}\" y=\"{}\" class=\"small\">tokens of one result (lower bound of each \
         bin)</text></svg></figure>",
        x0 - 6.0,
        top + plot / 2.0,
        x0,
        bottom + 34.0
    );
}

/// Result tokens per scenario: the frame, with a sort; the script draws
/// the bars from the island, a hundred at a time as the box scrolls.
fn scenario_chart(out: &mut String, report: &RunReport) {
    let _ = write!(
        out,
        "<figure id=\"chart-scenarios\" class=\"rows-chart\" data-scenarios=\"{}\"><figcaption>Result \
         tokens per scenario (bar lengths on a square-root scale, so small values show; each \
         bar is labelled) <label>sort <select id=\"c-sort\"><option \
         value=\"tokens\">result tokens</option><option value=\"index\">run \
         order</option><option value=\"name\">name</option></select></label></figcaption><div \
         class=\"chart-box\" id=\"c-rows\"><noscript><p class=\"meta\">The bars need \
         JavaScript.</p></noscript></div></figure>",
        report.scenarios.len()
    );
}

/// Baseline and now for every compared scenario whose tokens changed:
/// the frame, with a sort; the script draws the bars from the island, a
/// hundred at a time as the box scrolls.
fn baseline_chart(out: &mut String, c: &Comparison) {
    let compared = c.scenarios.iter().filter(|s| s.compared).count();
    let changed = c
        .scenarios
        .iter()
        .filter(|s| s.compared && moved(&s.baseline) != moved(&s.current))
        .count();
    let _ = write!(
        out,
        "<figure id=\"chart-baseline\" class=\"rows-chart\" data-changed=\"{changed}\"><figcaption>\
         Baseline and now: result + input tokens of the {changed} of {compared} compared \
         scenarios that changed"
    );
    if changed == 0 {
        out.push_str("</figcaption><p class=\"meta\">No scenario's tokens changed.</p></figure>");
        return;
    }
    out.push_str(
        " (square-root scale) <label>sort <select id=\"b-sort\"><option \
         value=\"change\">change</option><option value=\"index\">run order</option><option \
         value=\"name\">name</option></select></label></figcaption><div class=\"chart-box\" \
         id=\"b-rows\"><noscript><p class=\"meta\">The bars need JavaScript; the movers table \
         above has the largest changes.</p></noscript></div></figure>",
    );
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
