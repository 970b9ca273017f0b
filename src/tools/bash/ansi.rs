//! Cleaning terminal output for a model (D12): ANSI escape sequences are
//! removed, carriage-return redraws collapse to their final state, and
//! other control characters are shown as visible symbols.
//!
//! Commands write for terminals: colours, cursor moves, window titles, and
//! progress bars that redraw one line with `\r`. A model reads none of that
//! as intended, and a progress bar can turn a few lines into thousands of
//! characters. [`Cleaner`] turns the stream into what a person would read
//! once the command finished:
//!
//! - CSI sequences (`ESC [` … final byte: colours, cursor moves, erases),
//!   OSC, DCS, SOS, PM and APC strings (ended by BEL or `ESC \`), and every
//!   other `ESC` sequence are dropped. A sequence still unfinished after
//!   [`MAX_SEQUENCE_BYTES`] bytes is not one a terminal would draw: it ends
//!   there, and what follows is text again (an unterminated OSC cannot hide
//!   the rest of a long line);
//! - a `\r` followed by more text on the same line starts the line over: the
//!   line shows its **last** segment (`10%\r50%\r100%` reads `100%`). An empty
//!   segment does not erase the line: `abc\r` at the end of the output reads
//!   `abc`;
//! - `\r\n` is a line ending and stays as it is; so do `\n` and tab;
//! - every other control character (C0 and DEL: NUL, BEL, backspace, form
//!   feed, …) outside a sequence becomes its Unicode control picture
//!   (U+2400–U+241F, U+2421: `␀`, `␇`, `␈`, `␌`, `␡`), so the model sees that
//!   it is there without receiving the raw byte (the one rule of
//!   [`crate::tools::visible`], which grep's lines and every name follow
//!   too).
//!
//! Cleaning never adds or removes a `\n`: an escape sequence that runs into
//! a newline is cut there and the newline is kept. So line `N` of the cleaned
//! text is line `N` of the raw output, and line numbers in notices point
//! into the raw full-output file too.
//!
//! What is deliberately not emulated: cursor-up redraws of several lines
//! (their escape codes are removed, the lines stay) and backspace
//! overstrikes (the backspace is shown as `␈`).
//!
//! The cleaner is a streaming state machine over decoded text: a sequence
//! or a `\r` split across chunks is handled like one written at once. It
//! reports [`Piece`]s to a sink instead of building a string, so a caller
//! with a bounded buffer (the bash output accumulator) decides what to keep.

use std::ops::RangeInclusive;

use crate::tools::visible::control_picture;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const DEL: u8 = 0x7f;

/// The longest escape sequence or control string honoured, in bytes after
/// its `ESC`: real ones (colours, titles, hyperlinks) are far shorter.
pub(crate) const MAX_SEQUENCE_BYTES: usize = 4096;

/// Whether `byte` is shown as a control picture when it appears as text:
/// a C0 control other than tab, `\n`, `\r` and ESC (which have their own
/// handling), or DEL.
fn is_hidden_control(byte: u8) -> bool {
    (byte < 0x20 && !matches!(byte, b'\t' | b'\n' | b'\r' | ESC)) || byte == DEL
}

/// Where the next byte that is not plain text is: `\r`, ESC, or a control
/// shown as a picture.
fn next_special(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\r' || b == ESC || is_hidden_control(b))
        .map_or(bytes.len(), |k| from + k)
}

/// One piece of cleaned output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Visible text. It may contain `\n` (each one ends a line), never `\r`
    /// or `ESC`.
    Text(&'a str),
    /// A line ended with `\r\n` (a line ending written as `\n` arrives
    /// inside [`Piece::Text`]).
    CrLf,
    /// The current line starts over: what it showed so far is replaced by
    /// the text that follows.
    Redraw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Plain text.
    Ground,
    /// After `ESC`.
    Escape,
    /// After `ESC` and one or more intermediate bytes (`ESC ( B`).
    EscapeIntermediate,
    /// Inside `ESC [` parameters and intermediates.
    Csi,
    /// Inside an OSC, DCS, SOS, PM or APC string.
    Str,
    /// After `ESC` inside a string: `\` ends the string.
    StrEscape,
}

