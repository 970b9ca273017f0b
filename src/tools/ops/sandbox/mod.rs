//! The sandbox of the programs the harness starts (bash's commands,
//! configured shells, MCP servers): a [`SandboxPolicy`] made into what the
//! kernel enforces, unprivileged ([`Sandbox`]).
//!
//! - **Writes** (Landlock): reading and executing stay allowed everywhere,
//!   so toolchains keep working; writing only below the policy's paths
//!   (the workspace), in a private temporary directory (`TMPDIR`), and on
//!   the few devices a shell needs ([`DEVICES`]). A refused write is the
//!   program's own `EACCES` ("Permission denied").
//! - **Network**: a network namespace of the sandbox's own with only a
//!   loopback interface, where user namespaces can be made; the loopback
//!   ports the policy lets through (the harness's own endpoints) are
//!   relayed into it from the machine's 127.0.0.1. Where no namespace can
//!   be made, Landlock's TCP rules (ABI 4): no `bind`, `connect` only to
//!   those ports (UDP and other families stay open).
//! - **Processes**: a PID namespace of the sandbox's own, whose first
//!   process (the init) reaps what is re-parented to it; when the sandbox
//!   ends, the kernel kills every process in it, daemons that left their
//!   process group included. Where no namespace can be made, nothing more
//!   than the caller's own process-group killing.
//!
//! [`support`] probes the kernel once per process; [`Sandbox::report`]
//! says what a sandbox enforces, by what, or why not.
//!
//! ```text
//! policy.rs   SandboxPolicy, Network, DEVICES
//! report.rs   SandboxReport: what is enforced, by what, or why not
//! sys.rs      the raw system calls (the only ones a forked child makes)
//! raw.rs      system calls without errno, for the init beside this process
//! init.rs     the process that holds the namespaces, and its start
//! support.rs  the probe of the kernel
//! landlock.rs the Landlock ruleset
//! relay.rs    loopback ports relayed into the network namespace
//! enter.rs    what a program does between fork and exec (a Command's)
//! spawn.rs    starting bash's commands in it without copying this process
//! jail.rs     Sandbox: the policy planned, the ruleset, the init, prepare
//! ```

mod enter;
mod init;
mod jail;
mod landlock;
mod policy;
mod raw;
mod relay;
mod report;
mod spawn;
mod support;
mod sys;

pub use jail::Sandbox;
pub use policy::DEVICES;
pub use policy::Network;
pub use policy::SandboxPolicy;
pub use report::FsGuard;
pub use report::NetGuard;
pub use report::ProcessGuard;
pub use report::SandboxReport;
pub(crate) use spawn::Program;
pub(crate) use spawn::SandboxChild;
pub(crate) use spawn::SpawnError;
pub use support::SandboxSupport;
pub use support::support;

#[cfg(test)]
mod tests;
