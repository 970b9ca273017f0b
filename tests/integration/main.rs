//! The one integration-test binary: the CLI end to end.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests panic on failure"
)]

mod cli;
mod layering;
mod reports;
mod run;
mod xsd;
