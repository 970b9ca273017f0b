//! What loading makes of a scenario document: a [`Scenario`], ready to
//! run (its workspace plan, script, checks and conditions).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::agent::FauxScript;
use crate::scenario::expect::CallCheck;
use crate::scenario::expect::RunCheck;
use crate::scenario::replay::ReplayPlan;
use crate::scenario::setup::Conditions;
use crate::scenario::template::Template;
use crate::tools::Limits;

/// What the temporary workspace is built from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkspacePlan {
    /// A fixture directory to copy first.
    pub fixture: Option<PathBuf>,
    /// Files to create, by relative path.
    pub files: Vec<(String, FileContent)>,
    /// Run `git init`.
    pub git: bool,
    /// Check out this repository at this revision first (`git_checkout`).
    pub git_checkout: Option<GitCheckout>,
}

/// A repository checked out at a revision into the workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitCheckout {
    /// The repository's directory.
    pub repo: PathBuf,
    /// The revision.
    pub rev: String,
}

/// One file to create.
#[derive(Clone, Debug, PartialEq)]
pub enum FileContent {
    /// Bytes (BOM already added), with an optional mode.
    Bytes {
        /// The bytes.
        data: Vec<u8>,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A `repeat:` file, made only when the workspace is built (a suite
    /// of large generated files never holds them all in memory).
    Generated {
        /// A UTF-8 byte-order mark before the copies.
        bom: bool,
        /// The parsed template.
        template: Template,
        /// How many copies.
        times: usize,
        /// Written between two copies.
        join: String,
        /// Permission bits.
        mode: Option<u32>,
    },
    /// A symlink.
    Symlink(String),
    /// An empty directory, with an optional mode.
    Dir(Option<u32>),
}

impl FileContent {
    /// The bytes of a file (`None` for a symlink or a directory), made now
    /// for a generated one.
    pub fn bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
        match self {
            Self::Bytes { data, .. } => Some(std::borrow::Cow::Borrowed(data)),
            Self::Generated {
                bom,
                template,
                times,
                join,
                ..
            } => {
                let mut text = String::new();
                if *bom {
                    text.push('\u{feff}');
                }
                template.render_into(&mut text, *times, join);
                Some(std::borrow::Cow::Owned(text.into_bytes()))
            }
            Self::Symlink(_) | Self::Dir(_) => None,
        }
    }
}

/// How a scenario reaches one MCP server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerLaunch {
    /// Start this program (`argv[0]`, looked up on `PATH`) with these
    /// arguments; `${dir}` is expanded, `${workspace}` and `${harness}`
    /// are expanded when the scenario runs.
    Command {
        /// The program and its arguments.
        argv: Vec<String>,
        /// Variables added to its minimal environment.
        env: Vec<(String, String)>,
    },
    /// A running server, over Streamable HTTP.
    Url {
        /// Its endpoint.
        url: String,
        /// Sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// One MCP server as a scenario uses it (`servers:`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerPlan {
    /// Its name.
    pub name: String,
    /// How to reach it.
    pub launch: ServerLaunch,
    /// How long it may take to answer `initialize` and `tools/list`.
    pub startup_timeout: Duration,
    /// How long one call may take (`None`: the scenario's budget).
    pub call_timeout: Option<Duration>,
    /// Prepended to each of its tool names.
    pub prefix: String,
    /// `share: run`: one process per worker, reused across scenarios.
    pub share: bool,
    /// The directory of the file that declares it (`${dir}`; the working
    /// directory of a shared server).
    pub dir: PathBuf,
}

/// One entry of `tools`, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolEntry {
    /// A built-in tool.
    Builtin(String),
    /// Every tool of a server, in its `tools/list` order.
    Server(String),
    /// One tool of a server, by its name there.
    ServerTool {
        /// The server.
        server: String,
        /// The tool's name on the server (without the prefix).
        tool: String,
    },
}

/// A scripted call whose name only a whole server's tools can hold: it is
/// checked against their `tools/list` when the scenario starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenCall {
    /// The call's id.
    pub id: String,
    /// Where it is (`step 2 (read_text_file)`).
    pub label: String,
    /// The name called.
    pub name: String,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique name.
    pub name: String,
    /// The file it came from.
    pub file: PathBuf,
    /// Which document of the file (0-based).
    pub document: usize,
    /// Whether the file holds other scenarios too.
    pub in_multi_document_file: bool,
    /// Where the name is written (the document's start when the name
    /// comes from the file's).
    pub name_at: crate::scenario::yaml::Pos,
    /// Free text.
    pub description: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
    /// Active built-in tool names, in order.
    pub tools: Vec<String>,
    /// Every entry of `tools` in order: built-in tools, servers and
    /// server tools.
    pub tool_entries: Vec<ToolEntry>,
    /// The MCP servers the scenario uses, in the order `tools` first
    /// names them.
    pub servers: Vec<ServerPlan>,
    /// Calls to names no built-in tool has, checked when it starts.
    pub open_calls: Vec<OpenCall>,
    /// Limits in force.
    pub limits: Limits,
    /// Confinement.
    pub confine: bool,
    /// The system prompt text before the tool section.
    pub system: String,
    /// What the workspace holds.
    pub workspace: WorkspacePlan,
    /// The faux model's script.
    pub script: FauxScript,
    /// Checks by call id.
    pub call_checks: BTreeMap<String, Box<CallCheck>>,
    /// Labels by call id (every scripted call, checked or not).
    pub call_labels: BTreeMap<String, String>,
    /// Run checks.
    pub run_check: RunCheck,
    /// Why it is skipped.
    pub skip: Option<String>,
    /// The snapshot file beside the scenario.
    pub snapshot_file: PathBuf,
    /// Snapshot key prefix (files with several scenarios).
    pub snapshot_prefix: Option<String>,
    /// Time budget.
    pub timeout: Duration,
    /// The suite's tokenizer, if set.
    pub tokenizer: Option<String>,
    /// For an imported session: the recorded results to compare with.
    pub replay: Option<ReplayPlan>,
    /// The conditions it runs under: faults, bash, cancellations.
    pub conditions: Conditions,
    /// Turns the model may take before the loop stops it (`None`: no
    /// limit).
    pub max_turns: Option<usize>,
}
