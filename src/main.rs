//! The `harness` binary: everything lives in [`harness::cli`].

fn main() -> std::process::ExitCode {
    harness::cli::main()
}
