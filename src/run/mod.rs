//! The run layer: discovery, selection, partitions, the gates a run
//! records, concurrent execution, figures.
//!
//! | module | holds |
//! | --- | --- |
//! | [`discover`](mod@discover) | finding and loading scenario files, the selection |
//! | [`partition`] | `hash:K/N` and `slice:K/N`, suite fingerprints |
//! | [`gate`] | the gate language `KEY=+LIMIT` (from [`crate::scenario::gate`]) |
//! | [`builder`] | [`RunnerBuilder`]: every setting resolved, taken typed |
//! | `config` | how each scenario executes, as the builder resolved it |
//! | [`runner`] | [`Runner::execute`]: ordered, bounded concurrency, events, signals |
//! | `pipeline` | one scenario end to end |
//! | `snapshots` | snapshot files over a run |
//! | [`outcome`] | [`RunSummary`], the only input of the report layer |
//! | `tally` | the one judging pass: figures, per-call statistics, coverage |
//! | [`stats`] | per-tool figures and what tool definitions cost |
//! | [`replay`] | an imported session's results against the recorded ones |
//! | [`coverage`] | what a suite's calls exercised, and what they never did |
//! | [`transcript`] | each scenario's turns, calls and results, bounded |
//!
//! A run is built, then executed: [`RunnerBuilder::build`] fails before
//! any scenario starts when a setting cannot work (the suite's tokenizer
//! or gates, the async runtime; the others come typed, parsed once by
//! [`crate::scenario::settings`]); [`Runner::execute`] is a synchronous facade
//! over the runtime, so the CLI, tests and benches call it without async
//! plumbing. It reports through a callback and returns a complete
//! [`RunSummary`]: positions, partition, load errors, gates and tokenizer
//! included.

pub mod builder;
mod config;
pub mod coverage;
pub mod discover;
pub use crate::scenario::gate;
pub mod outcome;
pub mod partition;
mod pipeline;
mod presentation;
pub mod replay;
pub mod runner;
pub mod servers;
mod snapshots;
pub mod stats;
mod tally;
pub mod transcript;

pub use builder::BuildError;
pub use builder::RunnerBuilder;
pub use discover::Discovery;
pub use discover::PatternError;
pub use discover::Selection;
pub use discover::discover;
pub use gate::Gate;
pub use gate::GateError;
pub use gate::Metric;
pub use outcome::CallStat;
pub use outcome::LoadError;
pub use outcome::RunSummary;
pub use outcome::ScenarioOutcome;
pub use outcome::ScenarioStats;
pub use outcome::Status;
pub use outcome::TurnStat;
pub use partition::Fingerprint;
pub use partition::Partition;
pub use partition::PartitionInfo;
pub use pipeline::SCRATCH_NAME;
pub use pipeline::WORKSPACE_NAME;
pub use presentation::failure_kind;
pub use runner::RunError;
pub use runner::RunEvent;
pub use runner::Runner;
