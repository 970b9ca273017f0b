//! Every escape of text into markup, in one place: the entities of the five
//! characters markup gives a meaning to, text for HTML (`index.html`) and
//! text for XML (`junit.xml`).

use std::fmt::Write as _;

/// The entity that stands for `c` in markup text, if `c` needs one: `&`,
/// `<` and `>` always, the quotes in attribute values (`attribute`).
fn entity(c: char, attribute: bool) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' if attribute => Some("&quot;"),
        '\'' if attribute => Some("&#39;"),
        _ => None,
    }
}

/// Text for HTML: `&`, `<`, `>`, `"` and `'` as entities.
pub(super) fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match entity(c, true) {
            Some(entity) => out.push_str(entity),
            None => out.push(c),
        }
    }
    out
}

/// Text for an XML attribute value (`attribute`) or element content. Line
/// breaks and tabs in attributes become character references, so parsers
/// keep them; characters XML 1.0 cannot hold are written as `\u{1b}`.
pub(super) fn escape_xml(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if let Some(entity) = entity(c, attribute) {
            out.push_str(entity);
            continue;
        }
        match c {
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            '\n' | '\t' => out.push(c),
            c if is_xml_char(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    out
}

/// Whether XML 1.0 can hold `c` (the `Char` production).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn quotes_need_entities_only_in_attributes() {
        let shown = |attribute| {
            "a&<>\"'"
                .chars()
                .map(|c| entity(c, attribute).map_or(c.to_string(), str::to_owned))
                .collect::<String>()
        };
        assert_eq!(shown(true), "a&amp;&lt;&gt;&quot;&#39;");
        assert_eq!(shown(false), "a&amp;&lt;&gt;\"'");
    }

    #[test]
    fn html_text_has_every_markup_character_as_an_entity() {
        assert_eq!(
            escape_html(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn xml_escapes_markup_quotes_and_control_characters() {
        assert_eq!(
            escape_xml("a<b>&\"c' \u{1b}[31m\r\n\t", true),
            "a&lt;b&gt;&amp;&quot;c&#39; \\u{1b}[31m&#13;&#10;&#9;"
        );
        assert_eq!(escape_xml("a\n\tb\u{0}", false), "a\n\tb\\u{0}");
        assert_eq!(escape_xml("é 🙂 \u{FFFE}", false), "é 🙂 \\u{fffe}");
    }
}
