//! The scripted model served over HTTP, for real agents to run against:
//! a [`ModelServer`] on 127.0.0.1 speaks the four wire formats of
//! `agent::wire`, asks a [`Responder`] for each answer, and records every
//! [`Exchange`] for the caller (who prices the requests and judges the
//! agent's tool results from them).
//!
//! `server.rs` is the HTTP side (hyper), `responder.rs` the trait and what
//! an answer is, `script.rs` the responder over a faux script (stateless:
//! each answer follows from the conversation the agent sent), and
//! `record.rs` what is kept of each request.

mod record;
mod responder;
mod script;
mod server;

pub use record::Exchange;
pub use responder::Answer;
pub use responder::AnswerKind;
pub use responder::ErrorRule;
pub use responder::Responder;
pub use responder::ScriptedCall;
pub use script::DONE_TEXT;
pub use script::Replay;
pub use script::SIDE_TEXT;
pub use script::ScriptResponder;
pub use script::prompt_text;
pub use script::replay;
pub use server::ModelServer;
pub use server::OnExchange;
pub use server::ServeConfig;

#[cfg(test)]
mod tests;
