//! The run layer: discovery, selection, partitions, concurrent execution,
//! figures.
//!
//! [`Runner::run`] is a synchronous facade over a tokio runtime, so the CLI,
//! tests and benches call it without async plumbing. It reports through a
//! callback and returns a [`RunSummary`], the only input of the report
//! layer.

pub mod discover;
pub mod outcome;
pub mod partition;
pub mod runner;
pub mod stats;

pub use discover::Discovery;
pub use discover::Selection;
pub use discover::discover;
pub use outcome::CallStat;
pub use outcome::LoadError;
pub use outcome::RunSummary;
pub use outcome::ScenarioOutcome;
pub use outcome::ScenarioStats;
pub use outcome::Status;
pub use outcome::TurnStat;
pub use partition::Partition;
pub use partition::PartitionInfo;
pub use runner::RunConfig;
pub use runner::RunEvent;
pub use runner::Runner;
