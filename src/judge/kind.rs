//! [`CheckKind`]: which check a failure is of. Reports write it as a name
//! (`contains`, `stats.retries`, `details_at /truncation exists` …); the
//! names are the report's, so a kind is written and read back as exactly
//! that text, and a name this version does not know is kept as written.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use schemars::Schema;
use schemars::SchemaGenerator;
use schemars::json_schema;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;

/// Which check a failure is of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckKind {
    /// `ok`.
    Ok,
    /// `error`.
    Error,
    /// `contains` (of a result or a file).
    Contains,
    /// `not_contains`.
    NotContains,
    /// `matches`.
    Matches,
    /// `equals`.
    Equals,
    /// `lines`.
    Lines,
    /// `truncated`.
    Truncated,
    /// `details`.
    Details,
    /// One matcher of a `details_at` entry.
    DetailsAt {
        /// The JSON pointer (empty: the whole details).
        pointer: String,
        /// The matcher: `equals`, `exists`, `lt` …
        matcher: String,
    },
    /// `image`: whether there is an image block.
    Image,
    /// One check of an image block (`image width`, `image 2 mime_type`,
    /// `images[0] height`).
    ImageBlock {
        /// Which block, as the check names it.
        block: ImageBlock,
        /// What of it: `mime_type`, `width`, `height`, `max_bytes`, `data`.
        what: String,
    },
    /// `images`: how many image blocks.
    Images,
    /// `max_tokens`.
    MaxTokens,
    /// `updates` (at least `min`).
    Updates,
    /// `updates.max`.
    UpdatesMax,
    /// `updates.contains`.
    UpdatesContains,
    /// `updates.last_contains`.
    UpdatesLastContains,
    /// `snapshot`.
    Snapshot,
    /// `cancelled`.
    Cancelled,
    /// `sent`: a checked call that was never sent.
    Sent,
    /// `expect`: a regex that no longer compiles once expanded.
    Expect,
    /// `one result per call, in call order` (the loop's contract).
    ResultOrder,
    /// `error results say what to change` (the loop's contract).
    ErrorText,
    /// `tool layer`: an internal error of a tool.
    ToolLayer,
    /// `capture.NAME`: a capture that matched nothing.
    Capture(String),
    /// `script length`: the run outlived the script.
    ScriptLength,
    /// `run`: the run did not end normally.
    Run,
    /// `order`.
    Order,
    /// `stats.KEY`.
    Stats(String),
    /// `absent` (a file).
    Absent,
    /// `exists` (a file).
    Exists,
    /// `symlink`.
    Symlink,
    /// `read`: a file that cannot be read.
    Read,
    /// `bom`.
    Bom,
    /// `eol`.
    Eol,
    /// `bytes_base64`.
    BytesBase64,
    /// `sha256`.
    Sha256,
    /// `mode`.
    Mode,
    /// `timeout`: the scenario ran past its budget.
    Timeout,
    /// `workspace`: the workspace could not be made.
    Workspace,
    /// `bash.cwd`.
    BashCwd,
    /// `tools`: the tool set could not be made.
    Tools,
    /// `harness`: the harness failed while running the scenario.
    Harness,
    /// `repeat`: fewer runs of a repeated scenario passed than
    /// `--min-pass` asks.
    Repeat,
    /// `replay`: a recorded text that cannot be read.
    Replay,
    /// `replay.is_error`.
    ReplayIsError,
    /// `replay.text`.
    ReplayText,
    /// A name this version does not know (a report of another version),
    /// as written.
    Other(String),
}

/// Which image block a check names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageBlock {
    /// `image`: the only block.
    Only,
    /// `image N`: block N (1-based) of several.
    Nth(usize),
    /// `images[I]`: the block at index I of `images`.
    Listed(usize),
}

/// The kinds that are a name alone, and their names.
const NAMED: [(CheckKind, &str); 44] = [
    (CheckKind::Ok, "ok"),
    (CheckKind::Error, "error"),
    (CheckKind::Contains, "contains"),
    (CheckKind::NotContains, "not_contains"),
    (CheckKind::Matches, "matches"),
    (CheckKind::Equals, "equals"),
    (CheckKind::Lines, "lines"),
    (CheckKind::Truncated, "truncated"),
    (CheckKind::Details, "details"),
    (CheckKind::Image, "image"),
    (CheckKind::Images, "images"),
    (CheckKind::MaxTokens, "max_tokens"),
    (CheckKind::Updates, "updates"),
    (CheckKind::UpdatesMax, "updates.max"),
    (CheckKind::UpdatesContains, "updates.contains"),
    (CheckKind::UpdatesLastContains, "updates.last_contains"),
    (CheckKind::Snapshot, "snapshot"),
    (CheckKind::Cancelled, "cancelled"),
    (CheckKind::Sent, "sent"),
    (CheckKind::Expect, "expect"),
    (CheckKind::ResultOrder, "one result per call, in call order"),
    (CheckKind::ErrorText, "error results say what to change"),
    (CheckKind::ToolLayer, "tool layer"),
    (CheckKind::ScriptLength, "script length"),
    (CheckKind::Run, "run"),
    (CheckKind::Order, "order"),
    (CheckKind::Absent, "absent"),
    (CheckKind::Exists, "exists"),
    (CheckKind::Symlink, "symlink"),
    (CheckKind::Read, "read"),
    (CheckKind::Bom, "bom"),
    (CheckKind::Eol, "eol"),
    (CheckKind::BytesBase64, "bytes_base64"),
    (CheckKind::Sha256, "sha256"),
    (CheckKind::Mode, "mode"),
    (CheckKind::Timeout, "timeout"),
    (CheckKind::Workspace, "workspace"),
    (CheckKind::BashCwd, "bash.cwd"),
    (CheckKind::Tools, "tools"),
    (CheckKind::Harness, "harness"),
    (CheckKind::Repeat, "repeat"),
    (CheckKind::Replay, "replay"),
    (CheckKind::ReplayIsError, "replay.is_error"),
    (CheckKind::ReplayText, "replay.text"),
];

