//! How tool output shows text that came from the disk: one rule for every
//! tool, so nothing a file holds or a file is called reaches the model as
//! a raw control character, and one line of a listing is always one entry.
//!
//! - **Control characters** (C0 and DEL) are shown as their Unicode
//!   control pictures, U+2400 plus the code (`␀`, `␇`, `␊`, `␛`) and `␡`
//!   for DEL. In a line of a file (grep's lines; bash's output after its
//!   cleaning, D12) tab and newline stay, since they are the text's
//!   layout; see [`show_controls`].
//! - **Names** (a file or directory name, a path, in grep's, find's and
//!   ls's output and in every message) are one entry on one line: every
//!   control character in them is shown as its picture, tab and newline
//!   included, and each byte that is not part of valid UTF-8 is shown as
//!   `\xNN` (two upper-case hex digits); see [`show_name`].
//! - **Back again.** A path argument written the way names are shown names
//!   the file that was shown: when nothing exists under the path as
//!   written, [`unshow`] turns its `\x80`–`\xFF` escapes back into those
//!   bytes and its control pictures (but `␀`: no name holds a NUL) back
//!   into the characters, and that path is used if it exists.

use std::borrow::Cow;
use std::path::Path;

const DEL: u8 = 0x7f;

/// The visible form of each C0 control character: U+2400 + its code.
const C0_PICTURES: [&str; 32] = [
    "\u{2400}", "\u{2401}", "\u{2402}", "\u{2403}", "\u{2404}", "\u{2405}", "\u{2406}", "\u{2407}",
    "\u{2408}", "\u{2409}", "\u{240A}", "\u{240B}", "\u{240C}", "\u{240D}", "\u{240E}", "\u{240F}",
    "\u{2410}", "\u{2411}", "\u{2412}", "\u{2413}", "\u{2414}", "\u{2415}", "\u{2416}", "\u{2417}",
    "\u{2418}", "\u{2419}", "\u{241A}", "\u{241B}", "\u{241C}", "\u{241D}", "\u{241E}", "\u{241F}",
];

/// The visible form of DEL.
const DEL_PICTURE: &str = "\u{2421}";

/// The visible form of a control character (`None` for any other byte).
pub(crate) fn control_picture(byte: u8) -> Option<&'static str> {
    match byte {
        DEL => Some(DEL_PICTURE),
        _ => C0_PICTURES.get(usize::from(byte)).copied(),
    }
}

fn is_control(byte: u8) -> bool {
    byte < 0x20 || byte == DEL
}

/// `text` with every control character but tab and `\n` shown as its
/// control picture (for lines of files, such as grep's: ESC and `\r` are
/// shown too). Borrowed when there is none.
pub(crate) fn show_controls(text: &str) -> Cow<'_, str> {
    let hidden = |b: u8| is_control(b) && b != b'\t' && b != b'\n';
    let Some(first) = text.bytes().position(hidden) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for ch in text[first..].chars() {
        match u8::try_from(ch).ok().filter(|&b| hidden(b)) {
            Some(byte) => out.push_str(control_picture(byte).unwrap_or("\u{FFFD}")),
            None => out.push(ch),
        }
    }
    Cow::Owned(out)
}

/// A name's bytes as tools show them: valid UTF-8 as it is but every
/// control character as its picture, other bytes as `\xNN`. Borrowed when
/// nothing needed showing.
pub(crate) fn show_name(name: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(name)
        && !text.bytes().any(is_control)
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for chunk in name.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match u8::try_from(ch).ok().and_then(control_picture) {
                Some(picture) => out.push_str(picture),
                None => out.push(ch),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    Cow::Owned(out)
}

/// A path as tools show it: [`show_name`] of its bytes (`/` is no
/// control character, so it stays).
pub(crate) fn show_path(path: &Path) -> Cow<'_, str> {
    show_name(path.as_os_str().as_encoded_bytes())
}

