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
//! see [`KeptTranscript::within`](crate::run::transcript::KeptTranscript::within))
//! and cuts long failure texts (and agents' output), halving the share until the island fits;
//! the island then says so (`trim`), and `run.json` still has everything.
//! With `--variant`, every variant's transcripts are in the island (the
//! first variant's once, as the top level's), each one more transcript
//! under the same bound, with the line diffs of the results that differ
//! from the first variant's (`variant_diffs`).
//!
//! The page is deterministic: identical runs give identical pages except
//! for durations.
//!
//! ```text
//! page.rs      the page: the template, style sheet and script (html/, by
//!              include_str!) filled with the title, the overview and the
//!              island; render and render_within
//! data.rs      the data island: the run as JSON, gzip'd, base64; trimming
//!              a page past its bound; the diffs of long failures
//! sections.rs  the overview rendered here: counts, totals, gates, the
//!              biggest token movers, files that did not load
//! charts.rs    the SVG charts: tokens by tool, per call, per scenario and
//!              against the baseline
//! ```
//!
//! Every escape of text into the page is `markup::escape_html`.

mod charts;
mod data;
mod page;
mod sections;

pub(crate) use data::HtmlError;
pub(crate) use page::render;

#[cfg(test)]
mod tests;
