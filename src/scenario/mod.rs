//! The scenario layer: the YAML model of docs/scenarios.md, loading with located
//! errors, workspaces, the figures of a run, checks and snapshots.
//!
//! It turns a file into data (a [`Scenario`]: a faux script plus checks)
//! and judges a finished run; it does not execute anything itself.
//!
//! | module | holds |
//! | --- | --- |
//! | [`model`] | the serde types of scenario and suite files |
//! | [`detail_spec`] | the serde types of `details_at`, `image` and `images` checks |
//! | [`two_way`] | the visitor and macros of values written two ways (string or object, one or a list) |
//! | [`yaml`] | the positioned YAML tree files are read into |
//! | [`de`] | serde from that tree, every error located |
//! | [`load`] | loading and validating files into [`Scenario`]s (errors, the suite file, the validator by part) |
//! | [`workspace`] | building a scenario's temporary workspace |
//! | [`figures`] | a run's [`Figures`] (turns, calls, retries, tokens …) |
//! | [`expect`] | expectations as loading compiles them: typed checks, regexes compiled |
//! | [`vars`] | `${name}` in expectations: found at load, expanded at check |
//! | [`check`] | the checks (run-level contract, per call, files), and the [`Failure`]s they find |
//! | [`gate`] | the gate language `KEY=+LIMIT` of `--gate` and `gates:` |
//! | [`focus`] | where to look in a long text that failed a check |
//! | [`deadline`] | when a scenario's time is up, for its run and its checks |
//! | [`settings`] | [`Jobs`](settings::Jobs), [`Budget`](settings::Budget), [`Tokenizer`](settings::Tokenizer): one type and one parser each |
//! | [`snapshot`] | snapshot files of tool results |
//! | [`template`] | the `repeat` template of generated files |
//! | [`pointer`](mod@pointer) | `details_at`: checks on details by JSON pointer |
//! | [`images`] | `image` and `images`: checks on image blocks |
//! | [`updates`] | what the checks keep of streamed updates |
//! | [`exact`] | exact-byte and symlink file checks |
//! | [`replay`] | `recorded:`, `replay:` and `git_checkout` of imported sessions |

pub mod check;
pub mod conditions;
pub mod de;
pub mod deadline;
pub mod detail_spec;
pub mod exact;
pub mod expect;
pub mod faults;
pub mod figures;
pub mod focus;
pub mod gate;
pub mod images;
pub mod load;
pub mod model;
pub mod pointer;
pub mod replay;
pub mod settings;
pub mod snapshot;
pub mod template;
pub mod text_file;
pub mod two_way;
pub mod updates;
pub mod vars;
pub mod workspace;
pub mod yaml;

pub use check::CheckInput;
pub use check::Failure;
pub use figures::Figures;
pub use load::Scenario;
pub use load::ScenarioError;
pub use load::ServerLaunch;
pub use load::ServerPlan;
pub use load::Suite;
pub use load::ToolEntry;
pub use load::load_file;
pub use load::load_text;
