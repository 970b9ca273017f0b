//! The run layer: discovery, selection, partitions, the gates a run
//! records, concurrent execution, figures.
//!
//! Its public surface is a small facade over the crate's scenario, run
//! and report machinery (which stays private, docs/architecture.md shows
//! it): [`discover`] a suite into a [`Discovery`] (or [`load_text`] one
//! file's text into [`Scenario`]s, read against a [`Suite`]), set a
//! [`RunnerBuilder`] (typed settings: [`Jobs`], [`Budget`],
//! [`Tokenizer`], [`Gate`]s, a [`Partition`], a [`Selection`]), build a
//! [`Runner`] and execute it into a [`RunSummary`] of
//! [`ScenarioOutcome`]s, each with its [`Status`].
//!
//! | module | holds |
//! | --- | --- |
//! | `agent` | scenarios served to real agents: the program, the run, the transcript |
//! | `agent_outcome` | what run.json says of an agent's run |
//! | `discover` | finding and loading scenario files, the selection |
//! | `partition` | `hash:K/N` and `slice:K/N`, suite fingerprints |
//! | `gate` | the gate language `KEY=+LIMIT` (the scenario layer's, as suite files use it too) |
//! | `builder` | [`RunnerBuilder`]: every setting resolved, taken typed |
//! | `config` | how each scenario executes, as the builder resolved it |
//! | `runner` | [`Runner::execute`]: ordered, bounded concurrency, events, signals |
//! | `pipeline` | one scenario end to end |
//! | `snapshots` | snapshot files over a run |
//! | `outcome` | [`RunSummary`], the only input of the report layer |
//! | `tally` | the one judging pass: figures, per-call statistics, coverage |
//! | `stats` | per-tool figures and what tool definitions cost |
//! | `repeat` | `--repeat`: the setting, and what a repeated scenario's outcome says |
//! | `rounds` | the runs of a repeated scenario folded into one outcome |
//! | `replay` | an imported session's results against the recorded ones |
//! | `coverage` | what a suite's calls exercised, and what they never did |
//! | `transcript` | each scenario's turns, calls and results, bounded |
//!
//! A run is built, then executed: [`RunnerBuilder::build`] fails before
//! any scenario starts when a setting cannot work (the suite's tokenizer
//! or gates, the async runtime; the others come typed, parsed once by
//! the scenario layer's settings); [`Runner::execute`] is a synchronous facade
//! over the runtime, so the CLI, tests and benches call it without async
//! plumbing. It reports through a callback and returns a complete
//! [`RunSummary`]: positions, partition, load errors, gates and tokenizer
//! included.

pub(crate) mod agent;
pub(crate) mod agent_outcome;
pub(crate) mod builder;
mod config;
pub(crate) mod coverage;
pub(crate) mod discover;
pub(crate) mod env;
pub(crate) mod gate;
pub(crate) mod outcome;
pub(crate) mod partition;
mod pipeline;
pub(crate) mod repeat;
pub(crate) mod replay;
mod rounds;
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
