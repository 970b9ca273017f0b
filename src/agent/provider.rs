//! The model side of the loop: a [`Provider`] turns a request into one
//! assistant message.

use crate::tools::ToolSpec;
use crate::tools::ops::BoxFuture;

use super::message::AssistantMessage;
use super::message::Message;

/// What the loop sends a model each turn.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The system prompt, tool section included.
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The active tools.
    pub tools: &'a [ToolSpec],
}

/// A provider failure: the run ends with this message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);

/// A model.
pub trait Provider: Send {
    /// Produces the next assistant message.
    fn complete<'a>(
        &'a mut self,
        request: Request<'a>,
    ) -> BoxFuture<'a, Result<AssistantMessage, ProviderError>>;
}