/// Streaming cleaner; see the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct Cleaner {
    state: State,
    /// A `\r` was seen and it is not yet known whether `\n` (a line ending)
    /// or more text (a redraw) follows.
    pending_cr: bool,
    removed: bool,
    /// Bytes of the current sequence after its `ESC`.
    sequence_bytes: usize,
}

impl Default for Cleaner {
    fn default() -> Self {
        Self::new()
    }
}

impl Cleaner {
    /// A cleaner at the start of a stream.
    pub(crate) fn new() -> Self {
        Self {
            state: State::Ground,
            pending_cr: false,
            removed: false,
            sequence_bytes: 0,
        }
    }

    /// Whether anything has been removed or collapsed so far.
    pub(crate) fn removed_anything(&self) -> bool {
        self.removed
    }

    /// Cleans the next piece of the stream.
    pub(crate) fn push(&mut self, text: &str, out: &mut impl FnMut(Piece<'_>)) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            match self.state {
                State::Ground => {
                    if self.pending_cr {
                        match byte {
                            b'\n' => {
                                self.pending_cr = false;
                                out(Piece::CrLf);
                                i += 1;
                                continue;
                            }
                            b'\r' => {
                                // `\r\r`: the empty segment between them
                                // changes nothing.
                                self.removed = true;
                                i += 1;
                                continue;
                            }
                            ESC => {
                                // Escape codes do not decide between a line
                                // ending and a redraw; the `\r` stays pending.
                                self.enter_escape();
                                i += 1;
                                continue;
                            }
                            _ => {
                                self.pending_cr = false;
                                self.removed = true;
                                out(Piece::Redraw);
                            }
                        }
                    }
                    // Every special byte is ASCII, so the slices below cut
                    // at character boundaries.
                    let next = next_special(bytes, i);
                    if next > i {
                        out(Piece::Text(&text[i..next]));
                    }
                    if next == bytes.len() {
                        return;
                    }
                    match bytes[next] {
                        b'\r' => self.pending_cr = true,
                        ESC => self.enter_escape(),
                        control => {
                            if let Some(picture) = control_picture(control) {
                                out(Piece::Text(picture));
                            }
                            self.removed = true;
                        }
                    }
                    i = next + 1;
                }
                _ if self.sequence_bytes >= MAX_SEQUENCE_BYTES => {
                    // Too long to be a real sequence: it ends here, and this
                    // byte is text again.
                    self.state = State::Ground;
                }
                State::Str => {
                    // Skip the string's body in one step; only BEL, ESC and
                    // a newline matter here, within the length bound.
                    let room = MAX_SEQUENCE_BYTES - self.sequence_bytes;
                    let window = &bytes[i..bytes.len().min(i + room)];
                    match memchr::memchr3(BEL, ESC, b'\n', window) {
                        None => {
                            self.sequence_bytes += window.len();
                            i += window.len();
                        }
                        Some(k) => {
                            let at = i + k;
                            self.sequence_bytes += k + 1;
                            match bytes[at] {
                                BEL => {
                                    self.state = State::Ground;
                                    i = at + 1;
                                }
                                ESC => {
                                    self.state = State::StrEscape;
                                    i = at + 1;
                                }
                                // An unterminated string never swallows a
                                // line ending.
                                _ => {
                                    self.state = State::Ground;
                                    i = at;
                                }
                            }
                        }
                    }
                }
                State::Escape | State::EscapeIntermediate | State::Csi | State::StrEscape => {
                    let next = self.sequence_byte(byte, i);
                    if next > i {
                        self.sequence_bytes += 1;
                    }
                    i = next;
                }
            }
        }
    }

    /// One byte of an escape sequence, in any state but ground and string
    /// bodies. Returns where to go on.
    fn sequence_byte(&mut self, byte: u8, i: usize) -> usize {
        match self.state {
            State::Escape => match byte {
                b'[' => {
                    self.state = State::Csi;
                    i + 1
                }
                b']' | b'P' | b'X' | b'^' | b'_' => {
                    self.state = State::Str;
                    i + 1
                }
                0x20..=0x2f => {
                    self.state = State::EscapeIntermediate;
                    i + 1
                }
                0x30..=0x7e => {
                    self.state = State::Ground;
                    i + 1
                }
                ESC => {
                    self.sequence_bytes = 0;
                    i + 1
                }
                _ => self.abort(byte, i),
            },
            State::EscapeIntermediate => self.in_sequence(byte, i, 0x20..=0x2f, 0x30..=0x7e),
            State::Csi => self.in_sequence(byte, i, 0x20..=0x3f, 0x40..=0x7e),
            State::StrEscape => {
                if byte == b'\\' {
                    self.state = State::Ground;
                    i + 1
                } else {
                    // Not a string terminator: the ESC starts a new
                    // sequence and ends the string.
                    self.state = State::Escape;
                    self.sequence_bytes = 0;
                    i
                }
            }
            State::Ground | State::Str => i,
        }
    }

    /// One byte `byte` (at `i`) of a sequence that `more` bytes continue and
    /// a `last` byte ends; an ESC starts a new sequence, anything else
    /// aborts this one. Returns where to go on.
    fn in_sequence(
        &mut self,
        byte: u8,
        i: usize,
        more: RangeInclusive<u8>,
        last: RangeInclusive<u8>,
    ) -> usize {
        if more.contains(&byte) {
            i + 1
        } else if last.contains(&byte) {
            self.state = State::Ground;
            i + 1
        } else if byte == ESC {
            self.state = State::Escape;
            self.sequence_bytes = 0;
            i + 1
        } else {
            self.abort(byte, i)
        }
    }

    /// Ends the stream: an unfinished escape sequence is dropped, and a
    /// final `\r` (with nothing after it) leaves its line as it was.
    pub(crate) fn finish(&mut self) {
        if self.pending_cr {
            self.pending_cr = false;
            self.removed = true;
        }
        if self.state != State::Ground {
            self.state = State::Ground;
            self.removed = true;
        }
    }

    fn enter_escape(&mut self) {
        self.state = State::Escape;
        self.sequence_bytes = 0;
        self.removed = true;
    }

    /// A byte that cannot continue the current sequence ends it. CAN and SUB
    /// cancel a sequence and are dropped with it; anything else (a newline,
    /// a `\r`, a control character, a non-ASCII character) is processed as
    /// text. Returns where to continue.
    fn abort(&mut self, byte: u8, at: usize) -> usize {
        self.state = State::Ground;
        if byte == CAN || byte == SUB {
            at + 1
        } else {
            at
        }
    }
}

