//! Which program runs an agent, and how: a built-in profile with
//! harness.yaml's overrides, or an agent of the suite's own, its program
//! found (on PATH, or at the path written), its placeholders expanded.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use crate::agent::mcp_config::McpFormat;
use crate::agent::profiles;
use crate::agent::profiles::Placeholders;
use crate::agent::serve::ErrorRule;
use crate::agent::wire::Api;
use crate::base::vars::substitute;
use crate::scenario::agent::AgentDef;

/// An agent ready to start: its program found, the rest still holding
/// its placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The agent's name.
    pub name: String,
    /// The program, as found.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment, in order (later entries win).
    pub env: Vec<(String, String)>,
    /// Config files written into its home first: path and contents.
    pub files: Vec<(String, String)>,
    /// The wire format it speaks.
    pub api: Api,
    /// How its results are read as failures where the format has no flag.
    pub errors: ErrorRule,
    /// How MCP servers are registered with it (`None`: no way known).
    pub mcp: Option<McpFormat>,
}

/// Why an agent cannot be run here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// No built-in agent and no `agents:` entry has the name.
    Unknown {
        /// The name.
        name: String,
        /// The agents known.
        known: Vec<String>,
    },
    /// Its program is not there.
    NotInstalled {
        /// The name.
        name: String,
        /// The program looked for, as written.
        program: String,
        /// Whether it was looked for on PATH (else at the path written).
        on_path: bool,
    },
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::Unknown { name, known } => write!(
                f,
                "unknown agent `{name}`; the agents are {} (define one of your own under \
                 `agents:` in harness.yaml, with its `command` and `api`)",
                known.join(", ")
            ),
            Unavailable::NotInstalled {
                name,
                program,
                on_path,
            } => {
                let place = if *on_path {
                    format!("`{program}` was not found on PATH")
                } else {
                    format!("`{program}` is not an executable file")
                };
                write!(
                    f,
                    "the agent `{name}` is not installed: {place}; install it (docs/agents.md), \
                     or give its program in harness.yaml: `agents: {{ {name}: {{ command: \
                     [/path/to/{}] }} }}`",
                    program.rsplit('/').next().unwrap_or(program)
                )
            }
        }
    }
}

/// The agent `name` with the suite's `defs`, its program found on `path`
/// (a PATH value) or, when written with a `/`, relative to the current
/// directory.
pub(crate) fn resolve(
    name: &str,
    defs: &BTreeMap<String, AgentDef>,
    path: &str,
) -> Result<Resolved, Unavailable> {
    let def = defs.get(name);
    let builtin = profiles::profile(name);
    let (mut command, mut resolved) = match (builtin, def) {
        (Some(profile), def) => {
            let command = match def.and_then(|d| d.command.clone()) {
                Some(command) => command,
                None => vec![profile.command.to_owned()],
            };
            let resolved = Resolved {
                name: name.to_owned(),
                program: PathBuf::new(),
                args: profile.args.iter().map(|a| (*a).to_owned()).collect(),
                env: profile
                    .env
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                files: profile
                    .files
                    .iter()
                    .map(|f| (f.path.to_owned(), f.contents.to_owned()))
                    .collect(),
                api: def.and_then(|d| d.api).unwrap_or(profile.api),
                errors: profile.errors,
                mcp: profile.mcp,
            };
            (command, resolved)
        }
        (None, Some(def)) => {
            // Checked at load: an agent of the suite's own has both.
            let (Some(command), Some(api)) = (def.command.clone(), def.api) else {
                return Err(unknown(name, defs));
            };
            let resolved = Resolved {
                name: name.to_owned(),
                program: PathBuf::new(),
                args: Vec::new(),
                env: Vec::new(),
                files: Vec::new(),
                api,
                errors: if api == Api::OpenaiResponses {
                    ErrorRule::Codex
                } else {
                    ErrorRule::Flag
                },
                mcp: None,
            };
            (command, resolved)
        }
        (None, None) => return Err(unknown(name, defs)),
    };
    if let Some(def) = def {
        resolved.env.extend(def.env.iter().cloned());
    }
    if command.is_empty() {
        return Err(unknown(name, defs));
    }
    let program = command.remove(0);
    let mut args = command;
    args.append(&mut resolved.args);
    resolved.args = args;
    let search = resolved
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map_or(path, |(_, v)| v.as_str());
    match find_program(&program, search) {
        Some(found) => {
            resolved.program = found;
            Ok(resolved)
        }
        None => Err(Unavailable::NotInstalled {
            name: name.to_owned(),
            on_path: !program.contains('/'),
            program,
        }),
    }
}

