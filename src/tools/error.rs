//! The two error channels of a tool call: tell the model, or stop the run.
//!
//! A tool returns [`ToolError::Failed`] (or [`ToolError::Cancelled`]) for
//! everything a model can act on: a missing file, a path outside the
//! workspace, text that does not match. The registry turns those into a
//! [`ToolResult`](super::ToolResult) with `is_error: true` and keeps their
//! `details` (D14). Only [`ToolError::Fatal`] means a broken invariant; the
//! registry still answers the model, and callers that run scenarios use it to
//! fail that scenario.

use serde::Serialize;
use serde_json::Value;

use super::facts::ErrorKind;
use super::facts::Facts;

/// Why a tool call did not produce a normal result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolError {
    /// The arguments are wrong; the message lists every problem.
    InvalidArgs {
        /// Text for the model.
        message: String,
        /// Structured problems for people and checks.
        details: Option<Value>,
        /// The typed facts (`None`: read them from `details`).
        facts: Option<Facts>,
    },
    /// The call ran and failed in a way the model can act on.
    Failed {
        /// Text for the model: what happened and what to do next.
        message: String,
        /// Facts kept for people and checks (exit code, truncation …).
        details: Option<Value>,
        /// The typed facts (`None`: read them from `details`).
        facts: Option<Facts>,
    },
    /// The call was cancelled before it finished.
    Cancelled {
        /// Text for the model, including any output produced so far.
        message: String,
        /// Facts kept for people and checks.
        details: Option<Value>,
        /// The typed facts (`None`: read them from `details`).
        facts: Option<Facts>,
    },
    /// A broken invariant inside the tool layer.
    Fatal {
        /// What broke.
        message: String,
    },
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidArgs { message, .. }
            | Self::Failed { message, .. }
            | Self::Cancelled { message, .. } => f.write_str(message),
            Self::Fatal { message } => write!(f, "internal error: {message}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl ToolError {
    /// A model-facing failure without details.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed {
            message: message.into(),
            details: None,
            facts: None,
        }
    }

    /// A model-facing failure that keeps `details`.
    pub fn failed_with(message: impl Into<String>, details: Value) -> Self {
        Self::Failed {
            message: message.into(),
            details: Some(details),
            facts: None,
        }
    }

    /// A built-in tool's failure of `kind`, without details.
    pub(crate) fn failure(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self::Failed {
            message: message.into(),
            details: None,
            facts: Some(Facts::error(kind)),
        }
    }

    /// A built-in tool's failure of `kind` that keeps a typed details
    /// struct as `details` (a broken invariant if it cannot be serialised).
    pub(crate) fn failure_with(
        kind: ErrorKind,
        message: impl Into<String>,
        details: &impl Serialize,
    ) -> Self {
        match facts_value(details) {
            Ok(details) => Self::Failed {
                message: message.into(),
                details: Some(details),
                facts: Some(Facts::error(kind)),
            },
            Err(err) => err,
        }
    }

    /// The standard cancellation error (§common.9).
    pub fn cancelled() -> Self {
        Self::Cancelled {
            message: CANCELLED_MESSAGE.to_owned(),
            details: None,
            facts: Some(Facts::error(ErrorKind::Cancelled)),
        }
    }

    /// A broken invariant.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self::Fatal {
            message: message.into(),
        }
    }

    /// Whether this error is a broken invariant.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Self::Fatal { .. })
    }
}

/// A typed details struct as JSON. Details structs hold plain fields with
/// string keys, which always serialise; a failure is a broken invariant.
pub(crate) fn facts_value(facts: &impl Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(facts)
        .map_err(|err| ToolError::fatal(format!("tool details could not be serialised: {err}")))
}

/// The text of a call that was cancelled before it produced anything.
pub const CANCELLED_MESSAGE: &str =
    "Operation aborted: the call was cancelled before it finished. Nothing more was done.";
