//! The serde types of the scenario format (docs/scenarios.md), exactly as users
//! write them. Every struct denies unknown keys; values that may be written
//! two ways (a string or an object, one item or a list) have hand-written
//! deserialisers, so errors say what was expected instead of "did not match
//! any variant". The JSON Schema that `harness schema` prints is generated
//! from these same types.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use schemars::Schema;
use schemars::json_schema;
use serde::Deserialize;
use serde::de;
use serde::de::value::MapAccessDeserializer;
use serde::de::value::SeqAccessDeserializer;
use serde_json::Value;

use crate::tools::Limits;

use super::detail_spec::DetailCheck;
use super::detail_spec::ImageExpect;
use super::detail_spec::ImagesExpect;
use super::detail_spec::json_pointer;
use super::replay::GitCheckoutSpec;
use super::replay::RecordedSpec;
use super::replay::ReplaySpec;
use super::replay::SuiteReplaySpec;
use super::two_way::StringList;
use super::two_way::schema;
use super::two_way::two_way;

/// One scenario document.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScenarioDoc {
    /// One line, unique in the suite (default: the file's path without
    /// extension).
    pub name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Words for `--tag`.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Active tools: a preset (`coding`, `readonly`, `all`) or a list of
    /// names (default `all`): built-in tools, MCP servers (all their
    /// tools) and `SERVER/TOOL`.
    pub tools: Option<ToolsSpec>,
    /// MCP tool servers by name (docs/scenarios.md, "MCP servers"); they
    /// add to and replace those of harness.yaml.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerSpec>,
    /// Overrides of the tool limits.
    pub limits: Option<LimitsSpec>,
    /// Refuse paths outside the workspace (default true).
    pub confine: Option<bool>,
    /// The system prompt text before the tool section.
    pub system: Option<String>,
    /// What the temporary workspace holds.
    #[serde(default)]
    pub workspace: WorkspaceSpec,
    /// The faux model's script (at least one step).
    #[schemars(length(min = 1))]
    pub model: Vec<StepSpec>,
    /// Checks on the whole run.
    #[serde(default)]
    pub expect: RunExpect,
    /// A reason; the scenario is listed as skipped.
    pub skip: Option<String>,
    /// An imported session's settings (docs/replay.md).
    pub replay: Option<ReplaySpec>,
    /// Operations that fail, stall or stop part way (injected faults).
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// How bash runs its commands.
    pub bash: Option<BashSpec>,
    /// Turns the model may take before the loop stops it (default: no
    /// limit: a scripted model ends with its script, and the time budget
    /// bounds the run); overrides the suite's.
    #[schemars(range(min = 1, max = 1000000000))]
    pub max_turns: Option<usize>,
    /// The real coding agent the script is served to (`pi`,
    /// `claude-code`, `codex`, `gemini-cli`, or one of harness.yaml's
    /// `agents`), in place of harness's own loop (docs/agents.md).
    pub agent: Option<String>,
    /// The task given to the model (default: the description, else the
    /// name).
    pub prompt: Option<String>,
    /// The sandbox its programs run in (default: writes in the workspace
    /// and a private TMPDIR, no network); replaces the suite's whole.
    pub sandbox: Option<super::sandbox::SandboxSpec>,
    /// Replies to the servers' `sampling/createMessage`, in order
    /// (declared: the client advertises sampling).
    pub sampling: Option<Vec<super::client::SamplingSpec>>,
    /// Replies to the servers' `elicitation/create`, in order (declared:
    /// the client advertises elicitation).
    pub elicitation: Option<Vec<super::client::ElicitationSpec>>,
    /// The roots the client gives its servers: paths inside the
    /// workspace (`[]`: the workspace itself; declared: the client
    /// advertises roots).
    pub roots: Option<Vec<String>>,
}

