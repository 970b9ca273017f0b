//! The tool contract: what a tool is, what it gets, what it returns.
//!
//! A [`Tool`] has typed arguments, a [`ToolSpec`] (name, descriptions for
//! the model and for people, the JSON Schema of its parameters, its
//! execution mode), an optional argument-preparation hook, and an async
//! `execute` that gets a [`ToolContext`] (the workspace operations, the
//! limits, a cancellation token and a sink for partial updates). The
//! registry erases typed tools into [`AnyTool`] through one blanket impl.
//!
//! A call ends in a [`ToolResult`]: `content` for the model (text and image
//! blocks), `details` for people, logs and checks, and `is_error`; a
//! built-in tool's result also holds its typed [`Facts`], of which
//! `details` is the JSON.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::ToolError;
use super::error::facts_value;
use super::facts::ErrorKind;
use super::facts::Facts;
use super::facts::ToolDetails;
use super::ops::BoxFuture;
use super::truncate::DEFAULT_MAX_BYTES;
use super::truncate::DEFAULT_MAX_LINES;
use super::truncate::GREP_MAX_LINE_CHARS;
use super::truncate::TruncationLimits;
use super::workspace::Workspace;

/// One block of a result's `content`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 payload.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// The text of `content` as a model is charged for it: text blocks, and
/// images as `[image:MIME:LEN]` (LEN the length of the base64 data),
/// joined by newlines (docs/reports.md, "What is priced"). The one rule
/// for the price of a result, wherever it is priced.
pub fn priced_text_of(content: &[Content]) -> String {
    let mut out = String::new();
    for (i, block) in content.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match block {
            Content::Text { text } => out.push_str(text),
            Content::Image { data, mime_type } => {
                out.push_str(&format!("[image:{mime_type}:{}]", data.len()));
            }
        }
    }
    out
}

/// The text blocks of `content` joined by newlines (images are skipped).
pub fn text_of(content: &[Content]) -> String {
    let mut out = String::new();
    for block in content {
        if let Content::Text { text } = block {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(text);
        }
    }
    out
}

/// What a tool returns when it succeeds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolOutput {
    /// Blocks for the model.
    pub content: Vec<Content>,
    /// Structured facts for people and checks.
    pub details: Option<Value>,
    /// The typed facts `details` is the JSON of (`None`: read them from
    /// `details`).
    pub facts: Option<Facts>,
}

impl ToolOutput {
    /// One text block, no details.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(text)],
            details: None,
            facts: None,
        }
    }

    /// Sets the details.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Sets the details from a built-in tool's typed details struct, which
    /// the facts keep.
    pub(crate) fn with_facts(
        mut self,
        details: impl ToolDetails + Serialize,
    ) -> Result<Self, ToolError> {
        self.details = Some(facts_value(&details)?);
        self.facts = Some(Facts::of(details));
        Ok(self)
    }

    /// A built-in tool's output without details: the facts say so.
    pub(crate) fn plain(text: impl Into<String>) -> Self {
        Self {
            facts: Some(Facts::default()),
            ..Self::text(text)
        }
    }
}

/// The result of one tool call, as the model and the checks see it.
///
/// Serialises as `{"is_error", "content", "details"}`: the JSON that
/// `harness call` prints. Two results are equal when they say the same
/// (`facts` are what `details` say, typed, and are not compared; nor is
/// `call_id`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResult {
    /// Whether the call failed.
    pub is_error: bool,
    /// Blocks for the model.
    pub content: Vec<Content>,
    /// Structured facts; kept on errors too (D14).
    pub details: Option<Value>,
    /// Set when the tool layer itself broke (a panic, a broken invariant):
    /// the model still gets an error result, and a harness fails the run.
    #[serde(skip)]
    pub internal_error: Option<String>,
    /// The typed facts of a built-in tool's result; `None` for a result
    /// made elsewhere or read back from JSON, whose facts
    /// [`facts_of`](super::builtin::facts_of) reads from `details`.
    #[serde(skip)]
    pub facts: Option<Facts>,
    /// The id of the call this is the result of
    /// ([`ToolCall::id`](super::ToolCall::id)), set by the registry on
    /// every result of
    /// [`Registry::prepare`](super::Registry::prepare) and
    /// [`PreparedCall::execute`](super::PreparedCall::execute); `None` for
    /// a result made elsewhere.
    #[serde(skip)]
    pub call_id: Option<String>,
}

