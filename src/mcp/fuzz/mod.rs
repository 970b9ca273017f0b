//! `harness fuzz`: adversarial `tools/call`s made from each tool's input
//! schema, sent to a server exactly as written, and the answers sorted
//! (docs/mcp.md, "Fuzzing a server"), from `harness fuzz` or a scenario's
//! `fuzz` step.
//!
//! ```text
//! generate.rs  the cases of one tool: deterministic by seed, bounded
//! drive.rs     each case sent, the answer sorted, a ping after it, the
//!              server restarted after it went down (`harness fuzz`) or
//!              left ended (a scenario's `fuzz` step); the report
//! text.rs      the report as lines, the same for the console and the
//!              step's result: bounded, deterministic, escaped
//! ```

pub mod drive;
pub mod generate;
pub mod text;

pub use drive::Answer;
pub use drive::DEFAULT_CASES;
pub use drive::DEFAULT_TIMEOUT_SECS;
pub use drive::Failure;
pub use drive::FailureKind;
pub use drive::MAX_TIMEOUT_SECS;
pub use drive::Options;
pub use drive::Report;
pub use drive::run;
pub use drive::run_on;
pub use drive::selected;
pub use generate::Case;
pub use generate::Class;
pub use generate::cases;
