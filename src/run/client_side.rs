//! What the harness, as an MCP client, needs of the environment when a
//! scenario's servers are reached: `${env:NAME}` in `headers:` and
//! `auth:` expanded from the harness's own environment (a variable that
//! is not set fails the start, naming it, never a value), and the
//! scenario's answers to its servers' requests with its `roots:` made
//! `file://` URIs inside the workspace.

use std::collections::BTreeMap;
use std::path::Path;

use crate::base::vars::substitute;
use crate::base::vars::var_refs;
use crate::mcp::client::Answers;
use crate::mcp::client::ClientCredentials;
use crate::mcp::client::Credential;
use crate::mcp::client::Root;
use crate::scenario::ClientPlan;

/// `text` with each `${env:NAME}` replaced by the variable's value; `what`
/// says where it is written, for the error of a variable not set.
pub(super) fn expand_env(text: &str, what: &str) -> Result<String, String> {
    expand_env_with(text, what, |name| std::env::var(name).ok())
}

fn expand_env_with(
    text: &str,
    what: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut vars = BTreeMap::new();
    for var in var_refs(text) {
        let Some(name) = var.strip_prefix("env:") else {
            continue;
        };
        match lookup(name) {
            Some(value) => {
                vars.insert(var.clone(), value);
            }
            None => {
                return Err(format!(
                    "the environment variable `{name}` ({what} names it) is not set, or is not \
                     UTF-8"
                ));
            }
        }
    }
    Ok(substitute(text, &vars))
}

/// `headers` of server `server` with their variables expanded.
pub(super) fn headers(
    server: &str,
    headers: &[(String, String)],
) -> Result<Vec<(String, String)>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let what = format!("`servers.{server}.headers.{name}`");
            Ok((name.clone(), expand_env(value, &what)?))
        })
        .collect()
}

/// `auth` of server `server` with its variables expanded.
pub(super) fn auth(server: &str, auth: &ClientCredentials) -> Result<ClientCredentials, String> {
    let at = |key: &str| format!("`servers.{server}.auth.{key}`");
    Ok(ClientCredentials {
        client_id: expand_env(&auth.client_id, &at("client_id"))?,
        credential: match &auth.credential {
            Credential::Secret(secret) => {
                Credential::Secret(expand_env(secret, &at("client_secret"))?)
            }
            Credential::PrivateKey { pem, algorithm } => Credential::PrivateKey {
                pem: expand_env(pem, &at("private_key"))?,
                algorithm: algorithm.clone(),
            },
        },
        scopes: auth.scopes.clone(),
    })
}

/// The answers of a scenario whose workspace is `workspace` (its real
/// path).
pub(super) fn answers(plan: &ClientPlan, workspace: &Path) -> Answers {
    Answers {
        sampling: plan.sampling.clone(),
        elicitation: plan.elicitation.clone(),
        roots: plan.roots.as_ref().map(|roots| {
            roots
                .iter()
                .map(|root| {
                    let path = if root == "." {
                        workspace.to_path_buf()
                    } else {
                        workspace.join(root)
                    };
                    Root {
                        uri: file_uri(&path),
                        name: root.clone(),
                    }
                })
                .collect()
        }),
    }
}

/// Adds to `model` one turn that is not scripted for each of `texts` (the
/// replies to the servers' sampling requests): no input, the text's
/// tokens as output, as the faux model's answer to a request of its own.
pub(super) fn price_sampling(
    model: &mut crate::agent::FauxReport,
    texts: &[String],
    tokens: &dyn crate::agent::TokenCounter,
) {
    for text in texts {
        model.turns.push(crate::agent::faux::Turn {
            usage: crate::agent::Usage {
                output: tokens.count(text),
                ..crate::agent::Usage::default()
            },
            scripted: false,
            calls: Vec::new(),
        });
    }
}

/// `file://` and the absolute `path`, each byte that is not unreserved
/// (RFC 3986) or `/` percent-encoded.
fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'.' | b'_' | b'~') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn env_references_expand_and_a_missing_one_is_named() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(
            expand_env_with("Bearer ${env:TOKEN} $${env:TOKEN}", "h", lookup),
            Ok("Bearer s3cret ${env:TOKEN}".to_owned())
        );
        assert_eq!(
            expand_env_with("${env:NOPE}", "`servers.s.headers.X`", lookup),
            Err(
                "the environment variable `NOPE` (`servers.s.headers.X` names it) is not set, \
                 or is not UTF-8"
                    .to_owned()
            )
        );
    }

    #[test]
    fn roots_are_file_uris_inside_the_workspace() {
        let plan = ClientPlan {
            roots: Some(vec![".".to_owned(), "src dir/a".to_owned()]),
            ..ClientPlan::default()
        };
        assert_eq!(
            answers(&plan, Path::new("/tmp/w s")).roots,
            Some(vec![
                Root {
                    uri: "file:///tmp/w%20s".to_owned(),
                    name: ".".to_owned(),
                },
                Root {
                    uri: "file:///tmp/w%20s/src%20dir/a".to_owned(),
                    name: "src dir/a".to_owned(),
                },
            ])
        );
    }
}
