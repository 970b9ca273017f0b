//! `servers:` (in a scenario and in harness.yaml) and the MCP side of
//! `tools:`: each server checked and turned into a [`ServerPlan`], each
//! entry of `tools` into a [`ToolEntry`].

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use crate::base::vars::substitute_some;
use crate::base::vars::var_refs;
use crate::mcp::client::DEFAULT_STARTUP_TIMEOUT;
use crate::scenario::de::closest;
use crate::scenario::model::ServerSpec;
use crate::scenario::model::ToolsSpec;
use crate::scenario::yaml::Seg;
use crate::tools::ALL_TOOL_NAMES;
use crate::tools::Preset;

use super::scenario::ServerLaunch;
use super::scenario::ServerPlan;
use super::scenario::ToolEntry;
use super::validator::Validator;
use super::validator::join;
use super::validator::k;

/// The variables of a server's `command` and `env`.
pub(super) const SERVER_VARS: [&str; 3] = ["workspace", "dir", "harness"];

/// Whether `name` can name a server: letters, digits, `_` and `-`.
fn is_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `text` with `${dir}` given its value (the other variables are known
/// only when the scenario runs, and are expanded then).
fn with_dir(text: &str, dir: &Path) -> String {
    let dir = BTreeMap::from([("dir".to_owned(), dir.display().to_string())]);
    substitute_some(text, &dir)
}

impl Validator<'_> {
    /// The servers of one file (at `servers`), declared in a file in `dir`.
    pub(super) fn servers(
        &mut self,
        servers: &BTreeMap<String, ServerSpec>,
        dir: &Path,
    ) -> BTreeMap<String, ServerPlan> {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut plans = BTreeMap::new();
        for (name, spec) in servers {
            let at = [k("servers"), k(name)];
            if !is_server_name(name) {
                self.problem_at_key(
                    &at,
                    format!(
                        "`{name}` cannot name a server: use letters, digits, `_` and `-` (a tool \
                         of it is `{name}/TOOL` in `tools`)"
                    ),
                );
            }
            if let Some(plan) = self.server(name, spec, &at, &dir) {
                plans.insert(name.clone(), plan);
            }
        }
        plans
    }

    fn server(
        &mut self,
        name: &str,
        spec: &ServerSpec,
        at: &[Seg],
        dir: &Path,
    ) -> Option<ServerPlan> {
        let share = match spec.share.as_deref() {
            None | Some("scenario") => false,
            Some("run") => true,
            Some(other) => {
                let hint = closest(other, ["run", "scenario"].into_iter())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                self.problem(
                    &join(at, [k("share")]),
                    format!(
                        "unknown share `{other}`: `run` (one process per worker, reused) or \
                         `scenario` (one per scenario, the default){hint}"
                    ),
                );
                false
            }
        };
        self.seconds_in_range(&join(at, [k("startup_timeout")]), spec.startup_timeout);
        self.seconds_in_range(&join(at, [k("call_timeout")]), spec.call_timeout);
        let prefix = spec.prefix.clone().unwrap_or_default();
        if !prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        {
            self.problem(
                &join(at, [k("prefix")]),
                "a prefix is letters, digits, `_`, `.` and `-` (tool names are made of those)",
            );
        }
        for (var, value) in &spec.env {
            self.server_vars(&join(at, [k("env"), k(var)]), value, share);
        }
        let launch = match (&spec.command, &spec.url) {
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(at, [k("url")]),
                    "give `command` (a server to start) or `url` (one already running), not both",
                );
                return None;
            }
            (None, None) => {
                self.problem(
                    at,
                    format!(
                        "server `{name}` needs `command` (the program and its arguments, e.g. \
                         `command: [mcp-server-time]`) or `url` (http://HOST:PORT/PATH of a \
                         running server)"
                    ),
                );
                return None;
            }
            (Some(command), None) => {
                if command.first().is_none_or(String::is_empty) {
                    self.problem(
                        &join(at, [k("command")]),
                        "`command` starts with the program to run (its arguments follow)",
                    );
                    return None;
                }
                for (i, part) in command.iter().enumerate() {
                    self.server_vars(&join(at, [k("command"), Seg::Index(i)]), part, share);
                }
                if let Some(headers) = &spec.headers
                    && !headers.is_empty()
                {
                    self.problem_at_key(
                        &join(at, [k("headers")]),
                        "`headers` are sent to a server reached by `url`; this one is started \
                         from `command`",
                    );
                }
                ServerLaunch::Command {
                    argv: command.iter().map(|part| with_dir(part, dir)).collect(),
                    env: spec
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), with_dir(v, dir)))
                        .collect(),
                }
            }
            (None, Some(url)) => {
                if !url.starts_with("http://") || url.len() <= "http://".len() {
                    self.problem(
                        &join(at, [k("url")]),
                        format!(
                            "`{url}` is not an http:// URL: write http://HOST:PORT/PATH (the \
                             Streamable HTTP endpoint; https is not built in)"
                        ),
                    );
                }
                if !spec.env.is_empty() {
                    self.problem_at_key(
                        &join(at, [k("env")]),
                        "`env` is for a server the harness starts (`command`); one reached by \
                         `url` runs already",
                    );
                }
                if share {
                    self.problem(
                        &join(at, [k("share")]),
                        "`share` is for a server the harness starts (`command`); each scenario \
                         gets its own session of a server reached by `url`",
                    );
                }
                if let Some(headers) = &spec.headers {
                    for (header, value) in headers {
                        self.env_refs(&join(at, [k("headers"), k(header)]), value);
                    }
                }
                ServerLaunch::Url {
                    url: url.clone(),
                    headers: spec
                        .headers
                        .iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                }
            }
        };
        let auth = spec.auth.as_ref().and_then(|auth| {
            self.auth(
                &join(at, [k("auth")]),
                auth,
                matches!(launch, ServerLaunch::Url { .. }),
            )
        });
        Some(ServerPlan {
            auth,
            name: name.to_owned(),
            launch,
            startup_timeout: spec
                .startup_timeout
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            call_timeout: spec
                .call_timeout
                .and_then(|s| Duration::try_from_secs_f64(s).ok()),
            prefix,
            share,
            dir: dir.to_path_buf(),
        })
    }

    /// The variables of one item of `command` or `env`.
    fn server_vars(&mut self, at: &[Seg], text: &str, share: bool) {
        for var in var_refs(text) {
            let var = var.as_str();
            if !SERVER_VARS.contains(&var) {
                let hint = closest(var, SERVER_VARS.into_iter())
                    .map(|c| format!("; did you mean `${{{c}}}`?"))
                    .unwrap_or_default();
                self.problem(
                    at,
                    format!(
                        "unknown variable `${{{var}}}`: a server's command and env know \
                         `${{workspace}}`, `${{dir}}` and `${{harness}}`{hint}"
                    ),
                );
            } else if var == "workspace" && share {
                self.problem(
                    at,
                    "a server with `share: run` outlives each scenario's workspace, so its \
                     command and env cannot use `${workspace}`; drop `share: run` to start one \
                     per scenario",
                );
            }
        }
    }

    /// The entries of `tools` (at `at`), each a built-in tool, a server of
    /// `servers` or `SERVER/TOOL`.
    pub(super) fn tools(
        &mut self,
        at: &[Seg],
        tools: &ToolsSpec,
        servers: &BTreeSet<String>,
    ) -> Vec<ToolEntry> {
        match tools {
            ToolsSpec::Preset(name) => match Preset::parse(name) {
                Some(preset) => preset
                    .names()
                    .iter()
                    .map(|n| ToolEntry::Builtin((*n).to_owned()))
                    .collect(),
                None => {
                    let hint = closest(name, ["coding", "readonly", "all"].into_iter())
                        .map(|c| format!("; did you mean `{c}`?"))
                        .unwrap_or_default();
                    self.problem(
                        at,
                        format!(
                            "unknown tool preset `{name}`: use coding, readonly, all or a list \
                             of tool names{hint}"
                        ),
                    );
                    Vec::new()
                }
            },
            ToolsSpec::List(names) => {
                let mut entries = Vec::new();
                for (i, name) in names.iter().enumerate() {
                    let item = join(at, [Seg::Index(i)]);
                    if ALL_TOOL_NAMES.contains(&name.as_str()) {
                        entries.push(ToolEntry::Builtin(name.clone()));
                    } else if servers.contains(name) {
                        entries.push(ToolEntry::Server(name.clone()));
                    } else if let Some((server, tool)) = name.split_once('/') {
                        if !servers.contains(server) {
                            self.problem(&item, unknown_server_message(server, name, servers));
                        } else if tool.is_empty() {
                            self.problem(
                                &item,
                                format!(
                                    "`{name}` names no tool: write `{server}` for all its tools, \
                                     or `{server}/TOOL` for one"
                                ),
                            );
                        } else {
                            entries.push(ToolEntry::ServerTool {
                                server: server.to_owned(),
                                tool: tool.to_owned(),
                            });
                        }
                    } else {
                        self.problem(&item, unknown_entry_message(name, servers));
                    }
                }
                entries
            }
        }
    }
}

