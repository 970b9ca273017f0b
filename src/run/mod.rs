//! The run layer: discovery, selection, the run's settings and gates,
//! partitions, concurrent execution, the environment each scenario runs in
//! (`env`), and the outcome a report reads.
//!
//! Its public surface is a small facade over the crate's scenario, judge,
//! run and report machinery (which stays private; docs/architecture.md,
//! "The public surface"): [`discover`] a suite into a [`Discovery`] (or
//! [`load_text`] one file's text into [`Scenario`]s, read against a
//! [`Suite`]), set a [`RunnerBuilder`] (typed settings: [`Jobs`],
//! [`Budget`], [`Tokenizer`], [`Gate`]s, a [`Partition`], a [`Selection`],
//! a [`RepeatSpec`]), build a [`Runner`] and execute it into a
//! [`RunSummary`] of [`ScenarioOutcome`]s, each with its [`Status`] and
//! [`Figures`].
//!
//! | module | holds |
//! | --- | --- |
//! | `agent` | scenarios served to real agents: the program, the run, the transcript |
//! | `agent_outcome` | what run.json says of an agent's run |
//! | `discover` | finding and loading scenario files, the selection |
//! | `settings` | the run's settings, one type and one parser each, and the check of a suite file's |
//! | `gate` | the gate language `KEY=+LIMIT` |
//! | `partition` | `hash:K/N` and `slice:K/N`, suite fingerprints |
//! | `builder` | [`RunnerBuilder`]: every setting resolved, taken typed |
//! | `config` | how each scenario executes, as the builder resolved it |
//! | `runner` | [`Runner::execute`]: ordered, bounded concurrency, events, signals |
//! | `pipeline` | one scenario end to end: environment, loop, judge |
//! | `env` | the environment: workspace, git, faults, cleanup |
//! | `servers` | a scenario's MCP servers, and the run's pool of shared ones |
//! | `client_steps` | the tools the steps that check a server's resources and prompts are served as |
//! | `fuzz_step` | the tool a `fuzz` step is served as: the fuzz of a scenario's server, and the check of the tools it names |
//! | `client_side` | `${env:NAME}` of `headers` and `auth` expanded, a scenario's answers to its servers' requests with its roots as `file://` URIs |
//! | `replay` | `--sync-reads`: recorded texts written back before a replayed read |
//! | `snapshots` | snapshot files over a run |
//! | `outcome` | [`RunSummary`], the only input of the report layer |
//! | `transcript` | each scenario's turns, calls and results, bounded |
//! | `repeat` | `--repeat`: the setting, and what a repeated scenario's outcome says |
//! | `rounds` | the runs of a repeated scenario folded into one outcome |
//! | `stats` | per-tool figures and what tool definitions cost |
//! | `coverage` | what a suite's calls exercised, and what they never did |
//!
//! The checks themselves, the one judging pass and an import's drift are
//! the judge's (`crate::judge`), which reads the finished transcript.
//!
//! A run is built, then executed: [`RunnerBuilder::build`] fails before
//! any scenario starts when a setting cannot work (the suite's tokenizer
//! or gates, the async runtime; the others come typed, parsed once by
//! `settings`); [`Runner::execute`] is a synchronous facade over the
//! runtime, so the CLI, tests and benches call it without async plumbing.
//! It reports through a callback and returns a complete [`RunSummary`]:
//! positions, partition, load errors, gates and tokenizer included.

pub(crate) mod agent;
pub(crate) mod agent_outcome;
pub(crate) mod builder;
mod client_side;
mod client_steps;
mod config;
pub(crate) mod coverage;
pub(crate) mod discover;
pub(crate) mod env;
mod fuzz_step;
pub(crate) mod gate;
pub(crate) mod outcome;
pub(crate) mod partition;
mod pipeline;
mod refusals;
pub(crate) mod repeat;
pub(crate) mod replay;
mod rounds;
mod routes;
pub(crate) mod runner;
pub(crate) mod servers;
pub(crate) mod settings;
mod snapshots;
pub(crate) mod stats;
pub(crate) mod transcript;

pub use builder::BuildError;
pub use builder::RunnerBuilder;
pub use discover::Discovery;
pub use discover::Selection;
pub use discover::discover;
pub use discover::discover_with;
pub use gate::Gate;
pub(crate) use gate::GateError;
pub(crate) use gate::Metric;
pub(crate) use outcome::LoadError;
pub use outcome::RunSummary;
pub use outcome::ScenarioOutcome;
pub(crate) use outcome::ScenarioStats;
pub use outcome::Status;
pub(crate) use outcome::VariantRun;
pub use partition::Partition;
pub use partition::PartitionInfo;
pub use repeat::RepeatSpec;
pub use runner::RunError;
pub use runner::RunEvent;
pub use runner::Runner;

// The scenario and judge layers are crate-private; what a caller of the
// runner needs of them, each a type it can name and use through its
// methods.
pub use crate::judge::Figures;
pub use crate::scenario::Scenario;
pub use crate::scenario::ScenarioError;
pub use crate::scenario::Suite;
pub use crate::scenario::load_text;
pub use discover::load_suite;
pub use settings::Budget;
pub use settings::Jobs;
pub use settings::Tokenizer;
