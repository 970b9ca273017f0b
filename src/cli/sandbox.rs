//! `--no-sandbox` and `--no-network` of `harness call` and `harness mcp`:
//! the sandbox their commands run in (docs/tools.md, D21).
//!
//! By default bash's commands may write only in the workspace and a
//! private `TMPDIR` (removed when the command ends), keep the network (a
//! user's own session installs packages), and nothing they start outlives
//! the call or the server. What the kernel cannot enforce is said once on
//! standard error, and the rest still applies.

use std::path::Path;
use std::sync::Arc;

use clap::Args;

use crate::tools::Network;
use crate::tools::Sandbox;
use crate::tools::SandboxPolicy;

/// The sandbox flags.
#[derive(Clone, Copy, Debug, Args)]
pub(super) struct SandboxFlags {
    /// Run commands without the sandbox: writes anywhere the user can, and
    /// what they start in the background may outlive harness.
    #[arg(long)]
    no_sandbox: bool,
    /// Cut the network of commands (the sandbox keeps it by default).
    #[arg(long, conflicts_with = "no_sandbox")]
    no_network: bool,
}

impl SandboxFlags {
    /// No sandbox, whatever the flags say: for a call that starts no
    /// program (making a sandbox costs a few hundred microseconds, and the
    /// kernel's probe about 2 ms, which a `harness call find` need not pay).
    pub(super) fn unused(self) -> Self {
        Self {
            no_sandbox: true,
            no_network: false,
        }
    }

    /// The sandbox for a workspace rooted at `root` (its real path), or
    /// `None` with `--no-sandbox`. What the kernel cannot enforce is
    /// printed as a warning.
    pub(super) fn sandbox(self, root: &Path) -> Result<Option<Arc<Sandbox>>, String> {
        if self.no_sandbox {
            return Ok(None);
        }
        let network = if self.no_network {
            Network::None
        } else {
            Network::Full
        };
        let policy = SandboxPolicy::workspace(root).with_network(network);
        let sandbox = Sandbox::new(policy).map_err(|err| {
            format!("the sandbox cannot be made ({err}); --no-sandbox runs without it")
        })?;
        for shortfall in sandbox.report().shortfalls() {
            eprintln!("warning: {shortfall}; commands run with the rest of the sandbox");
        }
        Ok(Some(Arc::new(sandbox)))
    }
}

/// `--require-sandbox` of `harness run`, and the note every other run
/// prints once: what the kernel cannot enforce of a scenario's sandbox
/// (docs/scenarios.md, "Sandbox"). With `require`, a shortfall is a usage
/// error (exit 2) before anything runs; without, the run says so on
/// standard error and goes on with what the kernel can do (run.json says
/// per scenario what each had).
pub(super) fn check_run(require: bool) -> Result<(), String> {
    let shortfalls = crate::run::env::sandbox::kernel_shortfalls();
    if shortfalls.is_empty() {
        return Ok(());
    }
    let what = shortfalls.join("; ");
    if require {
        return Err(format!(
            "--require-sandbox: this machine cannot sandbox scenarios fully: {what}"
        ));
    }
    eprintln!(
        "warning: scenarios run with a partial sandbox: {what} (--require-sandbox makes this an \
         error)"
    );
    Ok(())
}
