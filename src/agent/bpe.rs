//! A byte-pair-encoding token counter that loads in milliseconds: the o200k
//! vocabulary as a table built into the binary (written by build.rs from
//! the `tiktoken-rs` crate), looked up by byte slices, and a merge that
//! only counts.
//!
//! The counts are `tiktoken`'s `encode_ordinary(text).len()`: the same
//! pre-tokenizer pattern splits the text into pieces, a piece in the
//! vocabulary is one token, and any other piece is merged pairwise, each
//! step joining the adjacent pair whose joined bytes have the lowest rank
//! (the leftmost of equal ones), until no adjacent pair joins into a
//! token. Short pieces are merged by scanning; long ones (a line of 10,000
//! `=`, a base64 blob) with a heap, so that no piece costs more than
//! `n log n`. The tests compare both with `tiktoken-rs` on generated and
//! real texts.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fancy_regex::Regex;
use rustc_hash::FxHashMap;

/// The o200k table (see build.rs for its layout).
static O200K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k.vocab"));

/// A rank that no pair has: the pair does not join into a token.
const NONE: u32 = u32::MAX;

/// Pieces at least this long are merged with a heap.
const LONG_PIECE: usize = 256;

/// The pieces a text is counted in after the pattern gave up on it (it
/// gives up on runs of blanks between 500,000 and 1,000,000 bytes long).
const GIVE_UP_PIECE: usize = 64 * 1024;

/// A vocabulary and its pre-tokenizer.
pub(super) struct Bpe {
    ranks: FxHashMap<&'static [u8], u32>,
    pattern: Regex,
}

impl Bpe {
    /// The o200k vocabulary (GPT-4o and later).
    pub(super) fn o200k() -> Result<Self, String> {
        Self::new(O200K_TABLE, tiktoken_rs::O200K_BASE_PAT_STR)
    }

    fn new(table: &'static [u8], pattern: &str) -> Result<Self, String> {
        let pattern = Regex::new(pattern).map_err(|err| err.to_string())?;
        let mut ranks = FxHashMap::default();
        // Entries are at least 7 bytes; most are 8 to 14.
        ranks.reserve(table.len() / 10);
        let mut rest = table;
        while !rest.is_empty() {
            let (rank, len, tail) = match rest {
                [a, b, c, d, e, f, tail @ ..] => (
                    u32::from_le_bytes([*a, *b, *c, *d]),
                    usize::from(u16::from_le_bytes([*e, *f])),
                    tail,
                ),
                _ => return Err("the vocabulary table ends inside an entry".to_owned()),
            };
            let (bytes, tail) = tail
                .split_at_checked(len)
                .ok_or("the vocabulary table ends inside a token")?;
            ranks.insert(bytes, rank);
            rest = tail;
        }
        Ok(Self { ranks, pattern })
    }

    /// The number of tokens of `text`.
    pub(super) fn count(&self, text: &str) -> u64 {
        let (tokens, gave_up) = self.scan(text);
        let Some(at) = gave_up else {
            return tokens;
        };
        // The pattern's backtracking gave up (a run of about a million
        // blanks: tiktoken-rs panics there). The rest is counted in pieces
        // short enough for it; one it still gives up on counts a token a
        // byte.
        let rest = text.get(at..).unwrap_or_default();
        tokens
            + pieces(rest)
                .map(|piece| match self.scan(piece) {
                    (tokens, None) => tokens,
                    (_, Some(_)) => piece.len() as u64,
                })
                .sum::<u64>()
    }

    /// The tokens of `text` up to where the pattern gave up, and where
    /// that was (`None`: it did not).
    fn scan(&self, text: &str) -> (u64, Option<usize>) {
        let mut tokens = 0u64;
        let mut at = 0;
        for found in self.pattern.find_iter(text) {
            let Ok(found) = found else {
                return (tokens, Some(at));
            };
            at = found.end();
            tokens += self.piece_tokens(found.as_str().as_bytes()) as u64;
        }
        (tokens, None)
    }

