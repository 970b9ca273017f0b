//! What HTML and XML share: the entities of the five characters markup
//! gives a meaning to.

/// The entity that stands for `c` in markup text, if `c` needs one: `&`,
/// `<` and `>` always, the quotes in attribute values (`attribute`).
pub fn entity(c: char, attribute: bool) -> Option<&'static str> {
    match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' if attribute => Some("&quot;"),
        '\'' if attribute => Some("&#39;"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
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
}
