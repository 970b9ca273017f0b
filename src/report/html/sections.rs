//! The overview, rendered as HTML here so the first screen needs no
//! script: counts, totals, gates, the biggest token movers, files that did
//! not load; and the frame of the page around the charts and the list.

use std::fmt::Write as _;

use crate::report::compare::Comparison;
use crate::report::compare::ScenarioChange;
use crate::report::json::RunReport;
use crate::report::markup::escape_html as escape;
use crate::report::variants::Row;
use crate::report::variants::SHOWN;
use crate::report::variants::moved as moved_scenarios;
use crate::report::verdict::change_text;
use crate::run::VariantRun;

use super::charts::baseline_chart;
use super::charts::distribution_chart;
use super::charts::moved;
use super::charts::scenario_chart;
use super::charts::tool_chart;

/// Rows of the movers table.
const MAX_MOVERS: usize = 15;
/// Breaches listed under each gate, and files that did not load, in the
/// overview (the island has them all).
const MAX_LISTED: usize = 20;

/// A number with a `data-figure` name, for people and for tests.
fn figure(name: &str, value: u64) -> String {
    format!(
        "<td class=\"num\" data-figure=\"{}\">{value}</td>",
        escape(name)
    )
}

/// Why a run failed, in the header beside its badge (nothing when it
/// passed): a scenario's failure, a breached gate, a file that did not
/// load or an interruption each fail a run, and a page that says only
/// "run failed" beside "8 passed, 0 failed" leaves the reader to guess.
fn verdict_reasons(report: &RunReport, comparison: Option<&Comparison>) -> Vec<String> {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut why = Vec::new();
    if report.counts.failed > 0 {
        why.push(plural(
            report.counts.failed,
            "scenario failed",
            "scenarios failed",
        ));
    }
    if let Some(c) = comparison.filter(|c| !c.passed) {
        let breaches = c.breaches();
        why.push(if breaches == 0 {
            "the comparison with the baseline failed".to_owned()
        } else {
            plural(breaches, "gate breached", "gates breached")
        });
    }
    if !report.load_errors.is_empty() {
        why.push(plural(
            report.load_errors.len(),
            "file did not load",
            "files did not load",
        ));
    }
    if report.interrupted {
        why.push("interrupted".to_owned());
    }
    // With variants, the top level is the first one's run: the others
    // fail the run too.
    for v in report.variants.iter().skip(1) {
        if v.counts.failed > 0 {
            why.push(format!(
                "variant {}: {}",
                v.name,
                plural(v.counts.failed, "scenario failed", "scenarios failed")
            ));
        }
        if v.comparison.as_ref().is_some_and(|c| !c.passed) {
            why.push(format!(
                "variant {}: the comparison with its baseline failed",
                v.name
            ));
        }
    }
    why
}

