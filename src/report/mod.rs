//! The report layer: pure functions from a [`RunSummary`] to text or
//! bytes. It reads results only; it runs nothing.
//!
//! [`RunSummary`]: crate::run::RunSummary

pub mod console;
