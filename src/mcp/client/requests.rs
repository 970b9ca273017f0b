//! A server's requests to the client: `sampling/createMessage`,
//! `elicitation/create` and `roots/list`, answered from what the caller
//! declared ([`Answers`]), and advertised in `initialize` only when
//! declared.
//!
//! - **Sampling**: the declared texts, one per request, in order; each
//!   reply is an assistant text message of the model `harness-faux`
//!   (`stopReason: endTurn`).
//! - **Elicitation**: the declared answers, one per request, in order. An
//!   `accept` sends its `content` with every field it omits that the
//!   requested schema gives a `default` filled in (SEP-1034).
//! - **Roots**: the declared list, whole, to every `roots/list`.
//!
//! A request of a kind not declared, or past the end of its list, is
//! answered with a JSON-RPC error (-32601 for a kind not declared,
//! -32603 past the end) whose message says why, and the refusal is kept
//! for the call during which it came ([`Answering::take_refusals`]), so
//! that call can fail in plain words.
//!
//! Sampling and roots are deprecated by SEP-2577 in the protocol after
//! 2025-11-25, which the harness speaks: rmcp marks their types so.
#![allow(
    deprecated,
    reason = "sampling and roots are part of protocol 2025-11-25"
)]

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use rmcp::ClientHandler;
use rmcp::ErrorData as McpError;
use rmcp::RoleClient;
use rmcp::model::ClientCapabilities;
use rmcp::model::ClientConfig;
use rmcp::model::CreateMessageRequestParams;
use rmcp::model::CreateMessageResult;
use rmcp::model::ElicitRequestParams;
use rmcp::model::ElicitResult;
use rmcp::model::ErrorCode;
use rmcp::model::ListRootsResult;
use rmcp::service::RequestContext;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

/// The model name a sampling reply carries.
pub const SAMPLING_MODEL: &str = "harness-faux";

/// What the client answers to a server's requests; `None`: not declared
/// (not advertised, and refused).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Answers {
    /// Replies to `sampling/createMessage`, in order.
    pub sampling: Option<Vec<String>>,
    /// Replies to `elicitation/create`, in order.
    pub elicitation: Option<Vec<Elicitation>>,
    /// The answer to every `roots/list`.
    pub roots: Option<Vec<Root>>,
}

/// One reply to `elicitation/create`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elicitation {
    /// What the user did.
    pub action: ElicitAction,
    /// The form's fields (for `accept`).
    pub content: Map<String, Value>,
}

/// What the user did with an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElicitAction {
    /// Submitted the form.
    Accept,
    /// Refused it.
    Decline,
    /// Dismissed it.
    Cancel,
}

impl ElicitAction {
    fn as_str(self) -> &'static str {
        match self {
            Self::Accept => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        }
    }
}

/// One root: a `file://` URI and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    /// `file:///…`.
    pub uri: String,
    /// Its name (the path as declared).
    pub name: String,
}

/// A request a server made and what it got.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Served {
    /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
    pub method: &'static str,
    /// The answer's result, or `None` when it was refused.
    pub result: Option<Value>,
    /// Why it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// The client's handler: its `initialize` side and its answers.
#[derive(Debug)]
pub(super) struct Answering {
    server: String,
    answers: Answers,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    sampled: usize,
    elicited: usize,
    served: Vec<Served>,
    refusals: Vec<String>,
}

/// The handler rmcp runs: shared with the [`McpClient`](super::McpClient)
/// that reads what was served.
#[derive(Clone, Debug)]
pub(super) struct Handler(pub(super) Arc<Answering>);

