//! `fuzz: SERVER` or `fuzz: { server, tools, cases, seed, timeout }`: the
//! step that sends a server's tools adversarial calls made from their
//! schemas, as `harness fuzz` does (`mcp::fuzz`). It is served as one call
//! of the tool the run adds for it (`mcp:fuzz`), whose result summarises
//! the fuzz; unless its `expect` says `ok` or `error` itself, the step
//! expects `ok: true`, so a failing fuzz fails the scenario with its
//! failures listed.

use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use crate::agent::FauxStep;
use crate::mcp::fuzz::DEFAULT_CASES;
use crate::mcp::fuzz::DEFAULT_TIMEOUT_SECS;
use crate::mcp::fuzz::MAX_TIMEOUT_SECS;
use crate::mcp::fuzz::generate::MAX_CASES;
use crate::scenario::client::FUZZ;
use crate::scenario::client::FuzzSpec;
use crate::scenario::model::CallExpect;
use crate::scenario::model::CallSpec;
use crate::scenario::model::StepSpec;
use crate::scenario::yaml::Seg;
use crate::tools::truncate::format_number;

use super::validator::Validator;
use super::validator::join;
use super::validator::k;

/// The keys of a step that a `fuzz` step does not take.
const NOT_FOR_FUZZ: [&str; 6] = [
    "server",
    "args",
    "raw_args",
    "retry",
    "recorded",
    "cancel_after_ms",
];

impl Validator<'_> {
    /// A `fuzz` step: one call of `mcp:fuzz`, its arguments every option
    /// with its default filled in (`server`, `tools` when given, `cases`,
    /// `seed`, `timeout_ms`).
    pub(super) fn fuzz_step(
        &mut self,
        n: usize,
        at: &[Seg],
        step: &StepSpec,
        fuzz: &FuzzSpec,
    ) -> FauxStep {
        for key in NOT_FOR_FUZZ {
            if self.node(&join(at, [k(key)])).is_some() {
                let why = if key == "server" {
                    " (it names its server itself: `fuzz: SERVER` or `fuzz: { server: SERVER, \
                     … }`)"
                } else {
                    ""
                };
                self.problem_at_key(
                    &join(at, [k(key)]),
                    format!(
                        "step {n}: a `fuzz` step takes no `{key}`{why}; it takes `expect`, \
                         `capture` and `id`"
                    ),
                );
            }
        }
        let options = fuzz.options();
        let fuzz_at = join(at, [k("fuzz")]);
        let server_at = match fuzz {
            FuzzSpec::Server(_) => fuzz_at.clone(),
            FuzzSpec::Options(_) => join(&fuzz_at, [k("server")]),
        };
        self.checked_server(n, &options.server, &server_at);
        let mut args = Map::new();
        args.insert("server".to_owned(), json!(options.server));
        if let Some(tools) = &options.tools {
            let tools_at = join(&fuzz_at, [k("tools")]);
            if tools.is_empty() {
                self.problem(
                    &tools_at,
                    format!(
                        "step {n}: `fuzz.tools` is empty; name at least one of the server's \
                         tools, or leave `tools` out to fuzz them all"
                    ),
                );
            }
            let mut seen = BTreeSet::new();
            for (i, tool) in tools.iter().enumerate() {
                if tool.is_empty() {
                    self.problem(
                        &join(&tools_at, [Seg::Index(i)]),
                        format!("step {n}: a tool's name is empty"),
                    );
                } else if !seen.insert(tool.as_str()) {
                    self.problem(
                        &join(&tools_at, [Seg::Index(i)]),
                        format!("step {n}: the tool `{tool}` is named twice"),
                    );
                }
            }
            // Written as the server names them: a `${` is not a variable.
            let names: Vec<String> = tools.iter().map(|t| t.replace("${", "$${")).collect();
            args.insert("tools".to_owned(), json!(names));
        }
        let cases = options.cases.unwrap_or(DEFAULT_CASES as u64);
        if !(1..=MAX_CASES as u64).contains(&cases) {
            self.problem(
                &join(&fuzz_at, [k("cases")]),
                format!("must be a whole number from 1 to {MAX_CASES} (it is {cases})"),
            );
        }
        args.insert("cases".to_owned(), json!(cases));
        args.insert("seed".to_owned(), json!(options.seed.unwrap_or(0)));
        let timeout = options.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS as f64);
        let timeout_ms = timeout * 1000.0;
        if !(timeout.is_finite() && timeout_ms >= 1.0 && timeout <= MAX_TIMEOUT_SECS as f64) {
            self.problem(
                &join(&fuzz_at, [k("timeout")]),
                format!(
                    "must be a number of seconds from 0.001 to {MAX_TIMEOUT_SECS}; it is {}",
                    format_number(timeout)
                ),
            );
        }
        args.insert(
            "timeout_ms".to_owned(),
            json!(
                timeout_ms
                    .round()
                    .clamp(1.0, (MAX_TIMEOUT_SECS * 1000) as f64) as u64
            ),
        );
        // The fuzz's verdict is the step's unless it says `ok` or `error`.
        let mut expect = step.expect.clone().unwrap_or_default();
        if expect.ok.is_none() && expect.error.is_none() {
            expect = CallExpect {
                ok: Some(true),
                ..expect
            };
        }
        let spec = CallSpec {
            call: FUZZ.to_owned(),
            id: step.id.clone(),
            args: Some(Value::Object(args)),
            expect: Some(expect),
            capture: step.capture.clone(),
            ..CallSpec::default()
        };
        self.check_call(n, at, &spec, format!("fuzz {}", options.server))
    }
}