impl PartialEq for ToolResult {
    fn eq(&self, other: &Self) -> bool {
        self.is_error == other.is_error
            && self.content == other.content
            && self.details == other.details
            && self.internal_error == other.internal_error
    }
}

impl ToolResult {
    /// A successful result.
    pub fn ok(output: ToolOutput) -> Self {
        Self {
            is_error: false,
            content: output.content,
            details: output.details,
            internal_error: None,
            facts: output.facts,
            call_id: None,
        }
    }

    /// An error result with one text block.
    pub fn error(message: impl Into<String>, details: Option<Value>) -> Self {
        Self {
            is_error: true,
            content: vec![Content::text(message)],
            details,
            internal_error: None,
            facts: None,
            call_id: None,
        }
    }

    /// The text blocks joined by newlines (images are skipped).
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// The same result, marked as the result of call `id`.
    #[must_use]
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }
}

impl From<ToolError> for ToolResult {
    fn from(err: ToolError) -> Self {
        match err {
            ToolError::InvalidArgs {
                message,
                details,
                facts,
            }
            | ToolError::Failed {
                message,
                details,
                facts,
            }
            | ToolError::Cancelled {
                message,
                details,
                facts,
            } => Self {
                facts,
                ..Self::error(message, details)
            },
            ToolError::Fatal { message } => {
                let mut result = Self::error(
                    format!(
                        "Internal error in the tool layer: {message}. This is not caused by your \
                         arguments; try the call again or use another tool."
                    ),
                    None,
                );
                result.internal_error = Some(message);
                result.facts = Some(Facts::error(ErrorKind::Internal));
                result
            }
        }
    }
}

/// Whether a tool may run alongside others in one batch (§loop.4, D15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionMode {
    /// Safe to run concurrently with other calls.
    Parallel,
    /// A batch containing this tool runs one call at a time.
    Sequential,
}

/// Everything a model and a system prompt need to know about a tool.
///
/// Names are owned at run time (a built-in tool's are borrowed literals;
/// an MCP server's come from its `tools/list`), so a tool named while the
/// program runs needs no `'static` string. Build one with
/// [`ToolSpec::new`] and the setters:
///
/// ```
/// use harness::tools::{ExecutionMode, ToolSpec};
///
/// let name = String::from("deploy"); // known only at run time
/// let spec = ToolSpec::new(name, "Deploy the current branch.", serde_json::json!({
///     "type": "object",
///     "properties": { "env": { "type": "string" } },
///     "required": ["env"],
/// }))
/// .label("Deploy")
/// .prompt_snippet("Deploy the branch")
/// .execution_mode(ExecutionMode::Sequential);
/// assert_eq!(spec.name, "deploy");
/// assert_eq!(spec.definition().description, "Deploy the current branch.");
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls.
    pub name: Cow<'static, str>,
    /// A short label for people.
    pub label: Cow<'static, str>,
    /// The description sent to the model; its numbers equal the runtime's.
    pub description: String,
    /// One line for the system prompt's tool list (a tool with none is
    /// left out of that list, as an MCP client's prompt leaves out a
    /// server's tools).
    pub prompt_snippet: String,
    /// Bullets for the system prompt's guidelines.
    pub prompt_guidelines: Vec<String>,
    /// JSON Schema of the parameters.
    pub parameters: Value,
    /// Parallel-safe or sequential.
    pub execution_mode: ExecutionMode,
}

