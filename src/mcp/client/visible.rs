//! What a server wrote, made safe to show: its stderr lines and its junk
//! stdout lines reach reports and terminals, never as raw control
//! characters.

/// `text` with every control character but tab (C0, DEL and the C1
/// range) shown as a control picture (U+2400 plus its code, `␡` for DEL)
/// or, for C1, as `\u{NN}`.
pub(crate) fn visible_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\t' => out.push(ch),
            '\u{0}'..='\u{1f}' => {
                out.push(char::from_u32(0x2400 + u32::from(ch)).unwrap_or('\u{fffd}'));
            }
            '\u{7f}' => out.push('\u{2421}'),
            '\u{80}'..='\u{9f}' => out.push_str(&format!("\\u{{{:02x}}}", u32::from(ch))),
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn controls_are_shown_and_the_rest_is_kept() {
        assert_eq!(
            visible_text("a\tb\x1b[31mred\r\n\x7f\u{85}é"),
            "a\tb\u{241b}[31mred\u{240d}\u{240a}\u{2421}\\u{85}é"
        );
    }
}
