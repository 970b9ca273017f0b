//! The SVG charts of the page: tokens by tool and per call drawn here,
//! the frames of the per-scenario and baseline charts whose bars the
//! script draws from the island.

use std::fmt::Write as _;

use crate::judge::Figures;
use crate::report::compare::Comparison;
use crate::report::json::RunReport;
use crate::report::markup::escape_html as escape;
use crate::run::stats::ToolStats;
use crate::run::stats::percentile;

/// The width of a bar of `value` out of `max` in `width` pixels.
fn bar(value: u64, max: u64, width: f64) -> f64 {
    if max == 0 {
        return 0.0;
    }
    (value as f64 / max as f64 * width).max(if value > 0 { 1.0 } else { 0.0 })
}

const CHART_WIDTH: f64 = 560.0;
const LABEL_WIDTH: f64 = 150.0;

pub(super) fn tool_chart(out: &mut String, tools: &[ToolStats]) {
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

pub(super) fn distribution_chart(out: &mut String, report: &RunReport) {
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
pub(super) fn scenario_chart(out: &mut String, report: &RunReport) {
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
pub(super) fn baseline_chart(out: &mut String, c: &Comparison) {
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

/// Result and input tokens together: what a mover moved.
pub(super) fn moved(figures: &Figures) -> u64 {
    figures.result_tokens.saturating_add(figures.input_tokens)
}
