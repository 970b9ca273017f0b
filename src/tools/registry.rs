//! The registry: which tools exist, which are active, and how one call goes
//! from raw arguments to a [`ToolResult`].
//!
//! [`Registry::prepare`] is synchronous and runs, in order: look the tool
//! up (unknown or inactive → error result naming the available tools);
//! parse argument text (cut-off JSON → error result); the tool's argument
//! preparation hook; normalisation (D17); validation against the compiled
//! schema; deserialisation into the tool's typed arguments; and, for tools
//! that mutate a file, a ticket in the mutation queue. Because the ticket is
//! taken here, calls prepared in source order mutate in source order.
//!
//! [`PreparedCall::execute`] waits for the ticket, runs the tool on its own
//! task (a panic becomes an error result, not a crash), and maps every
//! error to a result with `is_error: true` that keeps its `details` (D14).

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

use crate::base::task::AbortOnDrop;
use std::sync::PoisonError;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::args::ArgsValidator;
use super::args::Normalization;
use super::args::ValidationDetails;
use super::args::normalize;
use super::args::parse_argument_text;
use super::bash::BashTool;
use super::contract::AnyTool;
use super::contract::ErasedArgs;
use super::contract::ExecutionMode;
use super::contract::Limits;
use super::contract::ToolContext;
use super::contract::ToolResult;
use super::contract::ToolSpec;
use super::contract::UpdateSink;
use super::edit::EditTool;
use super::error::ToolError;
use super::error::facts_value;
use super::facts::ErrorKind;
use super::facts::Facts;
use super::ls::LsTool;
use super::mutation_queue::MutationQueue;
use super::mutation_queue::Ticket;
use super::read::ReadTool;
use super::search::find::FindTool;
use super::search::grep::GrepTool;
use super::task::no_runtime;
use super::workspace::Workspace;
use super::write::WriteTool;

/// The arguments of a call as the model sent them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CallArguments {
    /// Parsed JSON.
    Json(Value),
    /// Literal argument text that still has to be parsed (it may be cut
    /// off, as a streamed call can be).
    Text(String),
}

impl CallArguments {
    /// The text a model produced for these arguments.
    pub fn to_text(&self) -> String {
        match self {
            Self::Json(value) => value.to_string(),
            Self::Text(text) => text.clone(),
        }
    }
}

/// One tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id; the call's result carries it
    /// ([`ToolResult::call_id`]).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub arguments: CallArguments,
}

impl ToolCall {
    /// A call with JSON arguments.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: CallArguments::Json(arguments),
        }
    }
}

/// Named sets of active tools (§common.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preset {
    /// read, bash, edit, write.
    Coding,
    /// read, grep, find, ls.
    Readonly,
    /// All seven tools.
    All,
}

impl Preset {
    /// The tool names of the preset, in prompt order.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Self::Coding => &["read", "bash", "edit", "write"],
            Self::Readonly => &["read", "grep", "find", "ls"],
            Self::All => &ALL_TOOL_NAMES,
        }
    }

    /// Parses `coding`, `readonly` (or `read-only`) and `all`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "coding" => Some(Self::Coding),
            "readonly" | "read-only" => Some(Self::Readonly),
            "all" => Some(Self::All),
            _ => None,
        }
    }
}

/// The built-in tools, one instance each.
pub fn builtin_tools() -> Vec<Arc<dyn AnyTool>> {
    vec![
        Arc::new(ReadTool),
        Arc::new(WriteTool),
        Arc::new(EditTool),
        Arc::new(BashTool),
        Arc::new(GrepTool),
        Arc::new(FindTool),
        Arc::new(LsTool),
    ]
}

/// Every built-in tool, in prompt order.
pub const ALL_TOOL_NAMES: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// A configuration the registry cannot be built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// A name in an allow or deny list is not a known tool.
    UnknownTool {
        /// The name given.
        name: String,
        /// The known names.
        known: String,
    },
    /// A tool's schema does not compile.
    BadSchema(String),
    /// Two tools share a name.
    Duplicate(String),
}

impl std::fmt::Display for RegistryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownTool { name, known } => {
                write!(f, "unknown tool `{name}` (known tools: {known})")
            }
            Self::BadSchema(message) => f.write_str(message),
            Self::Duplicate(name) => write!(f, "tool `{name}` is registered twice"),
        }
    }
}

