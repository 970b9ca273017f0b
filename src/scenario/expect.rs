//! Expectations as loading compiles them: each call's checks and the run's
//! as lists of typed checks, in the order they are judged, with their
//! regexes compiled in them. A check that holds `${var}` keeps its text
//! as written and is expanded (its regex compiled) when the run is
//! checked ([`crate::scenario::vars`]).
//!
//! Only the checks a scenario writes are here: a key left out is no check,
//! so the judging code never reads an optional value of the file.

use std::sync::Arc;

use regex::Regex;
use serde_json::Value;

use crate::scenario::detail_spec::DetailCheck;
use crate::scenario::detail_spec::ImageChecks;
use crate::scenario::model::Eol;
use crate::scenario::model::TruncatedExpect;

/// A regex of an expectation.
#[derive(Clone, Debug)]
pub(crate) struct Pattern {
    /// As written (once expanded, with its variables' values).
    pub text: String,
    /// The compiled regex; `None` while the text holds `${var}` (it is
    /// compiled when the run is checked).
    pub regex: Option<Arc<Regex>>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
            && self.regex.as_ref().map(|r| r.as_str()) == other.regex.as_ref().map(|r| r.as_str())
    }
}

/// The checks of one call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CallCheck {
    /// Where the call is, for messages: `step 2 (grep)` or
    /// `step 2 (grep), retry 1`.
    pub label: String,
    /// Whether the call is a `retry:` of another, sent only when the call
    /// before it failed; a retry that was never sent is not a failure.
    pub retry: bool,
    /// Its checks, in the order they are judged.
    pub checks: Vec<CallExpectation>,
    /// Whether a check holds `${var}` (the checks are expanded when the
    /// run is checked).
    pub has_vars: bool,
    /// Whether the texts of the call's updates are kept for its checks
    /// (it has `updates.contains`).
    pub keeps_update_texts: bool,
}

/// One check of a call's result, as `expect:` writes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CallExpectation {
    /// `ok`: whether the result is a success.
    Ok(bool),
    /// `error: true|false`: whether the result is an error.
    Error(bool),
    /// `error: REGEX`: an error whose text matches.
    ErrorMatches(Pattern),
    /// `contains`: substrings the text holds.
    Contains(Vec<String>),
    /// `not_contains`: substrings the text does not hold.
    NotContains(Vec<String>),
    /// `matches`: a regex the text matches.
    Matches(Pattern),
    /// `equals`: the whole text.
    Equals(String),
    /// `lines`: how many lines the text has.
    Lines(usize),
    /// `truncated`: what the tool said about cutting its output.
    Truncated(TruncatedExpect),
    /// `details`: a subset of the details.
    Details(Value),
    /// One entry of `details_at`.
    DetailsAt {
        /// The JSON pointer.
        pointer: String,
        /// What the value there must be.
        check: DetailExpect,
    },
    /// `image: true|false`: whether the result has an image block.
    HasImage(bool),
    /// `max_tokens`: what the result's content may cost.
    MaxTokens(u64),
    /// `image: {checks}`: checks every image block passes.
    EachImage(ImageChecks),
    /// `images`: how many image blocks, and the checks of each in order.
    Images {
        /// The number of blocks.
        count: usize,
        /// Checks of the blocks, in order (none for a bare count).
        each: Vec<ImageChecks>,
    },
    /// `updates.min`.
    UpdatesMin(usize),
    /// `updates.max`.
    UpdatesMax(usize),
    /// `updates.contains`: each substring in some update.
    UpdatesContains(Vec<String>),
    /// `updates.last_contains`: each substring in the last update.
    UpdatesLastContains(Vec<String>),
    /// `snapshot: true`.
    Snapshot,
    /// `cancelled`: whether the run's cancellation reached the call.
    Cancelled(bool),
}

/// What the value at a `details_at` pointer must be.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DetailExpect {
    /// A bare value: the value equals it (numbers by value).
    Equals(Value),
    /// An object of matchers, in the order they are judged.
    Matchers(Vec<DetailMatcher>),
}

/// One matcher of a `details_at` entry.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DetailMatcher {
    /// `exists`: whether there is a value.
    Exists(bool),
    /// `absent`: whether there is none.
    Absent(bool),
    /// `equals`.
    Equals(Value),
    /// `contains`: a string holding each, or a list with each item.
    Contains(Vec<String>),
    /// `not_contains`.
    NotContains(Vec<String>),
    /// `matches`: a string matching.
    Matches(Pattern),
    /// `lt`, `le`, `gt`, `ge`: a number beyond a bound.
    Bound(Bound, f64),
}

/// Which side of a number bound a value must be on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// `lt`.
    Below,
    /// `le`.
    AtMost,
    /// `gt`.
    Above,
    /// `ge`.
    AtLeast,
}

