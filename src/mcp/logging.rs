//! MCP logging (`logging/setLevel`, `notifications/message`) and the lines
//! the server writes on standard error.
//!
//! A session gets no log messages until its client sets a level (the
//! specification lets the server choose; a client that never asks is not
//! sent any). From then on it gets every message at that level or above:
//!
//! ```text
//! debug    a call started; a call ended (not an error)
//! warning  a call refused before it ran (unknown tool, arguments that do
//!          not fit the schema); a call whose result is an error;
//!          each shortfall of bash's sandbox, once, when the level is set
//! error    a call that broke the tool layer (the result's internal error)
//! ```
//!
//! The data of each message is a string (the refusal or failure in the
//! words the model gets); the logger is `harness`.
//! rmcp marks logging deprecated (SEP-2577 drops it from the 2026-07-28
//! revision); the revisions before it have it, and clients use it.
#![allow(deprecated)]

use std::sync::Mutex;
use std::sync::PoisonError;

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::LoggingLevel;
use rmcp::model::LoggingMessageNotificationParam;
use serde_json::Value;

/// The most characters of a client's text [`shown`] keeps.
pub(super) const SHOWN_CHARS: usize = 200;

/// The name of the logger in every message.
const LOGGER: &str = "harness";

/// `text` as it may be printed on a terminal or quoted in a message:
/// control and other invisible characters escaped (`\n`, `\u{1b}`), at
/// most [`SHOWN_CHARS`] characters of it, then how many bytes it had.
pub(super) fn shown(text: &str) -> String {
    let mut out = String::new();
    for (count, ch) in text.chars().enumerate() {
        if count == SHOWN_CHARS {
            out.push_str(&format!("… ({} bytes in all)", text.len()));
            return out;
        }
        if ch == '"' || ch == '\'' {
            out.push(ch);
        } else {
            out.extend(ch.escape_debug());
        }
    }
    out
}

/// The rank of a level, `debug` lowest.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The level one session's client asked for (none yet: nothing is sent).
#[derive(Debug, Default)]
pub(super) struct SessionLog {
    level: Mutex<Option<LoggingLevel>>,
}

/// The levels the server logs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    Debug,
    Warning,
    Error,
}

impl Level {
    fn mcp(self) -> LoggingLevel {
        match self {
            Self::Debug => LoggingLevel::Debug,
            Self::Warning => LoggingLevel::Warning,
            Self::Error => LoggingLevel::Error,
        }
    }
}

impl SessionLog {
    /// Sets the session's level; true when messages at `warning` are now
    /// sent and were not before (the moment to send the standing ones).
    pub(super) fn set(&self, level: LoggingLevel) -> bool {
        let mut current = self.level.lock().unwrap_or_else(PoisonError::into_inner);
        let was = current.is_some_and(|set| rank(set) <= rank(LoggingLevel::Warning));
        *current = Some(level);
        !was && rank(level) <= rank(LoggingLevel::Warning)
    }

    /// Whether a message at `level` is sent.
    pub(super) fn wants(&self, level: Level) -> bool {
        self.level
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|set| rank(set) <= rank(level.mcp()))
    }

    /// Sends `text` at `level` to `peer` when the session wants it. A
    /// client gone is not an error here: its session is ending.
    pub(super) async fn send(&self, peer: &Peer<RoleServer>, level: Level, text: String) {
        if !self.wants(level) {
            return;
        }
        let mut message = LoggingMessageNotificationParam::new(level.mcp(), Value::String(text));
        message.logger = Some(LOGGER.to_owned());
        let _ = peer.notify_logging_message(message).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_escapes_control_characters_and_bounds_the_length() {
        assert_eq!(
            shown("a\nb\u{1b}[31m\"c\"\u{202e}"),
            "a\\nb\\u{1b}[31m\"c\"\\u{202e}"
        );
        let long = "x".repeat(500);
        assert_eq!(
            shown(&long),
            format!("{}… (500 bytes in all)", "x".repeat(SHOWN_CHARS))
        );
        assert_eq!(shown(&"y".repeat(SHOWN_CHARS)), "y".repeat(SHOWN_CHARS));
    }

    #[test]
    fn nothing_is_wanted_before_a_level_is_set_and_then_that_level_and_above() {
        let log = SessionLog::default();
        assert_eq!(
            [Level::Debug, Level::Warning, Level::Error].map(|level| log.wants(level)),
            [false, false, false]
        );
        assert!(log.set(LoggingLevel::Warning));
        assert_eq!(
            [Level::Debug, Level::Warning, Level::Error].map(|level| log.wants(level)),
            [false, true, true]
        );
        assert!(!log.set(LoggingLevel::Debug));
        assert!(log.wants(Level::Debug));
        assert!(!log.set(LoggingLevel::Critical));
        assert_eq!(
            [Level::Debug, Level::Warning, Level::Error].map(|level| log.wants(level)),
            [false, false, false]
        );
        assert!(log.set(LoggingLevel::Info));
    }
}
