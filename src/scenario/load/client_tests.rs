//! Loading what the harness as an MCP client answers and checks:
//! `sampling:`, `elicitation:`, `roots:`, a server's `auth:` and
//! `${env:NAME}` in `headers:`, and the steps that check resources and
//! prompts, with every problem located.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::tests::load;
use super::tests::script_calls;
use super::*;
use crate::agent::FauxArgs;
use crate::mcp::client::ClientCredentials;
use crate::mcp::client::Credential;
use crate::mcp::client::ElicitAction;
use crate::mcp::client::Elicitation;

#[test]
fn answers_auth_and_check_steps_become_the_plan() {
    let (scenarios, errors) = load(
        "servers:\n  fx: { command: [fx] }\n  web:\n    url: http://127.0.0.1:1/mcp\n    headers: { Authorization: \"Bearer ${env:TOKEN}\" }\n    auth: { client_id: app, client_secret: \"${env:SECRET}\", scopes: [read] }\ntools: [web]\nsampling: [{ text: hi }]\nelicitation:\n  - { action: accept, content: { a: 1 } }\n  - { action: decline }\nroots: [./src/, .]\nmodel:\n  - list_resources: fx\n    expect: { contains: notes }\n  - read_resource: fixture://notes\n    server: fx\n  - get_prompt: { server: web, name: greet, arguments: { who: Ada } }\n",
    );
    assert_eq!(errors, Vec::<String>::new());
    let s = &scenarios[0];
    assert_eq!(
        s.client,
        ClientPlan {
            sampling: Some(vec!["hi".to_owned()]),
            elicitation: Some(vec![
                Elicitation {
                    action: ElicitAction::Accept,
                    content: serde_json::Map::from_iter([("a".to_owned(), json!(1))]),
                },
                Elicitation {
                    action: ElicitAction::Decline,
                    content: serde_json::Map::new(),
                },
            ]),
            roots: Some(vec!["src".to_owned(), ".".to_owned()]),
        }
    );
    // `fx` is started for its check steps though `tools` leaves it out.
    let names: Vec<&str> = s.servers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["web", "fx"]);
    assert_eq!(
        s.servers[0].auth,
        Some(ClientCredentials {
            client_id: "app".to_owned(),
            credential: Credential::Secret("${env:SECRET}".to_owned()),
            scopes: vec!["read".to_owned()],
        })
    );
    let calls = script_calls(s);
    assert_eq!(
        calls,
        [
            (
                "call_1_1".to_owned(),
                "mcp:list_resources".to_owned(),
                FauxArgs::Json(json!({ "server": "fx" }))
            ),
            (
                "call_2_1".to_owned(),
                "mcp:read_resource".to_owned(),
                FauxArgs::Json(json!({ "uri": "fixture://notes", "server": "fx" }))
            ),
            (
                "call_3_1".to_owned(),
                "mcp:get_prompt".to_owned(),
                FauxArgs::Json(
                    json!({ "name": "greet", "arguments": { "who": "Ada" }, "server": "web" })
                )
            ),
        ]
    );
    assert_eq!(
        s.call_labels.values().cloned().collect::<Vec<_>>(),
        [
            "step 1 (list_resources fx)",
            "step 2 (read_resource fx)",
            "step 3 (get_prompt web)"
        ]
    );
}

#[test]
fn empty_roots_are_the_workspace_and_nothing_declared_is_none() {
    let (scenarios, errors) = load("roots: []\nmodel:\n  - say: hi\n");
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        scenarios[0].client,
        ClientPlan {
            roots: Some(vec![".".to_owned()]),
            ..ClientPlan::default()
        }
    );
    let (scenarios, _) = load("model:\n  - say: hi\n");
    assert_eq!(scenarios[0].client, ClientPlan::default());
}

#[test]
fn every_problem_is_located() {
    let (_, errors) = load(
        "servers:\n  fx: { command: [x] }\n  web:\n    url: http://127.0.0.1:1/mcp\n    headers: { Authorization: \"Bearer ${env:1BAD} ${nope}\" }\n    auth: { client_id: c }\n  key:\n    url: http://127.0.0.1:1/mcp\n    auth: { client_id: c, private_key: k, signing_algorithm: HS256 }\n  cmd:\n    command: [x]\n    auth: { client_id: c, client_secret: s }\nelicitation:\n  - { action: acept }\n  - { action: decline, content: { a: 1 } }\nroots: [/abs, ../up, \"\"]\nmodel:\n  - list_resources: fz\n  - read_resource: x://y\n  - get_prompt: { server: fx, name: \"\" }\n  - list_prompts: fx\n    server: fx\n    args: {}\n  - list_prompts: fx\n    call: read\n",
    );
    assert_eq!(
        errors,
        [
            "s/x.yaml:5:31: servers.web.headers.Authorization: `${env:1BAD}` does not name an \
             environment variable (letters, digits and `_`, not starting with a digit)",
            "s/x.yaml:5:31: servers.web.headers.Authorization: unknown variable `${nope}`: \
             headers and `auth` know `${env:NAME}` (the harness's environment variable NAME); \
             write `$${` for a literal `${`",
            "s/x.yaml:6:11: servers.web.auth: `auth` needs `client_secret` (e.g. \
             `client_secret: ${env:MY_SECRET}`) or `private_key` (a PEM key that signs a JWT \
             assertion)",
            "s/x.yaml:9:62: servers.key.auth.signing_algorithm: unknown signing algorithm \
             `HS256`: one of ES256, ES384, RS256, RS384, RS512; did you mean `ES256`?",
            "s/x.yaml:12:5: servers.cmd.auth: `auth` gets an OAuth token for a server reached \
             by `url`; this one is started from `command` (give it credentials in `env`)",
            "s/x.yaml:14:15: elicitation[0].action: unknown action `acept`: `accept` (the form \
             is sent), `decline` or `cancel`; did you mean `accept`?",
            "s/x.yaml:15:24: elicitation[1].content: `content` is sent only with `action: \
             accept`; a `decline` sends none",
            "s/x.yaml:16:9: roots[0]: `/abs` is absolute; a root is a path inside the \
             workspace, relative to it (`.` for the workspace itself)",
            "s/x.yaml:16:15: roots[1]: `../up` holds `..`; a root is a path inside the workspace",
            "s/x.yaml:16:22: roots[2]: is empty; write `.` for the workspace itself",
            "s/x.yaml:18:21: model[0].list_resources: step 1: unknown server `fz`: name one of \
             the scenario's `servers:` (it declares cmd, fx, key, web); did you mean `fx`?",
            "s/x.yaml:19:5: model[1]: step 2: `read_resource` needs `server: SERVER`, the \
             server to read `x://y` from",
            "s/x.yaml:20:37: model[2].get_prompt.name: step 3: `get_prompt.name` is the \
             prompt's name; it is empty",
            "s/x.yaml:22:5: model[3].server: step 4: `server` names the server of \
             `read_resource`; `list_resources`, `list_prompts` and `get_prompt` name theirs \
             themselves",
            "s/x.yaml:23:5: model[3].args: step 4: a step that checks a server's resources or \
             prompts takes no `args` (it takes `expect`, `capture` and `id`)",
            "s/x.yaml:24:5: model[4]: step 5 must have exactly one of `call`, `parallel`, \
             `say`, `list_resources`, `read_resource`, `list_prompts`, `get_prompt` or `fuzz` \
             (it has 2)",
        ]
    );
}