fn unknown_server_message(server: &str, entry: &str, servers: &BTreeSet<String>) -> String {
    let hint = closest(server, servers.iter().map(String::as_str))
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    let known = if servers.is_empty() {
        "no server is declared (`servers:` in the scenario or in harness.yaml)".to_owned()
    } else {
        format!(
            "the servers are {}",
            servers.iter().cloned().collect::<Vec<_>>().join(", ")
        )
    };
    format!("unknown server `{server}` in `{entry}` ({known}){hint}")
}

/// The problem of a name in `tools` that is neither a tool nor a server.
pub(super) fn unknown_entry_message(name: &str, servers: &BTreeSet<String>) -> String {
    let candidates = ALL_TOOL_NAMES
        .iter()
        .copied()
        .chain(servers.iter().map(String::as_str));
    let hint = closest(name, candidates)
        .map(|c| format!("; did you mean `{c}`?"))
        .unwrap_or_default();
    let servers_text = if servers.is_empty() {
        String::new()
    } else {
        format!(
            "; the servers are {}",
            servers.iter().cloned().collect::<Vec<_>>().join(", ")
        )
    };
    format!(
        "unknown tool `{name}` (the tools are {}{servers_text}){hint}",
        ALL_TOOL_NAMES.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn dir_is_given_at_load_and_the_rest_kept_for_the_run() {
        assert_eq!(
            with_dir("${harness}-x $${dir} ${workspace}/${dir}", Path::new("/s")),
            "${harness}-x $${dir} ${workspace}//s"
        );
    }

    #[test]
    fn server_names_are_words() {
        assert!(is_server_name("fs-2_b"));
        assert!(!is_server_name("fs/x"));
        assert!(!is_server_name(""));
        assert!(!is_server_name("f s"));
    }
}