fn unknown(name: &str, defs: &BTreeMap<String, AgentDef>) -> Unavailable {
    Unavailable::Unknown {
        name: name.to_owned(),
        known: crate::scenario::agent::known_names(defs),
    }
}

/// `program` on `path`, or as written when it holds a `/`: an
/// executable regular file.
fn find_program(program: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |candidate: &Path| {
        std::fs::metadata(candidate)
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    };
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let candidate = PathBuf::from(program);
        let candidate = if candidate.is_absolute() {
            candidate
        } else {
            std::env::current_dir().ok()?.join(candidate)
        };
        return executable(&candidate).then_some(candidate);
    }
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| executable(candidate))
}

/// A launch with `values` in place of the placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Expanded {
    /// The arguments.
    pub args: Vec<String>,
    /// The environment (later entries win).
    pub env: Vec<(String, String)>,
    /// The config files: path and contents.
    pub files: Vec<(String, String)>,
}

impl Resolved {
    /// Its arguments, environment and files with `values` expanded.
    pub(crate) fn expand(&self, values: &Placeholders) -> Expanded {
        let vars = BTreeMap::from([
            ("model_url".to_owned(), values.model_url.clone()),
            ("workspace".to_owned(), values.workspace.clone()),
            ("home".to_owned(), values.home.clone()),
            ("prompt".to_owned(), values.prompt.clone()),
        ]);
        let expand = |text: &str| substitute(text, &vars);
        Expanded {
            args: self.args.iter().map(|a| expand(a)).collect(),
            env: self
                .env
                .iter()
                .map(|(k, v)| (k.clone(), expand(v)))
                .collect(),
            files: self
                .files
                .iter()
                .map(|(p, c)| (expand(p), expand(c)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn an_agent_not_installed_names_the_program_and_the_command_key() {
        let err = resolve("codex", &BTreeMap::new(), "/nonexistent-dir").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the agent `codex` is not installed: `codex` was not found on PATH; install it \
             (docs/agents.md), or give its program in harness.yaml: `agents: { codex: { command: \
             [/path/to/codex] } }`"
        );
    }

    #[test]
    fn an_override_replaces_the_program_and_keeps_the_profile() {
        let defs = BTreeMap::from([(
            "pi".to_owned(),
            AgentDef {
                command: Some(vec!["/bin/sh".to_owned(), "x.js".to_owned()]),
                api: None,
                env: vec![("EXTRA".to_owned(), "${home}/e".to_owned())],
            },
        )]);
        let resolved = resolve("pi", &defs, "").unwrap();
        assert_eq!(resolved.program, PathBuf::from("/bin/sh"));
        assert_eq!(resolved.args[0], "x.js");
        assert_eq!(resolved.args[1], "-p");
        assert_eq!(resolved.api, Api::AnthropicMessages);
        let expanded = resolved.expand(&Placeholders {
            model_url: "http://127.0.0.1:1".to_owned(),
            workspace: "/w".to_owned(),
            home: "/h".to_owned(),
            prompt: "do it".to_owned(),
        });
        assert_eq!(expanded.args.last().map(String::as_str), Some("do it"));
        assert_eq!(
            expanded.env.last(),
            Some(&("EXTRA".to_owned(), "/h/e".to_owned()))
        );
        assert_eq!(
            expanded.files,
            vec![(
                "/h/.pi/agent/models.json".to_owned(),
                concat!(
                    r#"{"providers":{"harness":{"baseUrl":"http://127.0.0.1:1","api":"anthropic-messages","#,
                    r#""apiKey":"harness","models":[{"id":"scripted","contextWindow":128000,"maxTokens":4096}]}}}"#,
                    "\n"
                )
                .to_owned()
            )]
        );
    }

    #[test]
    fn an_unknown_agent_lists_the_known_ones() {
        let err = resolve("aider", &BTreeMap::new(), "").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown agent `aider`; the agents are pi, claude-code, codex, gemini-cli (define one \
             of your own under `agents:` in harness.yaml, with its `command` and `api`)"
        );
    }
}
