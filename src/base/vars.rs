//! `${name}` in the texts of scenarios, suites and servers' commands
//! (docs/scenarios.md, "Variables"): the one reading of a reference, the
//! one expansion, and the one escape. `$${` is the literal text `${`; a
//! `${` without a closing `}` is literal text; a name with no value stays
//! as written.

use std::collections::BTreeMap;

/// Replaces `${name}` with bound values; unbound references stay as
/// written, and `$${` writes a literal `${`.
pub(crate) fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    substitute_with(text, vars, |value, out| out.push_str(value))
}

/// [`substitute`] with each value written by `put` (escaped for JSON or
/// for a regex, say).
pub(crate) fn substitute_with(
    text: &str,
    vars: &BTreeMap<String, String>,
    put: impl Fn(&str, &mut String),
) -> String {
    let mut out = String::with_capacity(text.len());
    scan(text, |piece| match piece {
        Piece::Text(t) => out.push_str(t),
        Piece::Var(name) => match vars.get(name) {
            Some(value) => put(value, &mut out),
            None => {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
            }
        },
    });
    out
}

/// `text` with the references bound in `vars` replaced by their values,
/// and everything else as written (`$${` included): a first stage of
/// expansion whose result is expanded again later, when the other names
/// have values. A value's own `${` is escaped, so the later stage leaves
/// it as it is.
pub(crate) fn substitute_some(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    scan(text, |piece| match piece {
        Piece::Text("${") => out.push_str("$${"),
        Piece::Text(t) => out.push_str(t),
        Piece::Var(name) => match vars.get(name) {
            Some(value) => out.push_str(&escape(value)),
            None => {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
            }
        },
    });
    out
}

/// The `${name}` references of a text, in order (`$${` is not one).
pub(crate) fn var_refs(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    scan(text, |piece| {
        if let Piece::Var(name) = piece {
            names.push(name.to_owned());
        }
    });
    names
}

/// `text` as a text whose expansion is `text` itself: every `${` written
/// `$${`.
pub(crate) fn escape(text: &str) -> String {
    text.replace("${", "$${")
}

/// The text a `$${`-escaped text stands for with no variable bound: each
/// `$${` read back as `${` (references stay as written).
pub(crate) fn unescape(text: &str) -> String {
    substitute(text, &BTreeMap::new())
}

/// A part of a text with variables.
enum Piece<'a> {
    /// Literal text.
    Text(&'a str),
    /// A `${name}` reference.
    Var(&'a str),
}

/// Splits `text` into literal text and `${name}` references: `$${` is the
/// literal text `${`, and a `${` without a closing `}` is literal text.
fn scan<'a>(text: &'a str, mut on: impl FnMut(Piece<'a>)) {
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        on(Piece::Text(&rest[..dollar]));
        let at = &rest[dollar..];
        if let Some(after) = at.strip_prefix("$${") {
            on(Piece::Text("${"));
            rest = after;
        } else if let Some(after) = at.strip_prefix("${")
            && let Some(end) = after.find('}')
        {
            on(Piece::Var(&after[..end]));
            rest = &after[end + 1..];
        } else {
            on(Piece::Text("$"));
            rest = &at[1..];
        }
    }
    on(Piece::Text(rest));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_leaves_unknown_references() {
        let vars = BTreeMap::from([("a".to_owned(), "1".to_owned())]);
        assert_eq!(substitute("${a}-${b}-${a", &vars), "1-${b}-${a");
    }

    #[test]
    fn a_doubled_dollar_writes_a_literal_reference() {
        let vars = BTreeMap::from([("HOME".to_owned(), "/home/me".to_owned())]);
        assert_eq!(
            substitute("echo $${HOME} ${HOME} $$${HOME} $5 $", &vars),
            "echo ${HOME} /home/me $${HOME} $5 $"
        );
        assert_eq!(var_refs("$${a} ${b} ${c"), vec!["b".to_owned()]);
    }

    #[test]
    fn a_first_stage_keeps_what_the_second_expands() {
        let first = BTreeMap::from([("dir".to_owned(), "/s/${x}".to_owned())]);
        let second = BTreeMap::from([("ws".to_owned(), "/w".to_owned())]);
        let staged = substitute_some("${dir}/a $${ws} ${ws} ${other} $", &first);
        assert_eq!(staged, "/s/$${x}/a $${ws} ${ws} ${other} $");
        assert_eq!(
            substitute(&staged, &second),
            "/s/${x}/a ${ws} /w ${other} $"
        );
    }

    #[test]
    fn an_escaped_text_expands_to_itself() {
        let text = "cd ${HOME} && echo $${x} $";
        assert_eq!(escape(text), "cd $${HOME} && echo $$${x} $");
        assert_eq!(unescape(&escape(text)), text);
        assert_eq!(var_refs(&escape(text)), Vec::<String>::new());
    }
}
