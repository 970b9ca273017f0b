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
const LOOP_KEYS: [&str; 9] = [
    "system",
    "tools",
    "servers",
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
            !doc.servers.is_empty(),
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

/// The built-in agents' names, for messages.
fn builtin_names() -> String {
    profiles::PROFILES
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}
