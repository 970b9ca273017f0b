//! The page: the template filled with the title, the style sheet, the
//! overview, the data island and the script.

use crate::report::compare::Comparison;
use crate::report::json::RunReport;
use crate::report::markup::escape_html;
use crate::run::RunSummary;
use crate::run::Status;

use super::data::HtmlError;
use super::data::MAX_ISLAND_BYTES;
use super::data::Trim;
use super::data::island;
use super::sections::body;

/// The page around everything; `{{name}}` marks where each part goes.
const TEMPLATE: &str = include_str!("template.html");
/// The style sheet.
const STYLE: &str = include_str!("style.css");
/// The script.
const SCRIPT: &str = include_str!("app.js");

/// A rendered page and how it was trimmed, if it was.
#[derive(Debug)]
pub(super) struct Page {
    /// The page.
    pub bytes: Vec<u8>,
    /// `None` when the island holds the run whole.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "the page says itself how it was trimmed; tests read it here"
        )
    )]
    pub trim: Option<Trim>,
}

/// The page of a run; with variants, each compared with its own baseline
/// (`variants[i]` for `summary.variants[i]`).
pub(crate) fn render(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
) -> Result<Vec<u8>, HtmlError> {
    Ok(render_within_variants(summary, comparison, variants, MAX_ISLAND_BYTES)?.bytes)
}

/// The page of a run whose data island takes at most `island_bytes`
/// (whatever the outputs: only the scenarios' names, figures and calls
/// are never trimmed).
#[cfg(test)]
pub(super) fn render_within(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    island_bytes: usize,
) -> Result<Page, HtmlError> {
    render_within_variants(summary, comparison, &[], island_bytes)
}

/// [`render_within`] for a run of variants. Each variant's transcripts
/// are in the island, the first variant's once (they are the top
/// level's), and they share its bound with the run's as every scenario
/// does: the island trims each (scenario, variant) transcript to the
/// same share.
pub(super) fn render_within_variants(
    summary: &RunSummary,
    comparison: Option<&Comparison>,
    variants: &[Option<Comparison>],
    island_bytes: usize,
) -> Result<Page, HtmlError> {
    let mut report = RunReport::of_variants(summary, comparison, variants);
    // The first variant's run is the top level's: its transcripts are
    // there, once.
    if let Some(first) = report.variants.first_mut() {
        for scenario in &mut first.scenarios {
            scenario.transcript = None;
        }
    }
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
            "title" => out.push_str(&escape_html(&title(summary, comparison))),
            "style" => out.push_str(STYLE),
            "body" => out.push_str(&body(&report, comparison, &summary.variants)),
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
