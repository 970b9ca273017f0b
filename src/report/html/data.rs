//! The data island: the run (`run.json`'s document) and the diffs of long
//! failures as JSON, gzip-compressed, in base64; and how a page past its
//! bound keeps less of each transcript.

use std::io::Write as _;

use base64::Engine as _;
use serde::Serialize;

use crate::judge::Failure;
use crate::report::console;
use crate::report::json::RunReport;
use crate::run::ScenarioOutcome;
use crate::run::transcript::Block;
use crate::run::transcript::KeptTranscript;

/// Lines of one failure's diff in the page.
const MAX_DIFF_LINES: usize = 400;
/// The most bytes of the page's data island (base64 of the gzip'd JSON);
/// with the rest of the page (a few hundred KB at most: the overview's
/// lists are bounded) the page stays under 30 MB.
pub(super) const MAX_ISLAND_BYTES: usize = 26 * 1024 * 1024;
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

/// With `--variant`: the line diff of a scenario's results in the first
/// variant and in another, where they differ.
#[derive(Debug, PartialEq, Eq, Serialize)]
pub(super) struct VariantDiff {
    /// The scenario's position in `run.scenarios` (the first variant's).
    pub(super) scenario: usize,
    /// The other variant's position in `run.variants`.
    pub(super) variant: usize,
    /// `-` (the first variant), `+` (the other) or ` ` and the line.
    pub(super) lines: Vec<String>,
    /// Whether lines were left out.
    pub(super) cut: bool,
}

/// What the data island holds.
#[derive(Debug, Serialize)]
struct PageData<'a> {
    /// The run, as `run.json` has it (but for `trim`).
    run: &'a RunReport,
    /// Diffs of failed checks whose expected and actual texts are both long.
    diffs: &'a [FailureDiff],
    /// With `--variant`: the diffs of results that differ between the
    /// first variant and another (absent without variants).
    #[serde(skip_serializing_if = "<[VariantDiff]>::is_empty")]
    variant_diffs: &'a [VariantDiff],
    /// `null`, or how the page was trimmed to keep within its bound.
    trim: Option<Trim>,
}

/// How a page too large for [`MAX_ISLAND_BYTES`] was trimmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(super) struct Trim {
    /// The most bytes of text, images and details each scenario's
    /// transcript keeps in the page (0: only their sizes).
    pub transcript_bytes: usize,
    /// The most bytes each failure's `expected` and `actual` keep.
    pub failure_bytes: usize,
    /// The most lines of each diff, each line cut to 240 characters.
    pub diff_lines: usize,
}

