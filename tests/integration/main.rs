//! The one integration-test binary: the CLI end to end, and the property
//! tests of the tool layer through its public API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests panic on failure"
)]

mod cli;
mod layering;
mod properties;
mod reports;
mod robustness;
mod run;
mod test_helpers;
mod xsd;
