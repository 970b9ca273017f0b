//! Loading scenario files: the positioned YAML tree
//! ([`crate::scenario::yaml`]), serde from it ([`crate::scenario::de`]),
//! and the validation that turns a
//! [`ScenarioDoc`](crate::scenario::model::ScenarioDoc) into a runnable
//! [`Scenario`] (a faux script plus checks).
//!
//! Every problem of a file is collected, not just the first, each at the
//! node it concerns (`file:line:col: path: message; hint`): YAML syntax,
//! nesting and aliases, duplicate keys, unknown keys (with a "did you
//! mean"), wrong types, missing keys, and then what serde cannot see:
//! step kinds, unknown tools, `${var}` used before it is captured (in
//! arguments and in expectations), bad regexes, missing fixtures, paths
//! that leave the workspace, files under a declared symlink, file modes,
//! generated file sizes, and every number against its range.
//!
//! | module | holds |
//! | --- | --- |
//! | `error` | [`ScenarioError`] and the problems of one document |
//! | `suite` | the suite file, [`Suite`], and the checks of its values |
//! | `limits` | `limits:` and limits files ([`load_limits`]) |
//! | `document` | [`load_file`], [`load_text`]: documents into scenarios |
//! | `scenario` | what loading makes: [`Scenario`] and its parts |
//! | `validator` | the validation's state, and what its parts share |
//! | `script` | the faux model's script: steps, calls, captures, retries |
//! | `expectations` | `expect:` compiled into typed checks |
//! | `fixture` | the workspace: a fixture or `git_checkout`, and its files |
//! | `setup` | `faults:`, `bash:` and `cancel_after_ms` as data |
//! | `servers` | `servers:` and the MCP entries of `tools:` |
//! | `replay` | `recorded:` and `replay:` of imported sessions |
//!
//! The suite's run settings (`jobs`, `tokenizer`, `gates`) are checked by
//! a function the run layer hands to [`Suite`]'s loading, so each problem
//! is placed with the file's others while this room names no run.
//! | `validator` | the validation's state and what its parts share |
//! | `script` | steps, calls, arguments, captures, retries |
//! | `expectations` | a call's `expect:` and the run's |
//! | `fixture` | `workspace:`: fixtures, `git_checkout`, inline files |
//! | `replay` | `recorded:` results and the `replay:` plan |
//! | `setup` | `faults:`, `bash:`, `cancel_after_ms`: checked and typed |
//! | `agents` | `agents:`, `agent:`, and the loop's keys an agent scenario may not set |
//! | `servers` | `servers:` and the MCP entries of `tools:` |
//! | `sandbox` | `sandbox:` and its `write:` paths, checked |
//! | `client_steps` | the steps that check a server's resources and prompts |
//! | `fuzz_step` | `fuzz:`, the step that fuzzes a server's tools |

mod agents;
mod client;
mod client_steps;
mod document;
mod error;
mod expectations;
mod fixture;
mod fuzz_step;
mod limits;
mod replay;
mod sandbox;
mod scenario;
mod script;
mod servers;
mod setup;
mod suite;
mod validator;

pub(crate) use document::load_file;
pub use document::load_text;
pub use error::ScenarioError;
pub(crate) use limits::load_limits;
pub(crate) use scenario::ClientPlan;
pub(crate) use scenario::FileContent;
pub(crate) use scenario::GitCheckout;
pub(crate) use scenario::SandboxPlan;
pub use scenario::Scenario;
pub(crate) use scenario::ServerLaunch;
pub(crate) use scenario::ServerPlan;
pub(crate) use scenario::ToolEntry;
pub(crate) use scenario::WorkspacePlan;
pub(crate) use suite::SUITE_FILE;
pub(crate) use suite::SettingProblem;
pub use suite::Suite;
pub(crate) use validator::DEFAULT_TIMEOUT;

#[cfg(test)]
mod client_tests;
#[cfg(test)]
mod fuzz_step_tests;
#[cfg(test)]
mod tests;
