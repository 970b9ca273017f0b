//! How each scenario of a run executes, as the builder resolved it.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::TokenCounter;

/// How each scenario runs, as resolved by the builder.
#[derive(Clone, Debug)]
pub(super) struct RunConfig {
    /// Scenarios at once.
    pub jobs: usize,
    /// Stop starting scenarios after the first failure.
    pub fail_fast: bool,
    /// Keep workspaces (and report where they are).
    pub keep_workspaces: bool,
    /// Accept new and changed snapshots.
    pub update_snapshots: bool,
    /// Overrides every scenario's time budget.
    pub timeout: Option<Duration>,
    /// Counts tokens.
    pub tokens: Arc<dyn TokenCounter>,
    /// Record what each scenario's calls exercised (`--coverage`).
    pub coverage: bool,
    /// Audit the servers' tool definitions (`--audit-servers`).
    pub audit_servers: bool,
    /// Keep each scenario's transcript in its outcome.
    pub transcripts: bool,
    /// The binary `${harness}` names in a server's command.
    pub harness: std::path::PathBuf,
    /// `--repeat`: runs of each scenario, and those that must pass.
    pub repeat: Option<super::repeat::RepeatSpec>,
    /// The servers shared between scenarios (`share: run`).
    pub servers: Arc<super::servers::ServerPool>,
    /// Removes finished workspaces off the runtime's threads.
    pub cleanup: Arc<super::env::cleanup::Cleanup>,
    /// The fixtures the run's workspaces copy, each read once.
    pub fixtures: Arc<crate::run::env::workspace::FixtureCache>,
}
