//! The bounded output accumulator of `bash` (§common.5, D12, D13, D18).
//!
//! A command can print a gigabyte; the model reads at most the last
//! `max_lines` lines or `max_bytes` bytes of it. [`OutputAccumulator`] takes
//! the raw bytes chunk by chunk and keeps memory bounded by the limits, not by
//! the output:
//!
//! 1. raw bytes are counted, and as soon as the output is larger than the
//!    limits (raw bytes, raw lines, or the cleaned text's bytes or lines) a
//!    full-output file is opened that receives **every raw byte**, the ones
//!    buffered so far first. It is created with mode `0600` in the
//!    workspace's scratch directory (D18): in the system temp dir as
//!    `harness-bash-{16 hex digits}.log`
//!    ([`FsOps::create_temp`](crate::tools::ops::FsOps::create_temp)), or, in a
//!    directory of the run's own, as `bash-{call id}.log` (see
//!    [`Scratch`](crate::tools::Scratch)). The tool never deletes it: it is
//!    the model's way to the rest of the output. It holds at most the log
//!    cap ([`OutputAccumulator::with_log_cap`], `Limits::max_log_bytes`): the
//!    first bytes of the output up to the cap, and the snapshot says when
//!    more were left out;
//! 2. bytes are decoded by a streaming UTF-8 decoder (a character split
//!    across chunks decodes whole; every maximal invalid sequence becomes one
//!    U+FFFD);
//! 3. the text is cleaned for the model (D12, see [`super::ansi`]): escape
//!    sequences removed, `\r` redraws collapsed;
//! 4. the cleaned text is kept as a rolling tail of whole lines plus the
//!    line being written, each cut to a window of `2 × max_bytes` once it is
//!    twice that, while exact whole-stream totals are counted.
//!
//! [`OutputAccumulator::snapshot`] tail-truncates the kept text and reports
//! the whole stream's totals. **All facts describe the cleaned text**, which
//! is what the model reads: bytes are cleaned bytes and a notice's sizes
//! match the shown text. Line numbers also match the raw full-output file,
//! because cleaning never adds or removes a newline (a final line made only
//! of escape codes is the one exception: it is not a line of the cleaned
//! text).
//!
//! Why the facts stay right after the window is cut (D13): the kept text is
//! always at least `2 × max_bytes` bytes once anything was cut, so the only
//! line that may have lost its beginning (the first kept one) can never be
//! shown whole; when it is the last line it is shown as the end of a line
//! whose true size is counted separately. pi drops that partial line
//! instead, which is how it shows an empty tail and "lines 2-1 of 1".

//!
//! ```text
//! accumulator.rs  OutputAccumulator and its Snapshot: counting, the steps
//!                 below in order, the tail truncated with whole-stream facts
//! full_log.rs     the full-output file: buffered, opened, capped, flushed
//! utf8.rs         the streaming UTF-8 decoder
//! tail.rs         the rolling tail window of cleaned lines and its totals
//! ```

mod accumulator;
mod full_log;
mod tail;
mod utf8;

pub(crate) use accumulator::OutputAccumulator;
pub(super) use accumulator::Snapshot;
pub(crate) use full_log::BASH_FILE_PREFIX;

#[cfg(test)]
mod tests;