/// Why a page could not be rendered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HtmlError {
    /// The run could not be serialised.
    #[error("cannot render the HTML report's data: {0}")]
    Json(#[from] serde_json::Error),
    /// The data could not be compressed.
    #[error("cannot compress the HTML report's data: {0}")]
    Compress(#[from] std::io::Error),
}

/// The data island of `report`, within `budget` bytes: whole when it fits,
/// else trimmed. The floor (transcripts keeping only their sizes) is
/// packed first; the share the rest of the budget affords is estimated
/// from how the whole run packed, and lowered by a quarter until the
/// island fits (or the share is too small to keep, and the floor is it).
pub(super) fn island(
    report: &RunReport,
    budget: usize,
) -> Result<(String, Option<Trim>), HtmlError> {
    let whole = diffs(&report.scenarios, MAX_DIFF_LINES, false);
    let results = variant_diffs(report, MAX_DIFF_LINES, false);
    let json = serde_json::to_vec(&PageData {
        run: report,
        diffs: &whole,
        variant_diffs: &results,
        trim: None,
    })?;
    let packed = pack(&json)?;
    if packed.len() <= budget {
        return Ok((packed, None));
    }
    // Every transcript the page holds, each variant's too, gets a share.
    let sizes: Vec<usize> = all_scenarios(report)
        .map(|s| s.transcript.as_ref().map_or(0, KeptTranscript::kept_bytes))
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
    let results = variant_diffs(&trimmed, trim.diff_lines, true);
    let json = serde_json::to_vec(&PageData {
        run: &trimmed,
        diffs: &cut,
        variant_diffs: &results,
        trim: Some(trim),
    })?;
    Ok((pack(&json)?, Some(trim)))
}

/// The largest share such that every scenario keeping at most that many
/// bytes keeps `target` bytes or fewer in all (scenarios that need less
/// leave their rest to the others).
pub(super) fn water_level(sizes: &[usize], target: usize) -> usize {
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
/// failure texts and an agent's output and standard error cut.
fn trimmed(report: &RunReport, trim: Trim) -> RunReport {
    let mut out = report.clone();
    let variants = out.variants.iter_mut().flat_map(|v| v.scenarios.iter_mut());
    for scenario in out.scenarios.iter_mut().chain(variants) {
        if let Some(t) = &scenario.transcript {
            scenario.transcript = Some(t.within(trim.transcript_bytes));
        }
        for failure in &mut scenario.failures {
            cut_failure(failure, trim.failure_bytes);
        }
        if let Some(agent) = &mut scenario.agent {
            agent.output = cut_text(&agent.output, trim.failure_bytes);
            agent.stderr = cut_text(&agent.stderr, trim.failure_bytes);
        }
    }
    out
}

/// A failure's texts cut to `bytes` each: three quarters from the start
/// and a quarter from the end around a line saying how much is left out;
/// a focus on lines no longer kept is dropped (one that keeps its own
/// lines stays).
fn cut_failure(failure: &mut Failure, bytes: usize) {
    failure.expected = cut_text(&failure.expected, bytes);
    let actual = cut_text(&failure.actual, bytes);
    if actual.len() != failure.actual.len() {
        let head_lines = actual.split('\n').count().saturating_sub(1);
        failure.actual = actual.into();
        if failure
            .focus
            .as_ref()
            .is_some_and(|f| f.lines.is_empty() && f.last_line > head_lines)
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

/// The data island's text: `json` gzip-compressed (no file name, no
/// time, so the same run gives the same bytes), in base64.
pub(super) fn pack(json: &[u8]) -> std::io::Result<String> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(json)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(gz.finish()?))
}

/// The run's scenarios, then every variant's.
fn all_scenarios(report: &RunReport) -> impl Iterator<Item = &ScenarioOutcome> {
    let variants = report.variants.iter().flat_map(|v| v.scenarios.iter());
    report.scenarios.iter().chain(variants)
}

/// A scenario's results as one text to diff: per call a line naming it
/// (`── call_1_1 read ──`, with `error` for an error result), then its
/// text blocks as kept (a cut text's beginning, a line saying how much
/// is left out, its end) and a line per image.
pub(super) fn results_text(transcript: &KeptTranscript) -> String {
    let mut out = String::new();
    for call in transcript.calls() {
        let state = match (call.finished, call.is_error) {
            (false, _) => " (no result)",
            (true, true) => " error",
            (true, false) => "",
        };
        out.push_str(&format!("── {} {}{state} ──\n", call.id, call.tool));
        for block in &call.content {
            match block {
                Block::Text { clip } => {
                    out.push_str(&clip.text);
                    if clip.omitted_bytes > 0 {
                        out.push_str(&format!("\n[… {} bytes not kept …]\n", clip.omitted_bytes));
                        out.push_str(&clip.tail);
                    }
                    if !out.ends_with('\n') {
                        out.push('\n');
                    }
                }
                Block::Image {
                    mime_type, bytes, ..
                } => out.push_str(&format!("[{mime_type} image, {bytes} base64 bytes]\n")),
            }
        }
    }
    out
}

/// With variants: for each scenario and each variant after the first,
/// the diff of its results against the first variant's (the top-level
/// scenario of the same name), where they differ; at most `max` lines
/// each, `cut_lines` cutting each line as the console does.
fn variant_diffs(report: &RunReport, max: usize, cut_lines: bool) -> Vec<VariantDiff> {
    let mut out = Vec::new();
    for (scenario, first) in report.scenarios.iter().enumerate() {
        let Some(a) = &first.transcript else {
            continue;
        };
        let a = results_text(a);
        for (variant, v) in report.variants.iter().enumerate().skip(1) {
            let Some(b) = v
                .scenarios
                .iter()
                .find(|o| o.name == first.name)
                .and_then(|o| o.transcript.as_ref())
            else {
                continue;
            };
            let b = results_text(b);
            if a == b {
                continue;
            }
            let (lines, cut) = console::diff_lines(&a, &b, max);
            out.push(VariantDiff {
                scenario,
                variant,
                lines: signed(lines, cut_lines),
                cut,
            });
        }
    }
    out
}

/// A diff's lines with their signs (`-`, `+`, ` `) in front; `cut_lines`
/// cuts each line as the console does.
fn signed(lines: Vec<(char, String)>, cut_lines: bool) -> Vec<String> {
    lines
        .into_iter()
        .map(|(sign, line)| {
            if cut_lines {
                format!("{sign}{}", console::cut_line(&line))
            } else {
                format!("{sign}{line}")
            }
        })
        .collect()
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
                    lines: signed(lines, cut_lines),
                    cut,
                });
            }
        }
    }
    out
}
