//! A scenario's sandbox (docs/scenarios.md, "Sandbox"): the programs run
//! on its behalf (bash's commands, a configured shell, its stdio MCP
//! servers, the recorded commands of a replayed session) write only in its
//! workspace, in a private `TMPDIR` inside its scratch directory (so it
//! goes with the workspace) and below its `sandbox.write` paths; they
//! reach no network but the loopback ports of the `url:` servers it
//! declares (all of it with `network: true`); and nothing they start
//! outlives the scenario (a PID namespace, where the kernel allows one).
//! `sandbox: off` runs them as before.
//!
//! [`policy`] is the one place a scenario's settings become a
//! [`SandboxPolicy`]; [`SandboxOutcome`] is what run.json says of it.

use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde::Serialize;

use crate::scenario::Scenario;
use crate::scenario::ServerLaunch;
use crate::scenario::load::SandboxPlan;
use crate::tools::Network;
use crate::tools::Sandbox;
use crate::tools::SandboxPolicy;
use crate::tools::SandboxReport;

/// The name of the private temporary directory inside a scenario's
/// scratch directory.
pub(crate) const TMPDIR_NAME: &str = "tmp";

/// What sandbox a scenario's programs ran in, as run.json says it: what
/// each part enforces and by what, or why there was none.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum SandboxOutcome {
    /// Sandboxed: writes, network and processes, each by what (or why
    /// not, where the kernel could not).
    Sandboxed(SandboxReport),
    /// No sandbox.
    None {
        /// Why not (`sandbox: off` in the scenario or its suite file, or
        /// the sandbox could not be made).
        none: String,
    },
}

/// The sandbox policy of a scenario whose settings are `plan` and whose
/// workspace is `workspace` (its real path), `None` for `sandbox: off`:
/// writes in the workspace, `tmpdir` (`None`: one the sandbox makes and
/// removes) and the plan's `write` paths; network none but `ports` of the
/// loopback interface (the harness's own endpoints: [`loopback_ports`] of
/// its servers, a served model), or all of it with `network: true`;
/// processes contained. The agent runner builds its sandbox with this too.
pub(crate) fn policy(
    plan: &SandboxPlan,
    workspace: Option<&Path>,
    tmpdir: Option<PathBuf>,
    ports: &[u16],
) -> Option<SandboxPolicy> {
    match plan {
        SandboxPlan::Off { .. } => None,
        SandboxPlan::On { network, write } => {
            Some(on_policy(*network, write, workspace, tmpdir, ports))
        }
    }
}

/// [`policy`] of a plan that is on.
fn on_policy(
    network: bool,
    write: &[PathBuf],
    workspace: Option<&Path>,
    tmpdir: Option<PathBuf>,
    ports: &[u16],
) -> SandboxPolicy {
    let network = if network {
        Network::Full
    } else if ports.is_empty() {
        Network::None
    } else {
        Network::Loopback(ports.to_vec())
    };
    SandboxPolicy {
        writable: workspace
            .map(Path::to_path_buf)
            .into_iter()
            .chain(write.iter().cloned())
            .collect(),
        tmpdir,
        network,
        contain_processes: true,
    }
}