impl Answering {
    pub(super) fn new(server: &str, answers: Answers) -> Self {
        Self {
            server: server.to_owned(),
            answers,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The refusals since the last take, in order.
    pub(super) fn take_refusals(&self) -> Vec<String> {
        std::mem::take(&mut self.state().refusals)
    }

    /// Every request served so far, in order.
    pub(super) fn served(&self) -> Vec<Served> {
        self.state().served.clone()
    }

    fn refuse(&self, method: &'static str, code: ErrorCode, why: String) -> McpError {
        let mut state = self.state();
        state.refusals.push(format!(
            "MCP server `{}` sent `{method}`, which {why}; it was answered with JSON-RPC error {}",
            self.server, code.0
        ));
        state.served.push(Served {
            method,
            result: None,
            refused: Some(why.clone()),
        });
        McpError::new(code, format!("harness: {why}"), None)
    }

    fn serve(&self, method: &'static str, result: Value) {
        self.state().served.push(Served {
            method,
            result: Some(result),
            refused: None,
        });
    }

    /// The next of the scenario's `key:` answers to `method`, counted by
    /// `counter`; a request with no such list, or past its end, refused.
    fn next_reply<'r, T>(
        &self,
        method: &'static str,
        key: &str,
        replies: Option<&'r [T]>,
        counter: impl FnOnce(&mut State) -> &mut usize,
    ) -> Result<&'r T, McpError> {
        let Some(replies) = replies else {
            return Err(self.refuse(
                method,
                ErrorCode::METHOD_NOT_FOUND,
                format!("the scenario has no answer for (it declares no `{key}:`)"),
            ));
        };
        let index = {
            let mut state = self.state();
            let count = counter(&mut state);
            *count += 1;
            *count - 1
        };
        replies.get(index).ok_or_else(|| {
            self.refuse(
                method,
                ErrorCode::INTERNAL_ERROR,
                format!(
                    "is request {} of its kind, past the {} `{key}:` answers the scenario \
                     declares",
                    index + 1,
                    replies.len()
                ),
            )
        })
    }

    fn sample(&self) -> Result<Value, McpError> {
        const METHOD: &str = "sampling/createMessage";
        let text = self.next_reply(
            METHOD,
            "sampling",
            self.answers.sampling.as_deref(),
            |state| &mut state.sampled,
        )?;
        let result = json!({
            "role": "assistant",
            "content": { "type": "text", "text": text },
            "model": SAMPLING_MODEL,
            "stopReason": "endTurn",
        });
        self.serve(METHOD, result.clone());
        Ok(result)
    }

    fn elicit(&self, request: &Value) -> Result<Value, McpError> {
        const METHOD: &str = "elicitation/create";
        let reply = self.next_reply(
            METHOD,
            "elicitation",
            self.answers.elicitation.as_deref(),
            |state| &mut state.elicited,
        )?;
        let result = match reply.action {
            ElicitAction::Accept => json!({
                "action": "accept",
                "content": with_defaults(&reply.content, request),
            }),
            other => json!({ "action": other.as_str() }),
        };
        self.serve(METHOD, result.clone());
        Ok(result)
    }

    fn list_roots(&self) -> Result<Value, McpError> {
        const METHOD: &str = "roots/list";
        let Some(roots) = &self.answers.roots else {
            return Err(self.refuse(
                METHOD,
                ErrorCode::METHOD_NOT_FOUND,
                "the scenario has no answer for (it declares no `roots:`)".to_owned(),
            ));
        };
        let roots: Vec<Value> = roots
            .iter()
            .map(|root| json!({ "uri": root.uri, "name": root.name }))
            .collect();
        let result = json!({ "roots": roots });
        self.serve(METHOD, result.clone());
        Ok(result)
    }

    /// The client's side of `initialize`: the newest version that has the
    /// handshake (2025-11-25), which every server of that era or later
    /// answers, and a capability for each kind of request declared.
    pub(super) fn client_config(&self) -> ClientConfig {
        let mut capabilities = serde_json::Map::new();
        if self.answers.sampling.is_some() {
            capabilities.insert("sampling".to_owned(), json!({}));
        }
        if self.answers.elicitation.is_some() {
            capabilities.insert("elicitation".to_owned(), json!({ "form": {} }));
        }
        if self.answers.roots.is_some() {
            capabilities.insert("roots".to_owned(), json!({ "listChanged": false }));
        }
        let capabilities: ClientCapabilities =
            serde_json::from_value(Value::Object(capabilities)).unwrap_or_default();
        let mut config = ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("harness", env!("CARGO_PKG_VERSION")),
        );
        config.protocol_version = rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE;
        config
    }
}