/// Cleans a whole text at once; returns the cleaned text and whether
/// anything was removed.
#[cfg(test)]
pub(crate) fn clean(text: &str) -> (String, bool) {
    let mut cleaner = Cleaner::new();
    let mut out = Collected::default();
    cleaner.push(text, &mut |piece| out.apply(piece));
    cleaner.finish();
    (out.text, cleaner.removed_anything())
}

/// Cleaned pieces gathered into one unbounded string.
#[cfg(test)]
#[derive(Default)]
struct Collected {
    text: String,
    /// Where the line being written starts.
    line_start: usize,
}

#[cfg(test)]
impl Collected {
    fn apply(&mut self, piece: Piece<'_>) {
        match piece {
            Piece::Text(text) => {
                self.text.push_str(text);
                if let Some(nl) = memchr::memrchr(b'\n', text.as_bytes()) {
                    self.line_start = self.text.len() - (text.len() - nl - 1);
                }
            }
            Piece::CrLf => {
                self.text.push_str("\r\n");
                self.line_start = self.text.len();
            }
            Piece::Redraw => self.text.truncate(self.line_start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn cleaned(text: &str) -> String {
        clean(text).0
    }

    /// Cleans `text` fed in pieces of `size` bytes (at char boundaries).
    fn cleaned_in_pieces(text: &str, size: usize) -> (String, bool) {
        let mut cleaner = Cleaner::new();
        let mut out = Collected::default();
        let mut start = 0;
        while start < text.len() {
            let mut end = (start + size).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            cleaner.push(&text[start..end], &mut |piece| out.apply(piece));
            start = end;
        }
        cleaner.finish();
        (out.text, cleaner.removed_anything())
    }

    #[test]
    fn plain_text_is_untouched() {
        assert_eq!(clean("a\nb\n"), ("a\nb\n".to_owned(), false));
        assert_eq!(clean("héllo 🙂\tx"), ("héllo 🙂\tx".to_owned(), false));
        assert_eq!(clean(""), (String::new(), false));
    }

    #[test]
    fn crlf_is_a_line_ending_and_is_kept() {
        assert_eq!(clean("a\r\nb\r\n"), ("a\r\nb\r\n".to_owned(), false));
    }

    #[test]
    fn colours_and_cursor_moves_are_removed() {
        assert_eq!(
            clean("\x1b[1;31merror\x1b[0m: bad\n\x1b[2K\x1b[1A\x1b[?25lok\x1b[?25h\n"),
            ("error: bad\nok\n".to_owned(), true)
        );
        // 256-colour and truecolour forms, and `ESC [ m` with no parameters.
        assert_eq!(cleaned("\x1b[38;5;196mA\x1b[48;2;1;2;3mB\x1b[m"), "AB");
    }

    #[test]
    fn osc_and_other_strings_are_removed_with_either_terminator() {
        assert_eq!(cleaned("\x1b]0;title\x07x"), "x");
        assert_eq!(
            cleaned("\x1b]8;;http://a.b\x1b\\link\x1b]8;;\x1b\\"),
            "link"
        );
        assert_eq!(cleaned("\x1bPq#0;2;0;0;0\x1b\\y"), "y");
        assert_eq!(cleaned("\x1b_apc\x1b\\z"), "z");
    }

    #[test]
    fn other_escape_sequences_are_removed() {
        // Charset selection, save/restore cursor, keypad modes, reset.
        assert_eq!(cleaned("\x1b(Ba\x1b7b\x1b8c\x1b=d\x1b>e\x1bcf"), "abcdef");
    }

    #[test]
    fn carriage_return_redraws_keep_the_final_state() {
        assert_eq!(clean("10%\r50%\r100%\n"), ("100%\n".to_owned(), true));
        assert_eq!(cleaned("start\n10%\r50%\r100%"), "start\n100%");
        // The usual progress-bar idiom: return, erase the line, redraw.
        assert_eq!(
            cleaned("a 1/3\r\x1b[2Ka 2/3\r\x1b[2Ka 3/3\ndone\n"),
            "a 3/3\ndone\n"
        );
        // A redraw that ends with CRLF keeps its line ending.
        assert_eq!(cleaned("1\r2\r\n"), "2\r\n");
    }

    #[test]
    fn an_empty_final_segment_does_not_erase_the_line() {
        assert_eq!(clean("abc\r"), ("abc".to_owned(), true));
        assert_eq!(clean("abc\r\r\n"), ("abc\r\n".to_owned(), true));
        assert_eq!(cleaned("abc\r\x1b[0m\n"), "abc\r\n");
    }

    #[test]
    fn newlines_are_never_swallowed() {
        // An unterminated OSC string ends at the line ending.
        assert_eq!(cleaned("\x1b]0;title\nnext\n"), "\nnext\n");
        // A sequence cut by a newline, a control or a non-ASCII character.
        assert_eq!(cleaned("\x1b[12\nx"), "\nx");
        assert_eq!(cleaned("\x1b\n"), "\n");
        assert_eq!(cleaned("\x1b[1é"), "é");
        assert_eq!(cleaned("\x1b(\ty"), "\ty");
        // CAN cancels a sequence and goes with it.
        assert_eq!(cleaned("\x1b[1\x18z"), "z");
        for text in ["\x1b]0;t\n\x1b[1\n\x1b\n\x1bP\n", "a\rb\nc\r\n\r\n"] {
            let out = cleaned(text);
            assert_eq!(
                out.matches('\n').count(),
                text.matches('\n').count(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn control_characters_become_visible_pictures() {
        assert_eq!(
            clean("a\x07b\x00c\x7fd\x08e\x0cf\x01\n"),
            ("a␇b␀c␡d␈e␌f␁\n".to_owned(), true)
        );
        // Every C0 control but tab, newline, CR and ESC, and DEL.
        for byte in (0u8..0x20).chain([0x7f]) {
            let text = format!("<{}>", char::from(byte));
            let want = match byte {
                b'\t' | b'\n' => text.clone(),
                // A redraw: the line starts over.
                b'\r' => ">".to_owned(),
                0x1b => "<".to_owned(),
                0x7f => "<\u{2421}>".to_owned(),
                _ => format!("<{}>", char::from_u32(0x2400 + u32::from(byte)).unwrap()),
            };
            assert_eq!(cleaned(&text), want, "byte {byte:#04x}");
        }
        // Inside a sequence a control ends it and is shown.
        assert_eq!(cleaned("\x1b[1\x07x"), "␇x");
        // Non-ASCII characters are not controls.
        assert_eq!(clean("\u{85}é"), ("\u{85}é".to_owned(), false));
    }

    #[test]
    fn a_sequence_longer_than_the_bound_ends_and_the_rest_is_text() {
        // Unterminated OSC, DCS and APC strings, and an endless CSI: the
        // first MAX_SEQUENCE_BYTES bytes after ESC go, the rest is text.
        let long = "x".repeat(10_000);
        let params = format!("\x1b[{}mafter", "1;".repeat(5000));
        let texts = ["]0;", "P", "_"]
            .map(|intro| format!("\x1b{intro}{long}"))
            .into_iter()
            .chain([params]);
        for text in texts {
            let want = &text[1 + MAX_SEQUENCE_BYTES..];
            let (out, removed) = clean(&text);
            assert!(removed);
            assert!(out == want, "{} bytes shown of {}", out.len(), want.len());
            for size in [1, 7, 4096, 5000] {
                let out = cleaned_in_pieces(&text, size).0;
                assert!(
                    out == want,
                    "in pieces of {size}: {} of {}",
                    out.len(),
                    want.len()
                );
            }
        }
        // Long but terminated within the bound: removed whole.
        let url = "u".repeat(MAX_SEQUENCE_BYTES - 10);
        assert_eq!(cleaned(&format!("\x1b]8;;{url}\x07link")), "link");
        assert_eq!(cleaned(&format!("\x1b]8;;{url}\x1b\\link")), "link");
        // The bound starts over with each sequence.
        let many = format!("\x1b]0;{}\x07", "t".repeat(3000)).repeat(5);
        assert_eq!(cleaned(&format!("{many}end")), "end");
    }

    #[test]
    fn unfinished_sequence_at_the_end_is_dropped() {
        assert_eq!(clean("ok\x1b[3"), ("ok".to_owned(), true));
        assert_eq!(clean("ok\x1b"), ("ok".to_owned(), true));
    }

    #[test]
    fn chunk_boundaries_do_not_matter() {
        let text = "\x1b[1;32mgreen\x1b[0m é🙂\r\n10%\r\x1b[2K50%\r100%\n\x1b]0;t\x1b\\tail\r";
        let whole = clean(text);
        for size in 1..=text.len() {
            assert_eq!(cleaned_in_pieces(text, size), whole, "pieces of {size}");
        }
        assert_eq!(whole, ("green é🙂\r\n100%\ntail".to_owned(), true));
    }
}
