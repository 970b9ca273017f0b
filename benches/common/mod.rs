//! Helpers shared by the benches: a deterministic generator, smoke-mode
//! detection, a criterion configuration and size labels.
//!
//! Every bench generates its data at start, deterministically, into memory
//! or a temporary directory (never into the repository). Under `--test`
//! (`cargo bench -- --test`, what CI runs) criterion runs each benchmark
//! once, and the benches use much smaller inputs so the smoke run is fast.

#![allow(dead_code, reason = "each bench uses a different part")]

use std::time::Duration;

use criterion::Criterion;

/// A small deterministic generator (xorshift64*).
pub(crate) struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// One of `items`.
    pub(crate) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Words for generated text.
pub(crate) const WORDS: &[&str] = &[
    "the", "value", "is", "read", "from", "disk", "and", "then", "cached", "for", "later", "use",
    "config", "buffer", "index", "result", "state", "count", "entry", "node", "request", "handler",
    "path", "offset", "reader", "writer", "token", "session", "parse", "render", "update", "fn",
    "let", "mut", "self", "return", "match", "impl", "pub", "struct",
];

/// Appends words separated by spaces until `out` has grown by at least
/// `len` bytes.
pub(crate) fn words(rng: &mut Rng, out: &mut String, len: usize) {
    let target = out.len() + len;
    while out.len() < target {
        out.push_str(rng.pick(WORDS));
        out.push(' ');
    }
}

/// Whether criterion runs in smoke mode (`--test`).
pub(crate) fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

/// Criterion with few samples and short windows (the benches measure
/// milliseconds, not nanoseconds), overridable from the command line.
pub(crate) fn criterion(samples: usize, measurement_secs: u64) -> Criterion {
    Criterion::default()
        .sample_size(samples)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(measurement_secs))
        .configure_from_args()
}

/// `1MB`, `10MB`, `256KB`: a size label for benchmark ids.
pub(crate) fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}MB", bytes >> 20)
    } else if bytes >= 1 << 20 {
        format!("{:.1}MB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{}KB", bytes >> 10)
    }
}

/// A short description of the machine, printed before a run so the figures
/// in `benches/README.md` can say where they come from.
pub(crate) fn describe_machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".to_owned());
    format!("{cpus} CPUs, {model}, load average {load}")
}
