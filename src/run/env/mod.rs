//! The environment a scenario runs in, made and taken down by the run
//! layer (the scenario room holds its plan and conditions as data only):
//! its temporary workspace and scratch directory, the workspace built from
//! the scenario's plan (fixture, inline files, a git checkout, `git
//! init`), git kept on the workspace, the faults it asks for wrapped
//! around the tool layer's I/O, and finished workspaces removed.
//!
//! | module | holds |
//! | --- | --- |
//! | [`prepare`] | a scenario's directories, its workspace built and its conditions applied; kept or removed at its end |
//! | [`workspace`] | building a workspace through a `ConfinedFs`; the run's cache of small fixtures |
//! | [`git`] | `git_checkout`, `git: true`, the commit a session started from |
//! | [`sandbox`] | a scenario's sandbox: its policy, made, and what run.json says of it |
//! | [`faults`] | [`FaultFs`](faults::FaultFs), [`FaultProcess`](faults::FaultProcess): the scenario's faults applied |
//! | [`cleanup`] | finished workspaces removed by the end of the run, side by side |

pub(crate) mod cleanup;
pub(crate) mod faults;
pub(crate) mod git;
pub(crate) mod prepare;
pub(crate) mod sandbox;
pub(crate) mod workspace;
