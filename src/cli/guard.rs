//! The harness process kept out of the reach of the commands it runs.
//!
//! A command the model runs has the user's uid, and a process of the same
//! uid may open another's descriptors through `/proc/PID/fd/`, read and
//! write its memory through `/proc/PID/mem` and attach to it with ptrace.
//! A bash command could so read the next request from `harness mcp`'s
//! standard input and write a line of its own into the protocol stream,
//! or change what `harness run` reports. `harness mcp`, `harness call`
//! and `harness run` therefore make themselves not dumpable
//! (`PR_SET_DUMPABLE` 0) before they run anything: the kernel then lets
//! only a process with `CAP_SYS_PTRACE` do any of that, and writes no core
//! dump. A command's own processes are dumpable again once they `exec`,
//! so nothing changes for them.

/// Makes this process not dumpable; on a kernel that refuses, says so on
/// standard error and goes on.
pub(super) fn not_dumpable() {
    use rustix::process::DumpableBehavior;
    if let Err(err) = rustix::process::set_dumpable_behavior(DumpableBehavior::NotDumpable) {
        eprintln!(
            "warning: the commands this process runs can reach its descriptors and memory \
             through /proc (PR_SET_DUMPABLE failed: {err})"
        );
    }
}