/// The JSON Schema of a tool's parameters: an object with `properties`,
/// of which `required` must be present, and no others.
pub(crate) fn object_schema(properties: Value, required: &[&str]) -> Value {
    let mut schema = serde_json::Map::new();
    schema.insert("type".to_owned(), Value::from("object"));
    schema.insert("properties".to_owned(), properties);
    if !required.is_empty() {
        schema.insert("required".to_owned(), Value::from(required));
    }
    schema.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(schema)
}

/// A tool definition as a model receives it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDefinition<'a> {
    /// The name.
    pub name: &'a str,
    /// The description.
    pub description: &'a str,
    /// JSON Schema of the parameters.
    pub parameters: &'a Value,
}

impl ToolSpec {
    /// A spec with a name, the description the model reads and the JSON
    /// Schema of the parameters; the label is the name, there is no prompt
    /// snippet (the tool is left out of the system prompt's tool list) and
    /// no guidelines, and the tool may run in parallel.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        let name = name.into();
        Self {
            label: name.clone(),
            name,
            description: description.into(),
            prompt_snippet: String::new(),
            prompt_guidelines: Vec::new(),
            parameters,
            execution_mode: ExecutionMode::Parallel,
        }
    }

    /// Sets the label for people.
    #[must_use]
    pub fn label(mut self, label: impl Into<Cow<'static, str>>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the system prompt's one line for the tool.
    #[must_use]
    pub fn prompt_snippet(mut self, snippet: impl Into<String>) -> Self {
        self.prompt_snippet = snippet.into();
        self
    }

    /// Sets the system prompt's guidelines for the tool.
    #[must_use]
    pub fn prompt_guidelines<I, S>(mut self, guidelines: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.prompt_guidelines = guidelines.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the execution mode (default [`ExecutionMode::Parallel`]).
    #[must_use]
    pub fn execution_mode(mut self, mode: ExecutionMode) -> Self {
        self.execution_mode = mode;
        self
    }

    /// The model-facing part of the spec.
    pub fn definition(&self) -> ToolDefinition<'_> {
        ToolDefinition {
            name: &self.name,
            description: &self.description,
            parameters: &self.parameters,
        }
    }
}

/// The limits the tools apply. The defaults are pi's (§common.4.1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Lines kept by `read` and by `bash`'s tail.
    pub max_lines: usize,
    /// Bytes kept by every tool's output.
    pub max_bytes: usize,
    /// Characters after which a grep line is cut.
    pub grep_max_line: usize,
    /// Default `limit` of grep (matching lines).
    pub grep_limit: usize,
    /// Default `limit` of find (results).
    pub find_limit: usize,
    /// Default `limit` of ls (entries).
    pub ls_limit: usize,
    /// Timeout in seconds applied to bash calls that do not set one.
    pub bash_timeout: Option<f64>,
    /// Raw bytes kept in a bash full-output file (its first ones); 0 keeps
    /// no file.
    pub max_log_bytes: u64,
    /// Seconds one grep call may search before it stops with an error;
    /// `None` lets it run until it is done.
    pub grep_timeout: Option<f64>,
}

/// The default of [`Limits::max_log_bytes`]: 64 MiB.
pub const DEFAULT_MAX_LOG_BYTES: u64 = 64 * 1024 * 1024;

/// The default of [`Limits::grep_timeout`], in seconds.
pub const DEFAULT_GREP_TIMEOUT: f64 = 30.0;

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
            grep_max_line: GREP_MAX_LINE_CHARS,
            grep_limit: 100,
            find_limit: 1000,
            ls_limit: 500,
            bash_timeout: None,
            max_log_bytes: DEFAULT_MAX_LOG_BYTES,
            grep_timeout: Some(DEFAULT_GREP_TIMEOUT),
        }
    }
}

impl Limits {
    /// The line and byte caps for head/tail truncation.
    pub fn truncation(&self) -> TruncationLimits {
        TruncationLimits {
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
        }
    }

