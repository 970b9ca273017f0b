//! Token counting behind one interface, so that the faux provider and the
//! statistics price text the same way.

use std::fmt;

/// Counts the tokens of a text.
pub trait TokenCounter: Send + Sync + fmt::Debug {
    /// The counter's name, as reports show it (`chars4`, `o200k` …).
    fn name(&self) -> &str;
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> u64;
}

/// pi's estimate: characters / 4, rounded up (§faux.3). pi counts UTF-16
/// code units; so do we, so that non-BMP characters cost the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct Chars4;

impl TokenCounter for Chars4 {
    fn name(&self) -> &str {
        "chars4"
    }

    fn count(&self, text: &str) -> u64 {
        let units: usize = text.chars().map(char::len_utf16).sum();
        (units as u64).div_ceil(4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars4_rounds_up_and_counts_utf16_units() {
        assert_eq!(Chars4.count(""), 0);
        assert_eq!(Chars4.count("a"), 1);
        assert_eq!(Chars4.count("abcd"), 1);
        assert_eq!(Chars4.count("abcde"), 2);
        assert_eq!(Chars4.count("éé"), 1);
        assert_eq!(Chars4.count("🙂🙂🙂"), 2);
    }
}