/// The suite file, `harness.yaml`: defaults for every scenario below it.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuiteDoc {
    /// Where fixtures live, relative to this file (default `fixtures/`).
    pub fixtures: Option<String>,
    /// Default active tools.
    pub tools: Option<ToolsSpec>,
    /// MCP tool servers every scenario below may use.
    #[serde(default)]
    pub servers: BTreeMap<String, ServerSpec>,
    /// Default limit overrides.
    pub limits: Option<LimitsSpec>,
    /// Tokenizer for token figures (`o200k`, `cl100k`, `chars4`).
    pub tokenizer: Option<String>,
    /// Scenarios run at once (default: the number of cores).
    #[schemars(range(min = 1, max = 1024))]
    pub jobs: Option<usize>,
    /// Seconds a scenario may run before it fails (default 60, at most a
    /// day).
    #[schemars(range(max = crate::base::bounds::ONE_DAY_SECS), extend("exclusiveMinimum" = 0))]
    pub timeout: Option<f64>,
    /// Regression gates against a baseline, e.g. `tokens: "+5%"`.
    pub gates: Option<BTreeMap<String, String>>,
    /// Bytes of inline workspace files one scenario may generate (default
    /// 256 MiB, at most 4 GiB).
    #[schemars(range(min = 1, max = 4294967296u64))]
    pub max_generated_bytes: Option<u64>,
    /// Defaults for imported scenarios (docs/replay.md).
    pub replay: Option<SuiteReplaySpec>,
    /// Turns the model of each scenario may take before the loop stops it
    /// (default: no limit).
    #[schemars(range(min = 1, max = 1000000000))]
    pub max_turns: Option<usize>,
    /// The system prompt of scenarios that set no `system` of their own.
    pub system: Option<String>,
    /// How bash runs commands in scenarios that set no `bash` of their
    /// own (a scenario's `bash` replaces it whole).
    pub bash: Option<BashSpec>,
    /// The agent of scenarios that name none of their own.
    pub agent: Option<String>,
    /// Agents by name: a built-in's command or environment overridden,
    /// or an agent of its own (docs/agents.md).
    #[serde(default)]
    pub agents: BTreeMap<String, super::agent::AgentSpec>,
    /// The sandbox of scenarios that set no `sandbox` of their own.
    pub sandbox: Option<super::sandbox::SandboxSpec>,
}

/// Declares [`LimitsSpec`] from the one list of the tool limits a file may
/// set: each key's doc (the schema's description), its schema range, its
/// type and the kind of number it is. The list gives the struct's fields,
/// [`LimitsSpec::values`] (how the loader checks each) and
/// [`LimitsSpec::apply`] (how each is set over [`Limits`], checked against
/// its fields by the compiler).
macro_rules! limits_spec {
    ($(
        $(#[doc = $doc:literal])*
        #[schemars($($schema:tt)*)]
        $name:ident: $ty:ty => $kind:ident,
    )*) => {
        /// Overrides of the tool limits.
        #[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct LimitsSpec {
            $(
                $(#[doc = $doc])*
                #[schemars($($schema)*)]
                pub(crate) $name: Option<$ty>,
            )*
        }

        impl LimitsSpec {
            /// The keys this spec sets, in the order declared, each with its
            /// value as the kind of number it is.
            pub(crate) fn values(&self) -> Vec<(&'static str, LimitValue)> {
                let mut values = Vec::new();
                $(
                    if let Some(value) = self.$name {
                        values.push((stringify!($name), LimitValue::$kind(value)));
                    }
                )*
                values
            }

            /// `limits` with every key this spec sets over it.
            pub(crate) fn apply(&self, limits: &mut Limits) {
                $(
                    if let Some(value) = self.$name {
                        limits.$name = value.into();
                    }
                )*
            }

            /// Every key a file may set, in the order declared.
            #[cfg(test)]
            pub(crate) const KEYS: &[&str] = &[$(stringify!($name)),*];
        }
    };
}

/// The value of one key of `limits:`, as the kind of number it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum LimitValue {
    /// A count or a size: 1 to `u32::MAX`.
    Count(usize),
    /// Seconds: more than 0, at most a day.
    Seconds(f64),
    /// Bytes of a log: 0 to 4 GiB.
    LogBytes(u64),
}

