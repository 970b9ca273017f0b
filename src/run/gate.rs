//! The gate language: `KEY=+LIMIT`, as `--gate` and the `gates:` of
//! `harness.yaml` write it.
//!
//! A gate watches one or two [`Figures`] of each scenario and of the total
//! and allows them to grow against a baseline by at most `LIMIT`: a count
//! (`+0`: any growth breaches) or a percentage of the baseline figure
//! (`+5%`, up to two decimals; from a baseline of 0, any growth breaches).
//! `tokens` watches result and input tokens.
//!
//! A run records its gates (the report layer judges them against a
//! baseline), so they are parsed and checked before any scenario starts:
//! `--gate` by the command line, `gates:` where the suite file is loaded
//! (each problem at its line and column, so `harness check` finds it).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use serde::Serialize;

use crate::judge::Figures;

/// A figure a gate watches.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Tokens of tool results.
    ResultTokens,
    /// Input tokens of requests.
    InputTokens,
    /// Output tokens of responses.
    OutputTokens,
    /// Retry calls sent.
    Retries,
    /// Error results.
    Errors,
    /// Assistant messages.
    Turns,
    /// Tool calls.
    Calls,
    /// Tokens of the tool section of a scenario's requests.
    DefinitionTokens,
}

impl Metric {
    /// Every metric, in the order gate keys are listed.
    pub const ALL: [Self; 8] = [
        Self::ResultTokens,
        Self::InputTokens,
        Self::OutputTokens,
        Self::Retries,
        Self::Errors,
        Self::Turns,
        Self::Calls,
        Self::DefinitionTokens,
    ];

    /// The figure's name in reports and gate keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ResultTokens => "result_tokens",
            Self::InputTokens => "input_tokens",
            Self::OutputTokens => "output_tokens",
            Self::Retries => "retries",
            Self::Errors => "errors",
            Self::Turns => "turns",
            Self::Calls => "calls",
            Self::DefinitionTokens => "definition_tokens",
        }
    }

    /// The figure's value.
    pub fn value(self, figures: &Figures) -> u64 {
        match self {
            Self::ResultTokens => figures.result_tokens,
            Self::InputTokens => figures.input_tokens,
            Self::OutputTokens => figures.output_tokens,
            Self::Retries => figures.retries,
            Self::Errors => figures.errors,
            Self::Turns => figures.turns,
            Self::Calls => figures.calls,
            Self::DefinitionTokens => figures.definition_tokens,
        }
    }
}

/// What a gate watches: `tokens` (result and input tokens), or one figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GateKey {
    /// Result tokens and input tokens.
    Tokens,
    /// One figure, keyed by its name.
    Figure(Metric),
}

impl GateKey {
    /// Every key, in the order they are listed.
    pub fn all() -> impl Iterator<Item = Self> {
        std::iter::once(Self::Tokens).chain(Metric::ALL.map(Self::Figure))
    }

    /// The key as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tokens => "tokens",
            Self::Figure(metric) => metric.as_str(),
        }
    }

    /// The figures it watches.
    pub fn metrics(self) -> Vec<Metric> {
        match self {
            Self::Tokens => vec![Metric::ResultTokens, Metric::InputTokens],
            Self::Figure(metric) => vec![metric],
        }
    }
}

impl FromStr for GateKey {
    type Err = GateError;

    fn from_str(s: &str) -> Result<Self, GateError> {
        Self::all()
            .find(|key| key.as_str() == s)
            .ok_or_else(|| GateError::UnknownKey {
                key: s.to_owned(),
                known: Self::all().map(Self::as_str).collect::<Vec<_>>().join(", "),
            })
    }
}

/// A gate, a key or a limit that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// Not `KEY=LIMIT`.
    #[error("invalid gate `{text}`: expected KEY=+LIMIT, e.g. tokens=+5% or retries=+0")]
    Syntax {
        /// The gate as written.
        text: String,
    },
    /// A key that names no figure.
    #[error("unknown gate `{key}` (known: {known})")]
    UnknownKey {
        /// The key as written.
        key: String,
        /// The known keys, comma-separated.
        known: String,
    },
    /// A limit that is neither a count nor a percentage.
    #[error(
        "invalid limit `{text}`: expected +N (a count) or +P% (a percentage, up to two \
         decimals), e.g. +0 or +5%"
    )]
    Limit {
        /// The limit as written.
        text: String,
    },
    /// A negative limit.
    #[error(
        "invalid limit `{text}`: a gate limits growth, so the limit is + a count or a percentage"
    )]
    Negative {
        /// The limit as written.
        text: String,
    },
}

/// How much a figure may grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// By at most this many.
    Count(u64),
    /// By at most this percentage of the baseline, in hundredths of a
    /// percent (`+5%` is 500), so that comparisons are exact.
    Percent(u64),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Count(n) => write!(f, "+{n}"),
            Self::Percent(h) if h % 100 == 0 => write!(f, "+{}%", h / 100),
            Self::Percent(h) if h % 10 == 0 => write!(f, "+{}.{}%", h / 100, h / 10 % 10),
            Self::Percent(h) => write!(f, "+{}.{:02}%", h / 100, h % 100),
        }
    }
}

impl FromStr for Limit {
    type Err = GateError;

