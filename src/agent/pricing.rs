//! What a request costs, priced part by part (§faux.3), and the texts
//! every price is taken of: a result ([`priced_text`]) and a call
//! ([`priced_call`]), written once for the prompt, the figures, the
//! per-call statistics and the checks alike.
//!
//! A prompt is its parts (`system:…`, one per message, `tools:[…]`) joined
//! by blank lines. Every part starts with an ASCII letter and every
//! separator ends in `\n`, so a counter with an additive
//! [`measure`](TokenCounter::measure) prices the prompt as the sum of its
//! segments (a part with the blank line after it). [`PromptPricer`] keeps
//! the measures of the previous request's segments: a turn measures only
//! the segments it has not seen (the new messages), and the tool section
//! and the system prompt are measured once per conversation (and, through
//! the BPE counters' memo, once per tool set in a run).
//!
//! The figures are exactly those of counting the whole texts: the total
//! of the prompt, its common prefix with the previous prompt (the cache
//! read) and the rest (the cache write). The prefix and the rest are
//! priced from the segments they cover whole plus the one segment the
//! boundary cuts, measured on its own. (A BPE counter counts at most
//! 1 MiB of a text exactly and estimates the rest, see
//! [`COUNTED_EXACTLY`](super::tokens::COUNTED_EXACTLY): a segment over
//! that is priced by that rule on its own.) A counter without a measure
//! gets the whole texts counted, as before.
//!
//! Measuring has no await of its own: [`PromptPricer::usage`] gives the
//! runtime a turn after each segment it measures, so the time budget of
//! a run (a timeout around the agent loop) ends a request with many new
//! segments to measure.

use std::collections::HashMap;

use crate::tools::Content;
use crate::tools::ToolCall;

use super::message::Usage;
use super::tokens::TokenCounter;

/// The text of a result as the model is charged for it: text blocks, and
/// images as `[image:MIME:LEN]` (LEN the length of the base64 data),
/// joined by newlines (docs/reports.md, "What is priced").
pub fn priced_text(content: &[Content]) -> String {
    crate::tools::priced_text_of(content)
}

/// The text of a tool call as the model is charged for it: `TOOL:ARGS`,
/// the arguments as compact JSON or as the raw text sent.
pub fn priced_call(call: &ToolCall) -> String {
    format!("{}:{}", call.name, call.arguments.to_text())
}

/// The separator between the parts of a prompt.
pub const PART_SEPARATOR: &str = "\n\n";

/// Prices the requests of one conversation, in order.
#[derive(Debug, Default)]
pub struct PromptPricer {
    previous: Option<Priced>,
}

/// A priced prompt: its text, where each segment starts, and each
/// segment's measure (empty for a counter without one).
#[derive(Debug)]
struct Priced {
    text: String,
    starts: Vec<usize>,
    measures: Vec<u64>,
}

impl Priced {
    fn segment(&self, index: usize) -> &str {
        let end = self
            .starts
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        &self.text[self.starts[index]..end]
    }
}

impl PromptPricer {
    /// The usage of a request whose prompt has these parts (each to be
    /// joined by [`PART_SEPARATOR`]) and whose response was priced as
    /// `output` tokens: the input of the whole prompt, and the prompt-cache
    /// split against the previous request.
    ///
    /// Each segment measured is followed by a turn of the runtime, so a
    /// time budget around the request ends it.
    pub async fn usage(
        &mut self,
        tokens: &dyn TokenCounter,
        parts: &[String],
        output: u64,
    ) -> Usage {
        let priced = self.price(tokens, parts).await;
        let total = self.prefix_tokens(tokens, &priced, priced.text.len());
        let usage = match &self.previous {
            None => Usage {
                input: total,
                output,
                cache_read: 0,
                cache_write: total,
            },
            Some(previous) => {
                let common = common_prefix(&previous.text, &priced.text);
                let cache_read = self.prefix_tokens(tokens, &priced, common);
                Usage {
                    input: total.saturating_sub(cache_read),
                    output,
                    cache_read,
                    cache_write: suffix_tokens(tokens, &priced, common),
                }
            }
        };
        self.previous = Some(priced);
        usage
    }