limits_spec! {
    /// Lines kept by read and bash.
    #[schemars(range(min = 1, max = 4294967295u64))]
    max_lines: usize => Count,
    /// Bytes kept by every tool.
    #[schemars(range(min = 1, max = 4294967295u64))]
    max_bytes: usize => Count,
    /// Characters after which a grep line is cut.
    #[schemars(range(min = 1, max = 4294967295u64))]
    grep_max_line: usize => Count,
    /// Default grep limit.
    #[schemars(range(min = 1, max = 4294967295u64))]
    grep_limit: usize => Count,
    /// Default find limit.
    #[schemars(range(min = 1, max = 4294967295u64))]
    find_limit: usize => Count,
    /// Default ls limit.
    #[schemars(range(min = 1, max = 4294967295u64))]
    ls_limit: usize => Count,
    /// Default bash timeout in seconds (at most a day).
    #[schemars(range(max = crate::base::bounds::ONE_DAY_SECS), extend("exclusiveMinimum" = 0))]
    bash_timeout: f64 => Seconds,
    /// Bytes kept in a bash full-output file (0: keep no file; at most 4 GiB).
    #[schemars(range(min = 0, max = 4294967296u64))]
    max_log_bytes: u64 => LogBytes,
    /// Seconds one grep call may search before it stops (at most a day).
    #[schemars(range(max = crate::base::bounds::ONE_DAY_SECS), extend("exclusiveMinimum" = 0))]
    grep_timeout: f64 => Seconds,
}

/// What the workspace holds.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkspaceSpec {
    /// A directory under the fixtures root copied into the workspace.
    pub fixture: Option<String>,
    /// Files by relative path (inside the workspace, no `..`).
    #[serde(default)]
    #[schemars(extend("propertyNames" = inside_workspace()))]
    pub files: BTreeMap<String, FileSpec>,
    /// Run `git init` so that `.gitignore` rules apply as in a repository.
    #[serde(default)]
    pub git: bool,
    /// A checkout of a local repository at a revision (instead of a
    /// fixture; `files` are written over it).
    pub git_checkout: Option<GitCheckoutSpec>,
}

/// One step of the script: exactly one of `call`, `parallel`, `say`, the
/// check steps and `fuzz`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = step_rules)]
pub(crate) struct StepSpec {
    /// A message with one call to this tool.
    pub call: Option<String>,
    /// A message with several calls (at least one).
    #[schemars(length(min = 1))]
    pub parallel: Option<Vec<CallSpec>>,
    /// A plain text message; the run ends after it.
    pub say: Option<String>,
    /// Check this MCP server's `resources/list` (every page).
    pub list_resources: Option<String>,
    /// Check the `resources/read` of this URI (with `server`).
    pub read_resource: Option<String>,
    /// The server of `read_resource`.
    pub server: Option<String>,
    /// Check this MCP server's `prompts/list` (every page).
    pub list_prompts: Option<String>,
    /// Check a server's `prompts/get`.
    pub get_prompt: Option<super::client::GetPromptSpec>,
    /// Fuzz a server's tools with adversarial calls (as `harness fuzz`).
    pub fuzz: Option<super::client::FuzzSpec>,
    /// The call id (default `call_<step>_<index>`).
    pub id: Option<String>,
    /// The arguments, exactly as written (after `${var}` substitution).
    pub args: Option<Value>,
    /// Literal argument text instead of `args`.
    pub raw_args: Option<String>,
    /// Checks on this call's result.
    pub expect: Option<CallExpect>,
    /// `NAME: REGEX` captures from the result text.
    pub capture: Option<BTreeMap<String, String>>,
    /// Calls sent next only if this call's result is an error.
    pub retry: Option<CallList>,
    /// The result recorded for this call in a replayed session.
    pub recorded: Option<RecordedSpec>,
    /// Cancel the run this many milliseconds after the call starts, as a
    /// user's Esc would; the run ends there.
    #[schemars(range(min = 1, max = crate::base::bounds::ONE_DAY_MS))]
    pub cancel_after_ms: Option<u64>,
}

/// One call (inside `parallel` or `retry`).
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = args_or_raw_args)]
pub(crate) struct CallSpec {
    /// The tool.
    pub call: String,
    /// The call id.
    pub id: Option<String>,
    /// The arguments.
    pub args: Option<Value>,
    /// Literal argument text instead of `args`.
    pub raw_args: Option<String>,
    /// Checks on this call's result.
    pub expect: Option<CallExpect>,
    /// Captures from the result text.
    pub capture: Option<BTreeMap<String, String>>,
    /// Calls sent next only if this call's result is an error.
    pub retry: Option<CallList>,
    /// The result recorded for this call in a replayed session.
    pub recorded: Option<RecordedSpec>,
    /// Cancel the run this many milliseconds after the call starts.
    #[schemars(range(min = 1, max = crate::base::bounds::ONE_DAY_MS))]
    pub cancel_after_ms: Option<u64>,
}

