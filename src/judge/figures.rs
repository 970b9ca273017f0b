//! The figures of a scenario's run: how many turns, calls, errors and
//! retries it took and what it cost in tokens, counted call by call and
//! request by request (the run layer's judging pass sees each once), and
//! what its tool definitions cost (which the run layer, which knows the
//! tools, sets). One
//! type serves everywhere a figure is read: the `expect.stats` checks, the
//! per-scenario `stats` and `totals` of a run, a baseline's scenarios and
//! a comparison's sums.
//!
//! Figures carry no timings: a baseline holds them as they are, and the run
//! layer keeps a scenario's wall time beside them.

use serde::Deserialize;
use serde::Serialize;

use crate::agent::CallRecord;
use crate::agent::FauxReport;
use crate::agent::faux::Turn;

/// A run's figures. The field order is the order of every report that
/// lists them (`run.json`, the baseline file, the CSV columns).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Figures {
    /// Assistant messages from the script (steps and retries).
    pub turns: u64,
    /// Tool calls sent.
    pub calls: u64,
    /// Results with `is_error`.
    pub errors: u64,
    /// Retry calls sent.
    pub retries: u64,
    /// Retries not needed because the call succeeded.
    pub retries_avoided: u64,
    /// Tokens of every result, as the model reads them.
    pub result_tokens: u64,
    /// Input tokens over every request (cache reads excluded).
    pub input_tokens: u64,
    /// Output tokens over every response.
    pub output_tokens: u64,
    /// Input tokens served from the cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_write_tokens: u64,
    /// Tokens of the tool section of the scenario's requests (every active
    /// tool's definition), counted once per scenario, not per request. Set
    /// by the run layer once the scenario's tools are known; 0 in a report
    /// or baseline written before this figure existed.
    #[serde(default)]
    pub definition_tokens: u64,
}

impl Figures {
    /// The names of the figures, in field order, as reports write them.
    pub const NAMES: [&'static str; 11] = [
        "turns",
        "calls",
        "errors",
        "retries",
        "retries_avoided",
        "result_tokens",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "definition_tokens",
    ];

    /// The values of the figures, in the order of [`Figures::NAMES`].
    pub fn values(&self) -> [u64; 11] {
        [
            self.turns,
            self.calls,
            self.errors,
            self.retries,
            self.retries_avoided,
            self.result_tokens,
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.definition_tokens,
        ]
    }

    /// Each figure with its name, in field order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, u64)> {
        Self::NAMES.into_iter().zip(self.values())
    }

    /// Adds `other` figure by figure; a sum that would overflow stays at
    /// `u64::MAX`.
    pub fn add(&mut self, other: &Self) {
        let Self {
            turns,
            calls,
            errors,
            retries,
            retries_avoided,
            result_tokens,
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
            definition_tokens,
        } = *other;
        self.turns = self.turns.saturating_add(turns);
        self.calls = self.calls.saturating_add(calls);
        self.errors = self.errors.saturating_add(errors);
        self.retries = self.retries.saturating_add(retries);
        self.retries_avoided = self.retries_avoided.saturating_add(retries_avoided);
        self.result_tokens = self.result_tokens.saturating_add(result_tokens);
        self.input_tokens = self.input_tokens.saturating_add(input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(output_tokens);
        self.cache_read_tokens = self.cache_read_tokens.saturating_add(cache_read_tokens);
        self.cache_write_tokens = self.cache_write_tokens.saturating_add(cache_write_tokens);
        self.definition_tokens = self.definition_tokens.saturating_add(definition_tokens);
    }

    /// The sum of many figures.
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a Self>) -> Self {
        let mut total = Self::default();
        for figures in all {
            total.add(figures);
        }
        total
    }

    /// Counts one answered call: a call, an error when its result is one,
    /// and its result's tokens (priced once, as the loop recorded it).
    pub fn count_call(&mut self, record: &CallRecord) {
        self.calls += 1;
        self.errors += u64::from(record.result.is_error);
        self.result_tokens += record.result_tokens;
    }

    /// Counts one request the faux model answered: a turn when its message
    /// came from the script, and the request's usage.
    pub fn count_turn(&mut self, turn: &Turn) {
        self.turns += u64::from(turn.scripted);
        self.input_tokens += turn.usage.input;
        self.output_tokens += turn.usage.output;
        self.cache_read_tokens += turn.usage.cache_read;
        self.cache_write_tokens += turn.usage.cache_write;
    }

    /// Counts the retries the faux model sent, and those a success made
    /// unneeded.
    pub fn count_retries(&mut self, report: &FauxReport) {
        self.retries += report.retries_sent as u64;
        self.retries_avoided += report.retries_avoided as u64;
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn figures(n: u64) -> Figures {
        Figures {
            turns: n,
            calls: n + 1,
            errors: n + 2,
            retries: n + 3,
            retries_avoided: n + 4,
            result_tokens: n + 5,
            input_tokens: n + 6,
            output_tokens: n + 7,
            cache_read_tokens: n + 8,
            cache_write_tokens: n + 9,
            definition_tokens: n + 10,
        }
    }

    #[test]
    fn add_sums_every_figure_and_saturates() {
        assert_eq!(
            Figures::sum([&figures(0), &figures(10)]).values(),
            [10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30]
        );
        let mut big = figures(u64::MAX - 10);
        big.add(&figures(u64::MAX - 10));
        assert_eq!(big.values(), [u64::MAX; 11]);
    }

    #[test]
    fn names_follow_the_serialised_field_order() {
        let value = serde_json::to_value(figures(0)).unwrap();
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, Figures::NAMES);
        assert_eq!(
            figures(0).named().map(|(_, v)| v).collect::<Vec<_>>(),
            (0..11).collect::<Vec<u64>>()
        );
    }

    #[test]
    fn a_report_written_before_definition_tokens_reads_it_as_zero() {
        let mut old = serde_json::to_value(figures(0)).unwrap();
        old.as_object_mut().unwrap().remove("definition_tokens");
        let read: Figures = serde_json::from_value(old).unwrap();
        assert_eq!(
            read,
            Figures {
                definition_tokens: 0,
                ..figures(0)
            }
        );
    }
}
