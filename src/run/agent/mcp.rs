//! A scenario's MCP servers given to a real agent: its `servers:` (and
//! its suite's) with `${workspace}` and `${harness}` expanded, in the
//! neutral form each agent's configuration is written from
//! (`agent::mcp_config`), and the loopback ports its sandbox must let
//! through for the servers reached by `url`.

use std::path::Path;

use crate::agent::mcp_config::McpServer;
use crate::agent::mcp_config::McpTransport;
use crate::agent::profiles;
use crate::base::vars::substitute;
use crate::scenario::ServerLaunch;
use crate::scenario::ServerPlan;

use super::launch::Resolved;

/// Why `resolved` cannot be given MCP servers, when it cannot (pi has no
/// MCP client; an agent of the suite's own has no known configuration).
pub(super) fn unsupported(resolved: &Resolved) -> Option<String> {
    if resolved.mcp.is_some() {
        return None;
    }
    let name = &resolved.name;
    Some(if profiles::profile(name).is_some() {
        format!(
            "the agent `{name}` has no MCP client (pi 0.73.1 leaves MCP out by design), so the \
             scenario's MCP servers cannot be given to it"
        )
    } else {
        format!(
            "the agent `{name}` is not a built-in one, so harness knows no way to register the \
             scenario's MCP servers with it (claude-code, codex and gemini-cli take them)"
        )
    })
}

/// `plans` as the agent is given them: `${workspace}` the workspace's
/// real path, `${harness}` the harness binary, `${env:NAME}` in a
/// header the variable's value; a server started from a command runs in
/// the workspace. A server with `auth:` is refused: the agent reaches it
/// itself, and harness has no way to hand it client credentials.
pub(super) fn agent_servers(
    plans: &[ServerPlan],
    workspace: &Path,
    harness: &Path,
) -> Result<Vec<McpServer>, String> {
    if let Some(plan) = plans.iter().find(|p| p.auth.is_some()) {
        return Err(format!(
            "the server `{}` has `auth:`, which only harness's own client uses: the agent under \
             test reaches the server itself; give it a token in `headers:` (`Authorization: \
             Bearer ${{env:NAME}}`) instead",
            plan.name
        ));
    }
    let vars = std::collections::BTreeMap::from([
        ("workspace".to_owned(), workspace.display().to_string()),
        ("harness".to_owned(), harness.display().to_string()),
    ]);
    let expand = |text: &str| substitute(text, &vars);
    plans
        .iter()
        .map(|plan| -> Result<McpServer, String> {
            Ok(McpServer {
                name: plan.name.clone(),
                transport: match &plan.launch {
                    ServerLaunch::Command { argv, env } => McpTransport::Stdio {
                        command: argv.first().map(|p| expand(p)).unwrap_or_default(),
                        args: argv.iter().skip(1).map(|a| expand(a)).collect(),
                        env: env.iter().map(|(k, v)| (k.clone(), expand(v))).collect(),
                        cwd: workspace.display().to_string(),
                    },
                    ServerLaunch::Url { url, headers } => McpTransport::Http {
                        url: url.clone(),
                        headers: headers
                            .iter()
                            .map(|(name, value)| {
                                let what = format!("`servers.{}.headers.{name}`", plan.name);
                                super::super::client_side::expand_env(value, &what)
                                    .map(|value| (name.clone(), value))
                            })
                            .collect::<Result<_, _>>()?,
                    },
                },
                startup_timeout: Some(plan.startup_timeout),
                call_timeout: plan.call_timeout,
            })
        })
        .collect()
}

/// The ports of the servers reached by `url` on the loopback interface
/// (`127.0.0.1`, `localhost`, `[::1]`), which the agent's sandbox lets it
/// reach; a server elsewhere needs the scenario's `sandbox: { network:
/// true }`.
pub(super) fn loopback_ports(plans: &[ServerPlan]) -> Vec<u16> {
    plans
        .iter()
        .filter_map(|plan| match &plan.launch {
            ServerLaunch::Url { url, .. } => loopback_port(url),
            ServerLaunch::Command { .. } => None,
        })
        .collect()
}

