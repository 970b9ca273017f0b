//! The exit codes of `harness`, the one table users script against.

/// Every scenario passed and every gate held; for `call`, a result was
/// printed (also when the result is an error).
pub const SUCCESS: u8 = 0;
/// A scenario failed or a gate was breached; for `import`, a call of the
/// session file was not accounted for (the importer's own bug, said).
pub const FAILED: u8 = 1;
/// Bad usage or bad input: unknown flags, unreadable or invalid scenario
/// files, an unwritable report directory.
pub const USAGE: u8 = 2;