pub(super) fn body(
    report: &RunReport,
    comparison: Option<&Comparison>,
    variants: &[VariantRun],
) -> String {
    let mut out = String::new();
    let passed = report.counts.failed == 0
        && !report.interrupted
        && report.load_errors.is_empty()
        && comparison.is_none_or(|c| c.passed)
        && report
            .variants
            .iter()
            .all(|v| v.counts.failed == 0 && v.comparison.as_ref().is_none_or(|c| c.passed));
    let why = verdict_reasons(report, comparison);
    let _ = write!(
        out,
        "<header class=\"top\"><h1><a href=\"#\">harness</a> <span class=\"run-verdict\" \
         title=\"the verdict of the whole run\">run <span id=\"verdict\" class=\"badge \
         {0}\">{0}</span></span>{7}</h1><p class=\"meta\">{1} scenarios · tokenizer {2} · \
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
        if why.is_empty() {
            String::new()
        } else {
            format!(
                " <span class=\"verdict-why\">{}</span>",
                escape(&why.join(", "))
            )
        },
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
    servers(&mut out, report);
    variant_section(&mut out, variants);
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

/// The run's MCP servers in their authors' terms (run.json's `servers`),
/// when there were any.
fn servers(out: &mut String, report: &RunReport) {
    if report.servers.is_empty() {
        return;
    }
    out.push_str(
        "<h3>MCP servers</h3><table class=\"servers\"><thead><tr><th>server</th>\
         <th>scenarios</th><th>calls</th><th>error results</th><th>JSON-RPC errors</th>\
         <th>result tokens</th><th>tool definitions per scenario</th><th>did not start</th>\
         <th>ended early</th></tr></thead><tbody>",
    );
    for (i, s) in report.servers.iter().enumerate() {
        let what = s
            .server
            .as_deref()
            .map(|server| format!(" <span class=\"meta\">{}</span>", escape(server)))
            .unwrap_or_default();
        let definitions = crate::report::servers::definitions(s).unwrap_or_else(|| "-".to_owned());
        let _ = write!(
            out,
            "<tr><th>{}{what}</th>{}{}{}{}{}<td class=\"num\">{definitions}</td>{}{}</tr>",
            escape(&s.name),
            figure(&format!("servers.{i}.scenarios"), s.scenarios),
            figure(&format!("servers.{i}.calls"), s.calls),
            figure(&format!("servers.{i}.error_results"), s.error_results),
            figure(&format!("servers.{i}.jsonrpc_errors"), s.jsonrpc_errors),
            figure(&format!("servers.{i}.result_tokens"), s.result_tokens),
            figure(&format!("servers.{i}.failed_starts"), s.failed_starts),
            figure(&format!("servers.{i}.ended_early"), s.ended_early),
        );
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
                let note = g.not_compared_note();
                let (class, verdict) = match (g.held, &note) {
                    (false, _) => ("failed", "breached"),
                    (true, Some(_)) => ("skipped", "not compared"),
                    (true, None) => ("passed", "held"),
                };
                if let Some(note) = note {
                    breaches.push(format!("<span class=\"meta\">{}</span>", escape(&note)));
                }
                let _ = write!(
                    out,
                    "<tr data-gate=\"{}\"><td>{}</td><td>{}</td><td><span class=\"badge {class}\">\
                     {verdict}</span></td><td>{}</td></tr>",
                    escape(&g.gate),
                    escape(key),
                    escape(limit),
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

/// The compared scenarios whose tokens moved most, largest first (ties
/// in run order).
fn movers(c: &Comparison) -> Vec<&ScenarioChange> {
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

/// With `--variant`: the variants side by side (their totals, and per
/// tool result tokens as bars on one scale) and the scenarios that moved
/// most against the first variant.
fn variant_section(out: &mut String, variants: &[VariantRun]) {
    let Some(first) = variants.first() else {
        return;
    };
    out.push_str(
        "<h3 id=\"variants\">Variants</h3><table class=\"totals variants\"><thead><tr>\
         <th>variant</th><th>file</th><th>passed</th><th>failed</th><th>result tokens</th>\
         <th>input tokens</th><th>errors</th><th>retries</th><th>truncations</th></tr></thead>\
         <tbody>",
    );
    for v in variants {
        let _ = write!(
            out,
            "<tr><th>{}</th><td>{}</td>",
            escape(&v.name),
            escape(&v.file)
        );
        for n in Row::total(&v.summary).cells() {
            let _ = write!(out, "<td class=\"num\">{n}</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    // Result tokens per tool, each variant a bar, on one scale.
    let per_tool: Vec<Vec<crate::run::stats::ToolStats>> = variants
        .iter()
        .map(|v| crate::run::stats::per_tool(&v.summary))
        .collect();
    let mut tools: Vec<&str> = per_tool.iter().flatten().map(|t| t.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let max = per_tool
        .iter()
        .flatten()
        .map(|t| t.result_tokens)
        .max()
        .unwrap_or(0)
        .max(1);
    out.push_str(
        "<h3>Result tokens per tool</h3><table class=\"variant-bars\"><thead><tr><th>tool</th>\
         <th>variant</th><th>result tokens</th></tr></thead><tbody>",
    );
    for tool in tools {
        for (v, stats) in variants.iter().zip(&per_tool) {
            let tokens = stats
                .iter()
                .find(|t| t.tool == tool)
                .map_or(0, |t| t.result_tokens);
            let width = tokens.saturating_mul(100) / max;
            let _ = write!(
                out,
                "<tr><th>{}</th><td>{}</td><td class=\"num\"><svg width=\"200\" height=\"10\" \
                 role=\"img\"><rect width=\"{}\" height=\"10\"></rect></svg> {tokens}</td></tr>",
                escape(tool),
                escape(&v.name),
                width * 2,
            );
        }
    }
    out.push_str("</tbody></table>");
    let moved = moved_scenarios(variants);
    let _ = write!(
        out,
        "<h3>Scenarios that moved against variant {}</h3>",
        escape(&first.name)
    );
    if moved.is_empty() {
        out.push_str("<p class=\"meta\">No scenario's figures differ.</p>");
        return;
    }
    let _ = write!(
        out,
        "<p class=\"meta\">{} of {} shown</p><ul class=\"variant-moves\">",
        moved.len().min(SHOWN),
        moved.len()
    );
    for m in moved.iter().take(SHOWN) {
        let _ = write!(
            out,
            "<li><strong>{}</strong> [{}]: {}</li>",
            escape(&m.name),
            escape(&m.variant),
            escape(&m.describe())
        );
    }
    out.push_str("</ul>");
}
