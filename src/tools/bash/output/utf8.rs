//! The streaming UTF-8 decoder of bash's output: a character split across
//! chunks decodes whole; each maximal invalid sequence becomes one U+FFFD.

/// A streaming UTF-8 decoder: a character split across chunks decodes
/// whole; each maximal invalid sequence becomes one U+FFFD (as WHATWG
/// decoders do).
#[derive(Debug, Default)]
pub(super) struct Utf8Decoder {
    pending: [u8; 4],
    pending_len: usize,
}

const REPLACEMENT: &str = "\u{FFFD}";

impl Utf8Decoder {
    pub(super) fn decode(&mut self, mut bytes: &[u8], mut out: impl FnMut(&str)) {
        if self.pending_len > 0 {
            // Complete the character that started in an earlier chunk.
            let mut seq = [0u8; 4];
            let mut len = self.pending_len;
            seq[..len].copy_from_slice(&self.pending[..len]);
            let need = sequence_len(seq[0]);
            let mut used = 0;
            // Take continuation bytes only while they keep the sequence a
            // valid (maybe unfinished) character, so an invalid one becomes
            // the same U+FFFDs as in a whole-stream decode.
            while len < need && used < bytes.len() && is_continuation(bytes[used]) {
                seq[len] = bytes[used];
                if std::str::from_utf8(&seq[..=len]).is_err() && !is_incomplete(&seq[..=len]) {
                    break;
                }
                len += 1;
                used += 1;
            }
            bytes = &bytes[used..];
            if len < need && bytes.is_empty() {
                // Still incomplete: wait for more.
                self.pending = seq;
                self.pending_len = len;
                return;
            }
            self.pending_len = 0;
            decode_complete(&seq[..len], &mut out);
        }
        // A character cut off at the end waits for the next chunk.
        let keep = incomplete_suffix(bytes);
        let (complete, rest) = bytes.split_at(bytes.len() - keep);
        decode_complete(complete, &mut out);
        self.pending[..keep].copy_from_slice(rest);
        self.pending_len = keep;
    }

    /// Flushes an incomplete final character as U+FFFD; returns whether
    /// there was one.
    pub(super) fn finish(&mut self, mut out: impl FnMut(&str)) -> bool {
        if self.pending_len == 0 {
            return false;
        }
        self.pending_len = 0;
        out(REPLACEMENT);
        true
    }
}

/// Decodes bytes that are not followed by more of the same character.
fn decode_complete(bytes: &[u8], out: &mut impl FnMut(&str)) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        if !text.is_empty() {
            out(text);
        }
        return;
    }
    for chunk in bytes.utf8_chunks() {
        if !chunk.valid().is_empty() {
            out(chunk.valid());
        }
        if !chunk.invalid().is_empty() {
            out(REPLACEMENT);
        }
    }
}

/// How many bytes at the end of `bytes` are the valid beginning of a
/// character cut short (0 to 3).
fn incomplete_suffix(bytes: &[u8]) -> usize {
    let from = bytes.len().saturating_sub(3);
    match (from..bytes.len())
        .rev()
        .find(|&i| !is_continuation(bytes[i]))
    {
        Some(lead) if is_incomplete(&bytes[lead..]) => bytes.len() - lead,
        _ => 0,
    }
}

/// The length a sequence starting with `lead` would have (1 for bytes that
/// cannot start one).
fn sequence_len(lead: u8) -> usize {
    match lead {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xc0 == 0x80
}

/// Whether `bytes` is the valid beginning of a character cut short.
fn is_incomplete(bytes: &[u8]) -> bool {
    matches!(std::str::from_utf8(bytes), Err(err) if err.error_len().is_none())
}
