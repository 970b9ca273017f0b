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
pub(crate) struct WorkspacePlan {
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
pub(crate) struct GitCheckout {
    /// The repository's directory.
    pub repo: PathBuf,
    /// The revision.
    pub rev: String,
}

/// One file to create.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FileContent {
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
    pub(crate) fn bytes(&self) -> Option<std::borrow::Cow<'_, [u8]>> {
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
pub(crate) enum ServerLaunch {
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
pub(crate) struct ServerPlan {
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
    /// OAuth client credentials (`auth:`), their `${env:NAME}` expanded
    /// when it is reached.
    pub auth: Option<crate::mcp::client::ClientCredentials>,
}

/// One entry of `tools`, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToolEntry {
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
pub(crate) struct OpenCall {
    /// The call's id.
    pub id: String,
    /// Where it is (`step 2 (read_text_file)`).
    pub label: String,
    /// The name called.
    pub name: String,
}

/// What the scenario answers to its servers' requests (`None`: not
/// declared, so not advertised).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClientPlan {
    /// The texts of `sampling:`, in order.
    pub sampling: Option<Vec<String>>,
    /// `elicitation:`, in order.
    pub elicitation: Option<Vec<crate::mcp::client::Elicitation>>,
    /// `roots:`, workspace-relative (`.` for the workspace itself).
    pub roots: Option<Vec<String>>,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Unique name.
    pub(crate) name: String,
    /// The file it came from.
    pub(crate) file: PathBuf,
    /// Which document of the file (0-based).
    pub(crate) document: usize,
    /// Whether the file holds other scenarios too.
    pub(crate) in_multi_document_file: bool,
    /// Where the name is written (the document's start when the name
    /// comes from the file's).
    pub(crate) name_at: crate::scenario::yaml::Pos,
    /// Free text.
    pub(crate) description: Option<String>,
    /// Tags.
    pub(crate) tags: Vec<String>,
    /// Every entry of `tools` in order: built-in tools, servers and
    /// server tools.
    pub(crate) tool_entries: Vec<ToolEntry>,
    /// The MCP servers the scenario uses, in the order `tools` first
    /// names them.
    pub(crate) servers: Vec<ServerPlan>,
    /// Calls to names no built-in tool has, checked when it starts.
    pub(crate) open_calls: Vec<OpenCall>,
    /// Limits in force.
    pub(crate) limits: Limits,
    /// Confinement.
    pub(crate) confine: bool,
    /// The system prompt text before the tool section.
    pub(crate) system: String,
    /// What the workspace holds.
    pub(crate) workspace: WorkspacePlan,
    /// The faux model's script.
    pub(crate) script: FauxScript,
    /// Checks by call id.
    pub(crate) call_checks: BTreeMap<String, Box<CallCheck>>,
    /// Labels by call id (every scripted call, checked or not).
    pub(crate) call_labels: BTreeMap<String, String>,
    /// Run checks.
    pub(crate) run_check: RunCheck,
    /// Why it is skipped.
    pub(crate) skip: Option<String>,
    /// The snapshot file beside the scenario.
    pub(crate) snapshot_file: PathBuf,
    /// Snapshot key prefix (files with several scenarios).
    pub(crate) snapshot_prefix: Option<String>,
    /// Time budget.
    pub(crate) timeout: Duration,
    /// For an imported session: the recorded results to compare with.
    pub(crate) replay: Option<ReplayPlan>,
    /// The conditions it runs under: faults, bash, cancellations.
    pub(crate) conditions: Conditions,
    /// Turns the model may take before the loop stops it (`None`: no
    /// limit).
    pub(crate) max_turns: Option<usize>,
    /// The real agent the script is served to (`agent:`, its own or its
    /// suite's; `harness run --agent` sets it), `None` for harness's own
    /// loop.
    pub(crate) agent: Option<String>,
    /// The suite's `agents:`, by name.
    pub(crate) agents: std::sync::Arc<BTreeMap<String, crate::scenario::agent::AgentDef>>,
    /// `prompt:`, the task given to the model.
    pub(crate) prompt: Option<String>,
    /// The sandbox its programs run in (`sandbox:`, its own or its suite
    /// file's).
    pub(crate) sandbox: SandboxPlan,
    /// What it answers to its servers' requests (`sampling:`,
    /// `elicitation:`, `roots:`).
    pub(crate) client: ClientPlan,
}

impl Scenario {
    /// Its name, unique in its suite.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it came from.
    pub fn file(&self) -> &std::path::Path {
        &self.file
    }

    /// Its tags.
    pub fn tags(&self) -> &[String] {
        &self.tags
    }

    /// Its `description`, if it has one.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The real agent it is served to, if any.
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// The task given to the model: `prompt:`, else the description,
    /// else the name.
    pub(crate) fn task(&self) -> &str {
        self.prompt
            .as_deref()
            .or(self.description.as_deref())
            .unwrap_or(&self.name)
    }

    /// The scenario in a run of `agent` (`harness run --agent`): served to
    /// it, unless its script was written for another agent (it names that
    /// agent's tools), which skips it with the reason.
    pub(crate) fn serve_to(&mut self, agent: &str) {
        match &self.agent {
            Some(own) if own != agent => {
                if self.skip.is_none() {
                    self.skip = Some(format!(
                        "written for the agent `{own}` (its script names that agent's tools), \
                         not for `{agent}`"
                    ));
                }
            }
            _ => self.agent = Some(agent.to_owned()),
        }
    }
}

/// The sandbox a scenario's programs run in, as its file (or its suite
/// file) asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SandboxPlan {
    /// `sandbox: off`, written in the scenario (`false`) or in its suite
    /// file (`true`).
    Off {
        /// The suite file turned it off.
        by_suite: bool,
    },
    /// Sandboxed.
    On {
        /// Let programs reach the network.
        network: bool,
        /// More writable paths (absolute, existing, real paths).
        write: Vec<PathBuf>,
    },
}

impl Default for SandboxPlan {
    /// Sandboxed, no network, no more writable paths.
    fn default() -> Self {
        Self::On {
            network: false,
            write: Vec::new(),
        }
    }
}