impl std::error::Error for RegistryError {}

/// Why a call could not be prepared: an unknown or inactive tool,
/// argument text that is not JSON, arguments the schema refuses. It holds
/// the error result the model gets for the call ([`Self::result`],
/// [`Self::into_result`], or `ToolResult::from`), and displays as its
/// text.
#[derive(Clone, Debug, PartialEq)]
pub struct PrepareError(Box<ToolResult>);

impl PrepareError {
    fn new(result: ToolResult, call_id: &str) -> Self {
        Self(Box::new(result.with_call_id(call_id)))
    }

    /// The error result the model gets for the call.
    pub fn result(&self) -> &ToolResult {
        &self.0
    }

    /// The error result the model gets for the call.
    pub fn into_result(self) -> ToolResult {
        *self.0
    }
}

impl std::fmt::Display for PrepareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.text())
    }
}

impl std::error::Error for PrepareError {}

impl From<PrepareError> for ToolResult {
    fn from(err: PrepareError) -> Self {
        err.into_result()
    }
}

/// Builds a [`Registry`].
///
/// What is active does not depend on the order of the calls:
///
/// - the selection is the last [`preset`](Self::preset) or
///   [`allow`](Self::allow) (by default every built-in tool, as
///   [`Preset::All`]);
/// - a preset selects its built-in tools and every tool added with
///   [`tool`](Self::tool); an allow list selects exactly the tools it
///   names, in its order, built-in or added;
/// - a tool added under a built-in tool's name replaces that built-in
///   (keeping its place in the prompt order); two added tools with one
///   name are an error at [`build`](Self::build);
/// - [`deny`](Self::deny) turns off whichever tool has a name it lists,
///   whatever selected it.
///
/// ```
/// use std::sync::Arc;
/// use harness::tools::{LocalProcess, MemoryFs, Preset, Registry, Workspace};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let fs = MemoryFs::new();
/// fs.add_dir("/ws");
/// let workspace = Workspace::new(Arc::new(fs), Arc::new(LocalProcess::default()), "/ws", true)?;
/// let registry = Registry::builder(workspace)
///     .deny(["ls"])
///     .preset(Preset::Readonly)
///     .build()?;
/// assert_eq!(registry.active_names(), ["read", "grep", "find"]);
/// # Ok(())
/// # }
/// ```
pub struct RegistryBuilder {
    workspace: Workspace,
    limits: Limits,
    /// The tools added with `tool`, in the order added.
    added: Vec<Arc<dyn AnyTool>>,
    selection: Selection,
    deny: Vec<String>,
    router: Option<Router>,
}

/// Where a call to a name no active tool has goes instead of the
/// not-found error: the tool that takes it (with its arguments as
/// written: neither normalised nor validated, not queued), or `None`.
/// `harness run` sends such calls to a scenario's MCP server, whose own
/// answer is what is being tested.
pub type Router = Arc<dyn Fn(&str) -> Option<Arc<dyn AnyTool>> + Send + Sync>;

/// What a builder's preset or allow list selected.
enum Selection {
    Preset(Preset),
    Allow(Vec<String>),
}

impl RegistryBuilder {
    /// Sets the limits (default: pi's).
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Selects a preset's built-in tools, and every tool added (replaces an
    /// earlier preset or allow list).
    #[must_use]
    pub fn preset(mut self, preset: Preset) -> Self {
        self.selection = Selection::Preset(preset);
        self
    }