/// Checks on one call's result.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = call_expect_rules)]
pub(crate) struct CallExpect {
    /// The result is not an error.
    pub ok: Option<bool>,
    /// The result is an error (and its text matches the regex).
    pub error: Option<ErrorExpect>,
    /// The text contains each string.
    pub contains: Option<StringList>,
    /// The text contains none of the strings.
    pub not_contains: Option<StringList>,
    /// The text matches the regex.
    pub matches: Option<String>,
    /// The text equals this exactly.
    pub equals: Option<String>,
    /// The text has exactly this many lines.
    pub lines: Option<usize>,
    /// The truncation the tool reported: false, true, lines or bytes.
    pub truncated: Option<TruncatedExpect>,
    /// A JSON subset of the result's details.
    pub details: Option<Value>,
    /// The content holds an image block (`true`/`false`), or holds one and
    /// every image block passes these checks.
    pub image: Option<ImageExpect>,
    /// Partial updates streamed while it ran.
    pub updates: Option<UpdatesExpect>,
    /// The result text costs at most this many tokens.
    pub max_tokens: Option<u64>,
    /// The result equals the stored snapshot.
    pub snapshot: Option<bool>,
    /// Checks on values inside `details`, by JSON pointer (RFC 6901).
    #[schemars(extend("propertyNames" = json_pointer()))]
    pub details_at: Option<BTreeMap<String, DetailCheck>>,
    /// The number of image blocks, or checks on each of them in order.
    pub images: Option<ImagesExpect>,
    /// The run's cancellation reached the call (true) or not (false).
    pub cancelled: Option<bool>,
}

/// `updates: { min, max, contains, last_contains }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdatesExpect {
    /// At least this many updates.
    pub min: Option<usize>,
    /// At most this many updates.
    pub max: Option<usize>,
    /// Some update's text contains each string.
    pub contains: Option<StringList>,
    /// The last update's text contains each string.
    pub last_contains: Option<StringList>,
}

/// Checks on the whole run.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunExpect {
    /// Checks on workspace files after the run, by relative path (inside
    /// the workspace, no `..`).
    #[serde(default)]
    #[schemars(extend("propertyNames" = inside_workspace()))]
    pub files: BTreeMap<String, Box<FileExpect>>,
    /// The tool names in the order the calls were sent, retries included.
    pub order: Option<Vec<String>>,
    /// Bounds on the run's statistics.
    pub stats: Option<StatsExpect>,
}

/// Bounds on a run's statistics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatsExpect {
    /// Exactly this many retries sent.
    pub retries: Option<u64>,
    /// Exactly this many error results.
    pub errors: Option<u64>,
    /// Exactly this many assistant messages.
    pub turns: Option<u64>,
    /// At most this many retries.
    pub max_retries: Option<u64>,
    /// At most this many error results.
    pub max_errors: Option<u64>,
    /// At most this many result tokens in total.
    pub max_result_tokens: Option<u64>,
    /// At most this many input tokens in total.
    pub max_input_tokens: Option<u64>,
    /// At most this many output tokens in total.
    pub max_output_tokens: Option<u64>,
}

/// Checks on one file: exact content, or an object of checks.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FileExpect {
    /// The file's exact content.
    Equals(String),
    /// Individual checks.
    Checks(FileChecks),
}

/// The object form of [`FileExpect`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileChecks {
    /// Exact content.
    pub equals: Option<String>,
    /// Contains each string.
    pub contains: Option<StringList>,
    /// Contains none of the strings.
    pub not_contains: Option<StringList>,
    /// Matches the regex.
    pub matches: Option<String>,
    /// The file does not exist.
    pub absent: Option<bool>,
    /// The file exists.
    pub exists: Option<bool>,
    /// The file starts (or does not start) with a UTF-8 BOM.
    pub bom: Option<bool>,
    /// The file's line endings.
    pub eol: Option<Eol>,
    /// The file's permission bits, e.g. `"644"`.
    #[schemars(regex(pattern = r"^[0-7]{1,4}$"))]
    pub mode: Option<String>,
    /// The file's exact bytes, base64-encoded (whitespace ignored).
    pub bytes_base64: Option<String>,
    /// The SHA-256 of the file's exact bytes, 64 hex digits.
    #[schemars(regex(pattern = r"^[0-9a-fA-F]{64}$"))]
    pub sha256: Option<String>,
    /// The path is a symlink whose target is exactly this text.
    pub symlink: Option<String>,
}