    /// The tokens of one piece of the pre-tokenizer.
    fn piece_tokens(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 || self.ranks.contains_key(piece) {
            return usize::from(!piece.is_empty());
        }
        if piece.len() < LONG_PIECE {
            self.merge_scanning(piece)
        } else {
            self.merge_with_heap(piece)
        }
    }

    /// The rank of `piece[start..end]`, or [`NONE`].
    fn rank(&self, piece: &[u8], start: usize, end: usize) -> u32 {
        piece
            .get(start..end)
            .and_then(|bytes| self.ranks.get(bytes))
            .copied()
            .unwrap_or(NONE)
    }

    /// The merge, finding the lowest pair by a scan each step.
    fn merge_scanning(&self, piece: &[u8]) -> usize {
        // `starts[i]`: where part `i` starts (the last is the piece's
        // end); `pairs[i]`: the rank of parts `i` and `i + 1` joined.
        let mut starts: Vec<usize> = (0..=piece.len()).collect();
        let mut pairs: Vec<u32> = (0..piece.len() - 1)
            .map(|i| self.rank(piece, i, i + 2))
            .collect();
        loop {
            let mut best = (NONE, 0);
            for (i, &rank) in pairs.iter().enumerate() {
                if rank < best.0 {
                    best = (rank, i);
                }
            }
            let (rank, i) = best;
            if rank == NONE {
                break;
            }
            // Parts i and i + 1 become one.
            starts.remove(i + 1);
            pairs.remove(i);
            if i < pairs.len() {
                pairs[i] = self.rank(piece, starts[i], starts[i + 2]);
            }
            if i > 0 {
                pairs[i - 1] = self.rank(piece, starts[i - 1], starts[i + 1]);
            }
        }
        starts.len() - 1
    }

    /// The same merge with a heap of pairs ordered by (rank, start): the
    /// lowest rank first, the leftmost among equal ranks. An entry whose
    /// rank is no longer its part's is stale and skipped.
    fn merge_with_heap(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // Parts are named by where they start. `next[s]`: where the part
        // after part `s` starts (n: none); `prev[s]`: the part before
        // (NO_PART: none); `pair[s]`: the rank of part `s` joined with the
        // next one, NONE when they do not join or `s` is no longer a part.
        const NO_PART: usize = usize::MAX;
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n)
            .map(|s| s.checked_sub(1).unwrap_or(NO_PART))
            .collect();
        let mut pair: Vec<u32> = (0..n).map(|s| self.rank(piece, s, s + 2)).collect();
        if let Some(last) = pair.last_mut() {
            *last = NONE;
        }
        let mut heap: BinaryHeap<Reverse<(u32, usize)>> = pair
            .iter()
            .enumerate()
            .filter(|(_, rank)| **rank != NONE)
            .map(|(s, rank)| Reverse((*rank, s)))
            .collect();
        let mut parts = n;
        while let Some(Reverse((rank, s))) = heap.pop() {
            if pair[s] != rank {
                continue;
            }
            // Part s absorbs the part after it.
            let absorbed = next[s];
            let after = next[absorbed];
            pair[absorbed] = NONE;
            next[s] = after;
            if after < n {
                prev[after] = s;
            }
            parts -= 1;
            pair[s] = if after < n {
                self.rank(piece, s, next[after])
            } else {
                NONE
            };
            if pair[s] != NONE {
                heap.push(Reverse((pair[s], s)));
            }
            let before = prev[s];
            if before != NO_PART {
                pair[before] = self.rank(piece, before, after);
                if pair[before] != NONE {
                    heap.push(Reverse((pair[before], before)));
                }
            }
        }
        parts
    }
}

/// `text` cut into pieces of at most [`GIVE_UP_PIECE`] bytes, at
/// character boundaries: what a text is counted in after the pattern gave
/// up on it.
pub(super) fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(GIVE_UP_PIECE);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
#[path = "bpe_tests.rs"]
mod tests;
