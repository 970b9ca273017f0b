//! The harness as an MCP client, as a scenario declares it: `sampling:`,
//! `elicitation:` and `roots:` (answers to its servers' requests) checked
//! into a [`ClientPlan`], a server's `auth:` into [`ClientCredentials`],
//! and the `${env:NAME}` references of `headers:` and `auth:`.

use std::path::Component;
use std::path::Path;

use crate::base::vars::var_refs;
use crate::mcp::client::ClientCredentials;
use crate::mcp::client::Credential;
use crate::mcp::client::ElicitAction;
use crate::mcp::client::Elicitation;
use crate::mcp::client::SIGNING_ALGORITHMS;
use crate::scenario::client::AuthSpec;
use crate::scenario::client::ElicitationSpec;
use crate::scenario::client::SamplingSpec;
use crate::scenario::de::closest;
use crate::scenario::yaml::Seg;

use super::scenario::ClientPlan;
use super::validator::Validator;
use super::validator::join;
use super::validator::k;

/// Whether `name` can name an environment variable.
fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Validator<'_> {
    /// `sampling:`, `elicitation:` and `roots:` of a scenario.
    pub(super) fn client_plan(
        &mut self,
        sampling: Option<&[SamplingSpec]>,
        elicitation: Option<&[ElicitationSpec]>,
        roots: Option<&[String]>,
    ) -> ClientPlan {
        let elicitation = elicitation.map(|answers| {
            answers
                .iter()
                .enumerate()
                .filter_map(|(i, answer)| self.elicitation(i, answer))
                .collect()
        });
        let roots = roots.map(|roots| {
            if roots.is_empty() {
                return vec![".".to_owned()];
            }
            roots
                .iter()
                .enumerate()
                .filter_map(|(i, root)| self.root(i, root))
                .collect()
        });
        ClientPlan {
            sampling: sampling.map(|s| s.iter().map(|a| a.text.clone()).collect()),
            elicitation,
            roots,
        }
    }

    fn elicitation(&mut self, i: usize, answer: &ElicitationSpec) -> Option<Elicitation> {
        let at = [k("elicitation"), Seg::Index(i)];
        let action = match answer.action.as_str() {
            "accept" => ElicitAction::Accept,
            "decline" => ElicitAction::Decline,
            "cancel" => ElicitAction::Cancel,
            other => {
                let hint = closest(other, ["accept", "decline", "cancel"].into_iter())
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                self.problem(
                    &join(&at, [k("action")]),
                    format!(
                        "unknown action `{other}`: `accept` (the form is sent), `decline` or \
                         `cancel`{hint}"
                    ),
                );
                return None;
            }
        };
        if action != ElicitAction::Accept && answer.content.is_some() {
            self.problem_at_key(
                &join(&at, [k("content")]),
                format!(
                    "`content` is sent only with `action: accept`; a `{}` sends none",
                    answer.action
                ),
            );
        }
        Some(Elicitation {
            action,
            content: answer.content.clone().unwrap_or_default(),
        })
    }

    fn root(&mut self, i: usize, root: &str) -> Option<String> {
        let at = [k("roots"), Seg::Index(i)];
        let path = Path::new(root);
        let problem = if root.is_empty() {
            Some("is empty; write `.` for the workspace itself".to_owned())
        } else if root.contains('\0') {
            Some(super::validator::NUL_IN_PATH.to_owned())
        } else if path.is_absolute() {
            Some(format!(
                "`{root}` is absolute; a root is a path inside the workspace, relative to it \
                 (`.` for the workspace itself)"
            ))
        } else if path.components().any(|c| c == Component::ParentDir) {
            Some(format!(
                "`{root}` holds `..`; a root is a path inside the workspace"
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            self.problem(&at, problem);
            return None;
        }
        let clean: std::path::PathBuf = path
            .components()
            .filter(|c| *c != Component::CurDir)
            .collect();
        Some(if clean.as_os_str().is_empty() {
            ".".to_owned()
        } else {
            clean.display().to_string()
        })
    }

    /// A server's `auth:` (at `at`), for a server reached by `url` or not.
    pub(super) fn auth(
        &mut self,
        at: &[Seg],
        spec: &AuthSpec,
        by_url: bool,
    ) -> Option<ClientCredentials> {
        if !by_url {
            self.problem_at_key(
                at,
                "`auth` gets an OAuth token for a server reached by `url`; this one is started \
                 from `command` (give it credentials in `env`)",
            );
            return None;
        }
        self.env_refs(&join(at, [k("client_id")]), &spec.client_id);
        let credential = match (&spec.client_secret, &spec.private_key) {
            (Some(secret), None) => {
                self.env_refs(&join(at, [k("client_secret")]), secret);
                if let Some(algorithm) = &spec.signing_algorithm {
                    self.problem(
                        &join(at, [k("signing_algorithm")]),
                        format!(
                            "`signing_algorithm: {algorithm}` signs with `private_key`; this \
                             client has a `client_secret`"
                        ),
                    );
                }
                Credential::Secret(secret.clone())
            }
            (None, Some(pem)) => {
                self.env_refs(&join(at, [k("private_key")]), pem);
                let algorithm = spec.signing_algorithm.as_deref().unwrap_or("ES256");
                if !SIGNING_ALGORITHMS.contains(&algorithm) {
                    let hint = closest(algorithm, SIGNING_ALGORITHMS.into_iter())
                        .map(|c| format!("; did you mean `{c}`?"))
                        .unwrap_or_default();
                    self.problem(
                        &join(at, [k("signing_algorithm")]),
                        format!(
                            "unknown signing algorithm `{algorithm}`: one of {}{hint}",
                            SIGNING_ALGORITHMS.join(", ")
                        ),
                    );
                }
                Credential::PrivateKey {
                    pem: pem.clone(),
                    algorithm: algorithm.to_owned(),
                }
            }
            (Some(_), Some(_)) => {
                self.problem_at_key(
                    &join(at, [k("private_key")]),
                    "give `client_secret` or `private_key`, not both",
                );
                return None;
            }
            (None, None) => {
                self.problem(
                    at,
                    "`auth` needs `client_secret` (e.g. `client_secret: ${env:MY_SECRET}`) or \
                     `private_key` (a PEM key that signs a JWT assertion)",
                );
                return None;
            }
        };
        Some(ClientCredentials {
            client_id: spec.client_id.clone(),
            credential,
            scopes: spec.scopes.clone().unwrap_or_default(),
        })
    }

    /// The `${…}` references of a header or credential: only
    /// `${env:NAME}`, expanded when the server is reached.
    pub(super) fn env_refs(&mut self, at: &[Seg], text: &str) {
        for var in var_refs(text) {
            match var.strip_prefix("env:") {
                Some(name) if is_env_name(name) => {}
                Some(name) => self.problem(
                    at,
                    format!(
                        "`${{env:{name}}}` does not name an environment variable (letters, \
                         digits and `_`, not starting with a digit)"
                    ),
                ),
                None => self.problem(
                    at,
                    format!(
                        "unknown variable `${{{var}}}`: headers and `auth` know \
                         `${{env:NAME}}` (the harness's environment variable NAME); write \
                         `$${{` for a literal `${{`"
                    ),
                ),
            }
        }
    }
}
