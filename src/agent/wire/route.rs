//! Which format a request path speaks: the paths the four agents post to,
//! with and without the `/v1` (`/v1beta`) prefix some clients leave to
//! their base URL.

use super::request::Api;

/// Where a request goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The format.
    pub api: Api,
    /// Gemini: the model named in the path (`models/M:…`).
    pub model: Option<String>,
    /// Gemini: whether the path asks for a stream
    /// (`:streamGenerateContent`); the other formats say so in the body.
    pub stream: Option<bool>,
    /// Gemini: whether a stream is server-sent events (`alt=sse`) rather
    /// than one JSON array.
    pub sse: bool,
}

impl Route {
    fn of(api: Api) -> Self {
        Self {
            api,
            model: None,
            stream: None,
            sse: false,
        }
    }
}

/// The paths served for `api`, as a user reads them.
pub fn paths(api: Api) -> &'static [&'static str] {
    match api {
        Api::AnthropicMessages => &["/v1/messages"],
        Api::OpenaiResponses => &["/v1/responses"],
        Api::OpenaiChat => &["/v1/chat/completions"],
        Api::Gemini => &[
            "/v1beta/models/MODEL:streamGenerateContent",
            "/v1beta/models/MODEL:generateContent",
        ],
    }
}

/// The longest model name taken from a path.
const MAX_MODEL_BYTES: usize = 256;

/// The route of a `POST` to `path_and_query` (`/v1/messages?beta=true`),
/// or `None` when no format lives there.
pub fn route(path_and_query: &str) -> Option<Route> {
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, query),
        None => (path_and_query, ""),
    };
    let bare = path
        .strip_prefix("/v1beta")
        .or_else(|| path.strip_prefix("/v1"))
        .unwrap_or(path);
    match bare {
        "/messages" => return Some(Route::of(Api::AnthropicMessages)),
        "/responses" => return Some(Route::of(Api::OpenaiResponses)),
        "/chat/completions" => return Some(Route::of(Api::OpenaiChat)),
        _ => {}
    }
    let (model, method) = bare.strip_prefix("/models/")?.rsplit_once(':')?;
    if model.is_empty() || model.len() > MAX_MODEL_BYTES || model.contains('/') {
        return None;
    }
    let stream = match method {
        "streamGenerateContent" => true,
        "generateContent" => false,
        _ => return None,
    };
    Some(Route {
        api: Api::Gemini,
        model: Some(model.to_owned()),
        stream: Some(stream),
        sse: query.split('&').any(|pair| pair == "alt=sse"),
    })
}
