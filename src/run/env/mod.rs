//! The environment a scenario runs in, made and taken down by the run
//! layer: its workspace built from the scenario's plan (fixture, inline
//! files, a git checkout, `git init`), git kept on the workspace, and the
//! faults it asks for wrapped around the tool layer's I/O.
//!
//! | module | holds |
//! | --- | --- |
//! | [`cleanup`] | finished workspaces removed by the end of the run, side by side |
//! | [`workspace`] | building a workspace; the run's cache of small fixtures |
//! | [`git`] | `git_checkout`, `git: true`, the commit a session started from |
//! | [`prepare`] | a scenario's directories, its workspace built and its conditions applied |
//! | [`sandbox`] | a scenario's sandbox: its policy, made, and what run.json says of it |
//! | [`faults`] | [`FaultFs`](faults::FaultFs), [`FaultProcess`](faults::FaultProcess): the scenario's faults applied |

pub(crate) mod cleanup;
pub(crate) mod faults;
pub(crate) mod git;
pub(crate) mod prepare;
pub(crate) mod sandbox;
pub(crate) mod workspace;