/// The loopback ports of the `url:` servers `scenario` declares
/// (`http://127.0.0.1:PORT/…` or `localhost`), sorted, each once.
pub(crate) fn loopback_ports(scenario: &Scenario) -> Vec<u16> {
    let mut ports: Vec<u16> = scenario
        .servers
        .iter()
        .filter_map(|plan| match &plan.launch {
            ServerLaunch::Url { url, .. } => loopback_port(url),
            ServerLaunch::Command { .. } => None,
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The port of `url` when its host is the loopback interface.
fn loopback_port(url: &str) -> Option<u16> {
    let (scheme, rest) = url.split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let (host, port) = match host_port.rsplit_once(':') {
        Some((host, port)) => (host, port.parse::<u16>().ok()?),
        None => (host_port, default),
    };
    let loopback = host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1";
    (loopback && port != 0).then_some(port)
}

/// Why `plan` is off, as run.json says it.
fn off_reason(by_suite: bool) -> String {
    if by_suite {
        "`sandbox: off` in harness.yaml".to_owned()
    } else {
        "`sandbox: off` in the scenario".to_owned()
    }
}

/// A scenario's sandbox, made (nothing starts until its first program),
/// with what run.json says of it; `tmpdir` is made here (mode 0700).
pub(crate) fn make(
    scenario: &Scenario,
    workspace: &Path,
    tmpdir: &Path,
) -> Result<(Option<Arc<Sandbox>>, SandboxOutcome), String> {
    let (network, write) = match &scenario.sandbox {
        SandboxPlan::Off { by_suite } => {
            let none = off_reason(*by_suite);
            return Ok((None, SandboxOutcome::None { none }));
        }
        SandboxPlan::On { network, write } => (*network, write),
    };
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(tmpdir)
            .map_err(|err| format!("its private TMPDIR cannot be made: {err}"))?;
    }
    let policy = on_policy(
        network,
        write,
        Some(workspace),
        Some(tmpdir.to_path_buf()),
        &loopback_ports(scenario),
    );
    let sandbox = Sandbox::new(policy).map_err(|err| err.to_string())?;
    // bash says nothing of the sandbox in a scenario (D21's notice is
    // taken here): the author knows it from the file, a scripted result
    // stays what it was without one (its `equals` checks, its figures),
    // and a refused write is still the command's own "Permission denied".
    sandbox.first_notice();
    let outcome = SandboxOutcome::Sandboxed(sandbox.report().clone());
    Ok((Some(Arc::new(sandbox)), outcome))
}

/// The sandbox of a server shared between scenarios (`share: run`): the
/// scenario's settings without a workspace (the server outlives it), its
/// own `TMPDIR`, removed when the server's last holder drops it; `None`
/// with `sandbox: off`.
pub(crate) fn for_shared_server(scenario: &Scenario) -> Result<Option<Arc<Sandbox>>, String> {
    let Some(policy) = policy(&scenario.sandbox, None, None, &loopback_ports(scenario)) else {
        return Ok(None);
    };
    Sandbox::new(policy)
        .map(|sandbox| Some(Arc::new(sandbox)))
        .map_err(|err| err.to_string())
}

/// What the kernel cannot enforce of a scenario's default sandbox (writes
/// confined, no network, processes contained), one sentence each; empty
/// when it can enforce everything.
pub(crate) fn kernel_shortfalls() -> Vec<String> {
    let policy = SandboxPolicy {
        writable: Vec::new(),
        tmpdir: None,
        network: Network::None,
        contain_processes: true,
    };
    match Sandbox::new(policy) {
        Ok(sandbox) => sandbox.report().shortfalls(),
        Err(err) => vec![format!("no sandbox can be made: {err}")],
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn only_loopback_urls_give_ports() {
        let got: Vec<Option<u16>> = [
            "http://127.0.0.1:8123/mcp",
            "http://localhost/mcp",
            "https://LOCALHOST",
            "http://user@127.0.0.1:9/x?y",
            "http://example.com:8123/mcp",
            "http://127.0.0.1:0/",
            "ftp://127.0.0.1:21/",
            "127.0.0.1:80",
        ]
        .iter()
        .map(|url| loopback_port(url))
        .collect();
        assert_eq!(
            got,
            [
                Some(8123),
                Some(80),
                Some(443),
                Some(9),
                None,
                None,
                None,
                None
            ]
        );
    }

    #[test]
    fn a_plan_becomes_a_policy() {
        let on = SandboxPlan::On {
            network: false,
            write: vec![PathBuf::from("/srv/out")],
        };
        assert_eq!(
            policy(&on, Some(Path::new("/ws")), None, &[8123]),
            Some(SandboxPolicy {
                writable: vec![PathBuf::from("/ws"), PathBuf::from("/srv/out")],
                tmpdir: None,
                network: Network::Loopback(vec![8123]),
                contain_processes: true,
            })
        );
        let open = SandboxPlan::On {
            network: true,
            write: Vec::new(),
        };
        assert_eq!(
            policy(&open, None, Some(PathBuf::from("/t")), &[8123]).map(|p| p.network),
            Some(Network::Full)
        );
        assert_eq!(
            policy(&SandboxPlan::Off { by_suite: true }, None, None, &[]),
            None
        );
    }
}
