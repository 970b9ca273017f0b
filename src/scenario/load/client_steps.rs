//! The steps that check a server's resources and prompts as the harness's
//! client sees them: `list_resources: SERVER`, `read_resource: URI` with
//! `server: SERVER`, `list_prompts: SERVER`, `get_prompt: { server, name,
//! arguments }`. Each is served as one call to a tool the run adds for it
//! (`mcp:list_resources` …, see [`crate::scenario::client`]), so `expect`,
//! `capture` and the reports apply as to any call.

use std::collections::BTreeSet;

use serde_json::json;

use crate::agent::FauxStep;
use crate::scenario::client::GET_PROMPT;
use crate::scenario::client::LIST_PROMPTS;
use crate::scenario::client::LIST_RESOURCES;
use crate::scenario::client::READ_RESOURCE;
use crate::scenario::de::closest;
use crate::scenario::model::CallSpec;
use crate::scenario::model::StepSpec;
use crate::scenario::yaml::Seg;

use super::validator::Validator;
use super::validator::join;
use super::validator::k;

/// The keys of a step that a check step does not take.
const NOT_FOR_CHECKS: [&str; 5] = ["args", "raw_args", "retry", "recorded", "cancel_after_ms"];

impl Validator<'_> {
    fn has_key(&self, at: &[Seg], key: &str) -> bool {
        self.node(&join(at, [k(key)])).is_some()
    }

    /// Whether `step` is a check step.
    pub(super) fn is_check_step(step: &StepSpec) -> bool {
        step.list_resources.is_some()
            || step.read_resource.is_some()
            || step.list_prompts.is_some()
            || step.get_prompt.is_some()
    }

    /// A check step: one call of the tool that does it.
    pub(super) fn check_step(&mut self, n: usize, at: &[Seg], step: &StepSpec) -> FauxStep {
        for key in NOT_FOR_CHECKS {
            if self.has_key(at, key) {
                self.problem_at_key(
                    &join(at, [k(key)]),
                    format!(
                        "step {n}: a step that checks a server's resources or prompts takes no \
                         `{key}` (it takes `expect`, `capture` and `id`)"
                    ),
                );
            }
        }
        if step.server.is_some() && step.read_resource.is_none() {
            self.problem_at_key(
                &join(at, [k("server")]),
                format!(
                    "step {n}: `server` names the server of `read_resource`; `list_resources`, \
                     `list_prompts` and `get_prompt` name theirs themselves"
                ),
            );
        }
        let (tool, what, server, args) = if let Some(server) = &step.list_resources {
            let at = join(at, [k("list_resources")]);
            (LIST_RESOURCES, "list_resources", (server, at), json!({}))
        } else if let Some(uri) = &step.read_resource {
            if uri.is_empty() {
                self.problem(
                    &join(at, [k("read_resource")]),
                    format!("step {n}: `read_resource` is the URI to read; it is empty"),
                );
            }
            let Some(server) = &step.server else {
                self.problem(
                    at,
                    format!(
                        "step {n}: `read_resource` needs `server: SERVER`, the server to read \
                         `{uri}` from"
                    ),
                );
                return FauxStep::Calls(Vec::new());
            };
            let at = join(at, [k("server")]);
            (
                READ_RESOURCE,
                "read_resource",
                (server, at),
                json!({ "uri": uri }),
            )
        } else if let Some(server) = &step.list_prompts {
            let at = join(at, [k("list_prompts")]);
            (LIST_PROMPTS, "list_prompts", (server, at), json!({}))
        } else if let Some(get) = &step.get_prompt {
            if get.name.is_empty() {
                self.problem(
                    &join(at, [k("get_prompt"), k("name")]),
                    format!("step {n}: `get_prompt.name` is the prompt's name; it is empty"),
                );
            }
            let server_at = join(at, [k("get_prompt"), k("server")]);
            (
                GET_PROMPT,
                "get_prompt",
                (&get.server, server_at),
                json!({ "name": get.name, "arguments": get.arguments }),
            )
        } else {
            return FauxStep::Calls(Vec::new());
        };
        let (server, server_at) = server;
        self.checked_server(n, server, &server_at);
        let mut args = args;
        if let Some(map) = args.as_object_mut() {
            map.insert("server".to_owned(), json!(server));
        }
        let spec = CallSpec {
            call: tool.to_owned(),
            id: step.id.clone(),
            args: Some(args),
            expect: step.expect.clone(),
            capture: step.capture.clone(),
            ..CallSpec::default()
        };
        self.check_call(n, at, &spec, format!("{what} {server}"))
    }

    /// The server a check step (or a `fuzz` step) names, at `at`: one of
    /// the scenario's `servers` (else a problem with a "did you mean"),
    /// started even when `tools` leaves it out.
    pub(super) fn checked_server(&mut self, n: usize, server: &str, at: &[Seg]) {
        if !self.declared_servers.contains(server) {
            let hint = closest(server, self.declared_servers.iter().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            let declared = if self.declared_servers.is_empty() {
                "it declares none".to_owned()
            } else {
                let names: Vec<&str> = self.declared_servers.iter().map(String::as_str).collect();
                format!("it declares {}", names.join(", "))
            };
            self.problem(
                at,
                format!(
                    "step {n}: unknown server `{server}`: name one of the scenario's \
                     `servers:` ({declared}){hint}"
                ),
            );
        } else {
            self.start_server(server);
        }
    }

    /// The one call of a check step (`spec`, whose tool the run adds),
    /// labelled `step N (WHAT)`.
    pub(super) fn check_call(
        &mut self,
        n: usize,
        at: &[Seg],
        spec: &CallSpec,
        what: String,
    ) -> FauxStep {
        self.server_tools.insert(spec.call.clone());
        let call = self.call(
            spec,
            at,
            format!("call_{n}_1"),
            format!("step {n} ({what})"),
            &BTreeSet::new(),
            false,
        );
        self.known_vars
            .extend(call.captures.iter().map(|c| c.name.clone()));
        FauxStep::Calls(vec![call])
    }
}
