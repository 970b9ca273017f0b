//! What the checks keep of the partial results a call streamed
//! (`updates:` in docs/scenarios.md): how many, the last one's text, and,
//! for the calls whose checks look inside them (`updates.contains`), the
//! texts themselves, at most [`MAX_KEPT_BYTES`] per scenario.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::agent::AgentEvent;
use crate::tools::Content;
use crate::tools::ToolUpdate;

use crate::scenario::load::Scenario;

/// The most bytes of update text kept for `updates.contains` in one
/// scenario; updates past it are counted but not kept.
pub const MAX_KEPT_BYTES: usize = 16 * 1024 * 1024;

/// The updates of one call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallUpdates {
    /// How many arrived.
    pub count: usize,
    /// The last one's text.
    pub last: Option<String>,
    /// Their texts, in order, while the scenario's budget lasts (only for
    /// calls whose checks need them).
    pub kept: Vec<String>,
    /// How many arrived after the budget was spent and were not kept.
    pub unkept: usize,
}

/// The updates of a run, by call id.
#[derive(Clone, Debug, Default)]
pub struct UpdateLog {
    /// The calls whose update texts are kept.
    keep: BTreeSet<String>,
    /// Bytes kept so far.
    kept_bytes: usize,
    calls: BTreeMap<String, CallUpdates>,
}

/// The text of an update: its text blocks joined with `\n`.
pub fn text_of(update: &ToolUpdate) -> String {
    update
        .content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            Content::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl UpdateLog {
    /// A log for `scenario`: texts are kept for the calls with
    /// `updates.contains`.
    pub fn for_scenario(scenario: &Scenario) -> Self {
        let keep = scenario
            .call_checks
            .iter()
            .filter(|(_, c)| c.keeps_update_texts)
            .map(|(id, _)| id.clone())
            .collect();
        Self {
            keep,
            ..Self::default()
        }
    }

    /// Records an event (only updates matter).
    pub fn see(&mut self, event: &AgentEvent) {
        if let AgentEvent::ToolExecutionUpdate {
            call_id, update, ..
        } = event
        {
            self.record(call_id, text_of(update));
        }
    }

    /// Records one update of `call_id`.
    pub fn record(&mut self, call_id: &str, text: String) {
        let keep = self.keep.contains(call_id);
        let fits = self.kept_bytes.saturating_add(text.len()) <= MAX_KEPT_BYTES;
        let call = self.calls.entry(call_id.to_owned()).or_default();
        call.count += 1;
        if keep {
            if fits {
                self.kept_bytes += text.len();
                call.kept.push(text.clone());
            } else {
                call.unkept += 1;
            }
        }
        call.last = Some(text);
    }

    /// The updates of `call_id` (none when it streamed none).
    pub fn of(&self, call_id: &str) -> Option<&CallUpdates> {
        self.calls.get(call_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_kept_only_where_needed_and_within_the_budget() {
        let mut log = UpdateLog {
            keep: BTreeSet::from(["a".to_owned()]),
            ..UpdateLog::default()
        };
        log.record("a", "x".repeat(MAX_KEPT_BYTES - 1));
        log.record("b", "bb".to_owned());
        log.record("a", "yy".to_owned());
        log.record("a", "z".to_owned());
        assert_eq!(
            log.of("a")
                .map(|c| (c.count, c.kept.len(), c.unkept, c.last.clone())),
            Some((3, 2, 1, Some("z".to_owned())))
        );
        assert_eq!(
            log.of("b"),
            Some(&CallUpdates {
                count: 1,
                last: Some("bb".to_owned()),
                kept: Vec::new(),
                unkept: 0
            })
        );
        assert_eq!(log.of("c"), None);
        let update = ToolUpdate {
            content: vec![Content::text("one"), Content::text("two")],
            details: None,
        };
        assert_eq!(text_of(&update), "one\ntwo");
    }
}
