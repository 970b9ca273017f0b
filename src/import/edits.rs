//! Recorded edits that this harness's `edit` cannot take as they are, said
//! in a form it can: `edit` replaces unique texts, all matched against the
//! file as it was before the call. A client's `replace_all` (every
//! occurrence) and a sequence of edits each applied to the result of the
//! one before (Claude Code's `MultiEdit`) are turned, given the file's
//! recorded text before the call, into replacements of whole lines that
//! each occur once in it and do not overlap, which `edit` applies to the
//! same effect.

use std::ops::Range;

/// One replacement for `edit`: `old` occurs exactly once in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Replacement {
    /// The text replaced.
    pub old: String,
    /// Its replacement.
    pub new: String,
}

/// The most rounds of widening a replacement that is not unique by a
/// line; past it, one replacement of the whole changed stretch is made.
const MAX_WIDENINGS: usize = 64;

/// Every occurrence of `old` in `original` replaced by `new` (left to
/// right, not overlapping: what `replace_all` does), as replacements; and
/// the number of occurrences. `None` when `old` is empty or not found.
pub(crate) fn replace_all(
    original: &str,
    old: &str,
    new: &str,
) -> Option<(Vec<Replacement>, usize)> {
    if old.is_empty() {
        return None;
    }
    let changes: Vec<(Range<usize>, String)> = original
        .match_indices(old)
        .map(|(at, _)| (at..at + old.len(), new.to_owned()))
        .collect();
    if changes.is_empty() {
        return None;
    }
    let n = changes.len();
    Some((replacements(original, &changes)?, n))
}

/// Edits applied one after the other (each `(old, new, replace_all)` to
/// the text the ones before it made), as replacements matched against
/// `original`. When every `old` occurs once in `original`, the
/// occurrences do not overlap, and applying them all at once gives the
/// same text, they are kept as they are; otherwise the stretch the edits
/// changed becomes replacements of whole lines. `Err` says why nothing
/// could be made (an edit did not match, as it did not when recorded).
pub(crate) fn sequential(
    original: &str,
    edits: &[(String, String, bool)],
) -> Result<Vec<Replacement>, &'static str> {
    let mut text = original.to_owned();
    for (old, new, all) in edits {
        if old.is_empty() || !text.contains(old.as_str()) {
            return Err("an edit's old text is not in the file as the edits before it left it");
        }
        text = if *all {
            text.replace(old.as_str(), new)
        } else {
            text.replacen(old.as_str(), new, 1)
        };
    }
    if let Some(kept) = as_they_are(original, edits, &text) {
        return Ok(kept);
    }
    if text == original {
        return Err("the edits change nothing");
    }
    let prefix = common_prefix(original, &text);
    let suffix = common_suffix(&original[prefix..], &text[prefix..]);
    let change = (
        prefix..original.len() - suffix,
        text[prefix..text.len() - suffix].to_owned(),
    );
    replacements(original, &[change]).ok_or("the change cannot be made unique in the file")
}

/// The edits themselves, when applying them all to `original` at once
/// gives `want`.
fn as_they_are(
    original: &str,
    edits: &[(String, String, bool)],
    want: &str,
) -> Option<Vec<Replacement>> {
    let mut spots: Vec<(Range<usize>, &str)> = Vec::new();
    for (old, new, all) in edits {
        if *all || !occurs_once(original, old) {
            return None;
        }
        let at = original.find(old.as_str())?;
        spots.push((at..at + old.len(), new));
    }
    spots.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(want.len());
    let mut from = 0;
    for (range, new) in &spots {
        if range.start < from {
            return None;
        }
        out.push_str(&original[from..range.start]);
        out.push_str(new);
        from = range.end;
    }
    out.push_str(&original[from..]);
    (out == want).then(|| {
        edits
            .iter()
            .map(|(old, new, _)| Replacement {
                old: old.clone(),
                new: new.clone(),
            })
            .collect()
    })
}

/// Replacements of whole lines of `original` that make `changes` (byte
/// ranges of `original`, in order, not overlapping, each with its new
/// text): each occurs once in `original`, none overlaps another. `None`
/// when `original` is empty (no old text can be unique in it).
pub(crate) fn replacements(
    original: &str,
    changes: &[(Range<usize>, String)],
) -> Option<Vec<Replacement>> {
    if original.is_empty() {
        return None;
    }
    let mut regions: Vec<Range<usize>> = changes
        .iter()
        .map(|(r, _)| line_start(original, r.start)..line_end(original, r))
        .collect();
    let mut round = 0;
    loop {
        regions = merged(regions);
        let widen: Vec<usize> = (0..regions.len())
            .filter(|&i| !occurs_once(original, &original[regions[i].clone()]))
            .collect();
        if widen.is_empty() {
            break;
        }
        round += 1;
        if round > MAX_WIDENINGS {
            let all = regions.first()?.start..regions.last()?.end;
            regions = vec![all];
            if !occurs_once(original, &original[regions[0].clone()]) {
                regions = std::iter::once(0..original.len()).collect();
            }
            break;
        }
        for i in widen {
            let r = &mut regions[i];
            let (up, down) = (r.start > 0, r.end < original.len());
            if (round % 2 == 1 && up) || !down {
                r.start = line_start(original, r.start.saturating_sub(1));
            } else {
                r.end = original[r.end..]
                    .find('\n')
                    .map_or(original.len(), |i| r.end + i + 1);
            }
        }
    }
    Some(
        regions
            .iter()
            .map(|region| {
                let mut new = String::new();
                let mut from = region.start;
                for (range, text) in changes
                    .iter()
                    .filter(|(r, _)| r.start >= region.start && r.end <= region.end)
                {
                    new.push_str(&original[from..range.start]);
                    new.push_str(text);
                    from = range.end;
                }
                new.push_str(&original[from..region.end]);
                Replacement {
                    old: original[region.clone()].to_owned(),
                    new,
                }
            })
            .collect(),
    )
}