    /// The byte cap alone (grep, find, ls).
    pub fn bytes_only(&self) -> TruncationLimits {
        TruncationLimits::bytes_only(self.max_bytes)
    }
}

/// A partial result streamed while a call runs (bash output so far).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolUpdate {
    /// Blocks so far.
    pub content: Vec<Content>,
    /// Facts so far.
    pub details: Option<Value>,
}

impl ToolUpdate {
    /// The text blocks joined by newlines (images are skipped).
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

/// Where a running tool sends its partial results.
#[derive(Clone)]
pub struct UpdateSink(Arc<dyn Fn(ToolUpdate) + Send + Sync>);

impl UpdateSink {
    /// A sink that calls `f` for every update.
    pub fn new(f: impl Fn(ToolUpdate) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// A sink that drops every update.
    pub fn discard() -> Self {
        Self::new(|_| {})
    }

    /// Sends one update.
    pub fn emit(&self, update: ToolUpdate) {
        (self.0)(update);
    }
}

impl fmt::Debug for UpdateSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UpdateSink")
    }
}

/// What a tool gets besides its arguments.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// The id of the call being executed.
    pub call_id: String,
    /// The workspace: operations, root and path policy.
    pub workspace: Workspace,
    /// The limits in force.
    pub limits: Limits,
    /// Fires when the call should stop.
    pub cancel: CancellationToken,
    /// Receives partial results.
    pub updates: UpdateSink,
}

