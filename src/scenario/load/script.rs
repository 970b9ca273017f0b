//! The faux model's script: steps, calls, their arguments, captures and
//! retries, and every `${var}` known before it is used.

use std::collections::BTreeSet;

use crate::agent::FauxArgs;
use crate::agent::FauxCall;
use crate::agent::FauxStep;
use crate::agent::faux::Capture;
use crate::base::vars::var_refs;
use crate::scenario::model::CallSpec;
use crate::scenario::model::ErrorExpect;
use crate::scenario::model::StepSpec;
use crate::scenario::vars;
use crate::scenario::yaml::Kind;
use crate::scenario::yaml::Node;
use crate::scenario::yaml::Seg;
use crate::tools::ALL_TOOL_NAMES;

use super::scenario::OpenCall;
use super::validator::Validator;
use super::validator::join;
use super::validator::k;

impl Validator<'_> {
    /// The faux model's script, step by step.
    pub(super) fn script(&mut self, model: &[StepSpec]) -> Vec<FauxStep> {
        if model.is_empty() && !self.no_model {
            self.problem(
                &[k("model")],
                "has no steps; give at least one `call`, `parallel` or `say` step",
            );
        }
        let mut steps = Vec::new();
        for (i, step) in model.iter().enumerate() {
            let n = i + 1;
            let at = vec![k("model"), Seg::Index(i)];
            let kinds = [
                step.call.is_some(),
                step.parallel.is_some(),
                step.say.is_some(),
                step.list_resources.is_some(),
                step.read_resource.is_some(),
                step.list_prompts.is_some(),
                step.get_prompt.is_some(),
                step.fuzz.is_some(),
            ]
            .iter()
            .filter(|k| **k)
            .count();
            if kinds != 1 {
                self.problem(
                    &at,
                    format!(
                        "step {n} must have exactly one of `call`, `parallel`, `say`, \
                         `list_resources`, `read_resource`, `list_prompts`, `get_prompt` or \
                         `fuzz` (it has {kinds})"
                    ),
                );
                continue;
            }
            if let Some(fuzz) = &step.fuzz {
                steps.push(self.fuzz_step(n, &at, step, fuzz));
            } else if Self::is_check_step(step) {
                steps.push(self.check_step(n, &at, step));
            } else if let Some(tool) = &step.call {
                steps.push(self.call_step(n, &at, step, tool));
            } else if let Some(calls) = &step.parallel {
                steps.push(self.parallel_step(n, &at, calls));
            } else if let Some(text) = &step.say {
                steps.push(self.say_step(n, &at, text, n == model.len()));
            }
        }
        steps
    }

    /// `call: TOOL`: a message with one call.
    fn call_step(&mut self, n: usize, at: &[Seg], step: &StepSpec, tool: &str) -> FauxStep {
        let spec = CallSpec {
            call: tool.to_owned(),
            id: step.id.clone(),
            args: step.args.clone(),
            raw_args: step.raw_args.clone(),
            expect: step.expect.clone(),
            capture: step.capture.clone(),
            retry: step.retry.clone(),
            recorded: step.recorded.clone(),
            cancel_after_ms: step.cancel_after_ms,
        };
        let call = self.call(
            &spec,
            at,
            format!("call_{n}_1"),
            format!("step {n} ({tool})"),
            &BTreeSet::new(),
            false,
        );
        captured_names(&call, &mut self.known_vars);
        FauxStep::Calls(vec![call])
    }

    /// The keys a step has that only a call takes, in the order written.
    fn call_keys_of(&self, at: &[Seg]) -> Vec<&'static str> {
        const CALL_KEYS: [&str; 8] = [
            "id",
            "args",
            "raw_args",
            "expect",
            "capture",
            "retry",
            "recorded",
            "cancel_after_ms",
        ];
        let Some(Node {
            kind: Kind::Map(entries),
            ..
        }) = self.node(at)
        else {
            return Vec::new();
        };
        entries
            .iter()
            .filter_map(|(key, _)| {
                let text = key.text()?;
                CALL_KEYS.iter().find(|c| **c == text).copied()
            })
            .collect()
    }

    /// `parallel: [...]`: a message with several calls, none of which may
    /// use what another captures.
    fn parallel_step(&mut self, n: usize, at: &[Seg], calls: &[CallSpec]) -> FauxStep {
        if let Some(stray) = self.call_keys_of(at).first() {
            self.problem_at_key(
                &join(at, [k(stray)]),
                format!(
                    "step {n}: `id`, `args`, `raw_args`, `expect`, `capture` and `retry` belong \
                     to each call inside `parallel`, not to the step"
                ),
            );
        }
        if calls.is_empty() {
            self.problem(
                &join(at, [k("parallel")]),
                format!("step {n} has no calls; give at least one, or use `call:`"),
            );
        }
        let batch: Vec<FauxCall> = calls
            .iter()
            .enumerate()
            .map(|(j, spec)| {
                self.call(
                    spec,
                    &join(at, [k("parallel"), Seg::Index(j)]),
                    format!("call_{n}_{}", j + 1),
                    format!("step {n}, call {} ({})", j + 1, spec.call),
                    &BTreeSet::new(),
                    false,
                )
            })
            .collect();
        for call in &batch {
            captured_names(call, &mut self.known_vars);
        }
        FauxStep::Calls(batch)
    }

    /// `say: TEXT`: the final message.
    fn say_step(&mut self, n: usize, at: &[Seg], text: &str, last: bool) -> FauxStep {
        if let Some(stray) = self.call_keys_of(at).first() {
            self.problem_at_key(
                &join(at, [k(stray)]),
                format!(
                    "step {n}: a `say` step takes none of `id`, `args`, `raw_args`, `expect`, \
                     `capture`, `retry`"
                ),
            );
        }
        if !last {
            self.problem(
                &join(at, [k("say")]),
                format!(
                    "step {n}: the run ends after `say`, so the steps after it would never run"
                ),
            );
        }
        FauxStep::Say(text.to_owned())
    }

    /// Reports the references of `refs` (paths below `base`) that are not
    /// among `known`.
    pub(super) fn unknown_refs(
        &mut self,
        base: &[Seg],
        refs: Vec<vars::Ref>,
        known: &BTreeSet<String>,
        label: Option<&str>,
        when: &str,
    ) {
        for (name, rel) in refs {
            if known.contains(&name) {
                continue;
            }
            let listed = known
                .iter()
                .map(|v| format!("${{{v}}}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.problem(
                &join(base, rel),
                format!(
                    "{}`${{{name}}}` is used before it is captured; capture it {when} with \
                     `capture: {{ {name}: REGEX }}` (known here: {listed})",
                    label.map(|l| format!("{l}: ")).unwrap_or_default()
                ),
            );
        }
    }

    /// Validates one call (at `at`) and returns its faux form; `retry`:
    /// it is a `retry:` of another call.
    pub(super) fn call(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        default_id: String,
        label: String,
        extra_vars: &BTreeSet<String>,
        retry: bool,
    ) -> FauxCall {
        let id = spec.id.clone().unwrap_or(default_id);
        if !self.ids.insert(id.clone()) {
            let id_at = if spec.id.is_some() {
                join(at, [k("id")])
            } else {
                at.to_vec()
            };
            self.problem(
                &id_at,
                format!("call id `{id}` is used twice; give each call its own `id`"),
            );
        }
        let deliberate_error = spec.expect.as_ref().is_some_and(|e| {
            e.ok == Some(false)
                || matches!(
                    e.error,
                    Some(ErrorExpect::Flag(true) | ErrorExpect::Matches(_))
                )
        });
        let builtin = ALL_TOOL_NAMES.contains(&spec.call.as_str());
        // `SERVER/NAME`: sent to that server as written (started for it).
        let to_server = self.server_of_call(&spec.call);
        let known_name = builtin || to_server || self.server_tools.contains(&spec.call);
        let inactive = builtin
            && !self.server_tools.contains(&spec.call)
            && self
                .active_builtins
                .as_ref()
                .is_some_and(|(active, _)| !active.contains(&spec.call));
        if (!known_name || inactive) && !deliberate_error && !self.any_tool {
            if self.open_tools {
                // One of a whole server's tools, maybe: known at the start.
                self.open_calls.push(OpenCall {
                    id: id.clone(),
                    label: label.clone(),
                    name: spec.call.clone(),
                });
            } else if inactive {
                let message = self.inactive_tool_message(&spec.call);
                self.problem(&join(at, [k("call")]), message);
            } else {
                self.problem(
                    &join(at, [k("call")]),
                    format!(
                        "{} (to test the error for an unknown tool on purpose, add `expect: {{ \
                         error: true }}` to the call)",
                        self.unknown_tool(&spec.call)
                    ),
                );
            }
        }
        let known: BTreeSet<String> = self.known_vars.union(extra_vars).cloned().collect();
        let args = self.arguments(spec, at, &label, &known);
        let captures = self.captures(spec, at);
        if let Some(expect) = &spec.expect {
            let expect_at = join(at, [k("expect")]);
            let refs = vars::call_expect_refs(expect);
            self.unknown_refs(&expect_at, refs, &known, Some(&label), "in an earlier step");
            let check = self.call_check(expect, &expect_at, &label, retry);
            self.call_checks.insert(id.clone(), Box::new(check));
        }
        self.call_labels.insert(id.clone(), label.clone());
        if let Some(recorded) = &spec.recorded {
            self.recorded_result(&id, recorded, at, &label);
        }
        self.cancel_after_of(spec, at, &id, &label, retry);
        let retries = self.retries(spec, at, &id, &label, extra_vars, &captures, retry);
        FauxCall {
            id,
            name: spec.call.clone(),
            args,
            captures,
            retry: retries,
        }
    }

    /// The problem of a call to a built-in tool that `tools` leaves out:
    /// the run would send it and get the error for an inactive tool.
    fn inactive_tool_message(&self, name: &str) -> String {
        let (active, given) = self
            .active_builtins
            .as_ref()
            .map(|(a, g)| (a.clone(), g.as_str()))
            .unwrap_or_default();
        let mut listed = active;
        listed.extend(self.server_tools.iter().cloned());
        let listed = if listed.is_empty() {
            "none".to_owned()
        } else {
            listed.join(", ")
        };
        format!(
            "the tool `{name}` is not active in this scenario ({given}; the active tools are \
             {listed}), so the call would only get the error for an inactive tool: add `{name}` \
             to `tools`, or, to test that error on purpose, add `expect: {{ error: true }}` to \
             the call"
        )
    }

    /// `args` or `raw_args`, every `${var}` in them known by now.
    pub(super) fn arguments(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        label: &str,
        known: &BTreeSet<String>,
    ) -> FauxArgs {
        let args = match (&spec.args, &spec.raw_args) {
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(at, [k("raw_args")]),
                    format!("{label}: give either `args` or `raw_args`, not both"),
                );
                return FauxArgs::Json(serde_json::json!({}));
            }
            (_, Some(raw)) => FauxArgs::Raw(raw.clone()),
            (Some(args), None) => FauxArgs::Json(args.clone()),
            (None, None) => FauxArgs::Json(serde_json::json!({})),
        };
        let mut refs = Vec::new();
        match &args {
            FauxArgs::Json(v) => vars::value_refs(v, vec![k("args")], &mut refs),
            FauxArgs::Raw(t) => {
                refs.extend(var_refs(t).into_iter().map(|n| (n, vec![k("raw_args")])))
            }
        }
        self.unknown_refs(at, refs, known, Some(label), "in an earlier step");
        args
    }

    /// `capture: { NAME: REGEX }`, compiled.
    pub(super) fn captures(&mut self, spec: &CallSpec, at: &[Seg]) -> Vec<Capture> {
        let mut captures = Vec::new();
        for (name, pattern) in spec.capture.iter().flatten() {
            let capture_at = join(at, [k("capture"), k(name)]);
            if let Some(regex) = self.compile(&capture_at, pattern) {
                captures.push(Capture {
                    name: name.clone(),
                    regex,
                });
            }
        }
        captures
    }

    /// The `retry:` calls of call `id` (at `at`); each may use what the
    /// calls before it captured. A retry call has no `retry` of its own.
    #[allow(clippy::too_many_arguments, reason = "one call's context")]
    pub(super) fn retries(
        &mut self,
        spec: &CallSpec,
        at: &[Seg],
        id: &str,
        label: &str,
        extra_vars: &BTreeSet<String>,
        captures: &[Capture],
        is_retry: bool,
    ) -> Vec<FauxCall> {
        let Some(list) = &spec.retry else {
            return Vec::new();
        };
        let retry_at = join(at, [k("retry")]);
        if is_retry {
            self.problem_at_key(
                &retry_at,
                format!(
                    "{label}: a retry has no `retry` of its own; list every retry, in the order \
                     they are sent, in the first call's `retry:`"
                ),
            );
            return Vec::new();
        }
        let listed = matches!(self.node(&retry_at).map(|n| &n.kind), Some(Kind::Seq(_)));
        let mut retry_vars = extra_vars.clone();
        retry_vars.extend(captures.iter().map(|c| c.name.clone()));
        let mut retries = Vec::new();
        for (j, retry_spec) in list.0.iter().enumerate() {
            let item_at = if listed {
                join(&retry_at, [Seg::Index(j)])
            } else {
                retry_at.clone()
            };
            let call = self.call(
                retry_spec,
                &item_at,
                format!("{id}_retry{}", j + 1),
                format!("{label}, retry {}", j + 1),
                &retry_vars,
                true,
            );
            retry_vars.extend(call.captures.iter().map(|c| c.name.clone()));
            retries.push(call);
        }
        retries
    }
}

fn captured_names(call: &FauxCall, out: &mut BTreeSet<String>) {
    out.extend(call.captures.iter().map(|c| c.name.clone()));
    for retry in &call.retry {
        captured_names(retry, out);
    }
}
