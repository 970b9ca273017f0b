//! The `harness` binary: everything lives in [`harness::cli`].

/// mimalloc, for the walks' threads, which free each other's allocations:
/// with glibc's malloc they wait on each other's arena locks (Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in the `mi_option_e` enum of the mimalloc that
/// `libmimalloc-sys` 0.1.49 builds (its bindings leave it out).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> std::process::ExitCode {
    // Freed memory goes back at once rather than after a delay: a long run
    // or a large file's check frees tens of MB at a time (Cargo.toml).
    // SAFETY: sets one option; no other thread runs yet.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    harness::cli::main()
}