/// The port of an `http://` URL on the loopback interface (80 when none
/// is written).
fn loopback_port(url: &str) -> Option<u16> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6.split_once(']')?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !loopback {
        return None;
    }
    match port {
        Some(port) => port.parse().ok(),
        None => Some(80),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use pretty_assertions::assert_eq;

    use super::*;

    fn plan(name: &str, launch: ServerLaunch) -> ServerPlan {
        ServerPlan {
            name: name.to_owned(),
            launch,
            startup_timeout: Duration::from_secs(10),
            call_timeout: None,
            prefix: String::new(),
            share: false,
            dir: PathBuf::from("/suite"),
            auth: None,
        }
    }

    #[test]
    fn the_harness_and_the_workspace_are_expanded_and_the_server_runs_in_the_workspace() {
        let plans = [
            plan(
                "harness",
                ServerLaunch::Command {
                    argv: vec![
                        "${harness}".to_owned(),
                        "mcp".to_owned(),
                        "--cwd".to_owned(),
                        "${workspace}".to_owned(),
                    ],
                    env: vec![("W".to_owned(), "${workspace}/x".to_owned())],
                },
            ),
            plan(
                "web",
                ServerLaunch::Url {
                    url: "http://localhost:8931/mcp".to_owned(),
                    headers: Vec::new(),
                },
            ),
        ];
        assert_eq!(
            agent_servers(&plans, Path::new("/ws"), Path::new("/bin/harness")),
            Ok(vec![
                McpServer {
                    name: "harness".to_owned(),
                    transport: McpTransport::Stdio {
                        command: "/bin/harness".to_owned(),
                        args: vec!["mcp".to_owned(), "--cwd".to_owned(), "/ws".to_owned()],
                        env: vec![("W".to_owned(), "/ws/x".to_owned())],
                        cwd: "/ws".to_owned(),
                    },
                    startup_timeout: Some(Duration::from_secs(10)),
                    call_timeout: None,
                },
                McpServer {
                    name: "web".to_owned(),
                    transport: McpTransport::Http {
                        url: "http://localhost:8931/mcp".to_owned(),
                        headers: Vec::new(),
                    },
                    startup_timeout: Some(Duration::from_secs(10)),
                    call_timeout: None,
                },
            ])
        );
        assert_eq!(loopback_ports(&plans), vec![8931]);
    }

    #[test]
    fn a_header_variable_not_set_and_client_credentials_are_refused() {
        let unset = "HARNESS_TEST_SURELY_UNSET_VARIABLE";
        let with_header = [plan(
            "web",
            ServerLaunch::Url {
                url: "http://localhost:8931/mcp".to_owned(),
                headers: vec![("X-Key".to_owned(), format!("${{env:{unset}}}"))],
            },
        )];
        let refused = agent_servers(&with_header, Path::new("/ws"), Path::new("/h"));
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains(unset) && e.contains("X-Key")),
            "{refused:?}"
        );
        let mut with_auth = plan(
            "web",
            ServerLaunch::Url {
                url: "http://localhost:8931/mcp".to_owned(),
                headers: Vec::new(),
            },
        );
        with_auth.auth = Some(crate::mcp::client::ClientCredentials {
            client_id: "id".to_owned(),
            credential: crate::mcp::client::Credential::Secret("s".to_owned()),
            scopes: Vec::new(),
        });
        assert_eq!(
            agent_servers(&[with_auth], Path::new("/ws"), Path::new("/h")),
            Err(
                "the server `web` has `auth:`, which only harness's own client uses: the agent \
                 under test reaches the server itself; give it a token in `headers:` \
                 (`Authorization: Bearer ${env:NAME}`) instead"
                    .to_owned()
            )
        );
    }

    #[test]
    fn only_loopback_urls_open_a_port() {
        assert_eq!(
            [
                "http://127.0.0.1:39217/mcp",
                "http://[::1]:7/x",
                "http://localhost/mcp",
                "http://example.com:80/mcp",
                "http://10.0.0.1:5/",
                "http://127.0.0.1:99999/",
            ]
            .map(loopback_port),
            [Some(39217), Some(7), Some(80), None, None, None]
        );
    }
}