impl CheckKind {
    /// The name of a kind that is a name alone.
    fn name(&self) -> Option<&'static str> {
        NAMED
            .iter()
            .find(|(kind, _)| kind == self)
            .map(|(_, name)| *name)
    }

    /// The kind a name reads as, before it is checked to write back the
    /// same.
    fn read(text: &str) -> Self {
        if let Some((kind, _)) = NAMED.iter().find(|(_, name)| *name == text) {
            return kind.clone();
        }
        if let Some(rest) = text.strip_prefix("details_at ")
            && let Some((pointer, matcher)) = rest.rsplit_once(' ')
        {
            let pointer = if pointer == "(root)" { "" } else { pointer };
            return Self::DetailsAt {
                pointer: pointer.to_owned(),
                matcher: matcher.to_owned(),
            };
        }
        if let Some(name) = text.strip_prefix("capture.") {
            return Self::Capture(name.to_owned());
        }
        if let Some(key) = text.strip_prefix("stats.") {
            return Self::Stats(key.to_owned());
        }
        if let Some(rest) = text.strip_prefix("images[")
            && let Some((index, what)) = rest.split_once("] ")
            && let Ok(index) = index.parse()
        {
            return Self::ImageBlock {
                block: ImageBlock::Listed(index),
                what: what.to_owned(),
            };
        }
        if let Some(rest) = text.strip_prefix("image ") {
            let (block, what) = match rest.split_once(' ') {
                Some((n, what)) => match n.parse() {
                    Ok(n) => (ImageBlock::Nth(n), what),
                    Err(_) => return Self::Other(text.to_owned()),
                },
                None => (ImageBlock::Only, rest),
            };
            return Self::ImageBlock {
                block,
                what: what.to_owned(),
            };
        }
        Self::Other(text.to_owned())
    }
}

impl fmt::Display for CheckKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.name() {
            return f.write_str(name);
        }
        match self {
            Self::DetailsAt { pointer, matcher } => {
                let pointer = if pointer.is_empty() {
                    "(root)"
                } else {
                    pointer
                };
                write!(f, "details_at {pointer} {matcher}")
            }
            Self::ImageBlock { block, what } => match block {
                ImageBlock::Only => write!(f, "image {what}"),
                ImageBlock::Nth(n) => write!(f, "image {n} {what}"),
                ImageBlock::Listed(i) => write!(f, "images[{i}] {what}"),
            },
            Self::Capture(name) => write!(f, "capture.{name}"),
            Self::Stats(key) => write!(f, "stats.{key}"),
            Self::Other(text) => f.write_str(text),
            // Every other kind is a name alone.
            _ => Ok(()),
        }
    }
}

/// A kind equals the name it is written as (`kind == "snapshot"`).
impl PartialEq<&str> for CheckKind {
    fn eq(&self, other: &&str) -> bool {
        match self.name() {
            Some(name) => name == *other,
            None => {
                let written = self.to_string();
                written == *other
            }
        }
    }
}

impl FromStr for CheckKind {
    type Err = std::convert::Infallible;

    /// The kind a report's name stands for: a name that would not be
    /// written back the same (this version words it otherwise) is kept as
    /// [`CheckKind::Other`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let kind = Self::read(text);
        Ok(if kind == text {
            kind
        } else {
            Self::Other(text.to_owned())
        })
    }
}

impl From<&str> for CheckKind {
    fn from(text: &str) -> Self {
        match text.parse() {
            Ok(kind) => kind,
            Err(never) => match never {},
        }
    }
}

impl Serialize for CheckKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for CheckKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Cow::<str>::deserialize(d)?;
        Ok(Self::from(text.as_ref()))
    }
}

impl JsonSchema for CheckKind {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "CheckKind".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string"})
    }
}

#[cfg(test)]
#[path = "kind_tests.rs"]
mod tests;