/// Line endings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Eol {
    /// `\n` only.
    Lf,
    /// `\r\n` only.
    Crlf,
}

/// A workspace file: a UTF-8 string, or an object with exactly one of
/// `text`, `base64`, `repeat` (+ `times`), `symlink`, `dir: true`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FileSpec {
    /// Plain UTF-8 text.
    Text(String),
    /// The object form.
    Object(FileObject),
}

/// The object form of [`FileSpec`].
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = file_object_rules)]
pub(crate) struct FileObject {
    /// Exact text.
    pub text: Option<String>,
    /// Bytes, base64-encoded.
    pub base64: Option<String>,
    /// A template repeated `times` times; `{n}` counts from 1, `{n:05}`
    /// is the same number zero-padded to 5 digits.
    pub repeat: Option<String>,
    /// How often `repeat` is repeated.
    pub times: Option<usize>,
    /// A symlink to this target.
    pub symlink: Option<String>,
    /// An empty directory.
    pub dir: Option<bool>,
    /// Prefix a UTF-8 BOM.
    pub bom: Option<bool>,
    /// Permission bits up to `"777"`, e.g. `"755"`.
    #[schemars(regex(pattern = r"^0?[0-7]{1,3}$"))]
    pub mode: Option<String>,
    /// With `repeat`: written between the copies (not after the last).
    pub join: Option<String>,
}

/// `error: true` or `error: REGEX`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ErrorExpect {
    /// Whether the result must be an error.
    Flag(bool),
    /// The result is an error and its text matches.
    Matches(String),
}

/// `truncated: false | true | lines | bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TruncatedExpect {
    /// Truncated or not.
    Flag(bool),
    /// Truncated by the line cap.
    Lines,
    /// Truncated by the byte cap.
    Bytes,
}

/// One MCP tool server: a command to start, or a URL to reach.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerSpec {
    /// The program and its arguments (`${workspace}`, `${dir}`,
    /// `${harness}` are expanded); the program is looked up on `PATH`.
    #[schemars(length(min = 1))]
    pub command: Option<Vec<String>>,
    /// Instead of `command`: `http://HOST:PORT/PATH` of a running server,
    /// reached over Streamable HTTP.
    pub url: Option<String>,
    /// HTTP headers sent with every request (with `url`).
    pub headers: Option<BTreeMap<String, String>>,
    /// Variables added to the server's minimal environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Seconds to start and answer `tools/list` (default 10).
    #[schemars(range(max = crate::base::bounds::ONE_DAY_SECS), extend("exclusiveMinimum" = 0))]
    pub startup_timeout: Option<f64>,
    /// Seconds one call may take (default: the scenario's budget).
    #[schemars(range(max = crate::base::bounds::ONE_DAY_SECS), extend("exclusiveMinimum" = 0))]
    pub call_timeout: Option<f64>,
    /// Prepended to every tool name of this server.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_.-]*$"))]
    pub prefix: Option<String>,
    /// `run`: one process per worker, reused across scenarios (for a
    /// server that keeps no state between calls); `scenario` (the
    /// default): one process per scenario.
    #[schemars(extend("enum" = ["run", "scenario"]))]
    pub share: Option<String>,
    /// OAuth client credentials (with `url`): a token is got from the
    /// authorization server the server names, before `initialize`.
    pub auth: Option<super::client::AuthSpec>,
}

/// Active tools: a preset name or a list of names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToolsSpec {
    /// `coding`, `readonly` or `all`.
    Preset(String),
    /// Tool names.
    List(Vec<String>),
}

/// One call or a list of calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallList(pub Vec<CallSpec>);