    /// Selects exactly these tools, in this order, built-in or added
    /// (replaces an earlier preset or allow list). A name no tool has is an
    /// error at build.
    #[must_use]
    pub fn allow<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.selection = Selection::Allow(names.into_iter().map(Into::into).collect());
        self
    }

    /// Turns off the tools of these names, whatever selected them (adds to
    /// earlier deny lists). A name no tool has is an error at build.
    #[must_use]
    pub fn deny<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// Adds a tool of your own: active under a preset (the default one
    /// too), or when an allow list names it. One with a built-in tool's
    /// name replaces that built-in (an MCP server's `read` instead of
    /// ours).
    #[must_use]
    pub fn tool(mut self, tool: Arc<dyn AnyTool>) -> Self {
        self.added.push(tool);
        self
    }

    /// Sends a call to a name no active tool has to the tool `router`
    /// names for it, instead of answering it with the not-found error.
    #[must_use]
    pub fn route_unknown(mut self, router: Router) -> Self {
        self.router = Some(router);
        self
    }

    /// Checks the lists, and compiles the schemas of tools of one's own
    /// (a schema that does not compile is an error now, not at the first
    /// call). The built-in tools' schemas are compiled on their first call,
    /// once per process for each set of limits (`validator_for`), so a
    /// process that makes one call, or one registry per scenario, does not
    /// compile seven.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Duplicate`] when two added tools share a name,
    /// [`RegistryError::UnknownTool`] for a name in an allow or deny list
    /// that no tool has, [`RegistryError::BadSchema`] for an added tool
    /// whose parameter schema does not compile.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let mut entries = Vec::new();
        for tool in builtin_tools() {
            let spec = tool.spec(&self.limits);
            entries.push(Entry {
                tool,
                spec,
                validator: OnceLock::new(),
            });
        }
        // Each name's entry: every lookup below is one probe, so a server
        // of 100,000 tools builds in linear time.
        let mut by_name: HashMap<String, usize> = entries
            .iter()
            .enumerate()
            .map(|(index, e)| (e.spec.name.to_string(), index))
            .collect();
        let mut added = Vec::new();
        let mut added_names: HashSet<String> = HashSet::new();
        for tool in self.added {
            let spec = tool.spec(&self.limits);
            let validator = OnceLock::new();
            if tool.checks_arguments() {
                let compiled = validator_for(&spec.name, &spec.parameters)
                    .map_err(RegistryError::BadSchema)?;
                let _ = validator.set(compiled);
            }
            let entry = Entry {
                tool,
                spec,
                validator,
            };
            let name = entry.spec.name.to_string();
            if !added_names.insert(name.clone()) {
                return Err(RegistryError::Duplicate(name));
            }
            match by_name.get(&name).copied() {
                // A built-in of that name: replaced in its place.
                Some(index) => {
                    entries[index] = entry;
                    added.push(index);
                }
                None => {
                    by_name.insert(name, entries.len());
                    added.push(entries.len());
                    entries.push(entry);
                }
            }
        }
        let known = || {
            entries
                .iter()
                .map(|e| e.spec.name.as_ref())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let index_of = |name: &str| by_name.get(name).copied();
        let selected: Vec<String> = match &self.selection {
            Selection::Allow(names) => names.clone(),
            Selection::Preset(preset) => preset
                .names()
                .iter()
                .map(|name| (*name).to_owned())
                .chain(added.iter().map(|&i| entries[i].spec.name.to_string()))
                .collect(),
        };
        for name in selected.iter().chain(&self.deny) {
            if index_of(name).is_none() {
                return Err(RegistryError::UnknownTool {
                    name: name.clone(),
                    known: known(),
                });
            }
        }
        let denied: HashSet<&str> = self.deny.iter().map(String::as_str).collect();
        let mut active = Vec::new();
        let mut seen = HashSet::new();
        for name in &selected {
            if denied.contains(name.as_str()) {
                continue;
            }
            if let Some(index) = index_of(name)
                && seen.insert(index)
            {
                active.push(index);
            }
        }
        let active_by_name = active
            .iter()
            .map(|&index| (entries[index].spec.name.to_string(), index))
            .collect();
        Ok(Registry {
            entries,
            active,
            active_by_name,
            workspace: self.workspace,
            limits: self.limits,
            queue: MutationQueue::new(),
            router: self.router,
        })
    }
}

struct Entry {
    tool: Arc<dyn AnyTool>,
    spec: ToolSpec,
    /// Compiled on first use (built-in tools) or at build (others).
    validator: OnceLock<Arc<ArgsValidator>>,
}

impl Entry {
    fn validator(&self) -> Result<&ArgsValidator, ToolError> {
        if let Some(v) = self.validator.get() {
            return Ok(v);
        }
        let compiled = builtin_validator_for(&self.spec.name, &self.spec.parameters)
            .map_err(ToolError::fatal)?;
        Ok(self.validator.get_or_init(|| compiled))
    }
}

