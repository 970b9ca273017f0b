//! The template of a generated workspace file (`repeat:` with `times:` and
//! `join:`, docs/scenarios.md "Workspace"): `{n}` is the copy's number
//! counting from 1, `{n:0W}` the same number zero-padded to `W` digits
//! (`{n:05}` is `00042`), and every other text is written as it is.
//!
//! The size of the file is worked out from the template alone, so a huge
//! `times` is refused before anything is made.

/// The widest zero-padded counter, `{n:020}` (a `u64` has 20 digits).
pub(crate) const MAX_WIDTH: usize = 20;

/// One piece of a parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Text written as it is.
    Text(String),
    /// The copy's number, at least this many digits (zero-padded).
    Counter(usize),
}

/// A parsed `repeat` template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses a template; an error names a `{n:0W}` whose width is out of
    /// range.
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut rest = template;
        while let Some(start) = rest.find("{n") {
            text.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            match counter_width(after) {
                Some((width, used)) => {
                    if !(1..=MAX_WIDTH).contains(&width) {
                        let written = &rest[start..start + 2 + used];
                        return Err(format!(
                            "`{written}` is a counter padded to a width out of range; give a \
                             width from 1 to {MAX_WIDTH}, like `{{n:05}}`"
                        ));
                    }
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Counter(width));
                    rest = &after[used..];
                }
                None => {
                    text.push_str("{n");
                    rest = after;
                }
            }
        }
        text.push_str(rest);
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Self { pieces })
    }

    /// The bytes `times` copies make, joined by `join`, computed without
    /// making them; `None` when the number overflows.
    pub(crate) fn len(&self, times: u64, join: &str) -> Option<u64> {
        let mut total: u64 = 0;
        for piece in &self.pieces {
            let bytes = match piece {
                Piece::Text(text) => (text.len() as u64).checked_mul(times)?,
                Piece::Counter(width) => counter_digits(times, *width as u64)?,
            };
            total = total.checked_add(bytes)?;
        }
        let seps = (join.len() as u64).checked_mul(times.saturating_sub(1))?;
        total.checked_add(seps)
    }

    /// The `times` copies joined by `join` (nothing after the last).
    #[cfg(test)]
    pub(crate) fn render(&self, times: usize, join: &str) -> String {
        let mut out = String::new();
        self.render_into(&mut out, times, join);
        out
    }

    /// [`Self::render`], appended to `out` (room for all of it is made
    /// once, up front).
    pub(crate) fn render_into(&self, out: &mut String, times: usize, join: &str) {
        use std::fmt::Write as _;
        let size = self.len(times as u64, join).unwrap_or(0);
        out.reserve(usize::try_from(size).unwrap_or(0));
        for n in 1..=times {
            if n > 1 {
                out.push_str(join);
            }
            for piece in &self.pieces {
                match piece {
                    Piece::Text(text) => out.push_str(text),
                    Piece::Counter(width) => {
                        let _ = write!(out, "{n:0width$}");
                    }
                }
            }
        }
    }
}

/// After `{n`: `}` (width 1) or `:0DIGITS}`; the width and the bytes used.
/// Anything else is not a counter (and stays text).
fn counter_width(after: &str) -> Option<(usize, usize)> {
    if after.starts_with('}') {
        return Some((1, 1));
    }
    let padded = after.strip_prefix(":0")?;
    let digits = padded.bytes().take_while(u8::is_ascii_digit).count();
    if padded.as_bytes().get(digits) != Some(&b'}') {
        return None;
    }
    // `{n:0}` is width 0; a long run of digits is out of range.
    let width = if digits == 0 {
        0
    } else {
        padded[..digits].parse().unwrap_or(usize::MAX)
    };
    Some((width, 2 + digits + 1))
}

/// The digits of 1..=times, each padded to at least `width`.
fn counter_digits(times: u64, width: u64) -> Option<u64> {
    let mut total: u64 = 0;
    let mut low: u64 = 1;
    let mut digits: u64 = 1;
    while low <= times {
        // The numbers of `digits` digits: low..=high.
        let high = low.checked_mul(10).map_or(times, |h| (h - 1).min(times));
        total = total.checked_add((high - low + 1).checked_mul(digits.max(width))?)?;
        match low.checked_mul(10) {
            Some(next) => low = next,
            None => break,
        }
        digits += 1;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(template: &str, times: usize, join: &str) -> String {
        Template::parse(template).unwrap().render(times, join)
    }

    #[test]
    fn counters_are_padded_and_copies_joined() {
        assert_eq!(render("row {n:03}", 3, ","), "row 001,row 002,row 003");
        assert_eq!(
            render("{n}-{n:02}", 11, " "),
            "1-01 2-02 3-03 4-04 5-05 6-06 7-07 8-08 9-09 10-10 11-11"
        );
        assert_eq!(render("{n:05}\n", 2, ""), "00001\n00002\n");
        assert_eq!(render("x", 0, ","), "");
        // What is not a counter stays as written.
        assert_eq!(render("{n:5}{n:x}{n", 1, ""), "{n:5}{n:x}{n");
    }

    #[test]
    fn widths_out_of_range_are_refused() {
        assert_eq!(
            Template::parse("a{n:00}b"),
            Err(
                "`{n:00}` is a counter padded to a width out of range; give a width from 1 to \
                 20, like `{n:05}`"
                    .to_owned()
            )
        );
        assert_eq!(
            Template::parse("{n:021}"),
            Err(
                "`{n:021}` is a counter padded to a width out of range; give a width from 1 to \
                 20, like `{n:05}`"
                    .to_owned()
            )
        );
        assert!(Template::parse("{n:099999999999999999999999}").is_err());
        assert!(Template::parse("{n:020}").is_ok());
    }

    #[test]
    fn sizes_are_counted_exactly_without_making_the_text() {
        for (template, times, join) in [
            ("row {n:03}", 1234, ","),
            ("{n}", 100_000, ""),
            ("{n:07}|{n}\n", 12_345, "--"),
            ("", 5, "ab"),
        ] {
            let t = Template::parse(template).unwrap();
            assert_eq!(
                t.len(times as u64, join),
                Some(t.render(times, join).len() as u64),
                "{template} × {times}"
            );
        }
        let t = Template::parse("{n:020}").unwrap();
        assert_eq!(t.len(u64::MAX, ""), None);
    }
}
