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
/// Rows of the movers table and bars of the baseline chart.
const MAX_MOVERS: usize = 15;

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
    /// The run, as `run.json` has it.
    run: &'a RunReport,
    /// Diffs of failed checks whose expected and actual texts are both long.
    diffs: Vec<FailureDiff>,
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
    let report = RunReport::new(summary, comparison);
    let json = serde_json::to_vec(&PageData {
        run: &report,
        diffs: diffs(summary),
    })?;
    let data = pack(&json)?;
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
    Ok(out.into_bytes())
}

/// Text for HTML: `&`, `<`, `>`, `"` and `'` as entities.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
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

/// The diffs of failures whose two texts are long (as on the console).
fn diffs(summary: &RunSummary) -> Vec<FailureDiff> {
    let mut out = Vec::new();
    for (scenario, outcome) in summary.scenarios.iter().enumerate() {
        for (failure, f) in outcome.failures.iter().enumerate() {
            if console::is_long(&f.expected) && console::is_long(&f.actual) {
                let (lines, cut) = console::diff_lines(&f.expected, &f.actual, MAX_DIFF_LINES);
                out.push(FailureDiff {
                    scenario,
                    failure,
                    lines: lines
                        .into_iter()
                        .map(|(sign, line)| format!("{sign}{line}"))
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
        "<header class=\"top\"><h1><a href=\"#\">harness</a> <span id=\"verdict\" \
         class=\"badge {0}\">{0}</span></h1><p class=\"meta\">{1} scenarios · tokenizer \
         {2} · harness {3}{4}{5} · <span class=\"duration\">{6:.1} s</span></p></header>",
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
         type=\"search\" placeholder=\"name, file, failure\"></label> <label>sort <select \
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
                let breaches: Vec<String> =
                    g.breaches.iter().map(|b| escape(&b.describe())).collect();
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
    for e in &report.load_errors {
        let _ = write!(out, "<li><code>{}</code></li>", escape(&e.to_string()));
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
    let height = 180.0;
    let plot = 130.0;
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
        let h = bar(count, max, plot - 10.0);
        let x = x0 + step * i as f64;
        let _ = write!(
            out,
            "<g><title>{lo}–{hi} tokens: {count} calls</title><rect x=\"{x:.1}\" y=\"{y:.1}\" \
             width=\"{w:.1}\" height=\"{h:.1}\" class=\"s-result\"/>{label}</g>",
            y = plot - h,
            w = (step - 2.0).max(1.0),
            label = if bins <= 24 || i % 2 == 0 {
                format!(
                    "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" class=\"small\">{lo}</text>",
                    x + step / 2.0,
                    plot + 14.0
                )
            } else {
                String::new()
            }
        );
    }
    for (name, value, dy) in [("p50", p50, 0.0), ("p95", p95, 12.0)] {
        let x = x0 + step * bin_of(value) as f64 + step / 2.0;
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"0\" y2=\"{plot}\" class=\"marker\"/><text \
             x=\"{tx:.1}\" y=\"{ty}\" class=\"small\">{name} {value}</text>",
            tx = x + 3.0,
            ty = 10.0 + dy
        );
    }
    let _ = write!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" class=\"small\">calls (max {max})</text>\
         <text x=\"{}\" y=\"{}\" class=\"small\">tokens of one result (lower bound of each \
         bin)</text></svg></figure>",
        x0 - 6.0,
        plot / 2.0,
        x0,
        plot + 34.0
    );
}

fn baseline_chart(out: &mut String, c: &Comparison) {
    let movers = movers(c);
    let row = 30.0;
    let height = 30.0 + row * movers.len().max(1) as f64;
    let width = LABEL_WIDTH + CHART_WIDTH;
    let max = movers
        .iter()
        .map(|s| moved(&s.baseline).max(moved(&s.current)))
        .max()
        .unwrap_or(0);
    let _ = write!(
        out,
        "<figure id=\"chart-baseline\"><figcaption>Baseline and now: result + input tokens of \
         the scenarios that moved most</figcaption><svg role=\"img\" viewBox=\"0 0 {width} \
         {height}\" width=\"{width}\" height=\"{height}\"><g class=\"legend\"><rect \
         x=\"{LABEL_WIDTH}\" y=\"4\" width=\"10\" height=\"10\" class=\"s-base\"/><text \
         x=\"{}\" y=\"13\">baseline</text><rect x=\"{}\" y=\"4\" width=\"10\" height=\"10\" \
         class=\"s-result\"/><text x=\"{}\" y=\"13\">now</text></g>",
        LABEL_WIDTH + 14.0,
        LABEL_WIDTH + 90.0,
        LABEL_WIDTH + 104.0,
    );
    if movers.is_empty() {
        out.push_str("<text x=\"0\" y=\"44\">no scenario's tokens changed</text>");
    }
    let bars = CHART_WIDTH - 150.0;
    for (i, s) in movers.iter().enumerate() {
        let y = 24.0 + row * i as f64;
        let (b, n) = (moved(&s.baseline), moved(&s.current));
        let name: String = s.name.chars().take(22).collect();
        let _ = write!(
            out,
            "<g><title>{full}: {b} → {n} ({change})</title><text x=\"{tx}\" y=\"{ty}\" \
             text-anchor=\"end\">{name}</text><rect x=\"{LABEL_WIDTH}\" y=\"{y}\" \
             width=\"{bw:.1}\" height=\"10\" class=\"s-base\"/><rect x=\"{LABEL_WIDTH}\" \
             y=\"{y2}\" width=\"{nw:.1}\" height=\"10\" class=\"s-result\"/><text x=\"{vx:.1}\" \
             y=\"{ty}\" class=\"{dir}\">{change}</text></g>",
            full = escape(&s.name),
            name = escape(&name),
            change = escape(&change_text(b, n)),
            tx = LABEL_WIDTH - 6.0,
            ty = y + 15.0,
            y2 = y + 11.0,
            bw = bar(b, max, bars),
            nw = bar(n, max, bars),
            vx = LABEL_WIDTH + bar(b.max(n), max, bars) + 6.0,
            dir = direction(b, n),
        );
    }
    out.push_str("</svg></figure>");
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