    /// The prompt of `parts`, each segment measured once: segments the
    /// previous prompt had keep their measures.
    async fn price(&self, tokens: &dyn TokenCounter, parts: &[String]) -> Priced {
        let mut text = String::with_capacity(
            parts.iter().map(String::len).sum::<usize>() + parts.len() * PART_SEPARATOR.len(),
        );
        let mut starts = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                text.push_str(PART_SEPARATOR);
            }
            starts.push(text.len());
            text.push_str(part);
        }
        let mut priced = Priced {
            text,
            starts,
            measures: Vec::new(),
        };
        if tokens.measure("").is_none() {
            return priced;
        }
        let known: HashMap<&str, u64> = match &self.previous {
            Some(previous) if !previous.measures.is_empty() => (0..previous.starts.len())
                .map(|i| (previous.segment(i), previous.measures[i]))
                .collect(),
            _ => HashMap::new(),
        };
        let mut measures = Vec::with_capacity(priced.starts.len());
        for i in 0..priced.starts.len() {
            let segment = priced.segment(i);
            let measure = match known.get(segment) {
                Some(&measure) => measure,
                None => measured(tokens, segment).await,
            };
            measures.push(measure);
        }
        priced.measures = measures;
        priced
    }

    /// The tokens of `priced.text[..end]`.
    fn prefix_tokens(&self, tokens: &dyn TokenCounter, priced: &Priced, end: usize) -> u64 {
        if priced.measures.is_empty() {
            return tokens.count(&priced.text[..end]);
        }
        // Segments `..cut` lie wholly before `end`; segment `cut` may be
        // cut by it.
        let cut = priced.starts.partition_point(|&start| start < end);
        let whole = cut.saturating_sub(1);
        let mut measure: u64 = priced.measures[..whole].iter().sum();
        if cut > 0 {
            let start = priced.starts[whole];
            let segment = priced.segment(whole);
            measure += if start + segment.len() <= end {
                priced.measures[whole]
            } else {
                tokens.measure(&priced.text[start..end]).unwrap_or(0)
            };
        }
        tokens.tokens_from(measure)
    }
}

/// The measure of `segment`, then a turn of the runtime: measuring has no
/// await of its own, and a prompt may have many new segments to measure
/// (the results of a large batch).
async fn measured(tokens: &dyn TokenCounter, segment: &str) -> u64 {
    let measure = tokens.measure(segment).unwrap_or(0);
    tokio::task::yield_now().await;
    measure
}

/// The tokens of `priced.text[start..]`.
fn suffix_tokens(tokens: &dyn TokenCounter, priced: &Priced, start: usize) -> u64 {
    if priced.measures.is_empty() {
        return tokens.count(&priced.text[start..]);
    }
    // The segment holding `start` is measured from there; the later ones
    // are whole.
    let first = priced
        .starts
        .partition_point(|&s| s <= start)
        .saturating_sub(1);
    let mut measure: u64 = priced.measures.get(first + 1..).unwrap_or(&[]).iter().sum();
    if let Some(&segment_start) = priced.starts.get(first) {
        measure += if segment_start == start {
            priced.measures[first]
        } else {
            let end = priced
                .starts
                .get(first + 1)
                .copied()
                .unwrap_or(priced.text.len());
            tokens.measure(&priced.text[start..end]).unwrap_or(0)
        };
    }
    tokens.tokens_from(measure)
}

/// The byte length of the common prefix of `a` and `b`, on a character
/// boundary.
pub fn common_prefix(a: &str, b: &str) -> usize {
    let same = a
        .as_bytes()
        .iter()
        .zip(b.as_bytes())
        .take_while(|(x, y)| x == y)
        .count();
    // Both are UTF-8: the first differing byte may sit inside a character
    // whose first bytes agree, so back off to its start.
    (0..=same)
        .rev()
        .find(|&i| b.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "pricing_tests.rs"]
mod tests;
