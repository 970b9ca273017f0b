//! The facts every layer shares, each defined once and below every layer
//! that uses it: `${name}` references and their expansion, the one-day
//! bound of every duration a file may give, a task that stops when its
//! handle is dropped, the words of a panic, a file written by renaming a
//! new one over it, and the signals that stop a command.
//!
//! | module | holds |
//! | --- | --- |
//! | [`vars`] | `${name}`: references, expansion (`$${` a literal `${`), escaping |
//! | [`bounds`] | [`ONE_DAY_SECS`](bounds::ONE_DAY_SECS) and the check of a number of seconds against it |
//! | [`task`] | [`AbortOnDrop`](task::AbortOnDrop): a task stopped when its guard goes |
//! | [`panics`] | the message of a caught panic |
//! | `signals` | the signals that stop a command (`SIGINT`, `SIGTERM`, `SIGHUP`) |
//!
//! Crate-private: nothing here is part of the tool layer's public surface.

#[cfg(feature = "cli")]
pub(crate) mod bounds;
pub(crate) mod panics;
#[cfg(feature = "cli")]
pub(crate) mod signals;
pub(crate) mod task;
#[cfg(feature = "cli")]
pub(crate) mod vars;
