//! What answers a request: the [`Responder`] trait, the [`Answer`] it
//! gives, and how a result's failure is read where the format carries no
//! flag ([`ErrorRule`]).

use serde::Serialize;

use crate::agent::wire::ToolResultItem;
use crate::agent::wire::WireReply;
use crate::agent::wire::WireRequest;

/// Which scripted call one call of an answer is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScriptedCall {
    /// The call id sent.
    pub id: String,
    /// The step (0-based) it belongs to.
    pub step: usize,
    /// `None` for the step's own call; `Some(k)` for its k-th retry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<usize>,
}

/// What kind of answer a request got.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnswerKind {
    /// Tool calls of the script.
    Calls {
        /// Which scripted call each is, in order.
        calls: Vec<ScriptedCall>,
    },
    /// The end of the script: its `say` text, or a short text after its
    /// last calls. A server stops once it has sent one (when asked to).
    Final,
    /// A request without tools (a title, a router), answered with a short
    /// text, apart from the script.
    Side,
}

/// An answer: what to send, and what it was.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Answer {
    /// The message.
    pub reply: WireReply,
    /// What it was.
    #[serde(flatten)]
    pub kind: AnswerKind,
    /// Something the caller should know (a capture that found nothing, so
    /// the script ended early).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Answers requests. Called once per request, from any thread; an
/// implementation decides from the request alone (the conversation the
/// agent sent) or keeps its own state.
pub trait Responder: Send + Sync {
    /// The answer to `request`.
    fn respond(&self, request: &WireRequest) -> Answer;
}

/// How an agent's tool result is read as a failure where the format has
/// no error flag (OpenAI's formats).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorRule {
    /// Only a flag the format carries counts: without one, a result is
    /// not known to be an error.
    #[default]
    Flag,
    /// Codex's words: `Process exited with code N` (exec_command) or `Exit
    /// code: N` (apply_patch) with N other than 0 before the `Output:`
    /// line, or a text that starts with `apply_patch verification failed`.
    Codex,
}

impl ErrorRule {
    /// Whether `result` is an error: its flag when the format has one,
    /// else this rule's reading of its text (`None`: not known).
    pub fn is_error(self, result: &ToolResultItem) -> Option<bool> {
        if result.is_error.is_some() {
            return result.is_error;
        }
        match self {
            ErrorRule::Flag => None,
            ErrorRule::Codex => Some(codex_failed(&result.text)),
        }
    }
}

/// Whether a Codex tool result says the call failed: a patch that did
/// not apply, or a non-zero exit status in the header lines before
/// `Output:` (`Process exited with code N` from exec_command, `Exit code:
/// N` from apply_patch), never in the command's own output.
fn codex_failed(text: &str) -> bool {
    if text.starts_with("apply_patch verification failed") {
        return true;
    }
    text.lines()
        .take_while(|line| *line != "Output:")
        .filter_map(|line| {
            line.strip_prefix("Process exited with code ")
                .or_else(|| line.strip_prefix("Exit code: "))
        })
        .any(|code| code.trim() != "0")
}
