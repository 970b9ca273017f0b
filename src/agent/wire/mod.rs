//! The wire formats of model APIs, as pure functions: a request body read
//! into one neutral [`WireRequest`], and a neutral [`WireReply`] written as
//! the format's response, streamed (server-sent events) or whole.
//!
//! Four formats, one file each: Anthropic Messages (`anthropic.rs`),
//! OpenAI Responses (`responses.rs`), OpenAI Chat Completions (`chat.rs`)
//! and Gemini (`gemini.rs`); `route.rs` maps a request path to its format.
//! Reading ignores every field it does not need and turns malformed input
//! into a [`WireError`], never a panic; a body is bounded
//! ([`WireLimits`]) and so is its nesting (the JSON parser's 128 levels).
//! Nothing here does I/O: the HTTP server (`agent::serve`) calls these.

mod anthropic;
mod chat;
mod gemini;
mod json;
mod reply;
mod request;
mod responses;
mod route;

pub use reply::Envelope;
pub use reply::ReplyCall;
pub use reply::ReplyUsage;
pub use reply::WireReply;
pub use request::AnsweredCall;
pub use request::Api;
pub use request::CallInput;
pub use request::Image;
pub use request::Item;
pub use request::ToolCallItem;
pub use request::ToolDef;
pub use request::ToolResultItem;
pub use request::WireError;
pub use request::WireLimits;
pub use request::WireRequest;
pub use route::Route;
pub use route::paths;
pub use route::route;

/// Reads a request body that came to `route`.
pub fn parse(route: &Route, body: &[u8], limits: WireLimits) -> Result<WireRequest, WireError> {
    let value = json::parse_body(body, limits)?;
    match route.api {
        Api::AnthropicMessages => anthropic::parse(&value),
        Api::OpenaiResponses => responses::parse(&value),
        Api::OpenaiChat => chat::parse(&value),
        Api::Gemini => gemini::parse(
            &value,
            route.model.as_deref().unwrap_or_default(),
            route.stream.unwrap_or(false),
        ),
    }
}

/// A response body and its content type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// `text/event-stream` or `application/json`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";

/// `reply` written for a request that came to `route` and asked for a
/// stream or not: the format's event stream, or its one JSON response
/// (for a Gemini stream without `alt=sse`, a JSON array of one).
pub fn encode(route: &Route, stream: bool, reply: &WireReply, envelope: &Envelope) -> Encoded {
    let (content_type, body) = match (route.api, stream) {
        (Api::AnthropicMessages, true) => (EVENT_STREAM, anthropic::stream(reply, envelope)),
        (Api::AnthropicMessages, false) => (JSON, anthropic::json(reply, envelope).to_string()),
        (Api::OpenaiResponses, true) => (EVENT_STREAM, responses::stream(reply, envelope)),
        (Api::OpenaiResponses, false) => (JSON, responses::json(reply, envelope).to_string()),
        (Api::OpenaiChat, true) => (EVENT_STREAM, chat::stream(reply, envelope)),
        (Api::OpenaiChat, false) => (JSON, chat::json(reply, envelope).to_string()),
        (Api::Gemini, true) if route.sse => (EVENT_STREAM, gemini::stream(reply, envelope)),
        (Api::Gemini, true) => (
            JSON,
            serde_json::Value::Array(vec![gemini::json(reply, envelope)]).to_string(),
        ),
        (Api::Gemini, false) => (JSON, gemini::json(reply, envelope).to_string()),
    };
    Encoded { content_type, body }
}

/// Why a request was refused, for the error body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400: the body could not be read.
    BadRequest,
    /// 404: nothing is served at the path.
    NotFound,
    /// 413: the body is too large.
    TooLarge,
    /// 503: the server will answer no more requests.
    Unavailable,
}

impl Refusal {
    /// The HTTP status.
    pub fn status(self) -> u16 {
        match self {
            Refusal::BadRequest => 400,
            Refusal::NotFound => 404,
            Refusal::TooLarge => 413,
            Refusal::Unavailable => 503,
        }
    }
}

/// An error body in the shape of `api`'s errors (OpenAI's shape when the
/// path named no format), so the agent shows `message`.
pub fn error_body(api: Option<Api>, refusal: Refusal, message: &str) -> String {
    let (anthropic, openai, google) = match refusal {
        Refusal::BadRequest => (
            "invalid_request_error",
            "invalid_request_error",
            "INVALID_ARGUMENT",
        ),
        Refusal::NotFound => ("not_found_error", "not_found", "NOT_FOUND"),
        Refusal::TooLarge => ("request_too_large", "request_too_large", "INVALID_ARGUMENT"),
        Refusal::Unavailable => ("overloaded_error", "server_error", "UNAVAILABLE"),
    };
    match api {
        Some(Api::AnthropicMessages) => anthropic::error(anthropic, message),
        Some(Api::OpenaiResponses) => responses::error(openai, message),
        Some(Api::OpenaiChat) | None => chat::error(openai, message),
        Some(Api::Gemini) => gemini::error(refusal.status(), google, message),
    }
    .to_string()
}

#[cfg(test)]
mod tests;
