//! The scenario layer: the file format only. A scenario file or
//! `harness.yaml` (docs/scenarios.md) read into a [`Scenario`] as written:
//! its faux script, its checks compiled, its workspace plan and the
//! conditions it asks for, as data, every problem located at
//! file:line:col.
//!
//! It executes nothing and judges nothing: the run layer builds the
//! environment and runs the scenario (`run::env`, `run::pipeline`), the
//! judge checks what the run left (`judge`).
//!
//! | module | holds |
//! | --- | --- |
//! | [`yaml`] | the positioned YAML tree files are read into |
//! | [`de`] | serde from that tree, every error located |
//! | [`agent`] | `agents:` of harness.yaml, checked: the agents a scenario may name |
//! | [`model`] | the serde types of scenario and suite files |
//! | [`detail_spec`] | the serde types of `details_at`, `image` and `images` checks |
//! | [`two_way`] | the visitor and macros of values written two ways (string or object, one or a list) |
//! | [`load`] | loading and validating files into [`Scenario`]s (errors, the suite file, the validator by part) |
//! | [`setup`] | what a scenario runs under, as data: fault rules, bash, cancellations |
//! | [`expect`] | expectations as loading compiles them: typed checks, regexes compiled |
//! | [`vars`] | `${name}` in expectations: found at load, expanded at check |
//! | [`replay`] | `recorded:`, `replay:` and `git_checkout` of imported sessions |
//! | [`template`] | the `repeat` template of generated files |
//! | [`snapshot`] | snapshot files of tool results |
//! | [`text_file`] | reading the text files users name: regular files only |
//! | [`sandbox`] | `sandbox:`: `off`, or what the sandbox lets through |
//! | [`client`] | `sampling:`, `elicitation:`, `roots:` and a server's `auth:`: the harness as an MCP client |

pub(crate) mod agent;
pub(crate) mod client;
pub(crate) mod de;
pub(crate) mod detail_spec;
pub(crate) mod expect;
pub(crate) mod load;
pub(crate) mod model;
pub(crate) mod replay;
pub(crate) mod sandbox;
pub(crate) mod setup;
pub(crate) mod snapshot;
pub(crate) mod template;
pub(crate) mod text_file;
pub(crate) mod two_way;
pub(crate) mod vars;
pub(crate) mod yaml;

pub(crate) use load::ClientPlan;
pub(crate) use load::DEFAULT_TIMEOUT;
pub use load::Scenario;
pub use load::ScenarioError;
pub(crate) use load::ServerLaunch;
pub(crate) use load::ServerPlan;
pub(crate) use load::SettingProblem;
pub use load::Suite;
pub(crate) use load::ToolEntry;
pub(crate) use load::load_file;
pub use load::load_text;