    fn from_str(text: &str) -> Result<Self, GateError> {
        let err = || GateError::Limit {
            text: text.to_owned(),
        };
        let s = text.trim();
        if s.starts_with('-') {
            return Err(GateError::Negative {
                text: text.to_owned(),
            });
        }
        let s = s.strip_prefix('+').unwrap_or(s);
        let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
        if let Some(number) = s.strip_suffix('%') {
            let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
            if !digits(whole) || (!fraction.is_empty() && !digits(fraction)) || fraction.len() > 2 {
                return Err(err());
            }
            let whole: u64 = whole.parse().map_err(|_| err())?;
            let fraction: u64 = format!("{fraction:0<2}").parse().map_err(|_| err())?;
            let hundredths = whole
                .checked_mul(100)
                .and_then(|w| w.checked_add(fraction))
                .ok_or_else(err)?;
            Ok(Self::Percent(hundredths))
        } else if digits(s) {
            s.parse().map(Self::Count).map_err(|_| err())
        } else {
            Err(err())
        }
    }
}

impl Limit {
    /// Whether growing from `baseline` to `current` breaks the limit.
    pub fn breached(self, baseline: u64, current: u64) -> bool {
        let Some(grew) = current.checked_sub(baseline) else {
            return false;
        };
        match self {
            Self::Count(n) => grew > n,
            Self::Percent(h) => u128::from(grew) * 10_000 > u128::from(baseline) * u128::from(h),
        }
    }
}

/// One gate: `KEY=+LIMIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    /// What it watches.
    pub key: GateKey,
    /// How much growth it allows.
    pub limit: Limit,
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key.as_str(), self.limit)
    }
}

impl FromStr for Gate {
    type Err = GateError;

    /// `KEY=+LIMIT`, as `--gate` takes it.
    fn from_str(text: &str) -> Result<Self, GateError> {
        let (key, limit) = text.split_once('=').ok_or_else(|| GateError::Syntax {
            text: text.to_owned(),
        })?;
        Self::new(key.trim(), limit)
    }
}

impl Gate {
    /// A gate from its key and limit texts (as `harness.yaml` holds them).
    pub fn new(key: &str, limit: &str) -> Result<Self, GateError> {
        Ok(Self {
            key: key.parse()?,
            limit: limit.parse()?,
        })
    }
}

/// Gates by key: later ones replace earlier ones with the same key (the
/// command line overrides `harness.yaml`). Sorted by key.
pub(crate) fn combine(gates: impl IntoIterator<Item = Gate>) -> Vec<Gate> {
    let mut by_key = BTreeMap::new();
    for gate in gates {
        by_key.insert(gate.key, gate);
    }
    by_key.into_values().collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn limits_parse_and_print() {
        let cases = [
            ("+5%", Limit::Percent(500), "+5%"),
            ("5%", Limit::Percent(500), "+5%"),
            ("+2.5%", Limit::Percent(250), "+2.5%"),
            ("+0.25%", Limit::Percent(25), "+0.25%"),
            ("+0", Limit::Count(0), "+0"),
            ("3", Limit::Count(3), "+3"),
        ];
        for (text, limit, shown) in cases {
            assert_eq!(text.parse::<Limit>().unwrap(), limit, "{text}");
            assert_eq!(limit.to_string(), shown);
        }
        for bad in ["", "+", "-5%", "five", "+5.123%", "+.5%", "+5x", "5 %"] {
            assert!(bad.parse::<Limit>().is_err(), "{bad}");
        }
        assert_eq!(
            "tokens".parse::<Gate>().unwrap_err().to_string(),
            "invalid gate `tokens`: expected KEY=+LIMIT, e.g. tokens=+5% or retries=+0"
        );
        assert_eq!(
            "latency=+5%".parse::<Gate>().unwrap_err().to_string(),
            "unknown gate `latency` (known: tokens, result_tokens, input_tokens, \
             output_tokens, retries, errors, turns, calls, definition_tokens)"
        );
        assert_eq!(
            "tokens=-5%".parse::<Gate>().unwrap_err(),
            GateError::Negative { text: "-5%".into() }
        );
    }

    #[test]
    fn limits_are_exact_at_the_edge() {
        let five = Limit::Percent(500);
        assert!(!five.breached(100, 105));
        assert!(five.breached(100, 106));
        assert!(!five.breached(100, 90));
        assert!(five.breached(0, 1));
        assert!(!five.breached(0, 0));
        assert!(!Limit::Count(0).breached(2, 2));
        assert!(Limit::Count(0).breached(2, 3));
        assert!(!Limit::Count(1).breached(2, 3));
    }

    #[test]
    fn command_line_gates_override_the_suite_ones() {
        let gates: Vec<Gate> = ["tokens=+5%", "retries=+0", "tokens=+10%"]
            .iter()
            .map(|g| g.parse().unwrap())
            .collect();
        assert_eq!(
            combine(gates)
                .iter()
                .map(Gate::to_string)
                .collect::<Vec<_>>(),
            ["tokens=+10%", "retries=+0"]
        );
    }

    #[test]
    fn every_key_round_trips_and_watches_its_figures() {
        for key in GateKey::all() {
            assert_eq!(key.as_str().parse::<GateKey>().unwrap(), key);
        }
        let figures = Figures {
            result_tokens: 1,
            input_tokens: 2,
            calls: 3,
            definition_tokens: 4,
            ..Figures::default()
        };
        let watched = |key: &str| -> Vec<u64> {
            let key: GateKey = key.parse().unwrap();
            key.metrics().iter().map(|m| m.value(&figures)).collect()
        };
        assert_eq!(watched("tokens"), [1, 2]);
        assert_eq!(watched("calls"), [3]);
        assert_eq!(watched("definition_tokens"), [4]);
    }
}