/// One injected fault: which operations, and what happens to them.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = fault_rules)]
pub(crate) struct FaultSpec {
    /// The operation: read, write, create, rename, remove, list,
    /// metadata, exec.
    #[schemars(extend("enum" = ["read", "write", "create", "rename", "remove", "list", "metadata", "exec"]))]
    pub op: String,
    /// A glob of paths relative to the workspace (`*` stays in one
    /// directory, `**` crosses them); default: every path.
    pub path: Option<String>,
    /// An error name (EACCES, ENOENT, ENOSPC, EIO, EROFS, EISDIR, …) or
    /// any message.
    pub error: Option<String>,
    /// Stall this long before the operation (at most 600000).
    #[schemars(range(max = 600000))]
    pub delay_ms: Option<u64>,
    /// read, create and write: the stream stops with the error after this
    /// many bytes.
    #[schemars(range(max = 4294967296u64))]
    pub after_bytes: Option<u64>,
    /// Only the first this many matching operations (default: all).
    #[schemars(range(min = 1, max = 1000000000))]
    pub times: Option<u64>,
}

/// How bash runs its commands in a scenario.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BashSpec {
    /// Environment variables set for every command.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Text run before every command (`PREFIX` newline `COMMAND`).
    pub command_prefix: Option<String>,
    /// The absolute path of the shell to run commands with.
    pub shell: Option<String>,
    /// The working directory, relative to the workspace (no `..`).
    #[schemars(extend("not" = {"pattern": r"^$|^/|(^|/)\.\.(/|$)"}))]
    pub cwd: Option<String>,
}

/// A fault does something: `error`, `delay_ms` or both.
fn fault_rules(schema: &mut Schema) {
    schema.insert(
        "anyOf".to_owned(),
        serde_json::json!([{"required": ["error"]}, {"required": ["delay_ms"]}]),
    );
}

// ---------------------------------------------------------------------------
// Deserialisers of the two-way values (see two_way.rs).