/// Regions sorted, overlapping or touching ones joined.
fn merged(mut regions: Vec<Range<usize>>) -> Vec<Range<usize>> {
    regions.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(regions.len());
    for r in regions {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The start of the line holding byte `at`.
fn line_start(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].rfind('\n').map_or(0, |i| i + 1)
}

/// The end of the last line `range` touches (after its newline, or the
/// end of the text); a non-empty range that ends after a newline ends
/// there.
fn line_end(text: &str, range: &Range<usize>) -> usize {
    let end = range.end.min(text.len());
    if end > range.start && text.as_bytes()[end - 1] == b'\n' {
        return end;
    }
    text[end..].find('\n').map_or(text.len(), |i| end + i + 1)
}

/// Whether `needle` occurs exactly once in `hay`, overlapping occurrences
/// counted.
fn occurs_once(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    match finder.find(hay.as_bytes()) {
        Some(at) => finder.find(&hay.as_bytes()[at + 1..]).is_none(),
        None => false,
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    let n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    (0..=n)
        .rev()
        .find(|&i| a.is_char_boundary(i) && b.is_char_boundary(i))
        .unwrap_or(0)
}

fn common_suffix(a: &str, b: &str) -> usize {
    let n = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (0..=n)
        .rev()
        .find(|&i| a.is_char_boundary(a.len() - i) && b.is_char_boundary(b.len() - i))
        .unwrap_or(0)
}

/// `edits` applied to `text` as `edit` applies them (each `old` found
/// once, all at once), for tests.
#[cfg(test)]
fn apply(text: &str, edits: &[Replacement]) -> String {
    let mut spots: Vec<(usize, &Replacement)> = edits
        .iter()
        .map(|e| {
            assert!(occurs_once(text, &e.old), "{:?} is not unique", e.old);
            (text.find(&e.old).unwrap(), e)
        })
        .collect();
    spots.sort_by_key(|(at, _)| *at);
    let mut out = String::new();
    let mut from = 0;
    for (at, e) in spots {
        assert!(at >= from, "overlap");
        out.push_str(&text[from..at]);
        out.push_str(&e.new);
        from = at + e.old.len();
    }
    out.push_str(&text[from..]);
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn replace_all_becomes_unique_line_replacements() {
        let original = "let a = 1;\nlet b = a + a;\nprint(a)\nlet b = a + a;\n";
        let (edits, n) = replace_all(original, "a", "x").unwrap();
        assert_eq!(n, 6);
        assert_eq!(apply(original, &edits), original.replace('a', "x"));
        // One occurrence: a single replacement of its line.
        let (edits, n) = replace_all("one\ntwo\n", "two", "2").unwrap();
        assert_eq!(
            (edits, n),
            (
                vec![Replacement {
                    old: "two\n".into(),
                    new: "2\n".into()
                }],
                1
            )
        );
        assert_eq!(replace_all("abc", "z", "y"), None);
        assert_eq!(replace_all("", "", "y"), None);
    }

    #[test]
    fn dependent_sequential_edits_become_one_change() {
        // The second edit matches what the first one wrote.
        let original = "fn main() {\n    old();\n}\n";
        let edits = [
            ("old()".to_owned(), "mid()".to_owned(), false),
            ("mid();".to_owned(), "new();".to_owned(), false),
        ];
        let got = sequential(original, &edits).unwrap();
        assert_eq!(apply(original, &got), "fn main() {\n    new();\n}\n");
        // Independent edits are kept as recorded.
        let edits = [
            ("fn main".to_owned(), "fn start".to_owned(), false),
            ("old".to_owned(), "new".to_owned(), false),
        ];
        let got = sequential(original, &edits).unwrap();
        assert_eq!(
            got.iter().map(|r| r.old.as_str()).collect::<Vec<_>>(),
            ["fn main", "old"]
        );
        assert_eq!(
            sequential(original, &[("gone".into(), "x".into(), false)]),
            Err("an edit's old text is not in the file as the edits before it left it")
        );
    }

    proptest! {
        /// Whatever the file and the text, the replacements are unique,
        /// do not overlap, and make exactly what `replace_all` makes.
        #[test]
        fn replace_all_is_replayed_exactly(
            lines in proptest::collection::vec("[ab\\n]{0,6}", 1..12),
            old in "[ab]{1,3}",
            new in "[abc\\n]{0,3}",
        ) {
            let original = lines.concat();
            if let Some((edits, _)) = replace_all(&original, &old, &new) {
                prop_assert_eq!(apply(&original, &edits), original.replace(&old, &new));
            } else {
                prop_assert!(!original.contains(&old));
            }
        }
    }
}
