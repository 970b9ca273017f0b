//! The facts every room shares, each defined once and below every room
//! that uses it (docs/architecture.md, "The shared base"): `${name}`
//! references and their expansion, the one-day bound of every duration a
//! file may give, a task that stops when its handle is dropped, panics
//! caught and worded, and the signals that stop a command. (Writing a file
//! by renaming a new one over it has its one owner in the tool layer,
//! `tools::ops::write_new_over`.)
//!
//! | module | holds |
//! | --- | --- |
//! | [`vars`] | `${name}`: references, expansion (`$${` a literal `${`), escaping |
//! | [`bounds`] | [`ONE_DAY_SECS`](bounds::ONE_DAY_SECS) and the check of a number of seconds against it |
//! | [`task`] | [`AbortOnDrop`](task::AbortOnDrop): a task stopped when its guard goes |
//! | [`panics`] | code run so that a panic takes nothing more down, and the message of a caught panic |
//! | `signals` | the signals that stop a command (`SIGINT`, `SIGTERM`, `SIGHUP`) |
//!
//! Crate-private: nothing here is part of the tool layer's public surface.
//! `vars`, `bounds` and `signals` are built only with the `cli` feature.

#[cfg(feature = "cli")]
pub(crate) mod bounds;
pub(crate) mod panics;
#[cfg(feature = "cli")]
pub(crate) mod signals;
pub(crate) mod task;
#[cfg(feature = "cli")]
pub(crate) mod vars;
