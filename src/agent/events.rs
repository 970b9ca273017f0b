//! What the loop reports while it runs (§loop.5), in the order it happens.

use std::time::Duration;

use crate::tools::CallArguments;
use crate::tools::ToolResult;
use crate::tools::ToolUpdate;

use super::message::AssistantMessage;
use super::message::ToolResultMessage;

/// One event of a run.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// The run began.
    AgentStart,
    /// A turn began (1-based).
    TurnStart {
        /// The turn number.
        turn: usize,
    },
    /// The model's message of this turn arrived.
    AssistantMessage {
        /// The turn number.
        turn: usize,
        /// The message.
        message: AssistantMessage,
    },
    /// A tool call started (source order).
    ToolExecutionStart {
        /// The call id.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// The raw arguments.
        args: CallArguments,
    },
    /// A running call streamed a partial result.
    ToolExecutionUpdate {
        /// The call id.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// The partial result.
        update: ToolUpdate,
    },
    /// A tool call finished (completion order).
    ToolExecutionEnd {
        /// The call id.
        call_id: String,
        /// The tool.
        tool_name: String,
        /// The result.
        result: ToolResult,
        /// How long it ran.
        duration: Duration,
    },
    /// A tool result was appended to the conversation (source order).
    ToolResultMessage {
        /// The message.
        message: ToolResultMessage,
    },
    /// A turn ended.
    TurnEnd {
        /// The turn number.
        turn: usize,
    },
    /// The run ended; `error` says why if it did not end normally.
    AgentEnd {
        /// The provider's or the loop's error.
        error: Option<String>,
    },
}