/// `content` with each property of the request's `requestedSchema` that
/// it omits and that has a `default` set to that default.
fn with_defaults(content: &Map<String, Value>, request: &Value) -> Value {
    let mut filled = content.clone();
    if let Some(properties) = request
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    {
        for (name, schema) in properties {
            if let Some(default) = schema.get("default")
                && !filled.contains_key(name)
            {
                filled.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(filled)
}

fn typed<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|err| {
        McpError::new(
            ErrorCode::INTERNAL_ERROR,
            format!("harness could not build its {what} answer: {err}"),
            None,
        )
    })
}

impl ClientHandler for Handler {
    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, McpError> {
        typed(self.0.sample()?, "sampling")
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, McpError> {
        typed(self.0.list_roots()?, "roots")
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let request = serde_json::to_value(&request).unwrap_or(Value::Null);
        typed(self.0.elicit(&request)?, "elicitation")
    }

    fn get_info(&self) -> ClientConfig {
        self.0.client_config()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn answering(answers: Answers) -> Answering {
        Answering::new("s", answers)
    }

    #[test]
    fn capabilities_are_advertised_only_when_declared() {
        let none = answering(Answers::default()).client_config();
        assert_eq!(serde_json::to_value(&none.capabilities).unwrap(), json!({}));
        let all = answering(Answers {
            sampling: Some(vec![]),
            elicitation: Some(vec![]),
            roots: Some(vec![]),
        })
        .client_config();
        assert_eq!(
            serde_json::to_value(&all.capabilities).unwrap(),
            json!({
                "sampling": {},
                "elicitation": { "form": {} },
                "roots": { "listChanged": false },
            })
        );
    }

    #[test]
    fn sampling_replies_in_order_then_refuses() {
        let a = answering(Answers {
            sampling: Some(vec!["one".to_owned()]),
            ..Answers::default()
        });
        assert_eq!(
            a.sample().unwrap(),
            json!({
                "role": "assistant",
                "content": { "type": "text", "text": "one" },
                "model": "harness-faux",
                "stopReason": "endTurn",
            })
        );
        let err = a.sample().unwrap_err();
        assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
        assert_eq!(
            a.take_refusals(),
            vec![
                "MCP server `s` sent `sampling/createMessage`, which is request 2 of its kind, \
                 past the 1 `sampling:` answers the scenario declares; it was answered with \
                 JSON-RPC error -32603"
                    .to_owned()
            ]
        );
        assert_eq!(a.take_refusals(), Vec::<String>::new());
    }

    #[test]
    fn a_kind_not_declared_is_method_not_found() {
        let a = answering(Answers::default());
        assert_eq!(
            a.list_roots().unwrap_err().code,
            ErrorCode::METHOD_NOT_FOUND
        );
        assert_eq!(
            a.take_refusals(),
            vec![
                "MCP server `s` sent `roots/list`, which the scenario has no answer for (it \
                 declares no `roots:`); it was answered with JSON-RPC error -32601"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn accept_fills_the_defaults_it_omits() {
        let a = answering(Answers {
            elicitation: Some(vec![
                Elicitation {
                    action: ElicitAction::Accept,
                    content: Map::from_iter([("name".to_owned(), json!("Ada"))]),
                },
                Elicitation {
                    action: ElicitAction::Decline,
                    content: Map::new(),
                },
            ]),
            ..Answers::default()
        });
        let request = json!({
            "mode": "form",
            "message": "m",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": { "type": "string", "default": "John" },
                    "age": { "type": "integer", "default": 30 },
                    "bare": { "type": "string" },
                },
            },
        });
        assert_eq!(
            a.elicit(&request).unwrap(),
            json!({ "action": "accept", "content": { "name": "Ada", "age": 30 } })
        );
        assert_eq!(a.elicit(&request).unwrap(), json!({ "action": "decline" }));
        assert_eq!(a.served().len(), 2);
    }
}