/// A tool with typed arguments.
///
/// The registry validates the arguments against the spec's schema
/// (unless [`Tool::checks_arguments`] says no) and deserialises them into
/// `Args` before [`Tool::execute`] runs. A tool that can take long must
/// watch `ctx.cancel` and return [`ToolError::cancelled`] when it fires:
/// nothing stops a tool that ignores it, short of dropping the call's
/// future. Blocking work goes through
/// [`run_blocking`](super::run_blocking).
///
/// ```
/// use std::sync::Arc;
/// use harness::tools::{CancellationToken, Limits, MemoryFs, LocalProcess, Registry, Tool};
/// use harness::tools::{ToolCall, ToolContext, ToolError, ToolOutput, ToolSpec, UpdateSink};
/// use harness::tools::Workspace;
/// use serde_json::json;
///
/// /// Waits `seconds`, or until the call is cancelled.
/// struct Wait;
///
/// #[derive(serde::Deserialize)]
/// struct WaitArgs {
///     seconds: u64,
/// }
///
/// impl Tool for Wait {
///     type Args = WaitArgs;
///
///     fn spec(&self, _limits: &Limits) -> ToolSpec {
///         ToolSpec::new("wait", "Wait some seconds.", json!({
///             "type": "object",
///             "properties": { "seconds": { "type": "integer", "minimum": 0 } },
///             "required": ["seconds"],
///         }))
///     }
///
///     async fn execute(&self, args: WaitArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
///         tokio::select! {
///             () = tokio::time::sleep(std::time::Duration::from_secs(args.seconds)) => {
///                 Ok(ToolOutput::text(format!("Waited {} s.", args.seconds)))
///             }
///             () = ctx.cancel.cancelled() => Err(ToolError::cancelled()),
///         }
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let fs = MemoryFs::new();
/// fs.add_dir("/ws");
/// let workspace = Workspace::new(Arc::new(fs), Arc::new(LocalProcess::default()), "/ws", true)?;
/// let registry = Registry::builder(workspace).tool(Arc::new(Wait)).build()?;
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// let cancel = CancellationToken::new();
/// let call = ToolCall::new("w1", "wait", json!({"seconds": 3600}));
/// // The call starts waiting an hour; the user presses Esc.
/// let (result, ()) = runtime.block_on(async {
///     tokio::join!(registry.dispatch(&call, cancel.clone(), UpdateSink::discard()), async {
///         tokio::task::yield_now().await;
///         cancel.cancel();
///     })
/// });
/// assert_eq!(result.text(), harness::tools::CANCELLED_MESSAGE);
/// assert_eq!(result.call_id.as_deref(), Some("w1"));
/// // Arguments the schema refuses never reach the tool.
/// let bad = ToolCall::new("w2", "wait", json!({"seconds": -1}));
/// let err = registry.prepare(&bad).unwrap_err();
/// assert!(err.to_string().contains("seconds"));
/// # Ok(())
/// # }
/// ```
pub trait Tool: Send + Sync + 'static {
    /// The arguments after normalisation and validation.
    type Args: DeserializeOwned + Send + 'static;

    /// The spec, with every number taken from `limits`.
    fn spec(&self, limits: &Limits) -> ToolSpec;

    /// Migrates old or sloppy argument shapes before validation.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// Whether the registry normalises (D17) and validates the arguments
    /// against the spec's schema before the call. A tool that checks its
    /// own (an MCP server's, whose answer is what is being tested) says
    /// no, and gets them as sent.
    fn checks_arguments(&self) -> bool {
        true
    }

    /// The path argument this call mutates, if any: such calls are
    /// serialised per real path by the mutation queue.
    fn mutation_target<'a>(&self, _args: &'a Self::Args) -> Option<&'a str> {
        None
    }

    /// Runs the call.
    fn execute(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// Typed arguments behind a type-erased box.
pub type ErasedArgs = Box<dyn Any + Send>;

/// The object-safe form of [`Tool`] that the registry stores.
pub trait AnyTool: Send + Sync + 'static {
    /// See [`Tool::spec`].
    fn spec(&self, limits: &Limits) -> ToolSpec;
    /// See [`Tool::prepare_arguments`].
    fn prepare_arguments(&self, args: Value) -> Value;
    /// See [`Tool::checks_arguments`].
    fn checks_arguments(&self) -> bool;
    /// Deserialises validated arguments.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidArgs`] with serde's words when the arguments do
    /// not fit the typed arguments.
    fn parse(&self, args: Value) -> Result<ErasedArgs, ToolError>;
    /// See [`Tool::mutation_target`].
    fn mutation_target(&self, args: &ErasedArgs) -> Option<String>;
    /// See [`Tool::execute`].
    fn execute(
        self: Arc<Self>,
        args: ErasedArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>>;
}

impl<T: Tool> AnyTool for T {
    fn spec(&self, limits: &Limits) -> ToolSpec {
        Tool::spec(self, limits)
    }

    fn prepare_arguments(&self, args: Value) -> Value {
        Tool::prepare_arguments(self, args)
    }

    fn checks_arguments(&self) -> bool {
        Tool::checks_arguments(self)
    }

    fn parse(&self, args: Value) -> Result<ErasedArgs, ToolError> {
        let args: T::Args = serde_json::from_value(args).map_err(|err| ToolError::InvalidArgs {
            message: err.to_string(),
            details: None,
            facts: Some(Facts::error(ErrorKind::InvalidArguments)),
        })?;
        Ok(Box::new(args))
    }

    fn mutation_target(&self, args: &ErasedArgs) -> Option<String> {
        let args = args.downcast_ref::<T::Args>()?;
        Tool::mutation_target(self, args).map(str::to_owned)
    }

    fn execute(
        self: Arc<Self>,
        args: ErasedArgs,
        ctx: ToolContext,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args = args
                .downcast::<T::Args>()
                .map_err(|_| ToolError::fatal("arguments of the wrong type reached a tool"))?;
            Tool::execute(self.as_ref(), *args, ctx).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn object_schemas_keep_the_key_order_models_have_always_seen() {
        let properties = serde_json::json!({ "path": { "type": "string" } });
        assert_eq!(
            object_schema(properties.clone(), &["path"]).to_string(),
            r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}"#
        );
        assert_eq!(
            object_schema(properties, &[]).to_string(),
            r#"{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}"#
        );
    }
}
