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
//!
//! **Nothing raw reaches the terminal.** Everything printed passes through
//! [`terminal_text`]: a control character that is not a newline or a tab
//! (ESC, BEL, CR, backspace, the C1 range, DEL) is shown visibly, so a
//! scenario name, an unknown key, a file's content or a tool's output can
//! neither set the terminal's title, write its clipboard (OSC 52), move
//! the cursor nor erase a line to fake a `PASS`. The harness's own colours
//! are the one exception: [`write_out_styled`] lets through exactly the
//! few styles the console report paints with, and only when colour was
//! chosen for standard output. JSON the commands print stays valid JSON:
//! [`json_text`] writes DEL and the C1 range as `\u` escapes (serde_json
//! already escapes the C0 range), so nothing in it needs showing.

use std::borrow::Cow;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

/// Whether standard output is known to be closed.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Whether standard error is known to be closed.
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes to standard output unless it is closed; a failed write closes
/// it for the rest of the process.
pub(super) fn write_out(args: std::fmt::Arguments<'_>) {
    write_to(&STDOUT_CLOSED, &mut std::io::stdout().lock(), args, &[]);
}

/// Writes to standard error unless it is closed; a failed write closes it
/// for the rest of the process.
pub(super) fn write_err(args: std::fmt::Arguments<'_>) {
    write_to(&STDERR_CLOSED, &mut std::io::stderr().lock(), args, &[]);
}

/// [`write_out`] for text painted with the console report's `styles`
/// (the exact escape sequences they render as): those pass, every other
/// control character is shown.
pub(super) fn write_out_styled(text: &str, styles: &[String]) {
    write_to(
        &STDOUT_CLOSED,
        &mut std::io::stdout().lock(),
        format_args!("{text}"),
        styles,
    );
}

fn write_to(
    closed: &AtomicBool,
    stream: &mut dyn std::io::Write,
    args: std::fmt::Arguments<'_>,
    styles: &[String],
) {
    if closed.load(Ordering::Relaxed) {
        return;
    }
    let text = match args.as_str() {
        Some(text) => Cow::Borrowed(text),
        None => Cow::Owned(args.to_string()),
    };
    let shown = terminal_text(&text, styles);
    if stream
        .write_all(shown.as_bytes())
        .and_then(|()| stream.flush())
        .is_err()
    {
        closed.store(true, Ordering::Relaxed);
    }
}

/// `text` as it may reach a terminal: newlines and tabs as they are, each
/// sequence in `styles` as it is, every other control character shown:
/// C0 characters and DEL as their Unicode control pictures (`␛`, `␇`,
/// `␍`, `␡`), as tool output shows them, and C1 characters (U+0080 to
/// U+009F, which some terminals obey like ESC sequences) as `\u{9b}`.
/// Borrowed when nothing needs showing.
pub(super) fn terminal_text<'a>(text: &'a str, styles: &[String]) -> Cow<'a, str> {
    let hidden = |ch: char| ch.is_control() && ch != '\n' && ch != '\t';
    let Some(first) = text.find(hidden) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(ch) = rest.chars().next() {
        if ch == '\u{1b}'
            && let Some(style) = styles
                .iter()
                .find(|s| !s.is_empty() && rest.starts_with(s.as_str()))
        {
            out.push_str(style);
            rest = &rest[style.len()..];
            continue;
        }
        if !hidden(ch) {
            out.push(ch);
        } else if let Some(picture) = u8::try_from(ch)
            .ok()
            .and_then(crate::tools::control_picture)
        {
            out.push_str(picture);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(ch)));
        }
        rest = &rest[ch.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Serialised JSON as it may reach a terminal and stay the same JSON: DEL
/// and the C1 range (which serde_json leaves raw) written as `\u00XX`
/// escapes. Such characters can stand only inside JSON strings, where the
/// escape means the same character.
pub(super) fn json_text(json: &str) -> Cow<'_, str> {
    let raw = |ch: char| ch.is_control() && u32::from(ch) >= 0x7f;
    if !json.contains(raw) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for ch in json.chars() {
        if raw(ch) {
            out.push_str(&format!("\\u{:04x}", u32::from(ch)));
        } else {
            out.push(ch);
        }
    }
    Cow::Owned(out)
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
        write_to(&closed, &mut Closed, format_args!("one\n"), &[]);
        assert!(closed.load(Ordering::Relaxed));
        let mut sink = Vec::new();
        write_to(&closed, &mut sink, format_args!("two\n"), &[]);
        assert_eq!(sink, b"");
        let open = AtomicBool::new(false);
        write_to(&open, &mut sink, format_args!("three {}\n", 3), &[]);
        assert_eq!(sink, b"three 3\n");
        assert!(!open.load(Ordering::Relaxed));
    }

    #[test]
    fn control_characters_never_reach_the_terminal_raw() {
        let hostile =
            "PASS\r\u{1b}[2K\u{1b}]0;owned\u{7}\u{1b}]52;c;aGk=\u{7}\u{8}\u{7f}\u{9b}31m\tend\n";
        assert_eq!(
            terminal_text(hostile, &[]),
            "PASS\u{240d}\u{241b}[2K\u{241b}]0;owned\u{2407}\u{241b}]52;c;aGk=\u{2407}\u{2408}\u{2421}\\u{9b}31m\tend\n"
        );
        let mut sink = Vec::new();
        write_to(
            &AtomicBool::new(false),
            &mut sink,
            format_args!("{hostile}"),
            &[],
        );
        assert_eq!(
            String::from_utf8(sink).unwrap(),
            terminal_text(hostile, &[])
        );
    }

    #[test]
    fn only_the_given_styles_pass() {
        let styles = vec!["\u{1b}[31m".to_owned(), "\u{1b}[0m".to_owned()];
        assert_eq!(
            terminal_text("\u{1b}[31mred\u{1b}[0m \u{1b}[32mgreen\u{1b}[0m", &styles),
            "\u{1b}[31mred\u{1b}[0m \u{241b}[32mgreen\u{1b}[0m"
        );
        assert!(matches!(
            terminal_text("plain\tline\n", &styles),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn json_stays_the_same_json() {
        let value = serde_json::json!({"text": "a\u{7f}b\u{9b}c\u{1b}d\u{2028}"});
        let json = serde_json::to_string(&value).unwrap();
        let shown = json_text(&json);
        assert_eq!(
            shown,
            r#"{"text":"a\u007fb\u009bc\u001bd"#.to_owned() + "\u{2028}\"}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            value
        );
        assert_eq!(terminal_text(&shown, &[]), shown);
    }
}
