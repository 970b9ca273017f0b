//! The scenario layer: the YAML model of SCENARIOS.md, loading with located
//! errors, workspace building, checks and snapshots.
//!
//! It turns a file into data (a [`Scenario`]: a faux script plus checks)
//! and judges a finished run; it does not execute anything itself.

pub mod check;
pub mod load;
pub mod model;
pub mod snapshot;
pub mod workspace;

pub use check::CheckInput;
pub use check::CheckOutput;
pub use check::Failure;
pub use check::Figures;
pub use load::Scenario;
pub use load::ScenarioError;
pub use load::Suite;
pub use load::load_file;
pub use load::load_text;