/// Most compiled schemas kept for the process (one per tool and set of
/// limits; a run uses a handful).
const MAX_CACHED_VALIDATORS: usize = 256;

/// The compiled validator of a tool's parameter schema, shared by every
/// registry of the process that has the same schema.
fn validator_for(tool: &str, schema: &Value) -> Result<Arc<ArgsValidator>, String> {
    cached_validator(tool, schema, false)
}

/// [`validator_for`] of a built-in tool ([`ArgsValidator::builtin`]).
fn builtin_validator_for(tool: &str, schema: &Value) -> Result<Arc<ArgsValidator>, String> {
    cached_validator(tool, schema, true)
}

fn cached_validator(
    tool: &str,
    schema: &Value,
    builtin: bool,
) -> Result<Arc<ArgsValidator>, String> {
    static CACHE: Mutex<Option<HashMap<String, Arc<ArgsValidator>>>> = Mutex::new(None);
    let key = format!("{}{tool}\u{0}{schema}", if builtin { "b\u{0}" } else { "" });
    let lock = || CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(found) = lock().as_ref().and_then(|cache| cache.get(&key)) {
        return Ok(Arc::clone(found));
    }
    let compiled = Arc::new(if builtin {
        ArgsValidator::builtin(tool, schema)?
    } else {
        ArgsValidator::new(tool, schema)?
    });
    let mut cache = lock();
    let cache = cache.get_or_insert_with(HashMap::new);
    if cache.len() >= MAX_CACHED_VALIDATORS {
        cache.clear();
    }
    cache.insert(key, Arc::clone(&compiled));
    Ok(compiled)
}

/// The tools of one session, bound to a workspace: which are active, their
/// specs for the model, and every call from the model's arguments to its
/// one [`ToolResult`].
///
/// ```
/// use harness::tools::{CancellationToken, Preset, Registry, ToolCall, UpdateSink, Workspace};
/// use serde_json::json;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let registry = Registry::builder(Workspace::local(dir.path())?)
///     .preset(Preset::Coding)
///     .build()?;
/// assert_eq!(registry.active_names(), ["read", "bash", "edit", "write"]);
/// // What a provider sends the model for each tool.
/// let definitions: Vec<_> = registry.specs().map(|spec| spec.definition()).collect();
/// assert_eq!(definitions[0].name, "read");
/// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// let call = ToolCall::new("c1", "bash", json!({"command": "echo hi"}));
/// let result = runtime.block_on(registry.dispatch(&call, CancellationToken::new(), UpdateSink::discard()));
/// assert_eq!((result.is_error, result.text()), (false, "hi\n".to_owned()));
/// // A tool outside the preset is refused with a result for the model.
/// let grep = ToolCall::new("c2", "grep", json!({"pattern": "x"}));
/// let refused = runtime.block_on(registry.dispatch(&grep, CancellationToken::new(), UpdateSink::discard()));
/// assert!(refused.text().starts_with("Tool \"grep\" is not active in this session."));
/// # Ok(())
/// # }
/// ```
pub struct Registry {
    entries: Vec<Entry>,
    active: Vec<usize>,
    /// Each active tool's entry, by name.
    active_by_name: HashMap<String, usize>,
    workspace: Workspace,
    limits: Limits,
    queue: MutationQueue,
    router: Option<Router>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("active", &self.active_names())
            .field("root", &self.workspace.root())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A builder with the seven built-in tools, all active (preset `all`).
    pub fn builder(workspace: Workspace) -> RegistryBuilder {
        RegistryBuilder {
            workspace,
            limits: Limits::default(),
            added: Vec::new(),
            selection: Selection::Preset(Preset::All),
            deny: Vec::new(),
            router: None,
        }
    }

