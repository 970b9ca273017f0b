//! What run.json says of a scenario served to a real agent: which agent,
//! how it ended, its last words, the requests it sent, and how far it was
//! sandboxed.

use serde::Deserialize;
use serde::Serialize;

/// A real agent's run of one scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub(crate) struct AgentOutcome {
    /// The agent's name (`claude-code`).
    pub name: String,
    /// The wire format it was served (`anthropic-messages`).
    pub api: String,
    /// How it ended: `exit status 0`, `killed by signal 9`, or `stopped
    /// at the time budget`.
    pub exit: String,
    /// Its exit code, when it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether the script's final answer was sent.
    pub finished: bool,
    /// Requests it sent (side calls included).
    pub requests: u64,
    /// Requests without tools (titles, routers): answered apart, never
    /// advancing the script, not in the figures.
    pub side_calls: u64,
    /// The end of what it wrote on standard output (its final output;
    /// at most 4 KiB, workspace paths presented).
    pub output: String,
    /// The end of what it wrote on standard error (at most 4 KiB).
    pub stderr: String,
    /// What isolated it: `sandbox` (writes, network and processes
    /// confined by the kernel), or `process group` (only its process
    /// group, which is killed at the end).
    pub isolation: String,
    /// What the sandbox could not enforce here, one sentence each (empty
    /// when everything was).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