/// The name a shown name stands for: `\x80`–`\xFF` (either case) back to
/// those bytes, control pictures but `␀` back to the characters. `None`
/// when `shown` holds neither (it stands for itself).
pub(crate) fn unshow(shown: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(shown.len());
    let mut changed = false;
    let mut i = 0;
    while i < shown.len() {
        let rest = &shown[i..];
        let escaped = rest
            .strip_prefix(b"\\x")
            .and_then(|hex| hex.get(..2))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .filter(|&byte| byte >= 0x80);
        if let Some(byte) = escaped {
            out.push(byte);
            i += 4;
            changed = true;
            continue;
        }
        // U+2401–U+241F are E2 90 81–9F; U+2421 (DEL) is E2 90 A1.
        if let [0xE2, 0x90, low, ..] = *rest {
            let control = match low {
                0x81..=0x9F => Some(low - 0x80),
                0xA1 => Some(DEL),
                _ => None,
            };
            if let Some(control) = control {
                out.push(control);
                i += 3;
                changed = true;
                continue;
            }
        }
        out.push(rest[0]);
        i += 1;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn lines_keep_tab_and_newline_and_show_every_other_control() {
        assert_eq!(
            show_controls("plain\ttext\n"),
            Cow::Borrowed("plain\ttext\n")
        );
        assert_eq!(
            show_controls("a\x00b\x1b[0m\r\x7fé\x07"),
            Cow::<str>::Owned("a␀b␛[0m␍␡é␇".to_owned())
        );
    }

    #[test]
    fn names_show_every_control_and_every_byte_that_is_not_utf8() {
        assert_eq!(show_name(b"src/main.rs"), Cow::Borrowed("src/main.rs"));
        assert_eq!(show_name("héllo wörld.txt".as_bytes()), "héllo wörld.txt");
        assert_eq!(
            show_name(b"a.txt:7:TODO forged\nb.txt"),
            "a.txt:7:TODO forged␊b.txt"
        );
        assert_eq!(show_name(b"\x1b]0;title\x07\tx\r"), "␛]0;title␇␉x␍");
        assert_eq!(show_name(b"bad\xff.txt"), "bad\\xFF.txt");
        // Latin-1 `café`, and a UTF-8 character cut short.
        assert_eq!(show_name(b"caf\xe9"), "caf\\xE9");
        assert_eq!(show_name(b"x\xe2\x82.txt"), "x\\xE2\\x82.txt");
        assert_eq!(show_path(Path::new("dir/a\x7fb")), "dir/a␡b");
    }

    #[test]
    fn a_shown_name_comes_back_as_the_name() {
        assert_eq!(unshow(b"bad\\xFF.txt"), Some(b"bad\xff.txt".to_vec()));
        assert_eq!(unshow(b"bad\\xfe.txt"), Some(b"bad\xfe.txt".to_vec()));
        assert_eq!(unshow("a␊b␛c␡".as_bytes()), Some(b"a\nb\x1bc\x7f".to_vec()));
        // Nothing to undo: ASCII escapes, ␀, other characters.
        assert_eq!(unshow(b"a\\x41\\x7f\\xZZ\\x"), None);
        assert_eq!(unshow("a␀b ☃ plain".as_bytes()), None);
    }

    /// Names biased towards what breaks listings: controls, bytes that
    /// are not UTF-8, multibyte characters, `/`-free.
    fn arb_name() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            6 => b'a'..=b'z',
            2 => 1u8..0x20,
            1 => Just(DEL),
            2 => 0x80u8..=0xFF,
            1 => Just(b':'),
        ];
        let piece = prop_oneof![
            4 => byte.prop_map(|b| vec![b]),
            1 => Just("é".as_bytes().to_vec()),
            1 => Just("中".as_bytes().to_vec()),
        ];
        prop::collection::vec(piece, 1..12).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #![proptest_config(crate::tools::testutil::cases(512))]

        /// A shown name is one line of visible text, and it leads back to
        /// the name it shows.
        #[test]
        fn every_name_is_shown_on_one_line_and_comes_back(name in arb_name()) {
            // A name that itself reads like a shown one is found as written.
            prop_assume!(unshow(&name).is_none());
            let shown = show_name(&name);
            prop_assert!(!shown.bytes().any(is_control), "{shown:?}");
            match &shown {
                Cow::Borrowed(text) => prop_assert_eq!(text.as_bytes(), &name[..]),
                Cow::Owned(text) => {
                    prop_assert_eq!(unshow(text.as_bytes()), Some(name.clone()));
                }
            }
        }
    }
}
