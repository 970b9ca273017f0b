//! Standard output and standard error for every command, with a closed
//! pipe treated as a quiet end of output rather than a crash.
//!
//! `harness schema | head`, `harness list | head -1` and the like close the
//! pipe early. std's `println!` panics when a write fails, so this module
//! defines `print!`, `println!`, `eprint!` and `eprintln!` that shadow std's
//! in every command file (they are declared before the command modules in
//! `cli/mod.rs`). They write through [`write_out`] and [`write_err`]: once a
//! stream reports a broken pipe, everything later written to it is
//! dropped, and the command goes on to its end: `run` and `report merge`
//! still write their report files, and every command exits with the code
//! its work gives. Other write errors are dropped the same way; there is
//! nowhere left to report them.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

/// Whether standard output is known to be closed.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Whether standard error is known to be closed.
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to standard output unless it is closed; a failed write closes
/// it for the rest of the process.
pub fn write_out(args: std::fmt::Arguments<'_>) {
    write_to(&STDOUT_CLOSED, &mut std::io::stdout().lock(), args);
}

/// Writes to standard error unless it is closed; a failed write closes it
/// for the rest of the process.
pub fn write_err(args: std::fmt::Arguments<'_>) {
    write_to(&STDERR_CLOSED, &mut std::io::stderr().lock(), args);
}

fn write_to(closed: &AtomicBool, stream: &mut dyn std::io::Write, args: std::fmt::Arguments<'_>) {
    if closed.load(Ordering::Relaxed) {
        return;
    }
    if stream
        .write_fmt(args)
        .and_then(|()| stream.flush())
        .is_err()
    {
        closed.store(true, Ordering::Relaxed);
    }
}

/// `print!` that never panics: see the module doc.
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::cli::output::write_out(format_args!($($arg)*))
    };
}

/// `println!` that never panics: see the module doc.
macro_rules! println {
    () => {
        $crate::cli::output::write_out(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::write_out(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics: see the module doc.
#[allow(
    unused_macros,
    reason = "kept beside its siblings for commands that need it"
)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::cli::output::write_err(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics: see the module doc.
macro_rules! eprintln {
    () => {
        $crate::cli::output::write_err(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::output::write_err(format_args!("{}\n", format_args!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose reader has gone.
    struct Closed;

    impl std::io::Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_broken_pipe_closes_the_stream_without_a_panic() {
        let closed = AtomicBool::new(false);
        write_to(&closed, &mut Closed, format_args!("one\n"));
        assert!(closed.load(Ordering::Relaxed));
        let mut sink = Vec::new();
        write_to(&closed, &mut sink, format_args!("two\n"));
        assert_eq!(sink, b"");
        let open = AtomicBool::new(false);
        write_to(&open, &mut sink, format_args!("three {}\n", 3));
        assert_eq!(sink, b"three 3\n");
        assert!(!open.load(Ordering::Relaxed));
    }
}