    /// The specs of the active tools, in prompt order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.active.iter().map(|&i| &self.entries[i].spec)
    }

    /// The names of the active tools.
    pub fn active_names(&self) -> Vec<&str> {
        self.specs().map(|s| s.name.as_ref()).collect()
    }

    /// The spec of an active tool.
    pub fn spec(&self, name: &str) -> Option<&ToolSpec> {
        self.active_by_name
            .get(name)
            .map(|&i| &self.entries[i].spec)
    }

    /// The workspace the tools run in.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The system prompt's tool section: one line per active tool and the
    /// de-duplicated guidelines (§common.2).
    pub fn prompt_section(&self) -> String {
        let mut text = String::from("Available tools:\n");
        let mut guidelines: Vec<&str> = Vec::new();
        for spec in self.specs() {
            if !spec.prompt_snippet.is_empty() {
                text.push_str(&format!("- {}: {}\n", spec.name, spec.prompt_snippet));
            }
            for line in &spec.prompt_guidelines {
                if !guidelines.contains(&line.as_str()) {
                    guidelines.push(line);
                }
            }
        }
        let names = self.active_names();
        let has_search = ["grep", "find", "ls"].iter().any(|n| names.contains(n));
        let bash_hint = "Use bash for file operations like ls, rg and find.";
        if names.contains(&"bash") && !has_search && !guidelines.contains(&bash_hint) {
            guidelines.push(bash_hint);
        }
        if !guidelines.is_empty() {
            text.push_str("\nGuidelines:\n");
            for line in guidelines {
                text.push_str(&format!("- {line}\n"));
            }
        }
        text
    }

    fn unavailable(&self, name: &str) -> ToolResult {
        let available = self.active_names().join(", ");
        let known = self.entries.iter().any(|e| e.spec.name == name);
        let message = if known {
            format!(
                "Tool \"{name}\" is not active in this session. Available tools: {available}. \
                 Use one of those instead."
            )
        } else {
            format!(
                "Tool \"{name}\" not found. Available tools: {available}. Call one of those by \
                 its exact name."
            )
        };
        ToolResult::from(ToolError::failure_with(
            ErrorKind::UnknownTool,
            message,
            &UnavailableDetails {
                available_tools: self.active_names(),
            },
        ))
    }

    /// Looks up, normalises and validates a call, and takes its place in
    /// the mutation queue: a call to `write` or `edit` holds the calls
    /// prepared after it that change the same file until it has executed,
    /// or until the [`PreparedCall`] is dropped unexecuted.
    ///
    /// Preparation is synchronous, so calls prepared in the order the model
    /// sent them change each file in that order however their executions
    /// overlap:
    ///
    /// ```
    /// use std::sync::Arc;
    /// use harness::tools::{CancellationToken, LocalProcess, MemoryFs, Registry, ToolCall};
    /// use harness::tools::{UpdateSink, Workspace};
    /// use serde_json::json;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let fs = MemoryFs::new();
    /// fs.add_dir("/ws");
    /// let process = Arc::new(LocalProcess::default());
    /// let registry = Registry::builder(Workspace::new(Arc::new(fs.clone()), process, "/ws", true)?)
    ///     .build()?;
    /// let first = registry.prepare(&ToolCall::new("1", "write", json!({"path": "a.txt", "content": "one"})))?;
    /// let second = registry.prepare(&ToolCall::new("2", "write", json!({"path": "a.txt", "content": "two"})))?;
    /// let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    /// runtime.block_on(async {
    ///     // The second is awaited first: it waits for the first all the same.
    ///     let later = tokio::spawn(second.execute(CancellationToken::new(), UpdateSink::discard()));
    ///     first.execute(CancellationToken::new(), UpdateSink::discard()).await;
    ///     later.await
    /// })?;
    /// assert_eq!(fs.contents("/ws/a.txt").as_deref(), Some(&b"two"[..]));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// A [`PrepareError`] holding the error result for the model (with the
    /// call's id) when the tool is unknown or inactive, the argument text
    /// is not JSON, or the arguments do not fit the tool's schema.
    pub fn prepare(&self, call: &ToolCall) -> Result<PreparedCall, PrepareError> {
        self.prepare_inner(call)
            .map_err(|result| PrepareError::new(*result, &call.id))
    }

    fn prepare_inner(&self, call: &ToolCall) -> Result<PreparedCall, Box<ToolResult>> {
        let Some(entry) = self
            .active_by_name
            .get(call.name.as_str())
            .map(|&i| &self.entries[i])
        else {
            return self.routed(call);
        };
        // The arguments as sent, made anew where needed rather than kept in
        // a copy: a 100 MB argument is not held twice.
        let raw = || match &call.arguments {
            CallArguments::Json(value) => Ok(value.clone()),
            CallArguments::Text(text) => parse_argument_text(&call.name, text),
        };
        let mut args = entry.tool.prepare_arguments(raw()?);
        let checks = entry.tool.checks_arguments();
        let notes = if checks {
            normalize(&entry.spec.parameters, &mut args)
        } else {
            Normalization::default()
        };
        let problems = match checks {
            true => entry
                .validator()
                .map_err(|err| Box::new(ToolResult::from(err)))?
                .problems(&args),
            false => Vec::new(),
        };
        if !problems.is_empty() {
            let validator = entry
                .validator()
                .map_err(|err| Box::new(ToolResult::from(err)))?;
            let raw = raw()?;
            let facts = ValidationDetails {
                validation_errors: &problems,
            };
            let mut details = match facts_value(&facts) {
                Ok(details) => details,
                Err(err) => return Err(Box::new(ToolResult::from(err))),
            };
            merge_notes(&mut details, &notes);
            let facts =
                Facts::error(ErrorKind::InvalidArguments).with_normalised(!notes.is_empty());
            return Err(Box::new(ToolResult::from(ToolError::InvalidArgs {
                message: validator.message(&problems, &raw),
                details: Some(details),
                facts: Some(facts),
            })));
        }
        let typed = entry.tool.parse(args).map_err(|err: ToolError| {
            // The schema accepted what serde refused: the schema and the
            // typed arguments disagree, which is a bug in the tool.
            Box::new(ToolResult::from(ToolError::fatal(format!(
                "arguments of {} passed the schema but not deserialisation: {err}",
                call.name
            ))))
        })?;
        let ticket = entry
            .tool
            .mutation_target(&typed)
            .and_then(|target| self.workspace.resolve(&target).ok())
            .map(|resolved| self.queue.ticket(&resolved.real));
        Ok(PreparedCall {
            id: call.id.clone(),
            name: entry.spec.name.clone(),
            mode: entry.spec.execution_mode,
            tool: Arc::clone(&entry.tool),
            args: typed,
            ticket,
            notes,
            workspace: self.workspace.clone(),
            limits: self.limits.clone(),
        })
    }

    /// A call to a name no active tool has, prepared for the tool the
    /// router names, or the not-found error.
    fn routed(&self, call: &ToolCall) -> Result<PreparedCall, Box<ToolResult>> {
        let Some(tool) = self.router.as_ref().and_then(|route| route(&call.name)) else {
            return Err(Box::new(self.unavailable(&call.name)));
        };
        let args = match &call.arguments {
            CallArguments::Json(value) => value.clone(),
            CallArguments::Text(text) => parse_argument_text(&call.name, text)?,
        };
        let args = tool
            .parse(args)
            .map_err(|err| Box::new(ToolResult::from(err)))?;
        Ok(PreparedCall {
            id: call.id.clone(),
            name: Cow::Owned(call.name.clone()),
            mode: tool.spec(&self.limits).execution_mode,
            tool,
            args,
            ticket: None,
            notes: Normalization::default(),
            workspace: self.workspace.clone(),
            limits: self.limits.clone(),
        })
    }

    /// Prepares and executes one call: [`Self::prepare`], then
    /// [`PreparedCall::execute`]. Every call ends in exactly one result.
    ///
    /// It runs the tool on a task of the current Tokio runtime; outside
    /// one it does not panic but answers with an internal error (see [the
    /// runtime contract](super#the-runtime)).
    pub async fn dispatch(
        &self,
        call: &ToolCall,
        cancel: CancellationToken,
        updates: UpdateSink,
    ) -> ToolResult {
        match self.prepare(call) {
            Ok(prepared) => prepared.execute(cancel, updates).await,
            Err(err) => err.into_result(),
        }
    }

    /// The execution mode of an active tool; unknown tools count as
    /// parallel (they fail at once without running).
    pub fn execution_mode(&self, name: &str) -> ExecutionMode {
        self.spec(name)
            .map_or(ExecutionMode::Parallel, |s| s.execution_mode)
    }
}