two_way!(
    FileSpec,
    "file text (a string) or an object with one of text, base64, repeat, symlink, dir",
    {
        fn visit_str<E: de::Error>(self, v: &str) -> Result<FileSpec, E> {
            Ok(FileSpec::Text(v.to_owned()))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<FileSpec, A::Error> {
            FileObject::deserialize(MapAccessDeserializer::new(map)).map(FileSpec::Object)
        }
    }
);

two_way!(
    FileExpect,
    "the exact file content (a string) or an object of checks",
    {
        fn visit_str<E: de::Error>(self, v: &str) -> Result<FileExpect, E> {
            Ok(FileExpect::Equals(v.to_owned()))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<FileExpect, A::Error> {
            FileChecks::deserialize(MapAccessDeserializer::new(map)).map(FileExpect::Checks)
        }
    }
);

two_way!(ErrorExpect, "true, false or a regex", {
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ErrorExpect, E> {
        Ok(ErrorExpect::Flag(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ErrorExpect, E> {
        Ok(ErrorExpect::Matches(v.to_owned()))
    }
});

two_way!(TruncatedExpect, "false, true, lines or bytes", {
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<TruncatedExpect, E> {
        Ok(TruncatedExpect::Flag(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<TruncatedExpect, E> {
        match v {
            "lines" => Ok(TruncatedExpect::Lines),
            "bytes" => Ok(TruncatedExpect::Bytes),
            "true" => Ok(TruncatedExpect::Flag(true)),
            "false" => Ok(TruncatedExpect::Flag(false)),
            other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
        }
    }
});

two_way!(
    ToolsSpec,
    "a preset (coding, readonly, all) or a list of tool names",
    {
        fn visit_str<E: de::Error>(self, v: &str) -> Result<ToolsSpec, E> {
            Ok(ToolsSpec::Preset(v.to_owned()))
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<ToolsSpec, A::Error> {
            Vec::<String>::deserialize(SeqAccessDeserializer::new(seq)).map(ToolsSpec::List)
        }
    }
);

two_way!(
    CallList,
    "a call (`call: TOOL`, `args: …`) or a list of calls",
    {
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<CallList, A::Error> {
            CallSpec::deserialize(MapAccessDeserializer::new(map)).map(|c| CallList(vec![c]))
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<CallList, A::Error> {
            Vec::<CallSpec>::deserialize(SeqAccessDeserializer::new(seq)).map(CallList)
        }
    }
);

// ---------------------------------------------------------------------------
// JSON Schemas of the two-way values, for `harness schema`.

schema!(FileSpec, |generator| {
    let object = generator.subschema_for::<FileObject>();
    json_schema!({
        "description": "File content as UTF-8 text, or an object with exactly one of text, base64, repeat (+ times), symlink, dir",
        "anyOf": [{"type": "string"}, object]
    })
});

schema!(FileExpect, |generator| {
    let checks = generator.subschema_for::<FileChecks>();
    json_schema!({
        "description": "The exact content, or an object of checks",
        "anyOf": [{"type": "string"}, checks]
    })
});

schema!(ErrorExpect, |_| json_schema!({
    "description": "true, false, or a regex the error text must match",
    "anyOf": [{"type": "boolean"}, {"type": "string"}]
}));

schema!(TruncatedExpect, |_| json_schema!({
    "anyOf": [{"type": "boolean"}, {"enum": ["lines", "bytes"]}]
}));

schema!(ToolsSpec, |_| {
    let names = crate::tools::ALL_TOOL_NAMES;
    json_schema!({
        "anyOf": [
            {"enum": ["coding", "readonly", "read-only", "all"]},
            {"type": "array", "items": {"anyOf": [
                {"enum": names},
                {"description": "an MCP server's name (all its tools) or SERVER/TOOL", "type": "string", "pattern": "^[A-Za-z0-9_-]+(/.+)?$"}
            ]}}
        ]
    })
});

schema!(CallList, |generator| {
    // A retry has no `retry` of its own.
    let mut call = generator.subschema_for::<CallSpec>();
    call.insert("properties".to_owned(), serde_json::json!({"retry": false}));
    json_schema!({
        "anyOf": [call.clone(), {"type": "array", "items": call}]
    })
});

// ---------------------------------------------------------------------------
// Rules of the loader that the JSON Schema states too.

/// A path inside the workspace: not empty, not absolute, no `..`.
fn inside_workspace() -> Value {
    serde_json::json!({"not": {"pattern": r"^$|^/|(^|/)\.\.(/|$)"}})
}

/// `args` and `raw_args` exclude each other.
fn args_or_raw_args(schema: &mut Schema) {
    schema.insert(
        "not".to_owned(),
        serde_json::json!({"required": ["args", "raw_args"]}),
    );
}

/// Exactly one of `call`, `parallel`, `say`; the call keys only with
/// `call`; `args` or `raw_args`.
fn step_rules(schema: &mut Schema) {
    args_or_raw_args(schema);
    let no_call_keys = serde_json::json!({
        "call": false, "id": false, "args": false, "raw_args": false,
        "expect": false, "capture": false, "retry": false, "recorded": false,
        "cancel_after_ms": false, "fuzz": false
    });
    schema.insert(
        "oneOf".to_owned(),
        serde_json::json!([
            {"required": ["call"], "properties": {"parallel": false, "say": false, "fuzz": false}},
            {"required": ["parallel"], "properties": no_call_keys, "not": {"required": ["say"]}},
            {"required": ["say"], "properties": no_call_keys, "not": {"required": ["parallel"]}},
            {"required": ["fuzz"], "properties": {
                "call": false, "parallel": false, "say": false, "server": false, "args": false,
                "raw_args": false, "retry": false, "recorded": false, "cancel_after_ms": false,
                "list_resources": false, "read_resource": false, "list_prompts": false,
                "get_prompt": false
            }}
        ]),
    );
}

/// `ok: true` contradicts an `error` that asks for an error.
fn call_expect_rules(schema: &mut Schema) {
    schema.insert(
        "not".to_owned(),
        serde_json::json!({
            "required": ["ok", "error"],
            "properties": {"ok": {"const": true}, "error": {"not": {"const": false}}}
        }),
    );
}

/// Exactly one content key; `times` with `repeat`; `bom` only with
/// content; no `mode` on a symlink.
fn file_object_rules(schema: &mut Schema) {
    let dir = serde_json::json!({"required": ["dir"], "properties": {"dir": {"const": true}}});
    schema.insert(
        "oneOf".to_owned(),
        serde_json::json!([
            {"required": ["text"]},
            {"required": ["base64"]},
            {"required": ["repeat"]},
            {"required": ["symlink"]},
            dir
        ]),
    );
    schema.insert(
        "dependentRequired".to_owned(),
        serde_json::json!({"times": ["repeat"], "repeat": ["times"], "join": ["repeat"]}),
    );
    schema.insert(
        "dependentSchemas".to_owned(),
        serde_json::json!({
            "bom": {"not": {"anyOf": [{"required": ["symlink"]}, dir]}},
            "symlink": {"not": {"required": ["mode"]}}
        }),
    );
}
