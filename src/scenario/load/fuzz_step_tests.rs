//! Loading the `fuzz` step: both forms become one call of `mcp:fuzz` with
//! every option filled in and `ok: true` expected (unless the step says
//! `ok` or `error`), its server started though `tools` leaves it out, and
//! every problem located.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::tests::load;
use super::tests::script_calls;
use crate::agent::FauxArgs;
use crate::scenario::expect::CallExpectation;

#[test]
fn both_forms_become_one_call_with_every_option_and_ok_expected() {
    let (scenarios, errors) = load(
        "servers:\n  fx: { command: [fx] }\n  web: { command: [web] }\ntools: [web]\nmodel:\n  \
         - fuzz: fx\n  \
         - fuzz: { server: web, tools: [lookup, \"a${b}\"], cases: 7, seed: 99, timeout: 0.5 }\n    \
           id: fz\n    expect: { contains: lookup }\n  \
         - fuzz: { server: fx, cases: 10000, timeout: 3600 }\n    expect: { error: true }\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    let s = &scenarios[0];
    let names: Vec<&str> = s.servers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["web", "fx"]);
    let calls = script_calls(s);
    assert_eq!(
        calls,
        [
            (
                "call_1_1".to_owned(),
                "mcp:fuzz".to_owned(),
                FauxArgs::Json(
                    json!({ "server": "fx", "cases": 30, "seed": 0, "timeout_ms": 10000 })
                )
            ),
            (
                "fz".to_owned(),
                "mcp:fuzz".to_owned(),
                FauxArgs::Json(json!({
                    "server": "web",
                    "tools": ["lookup", "a$${b}"],
                    "cases": 7,
                    "seed": 99,
                    "timeout_ms": 500,
                }))
            ),
            (
                "call_3_1".to_owned(),
                "mcp:fuzz".to_owned(),
                FauxArgs::Json(
                    json!({ "server": "fx", "cases": 10000, "seed": 0, "timeout_ms": 3600000 })
                )
            ),
        ]
    );
    let checks: Vec<(&str, &str, Vec<CallExpectation>)> = s
        .call_checks
        .iter()
        .map(|(id, check)| (id.as_str(), check.label.as_str(), check.checks.clone()))
        .collect();
    assert_eq!(
        checks,
        [
            (
                "call_1_1",
                "step 1 (fuzz fx)",
                vec![CallExpectation::Ok(true)]
            ),
            (
                "call_3_1",
                "step 3 (fuzz fx)",
                vec![CallExpectation::Error(true)]
            ),
            (
                "fz",
                "step 2 (fuzz web)",
                vec![
                    CallExpectation::Ok(true),
                    CallExpectation::Contains(vec!["lookup".to_owned()])
                ]
            ),
        ]
    );
}

#[test]
fn every_problem_is_located() {
    let (_, errors) = load(
        "servers:\n  memory: { command: [x] }\n  fx: { command: [y] }\nmodel:\n  \
         - fuzz: memroy\n  \
         - fuzz: { server: nope, cases: 0, timeout: 0 }\n  \
         - fuzz: { server: fx, tools: [], cases: 10001, timeout: 3601 }\n  \
         - fuzz: { server: fx, tools: [a, \"\", a], seed: -1, case: 3 }\n  \
         - fuzz: fx\n    server: fx\n    args: {}\n  \
         - fuzz: [fx]\n  \
         - fuzz: fx\n    call: read\n",
    );
    assert_eq!(
        errors,
        [
            "s/x.yaml:5:11: model[0].fuzz: step 1: unknown server `memroy`: name one of the \
             scenario's `servers:` (it declares fx, memory); did you mean `memory`?",
            "s/x.yaml:6:21: model[1].fuzz.server: step 2: unknown server `nope`: name one of \
             the scenario's `servers:` (it declares fx, memory)",
            "s/x.yaml:6:34: model[1].fuzz.cases: must be a whole number from 1 to 10000 (it is \
             0)",
            "s/x.yaml:6:46: model[1].fuzz.timeout: must be a number of seconds from 0.001 to \
             3600; it is 0",
            "s/x.yaml:7:32: model[2].fuzz.tools: step 3: `fuzz.tools` is empty; name at least \
             one of the server's tools, or leave `tools` out to fuzz them all",
            "s/x.yaml:7:43: model[2].fuzz.cases: must be a whole number from 1 to 10000 (it is \
             10001)",
            "s/x.yaml:7:59: model[2].fuzz.timeout: must be a number of seconds from 0.001 to \
             3600; it is 3601",
            "s/x.yaml:8:36: model[3].fuzz.tools[1]: step 4: a tool's name is empty",
            "s/x.yaml:8:40: model[3].fuzz.tools[2]: step 4: the tool `a` is named twice",
            "s/x.yaml:8:50: model[3].fuzz.seed: must be a whole number ≥ 0 (it is `-1`)",
            "s/x.yaml:8:54: model[3].fuzz: unknown field `case`, expected one of `server`, \
             `tools`, `cases`, `seed`, `timeout`; did you mean `cases`?",
            "s/x.yaml:10:5: model[4].server: step 5: a `fuzz` step takes no `server` (it names \
             its server itself: `fuzz: SERVER` or `fuzz: { server: SERVER, … }`); it takes \
             `expect`, `capture` and `id`",
            "s/x.yaml:11:5: model[4].args: step 5: a `fuzz` step takes no `args`; it takes \
             `expect`, `capture` and `id`",
            "s/x.yaml:12:11: model[5].fuzz: invalid type: sequence, expected a server's name, \
             or { server, tools, cases, seed, timeout }",
            "s/x.yaml:13:5: model[6]: step 7 must have exactly one of `call`, `parallel`, \
             `say`, `list_resources`, `read_resource`, `list_prompts`, `get_prompt` or `fuzz` \
             (it has 2)",
        ]
    );
}