impl Bound {
    /// The key that writes it.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Self::Below => "lt",
            Self::AtMost => "le",
            Self::Above => "gt",
            Self::AtLeast => "ge",
        }
    }

    /// How an expectation words it: `a number {words} 3`.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Self::Below => "below",
            Self::AtMost => "at most",
            Self::Above => "above",
            Self::AtLeast => "at least",
        }
    }

    /// Whether `value` is on the right side of `bound`.
    pub(crate) fn holds(self, value: f64, bound: f64) -> bool {
        match self {
            Self::Below => value < bound,
            Self::AtMost => value <= bound,
            Self::Above => value > bound,
            Self::AtLeast => value >= bound,
        }
    }
}

impl DetailExpect {
    /// A `details_at` entry as written, with its `matches` compiled
    /// (`None`: it holds `${var}`, or has no `matches`).
    pub(crate) fn new(check: &DetailCheck, regex: Option<Arc<Regex>>) -> Self {
        let m = match check {
            DetailCheck::Equals(value) => return Self::Equals(value.clone()),
            DetailCheck::Matchers(m) => m,
        };
        let mut matchers = Vec::new();
        matchers.extend(m.exists.map(DetailMatcher::Exists));
        matchers.extend(m.absent.map(DetailMatcher::Absent));
        matchers.extend(m.equals.clone().map(DetailMatcher::Equals));
        matchers.extend(m.contains.clone().map(|l| DetailMatcher::Contains(l.0)));
        matchers.extend(
            m.not_contains
                .clone()
                .map(|l| DetailMatcher::NotContains(l.0)),
        );
        if let Some(text) = &m.matches {
            matchers.push(DetailMatcher::Matches(Pattern {
                text: text.clone(),
                regex,
            }));
        }
        let bounds = [
            (Bound::Below, m.lt),
            (Bound::AtMost, m.le),
            (Bound::Above, m.gt),
            (Bound::AtLeast, m.ge),
        ];
        for (bound, value) in bounds {
            matchers.extend(value.map(|v| DetailMatcher::Bound(bound, v)));
        }
        Self::Matchers(matchers)
    }
}

/// The run's checks.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunCheck {
    /// `files`, in path order.
    pub files: Vec<FileCheck>,
    /// `order`: the tools called, in order.
    pub order: Option<Vec<String>>,
    /// `stats`, in the order they are judged.
    pub stats: Vec<StatCheck>,
}

/// The checks of one file of `expect.files`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FileCheck {
    /// The path, relative to the workspace.
    pub path: String,
    /// What it must be.
    pub expect: FileExpectation,
    /// Whether a check holds `${var}`.
    pub has_vars: bool,
}

/// What a checked file must be.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FileExpectation {
    /// A bare string: the file's text (as the model would read it).
    Equals(String),
    /// An object of checks.
    Checks(FileChecks),
}

/// The object form of a file's checks, in the order they are judged:
/// presence (a failure ends the file's checks), the symlink, what the
/// file holds (read once), its mode.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FileChecks {
    /// `absent` and `exists`, in that order.
    pub presence: Vec<Presence>,
    /// `symlink`: the target, as written.
    pub symlink: Option<String>,
    /// The checks of what the file holds.
    pub content: Vec<ContentCheck>,
    /// `mode`.
    pub mode: Option<ModeCheck>,
}

/// `absent` or `exists`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Presence {
    /// `absent`.
    Absent(bool),
    /// `exists`.
    Exists(bool),
}

/// A check of what a file holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ContentCheck {
    /// `equals`: its text.
    Equals(String),
    /// `contains`.
    Contains(Vec<String>),
    /// `not_contains`.
    NotContains(Vec<String>),
    /// `matches`.
    Matches(Pattern),
    /// `bom`: whether it starts with a UTF-8 byte-order mark.
    Bom(bool),
    /// `eol`: its line endings.
    Eol(Eol),
    /// `bytes_base64`, decoded: its exact bytes.
    Bytes(Vec<u8>),
    /// `sha256`: the digest of its bytes.
    Sha256(String),
}

/// `mode`: a file's permission bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ModeCheck {
    /// As written.
    pub written: String,
    /// The bits, in octal as a failure shows them.
    pub octal: String,
}

/// One check of `stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StatCheck {
    /// Its key in `stats:`: `retries`, `max_errors` …
    pub key: &'static str,
    /// The figure it looks at.
    pub figure: Figure,
    /// What the figure must be.
    pub want: StatBound,
}

/// What a `stats` figure must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatBound {
    /// Exactly this.
    Exactly(u64),
    /// At most this.
    AtMost(u64),
}

/// A figure of a run that `stats` checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Figure {
    /// Retries sent.
    Retries,
    /// Error results.
    Errors,
    /// Turns.
    Turns,
    /// Tokens of the results.
    ResultTokens,
    /// Input tokens, read from the cache or not.
    InputTokens,
    /// Output tokens.
    OutputTokens,
}
