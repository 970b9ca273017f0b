//! `agents:` of harness.yaml, `agent:` of a suite or a scenario, and
//! what an agent scenario may not say (`system:`, `tools:` and the other
//! keys of harness's own loop): checked, each problem at its node.

use std::collections::BTreeMap;

use crate::agent::profiles;
use crate::agent::wire::Api;
use crate::base::vars::var_refs;
use crate::scenario::agent::AgentDef;
use crate::scenario::agent::AgentSpec;
use crate::scenario::agent::MAX_NAME;
use crate::scenario::agent::PLACEHOLDERS;
use crate::scenario::agent::good_name;
use crate::scenario::agent::known_names;
use crate::scenario::model::ScenarioDoc;
use crate::scenario::yaml::Seg;

use super::validator::Validator;
use super::validator::join;
use super::validator::k;

/// The keys of a scenario that only harness's own loop reads: a
/// scenario served to a real agent may not set them (its own prompt,
/// tools and limits are what is tested).
const LOOP_KEYS: [&str; 8] = [
    "system",
    "tools",
    "limits",
    "confine",
    "faults",
    "bash",
    "replay",
    "max_turns",
];

impl Validator<'_> {
    /// `agents:` of a suite file, checked; the valid entries.
    pub(super) fn agent_defs(
        &mut self,
        specs: &BTreeMap<String, AgentSpec>,
    ) -> BTreeMap<String, AgentDef> {
        let mut defs = BTreeMap::new();
        for (name, spec) in specs {
            let at = [k("agents"), k(name)];
            let before = self.problems.len();
            if !good_name(name) {
                self.problem_at_key(
                    &at,
                    format!(
                        "an agent's name must be 1 to {MAX_NAME} letters, digits, `_`, `-` or `.`"
                    ),
                );
            }
            let builtin = profiles::profile(name).is_some();
            let api = match &spec.api {
                Some(text) => match Api::from_name(text) {
                    Some(api) => Some(api),
                    None => {
                        let names: Vec<&str> = Api::ALL.iter().map(|a| a.name()).collect();
                        self.problem(
                            &join(&at, [k("api")]),
                            format!("unknown API `{text}`; use one of {}", names.join(", ")),
                        );
                        None
                    }
                },
                None => None,
            };
            if !builtin {
                let mut missing = Vec::new();
                if spec.command.is_none() {
                    missing.push("`command`");
                }
                if spec.api.is_none() {
                    missing.push("`api`");
                }
                if !missing.is_empty() {
                    self.problem_at_key(
                        &at,
                        format!(
                            "`{name}` is not a built-in agent ({}), so it needs {}: the program \
                             that runs it and the wire format it speaks",
                            builtin_names(),
                            missing.join(" and ")
                        ),
                    );
                }
            }
            if let Some(command) = &spec.command {
                let command_at = join(&at, [k("command")]);
                if command.is_empty() {
                    self.problem(&command_at, "give the program, then its arguments");
                }
                for (i, part) in command.iter().enumerate() {
                    let part_at = join(&command_at, [Seg::Index(i)]);
                    if i == 0 && part.trim().is_empty() {
                        self.problem(&part_at, "the program's name is empty");
                    }
                    if i == 0 && !var_refs(part).is_empty() {
                        self.problem(
                            &part_at,
                            "the program is looked for as written: placeholders go in its \
                             arguments and environment",
                        );
                        continue;
                    }
                    self.placeholder_text(&part_at, part);
                }
            }
            for (var, value) in &spec.env {
                let var_at = join(&at, [k("env"), k(var)]);
                let good = |c: char| c.is_ascii_alphanumeric() || c == '_';
                if var.is_empty()
                    || var.starts_with(|c: char| c.is_ascii_digit())
                    || !var.chars().all(good)
                {
                    self.problem_at_key(
                        &var_at,
                        "an environment variable's name is letters, digits and `_`, not starting \
                         with a digit",
                    );
                }
                self.placeholder_text(&var_at, value);
            }
            if self.problems.len() == before {
                defs.insert(
                    name.clone(),
                    AgentDef {
                        command: spec.command.clone(),
                        api,
                        env: spec.env.clone().into_iter().collect(),
                    },
                );
            }
        }
        defs
    }

    /// A text of `command` or `env`: no NUL byte, only the placeholders.
    fn placeholder_text(&mut self, at: &[Seg], text: &str) {
        if text.contains('\0') {
            self.problem(
                at,
                "holds a NUL byte, which no command line or environment can",
            );
        }
        for name in var_refs(text) {
            if !PLACEHOLDERS.contains(&name.as_str()) {
                self.problem(
                    at,
                    format!(
                        "unknown placeholder `${{{name}}}`; an agent's command and environment \
                         may use {} (write `$${{` for a literal `${{`)",
                        PLACEHOLDERS
                            .iter()
                            .map(|p| format!("`${{{p}}}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
            }
        }
    }

    /// `agent:` at `at` naming an agent known with `defs`.
    pub(super) fn agent_name(&mut self, at: &[Seg], name: &str, defs: &BTreeMap<String, AgentDef>) {
        let known = known_names(defs);
        if !known.iter().any(|n| n == name) {
            self.problem(
                at,
                format!(
                    "unknown agent `{name}`; the agents are {} (define one of your own under \
                     `agents:` in harness.yaml, with its `command` and `api`)",
                    known.join(", ")
                ),
            );
        }
    }

    /// The keys of harness's own loop that an agent scenario sets: each a
    /// problem at its key.
    pub(super) fn loop_keys_of_agent(&mut self, doc: &ScenarioDoc, agent: &str) {
        let set = [
            doc.system.is_some(),
            doc.tools.is_some(),
            doc.limits.is_some(),
            doc.confine.is_some(),
            !doc.faults.is_empty(),
            doc.bash.is_some(),
            doc.replay.is_some(),
            doc.max_turns.is_some(),
        ];
        for (key, is_set) in LOOP_KEYS.iter().zip(set) {
            if is_set {
                let why = match *key {
                    "system" | "tools" => "its own system prompt and tools are what is tested",
                    _ => "only harness's own loop reads it",
                };
                self.problem_at_key(
                    &[k(key)],
                    format!(
                        "`{key}` does not apply to a scenario served to the agent `{agent}`: \
                         {why}; remove it"
                    ),
                );
            }
        }
    }
}

impl Validator<'_> {
    /// The scenario's own `servers:` given to `agent`: only an agent with
    /// an MCP client harness knows how to register them with, and without
    /// the keys only harness's own loop reads (`prefix`, `share`).
    pub(super) fn servers_of_agent(
        &mut self,
        doc: &ScenarioDoc,
        agent: &str,
        defs: &BTreeMap<String, AgentDef>,
    ) {
        if doc.servers.is_empty() {
            return;
        }
        if let Some(why) = no_mcp(agent, defs) {
            self.problem_at_key(&[k("servers")], format!("{why}; remove `servers`"));
            return;
        }
        for (name, spec) in &doc.servers {
            if spec.prefix.is_some() {
                self.problem_at_key(
                    &[k("servers"), k(name), k("prefix")],
                    format!(
                        "the agent `{agent}` names a server's tools itself (docs/agents.md#mcp-\
                         servers-inside-the-agent); `prefix` is for harness's own loop, remove it"
                    ),
                );
            }
            if spec.share.is_some() {
                self.problem_at_key(
                    &[k("servers"), k(name), k("share")],
                    format!(
                        "the agent `{agent}` starts its servers itself, once per run of the \
                         agent; `share` is for harness's own loop, remove it"
                    ),
                );
            }
        }
    }
}

/// Why MCP servers cannot be given to `agent`, when they cannot.
pub(crate) fn no_mcp(agent: &str, defs: &BTreeMap<String, AgentDef>) -> Option<String> {
    match profiles::profile(agent) {
        Some(profile) if profile.mcp.is_some() => None,
        Some(_) => Some(format!(
            "the agent `{agent}` has no MCP client (pi 0.73.1 leaves MCP out by design), so MCP \
             servers cannot be given to it"
        )),
        None if defs.contains_key(agent) => Some(format!(
            "the agent `{agent}` is not a built-in one, so harness knows no way to register MCP \
             servers with it (claude-code, codex and gemini-cli take them)"
        )),
        None => None,
    }
}

/// The built-in agents' names, for messages.
fn builtin_names() -> String {
    profiles::PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::super::Suite;
    use super::super::load_text;

    fn problems(suite: &Suite, text: &str) -> Vec<String> {
        let (_, errors) = load_text(Path::new("s/x.yaml"), text, suite);
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn an_agent_scenario_takes_any_tool_and_refuses_the_loops_keys_at_their_place() {
        let suite = Suite::default();
        let ok = "agent: claude-code\nprompt: Do it.\nmodel:\n  - call: Read\n    args: { \
                  file_path: a }\n  - say: Done.\n";
        let (scenarios, errors) = load_text(Path::new("s/x.yaml"), ok, &suite);
        assert_eq!(errors.len(), 0, "{errors:?}");
        assert_eq!(scenarios[0].agent(), Some("claude-code"));
        assert_eq!(scenarios[0].task(), "Do it.");
        assert_eq!(
            problems(
                &suite,
                "agent: claude-code\nsystem: You are.\ntools: [read]\nmodel:\n  - say: Hi.\n"
            ),
            vec![
                "s/x.yaml:2:1: system: `system` does not apply to a scenario served to the agent \
                 `claude-code`: its own system prompt and tools are what is tested; remove it"
                    .to_owned(),
                "s/x.yaml:3:1: tools: `tools` does not apply to a scenario served to the agent \
                 `claude-code`: its own system prompt and tools are what is tested; remove it"
                    .to_owned(),
            ]
        );
        assert_eq!(
            problems(&suite, "agent: aider\nmodel:\n  - say: Hi.\n"),
            vec![
                "s/x.yaml:1:8: agent: unknown agent `aider`; the agents are pi, claude-code, \
                 codex, gemini-cli (define one of your own under `agents:` in harness.yaml, with \
                 its `command` and `api`)"
                    .to_owned()
            ]
        );
    }

    #[test]
    fn an_agent_scenario_takes_servers_and_pi_and_the_loops_server_keys_are_refused() {
        let suite = Suite::default();
        let ok = "agent: claude-code\nservers:\n  harness: { command: [\"${harness}\", mcp] }\n  \
                  web: { url: \"http://127.0.0.1:8931/mcp\" }\nmodel:\n  - call: \
                  mcp__harness__read\n    args: { path: a }\n  - say: Done.\n";
        let (scenarios, errors) = load_text(Path::new("s/x.yaml"), ok, &suite);
        assert_eq!(errors.len(), 0, "{errors:?}");
        let servers: Vec<&str> = scenarios[0]
            .servers
            .iter()
            .map(|plan| plan.name.as_str())
            .collect();
        assert_eq!(servers, vec!["harness", "web"]);
        assert_eq!(
            problems(
                &suite,
                "agent: pi\nservers:\n  h: { command: [h] }\nmodel:\n  - say: Hi.\n"
            ),
            vec![
                "s/x.yaml:2:1: servers: the agent `pi` has no MCP client (pi 0.73.1 leaves MCP \
                 out by design), so MCP servers cannot be given to it; remove `servers`"
                    .to_owned()
            ]
        );
        assert_eq!(
            problems(
                &suite,
                "agent: codex\nservers:\n  h: { command: [h], prefix: x_, share: run }\nmodel:\n  \
                 - say: Hi.\n"
            ),
            vec![
                "s/x.yaml:3:22: servers.h.prefix: the agent `codex` names a server's tools itself \
                 (docs/agents.md#mcp-servers-inside-the-agent); `prefix` is for harness's own \
                 loop, remove it"
                    .to_owned(),
                "s/x.yaml:3:34: servers.h.share: the agent `codex` starts its servers itself, \
                 once per run of the agent; `share` is for harness's own loop, remove it"
                    .to_owned(),
            ]
        );
    }

    #[test]
    fn the_suites_agents_are_checked_where_they_are_written() {
        let text = "agents:\n  mine:\n    command: [\"${home}/x\", \"${nope}\"]\n    api: grpc\n    env: { 1A: v }\n  pi:\n    command: [node, pi.js]\nagent: mine\n";
        let errors = Suite::from_text(Path::new("s/harness.yaml"), text, &|_| Vec::new())
            .map(|_| Vec::new())
            .unwrap_or_else(|e| e.iter().map(ToString::to_string).collect::<Vec<_>>());
        assert_eq!(
            errors,
            vec![
                "s/harness.yaml:3:15: agents.mine.command[0]: the program is looked for as \
                 written: placeholders go in its arguments and environment"
                    .to_owned(),
                "s/harness.yaml:3:28: agents.mine.command[1]: unknown placeholder `${nope}`; an \
                 agent's command and environment may use `${model_url}`, `${workspace}`, \
                 `${home}`, `${prompt}` (write `$${` for a literal `${`)"
                    .to_owned(),
                "s/harness.yaml:4:10: agents.mine.api: unknown API `grpc`; use one of \
                 anthropic-messages, openai-responses, openai-chat, gemini"
                    .to_owned(),
                "s/harness.yaml:5:12: agents.mine.env.1A: an environment variable's name is \
                 letters, digits and `_`, not starting with a digit"
                    .to_owned(),
                "s/harness.yaml:8:8: agent: unknown agent `mine`; the agents are pi, \
                 claude-code, codex, gemini-cli (define one of your own under `agents:` in \
                 harness.yaml, with its `command` and `api`)"
                    .to_owned(),
            ]
        );
        let good = Suite::from_text(
            Path::new("s/harness.yaml"),
            "agents:\n  pi:\n    command: [node, pi.js]\nagent: pi\n",
            &|_| Vec::new(),
        )
        .unwrap();
        assert_eq!(
            good.agents.get("pi").and_then(|d| d.command.clone()),
            Some(vec!["node".to_owned(), "pi.js".to_owned()])
        );
    }
}