/// `details` of a call to a tool that is not available.
#[derive(Debug, Serialize)]
struct UnavailableDetails<'a> {
    available_tools: Vec<&'a str>,
}

fn merge_notes(details: &mut Value, notes: &Normalization) {
    if notes.is_empty() {
        return;
    }
    if !details.is_object() {
        *details = serde_json::json!({});
    }
    if let (Value::Object(map), Ok(Value::Object(extra))) = (details, serde_json::to_value(notes)) {
        map.extend(extra);
    }
}

/// A validated call, ready to run.
pub struct PreparedCall {
    id: String,
    name: Cow<'static, str>,
    mode: ExecutionMode,
    tool: Arc<dyn AnyTool>,
    args: ErasedArgs,
    ticket: Option<Ticket>,
    notes: Normalization,
    workspace: Workspace,
    limits: Limits,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PreparedCall {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's execution mode.
    pub fn execution_mode(&self) -> ExecutionMode {
        self.mode
    }

    /// The id of the call.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Runs the call to its one result, which carries the call's id.
    ///
    /// The tool runs on a task of its own, so a panic in it becomes an
    /// error result (with [`ToolResult::internal_error`] set). A call that
    /// mutates a file first waits for the calls prepared before it that
    /// mutate the same file. Each execution is independent: a
    /// [`ExecutionMode::Sequential`] tool is kept apart from other calls
    /// only by [`Registry::run_batch`](super::Registry::run_batch).
    ///
    /// Outside a Tokio runtime it does not panic but answers with an
    /// internal error; a tool that needs the runtime's IO or time driver
    /// where it is disabled answers with one that says so (see [the runtime
    /// contract](super#the-runtime)).
    pub async fn execute(self, cancel: CancellationToken, updates: UpdateSink) -> ToolResult {
        let id = self.id.clone();
        self.execute_inner(cancel, updates).await.with_call_id(id)
    }

    async fn execute_inner(self, cancel: CancellationToken, updates: UpdateSink) -> ToolResult {
        let Self {
            id,
            name,
            tool,
            args,
            ticket,
            notes,
            workspace,
            limits,
            ..
        } = self;
        if cancel.is_cancelled() {
            return ToolResult::from(ToolError::cancelled());
        }
        let ctx = ToolContext {
            call_id: id,
            workspace,
            limits,
            cancel: cancel.clone(),
            updates,
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return ToolResult::from(no_runtime(&format!("the {name} tool")));
        };
        let task = runtime.spawn(async move {
            let mut ticket = ticket;
            if let Some(ticket) = ticket.as_mut() {
                tokio::select! {
                    () = ticket.ready() => {}
                    () = cancel.cancelled() => return Err(ToolError::cancelled()),
                }
            }
            let result = tool.execute(args, ctx).await;
            drop(ticket);
            result
        });
        // If the caller stops waiting (a scenario timeout), the tool stops
        // too; aborting a finished task does nothing.
        let _guard = AbortOnDrop::from(&task);
        let outcome = task.await;
        let mut result = match outcome {
            Ok(Ok(output)) => ToolResult::ok(output),
            Ok(Err(err)) => ToolResult::from(err),
            Err(err) if err.is_panic() => {
                let message = crate::base::panics::message(&*err.into_panic());
                ToolResult::from(ToolError::fatal(
                    driver_missing(&message)
                        .unwrap_or_else(|| format!("the tool panicked: {message}")),
                ))
            }
            Err(_) => ToolResult::from(ToolError::cancelled()),
        };
        if !notes.is_empty() {
            let details = result.details.get_or_insert_with(|| serde_json::json!({}));
            merge_notes(details, &notes);
            if let Some(facts) = result.facts.as_mut() {
                facts.normalised = true;
            }
        }
        result
    }
}

/// The words for a tool that panicked because the runtime lacks a
/// driver it needs (Tokio's own panic messages name it).
fn driver_missing(panic: &str) -> Option<String> {
    let driver = if panic.contains("IO is disabled") {
        "IO"
    } else if panic.contains("timers are disabled") {
        "time"
    } else {
        return None;
    };
    Some(format!(
        "the tool needs the Tokio runtime's {driver} driver, which this runtime was built \
         without; build the runtime with enable_all() (or enable_io() and enable_time())"
    ))
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
