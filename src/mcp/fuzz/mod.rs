//! `harness fuzz`: adversarial `tools/call`s made from each tool's input
//! schema, sent to a server exactly as written, and the answers sorted
//! (docs/mcp.md, "Fuzzing a server").
//!
//! ```text
//! generate.rs  the cases of one tool: deterministic by seed, bounded
//! drive.rs     each case sent, the answer sorted, a ping after it, the
//!              server restarted after it went down; the report
//! ```

pub mod drive;
pub mod generate;

pub use drive::Answer;
pub use drive::Failure;
pub use drive::FailureKind;
pub use drive::Options;
pub use drive::Report;
pub use drive::run;
pub use drive::selected;
pub use generate::Case;
pub use generate::Class;
pub use generate::cases;
