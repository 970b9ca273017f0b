//! Property tests through the public API: truncation, reading page by
//! page, edit matching (the public engine and the tool).
//!
//! They complement the unit properties in `src/tools/edit/tests.rs`
//! (fuzzy normalisation is idempotent; successful edits give patches that
//! apply): those check the diff machinery, these check the promises the
//! tools make to a model. Path confinement and argument handling reach
//! internals, so their properties live next to them
//! (`src/tools/path_properties.rs`, `src/tools/args_properties.rs`). The
//! strategies live in `test_helpers.rs`. Default case counts keep the whole
//! file within tens of seconds on two cores in a debug build;
//! `PROPTEST_CASES` overrides them.

use harness::tools::Limits;
use harness::tools::edit::matching::EditRequest;
use harness::tools::edit::matching::MatchError;
use harness::tools::edit::matching::apply_edits;
use harness::tools::edit::matching::fuzzy_normalize;
use harness::tools::truncate::HeadTruncator;
use harness::tools::truncate::TruncatedBy;
use harness::tools::truncate::Truncation;
use harness::tools::truncate::TruncationLimits;
use harness::tools::truncate::count_lines;
use harness::tools::truncate::truncate_head;
use harness::tools::truncate::truncate_tail;
use proptest::prelude::*;
use serde_json::Value;
use serde_json::json;

use crate::test_helpers::AnchoredFile;
use crate::test_helpers::ToolBench;
use crate::test_helpers::arb_anchored_file;
use crate::test_helpers::arb_body_char;
use crate::test_helpers::arb_filler;
use crate::test_helpers::arb_limits;
use crate::test_helpers::arb_pageable;
use crate::test_helpers::arb_truncation_text;
use crate::test_helpers::cases;
use crate::test_helpers::line_starts;
use crate::test_helpers::lines_of;
use crate::test_helpers::replacement;

// ===========================================================================
// Truncation (§common.4)

/// What every truncation promises, head or tail: the caps hold, the facts
/// describe the input and the output exactly.
fn check_common(
    text: &str,
    limits: TruncationLimits,
    content: &str,
    facts: &Truncation,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(facts.total_lines, lines_of(text).len());
    prop_assert_eq!(facts.total_lines, count_lines(text));
    prop_assert_eq!(facts.total_bytes, text.len());
    prop_assert_eq!(facts.output_bytes, content.len());
    prop_assert_eq!(facts.max_lines, limits.max_lines);
    prop_assert_eq!(facts.max_bytes, limits.max_bytes);
    prop_assert!(content.len() <= limits.max_bytes, "over the byte cap");
    prop_assert!(facts.output_lines <= limits.max_lines, "over the line cap");
    prop_assert_eq!(facts.truncated, facts.truncated_by.is_some());
    if !facts.truncated {
        prop_assert_eq!(facts.output_lines, facts.total_lines);
        // The input unchanged, or (D13) without the final newline that
        // alone broke the byte cap.
        let whole = content == text;
        let without_final_newline =
            text.len() == limits.max_bytes + 1 && text.strip_suffix('\n') == Some(content);
        prop_assert!(
            whole || without_final_newline,
            "untruncated output differs from the input"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn head_keeps_whole_lines_within_both_caps_and_reports_exact_facts(
        text in arb_truncation_text(),
        limits in arb_limits(),
    ) {
        let out = truncate_head(&text, limits);
        let facts = &out.facts;
        check_common(&text, limits, out.content, facts)?;
        prop_assert!(!facts.last_line_partial);
        if facts.truncated {
            let lines = lines_of(&text);
            let kept = facts.output_lines;
            // Never a partial line: the output is the first `kept` lines.
            prop_assert_eq!(out.content, lines[..kept].join("\n"));
            prop_assert!(kept < lines.len());
            let next_cost = lines[kept].len() + usize::from(kept > 0);
            match facts.truncated_by {
                Some(TruncatedBy::Lines) => prop_assert_eq!(kept, limits.max_lines),
                Some(TruncatedBy::Bytes) => {
                    // The cap really was the byte cap: the next line does
                    // not fit.
                    prop_assert!(kept < limits.max_lines);
                    prop_assert!(out.content.len() + next_cost > limits.max_bytes);
                }
                None => prop_assert!(false, "truncated without a reason"),
            }
            prop_assert_eq!(
                facts.first_line_exceeds_limit,
                kept == 0 && facts.truncated_by == Some(TruncatedBy::Bytes)
            );
            if facts.first_line_exceeds_limit {
                prop_assert!(lines[0].len() > limits.max_bytes);
            }
        } else {
            prop_assert!(!facts.first_line_exceeds_limit);
        }
    }

    #[test]
    fn tail_keeps_whole_lines_or_the_end_of_the_last_line(
        text in arb_truncation_text(),
        limits in arb_limits(),
    ) {
        let out = truncate_tail(&text, limits);
        let facts = &out.facts;
        check_common(&text, limits, out.content, facts)?;
        prop_assert!(!facts.first_line_exceeds_limit);
        if !facts.truncated {
            prop_assert!(!facts.last_line_partial);
            return Ok(());
        }
        let lines = lines_of(&text);
        let n = lines.len();
        if facts.last_line_partial {
            // The documented exception: the last line alone is over the
            // byte cap, so its end is kept, cut at a character boundary,
            // as much of it as fits.
            let last = lines[n - 1];
            prop_assert_eq!(facts.truncated_by, Some(TruncatedBy::Bytes));
            prop_assert!(limits.max_lines >= 1);
            prop_assert!(last.len() > limits.max_bytes);
            prop_assert!(last.ends_with(out.content));
            let cut = last.len() - out.content.len();
            let previous_char = last[..cut].chars().next_back().map_or(0, char::len_utf8);
            prop_assert!(out.content.len() + previous_char > limits.max_bytes, "cut too much");
            prop_assert_eq!(facts.output_lines, usize::from(!out.content.is_empty()));
        } else {
            let kept = facts.output_lines;
            prop_assert!(kept < n);
            prop_assert_eq!(out.content, lines[n - kept..].join("\n"));
            let previous_cost = lines[n - kept - 1].len() + usize::from(kept > 0);
            match facts.truncated_by {
                Some(TruncatedBy::Lines) => prop_assert_eq!(kept, limits.max_lines),
                Some(TruncatedBy::Bytes) => {
                    prop_assert!(kept >= 1, "an empty tail must be a partial line");
                    prop_assert!(kept < limits.max_lines);
                    prop_assert!(out.content.len() + previous_cost > limits.max_bytes);
                }
                None => prop_assert!(false, "truncated without a reason"),
            }
        }
    }

    #[test]
    fn streaming_head_truncator_agrees_with_truncate_head(
        text in arb_truncation_text(),
        limits in arb_limits(),
    ) {
        let whole = truncate_head(&text, limits);
        let mut head = HeadTruncator::new(limits);
        let mut kept = Vec::new();
        for line in lines_of(&text) {
            if head.push_line(line.len()) {
                kept.push(line);
            }
        }
        if text.ends_with('\n') {
            head.push_final_newline();
        }
        let facts = head.facts();
        prop_assert_eq!(kept.len(), facts.output_lines);
        if whole.facts.truncated {
            prop_assert_eq!(&facts, &whole.facts);
            prop_assert_eq!(kept.join("\n"), whole.content);
        } else {
            // Untruncated, the streaming caller returns its input as it
            // is; only the D13 final-newline case differs in output_bytes.
            prop_assert!(!facts.truncated);
            prop_assert_eq!(facts.total_lines, whole.facts.total_lines);
            prop_assert_eq!(facts.total_bytes, whole.facts.total_bytes);
            prop_assert_eq!(facts.output_lines, whole.facts.output_lines);
        }
    }

    #[test]
    fn head_pages_reassemble_the_input_exactly((text, limits) in arb_pageable()) {
        // What a reader does with read's notices: show a page, then ask
        // for the text after the lines shown, until nothing is cut.
        let starts = line_starts(&text);
        let mut pages: Vec<&str> = Vec::new();
        let mut line = 0;
        loop {
            let rest = starts.get(line).map_or("", |&at| &text[at..]);
            let out = truncate_head(rest, limits);
            pages.push(out.content);
            if !out.facts.truncated {
                break;
            }
            prop_assert!(out.facts.output_lines >= 1, "no progress at line {}", line + 1);
            line += out.facts.output_lines;
        }
        prop_assert!(pages.len() <= starts.len().max(1));
        let joined = pages.join("\n");
        let last_page = pages.last().copied().unwrap_or_default();
        // D13: the last page drops the final newline when it alone breaks
        // the byte cap.
        let d13 = text.ends_with('\n') && last_page.len() == limits.max_bytes;
        if d13 && joined.len() + 1 == text.len() {
            prop_assert_eq!(format!("{joined}\n"), text);
        } else {
            prop_assert_eq!(joined, text);
        }
    }
}

// ---------------------------------------------------------------------------
// Reading a file page by page through the registry (§read.4, D3, D4)

/// The parts of `[Showing lines S-E of N(...). Use offset=O to continue.]`.
fn parse_notice(notice: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = notice.strip_prefix("[Showing lines ")?;
    let (range, rest) = rest.split_once(" of ")?;
    let (first, last) = range.split_once('-')?;
    let total_end = rest.find(|c: char| !c.is_ascii_digit())?;
    let total = &rest[..total_end];
    let offset = rest
        .split_once("Use offset=")?
        .1
        .strip_suffix(" to continue.]")?;
    Some((
        first.parse().ok()?,
        last.parse().ok()?,
        total.parse().ok()?,
        offset.parse().ok()?,
    ))
}

proptest! {
    #![proptest_config(cases(96))]

    #[test]
    fn read_notices_page_through_the_whole_file(
        (text, limits) in arb_pageable(),
        bom in prop::bool::weighted(0.2),
    ) {
        let bench = ToolBench::with_limits(Limits {
            max_lines: limits.max_lines,
            max_bytes: limits.max_bytes,
            ..Limits::default()
        });
        let mut bytes = Vec::new();
        if bom {
            bytes.extend_from_slice(b"\xEF\xBB\xBF");
        }
        bytes.extend_from_slice(text.as_bytes());
        std::fs::write(bench.path("f.txt"), &bytes).unwrap();

        let total = count_lines(&text);
        let mut pages: Vec<String> = Vec::new();
        let mut offset: Option<usize> = None;
        loop {
            prop_assert!(pages.len() <= total + 1, "read does not make progress");
            let mut args = json!({ "path": "f.txt" });
            if let Some(offset) = offset {
                args["offset"] = json!(offset);
            }
            let result = bench.call("read", args);
            prop_assert!(!result.is_error, "{}", result.text());
            let output = result.text();
            let Some(at) = output.rfind("\n\n[Showing lines ") else {
                // No notice: this page runs to the end of the file.
                prop_assert!(result.details.is_none());
                pages.push(output);
                break;
            };
            let (page, notice) = (&output[..at], &output[at + 2..]);
            let parsed = parse_notice(notice);
            prop_assert!(parsed.is_some(), "unparseable notice {:?}", notice);
            let (first, last, of, next) = parsed.unwrap_or_default();
            prop_assert_eq!(first, offset.unwrap_or(1));
            prop_assert_eq!(next, last + 1);
            // D4: "of N" counts lines as the truncation module does.
            prop_assert_eq!(of, total);
            let facts = &result.details.as_ref().map_or(Value::Null, |d| d["truncation"].clone());
            prop_assert_eq!(facts["output_lines"].as_u64(), Some((last + 1 - first) as u64));
            prop_assert_eq!(facts["output_bytes"].as_u64(), Some(page.len() as u64));
            pages.push(page.to_owned());
            offset = Some(next);
        }
        // D3: the BOM is not part of what read returns.
        let joined = pages.join("\n");
        let last_page = pages.last().map_or(0, String::len);
        let d13 = text.ends_with('\n') && last_page == limits.max_bytes;
        if d13 && joined.len() + 1 == text.len() {
            prop_assert_eq!(format!("{joined}\n"), text);
        } else {
            prop_assert_eq!(joined, text);
        }
    }
}

// ===========================================================================
// Edit matching (§edit.4–§edit.7)

/// One edit picked on an [`AnchoredFile`]: its `oldText` starts at or
/// before the anchor of line `line` and ends at or after it, possibly a few
/// lines further; it is cut from the file itself or from its fuzzy-
/// normalised view.
#[derive(Clone, Debug)]
struct Pick {
    line: usize,
    extra_lines: usize,
    start_seed: usize,
    end_seed: usize,
    from_view: bool,
    filler: String,
    newline: bool,
}

fn arb_picks(max: usize) -> impl Strategy<Value = Vec<Pick>> {
    prop::collection::vec(
        (
            any::<prop::sample::Index>(),
            0usize..3,
            any::<usize>(),
            any::<usize>(),
            any::<bool>(),
            arb_filler(),
            prop::bool::weighted(0.3),
        ),
        1..=max,
    )
    .prop_map(|raw| {
        raw.into_iter()
            .map(
                |(line, extra_lines, start_seed, end_seed, from_view, filler, newline)| Pick {
                    line: line.index(usize::MAX),
                    extra_lines,
                    start_seed,
                    end_seed,
                    from_view,
                    filler,
                    newline,
                },
            )
            .collect()
    })
}

/// The char boundaries of `text` within `range`, inclusive of both ends.
fn boundaries(text: &str, lo: usize, hi: usize) -> Vec<usize> {
    (lo..=hi).filter(|&i| text.is_char_boundary(i)).collect()
}

/// Byte ranges of the lines of `text` including their `\n`.
fn line_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    let mut at = 0;
    for line in lines_of(text) {
        let end = (at + line.len() + 1).min(text.len());
        spans.push(at..end);
        at = end;
    }
    spans
}

/// Concrete edits for `picks` on `file`: line ranges made disjoint (picks
/// that collide are dropped), old texts cut around anchors.
fn concrete_edits(file: &AnchoredFile, picks: &[Pick], view_allowed: bool) -> Vec<EditRequest> {
    let original = file.lf();
    let view = fuzzy_normalize(&original).into_owned();
    let (orig_spans, view_spans) = (line_spans(&original), line_spans(&view));
    let n = file.lines.len();
    let mut taken = vec![false; n];
    let mut edits = Vec::new();
    for (tag, pick) in picks.iter().enumerate() {
        let first = pick.line % n;
        let last = (first + pick.extra_lines).min(n - 1);
        if taken[first..=last].iter().any(|&t| t) {
            continue;
        }
        taken[first..=last].iter_mut().for_each(|t| *t = true);
        let (source, spans) = if pick.from_view && view_allowed {
            (&view, &view_spans)
        } else {
            (&original, &orig_spans)
        };
        // The anchor is ASCII and normalisation keeps it, so it sits at the
        // same place relative to the line in both texts; find it there.
        let anchor = format!("@{first}@");
        let line_start = spans[first].start;
        let anchor_at = line_start + source[line_start..].find(&anchor).unwrap_or(0);
        let starts = boundaries(source, line_start, anchor_at);
        let ends = boundaries(source, anchor_at + anchor.len(), spans[last].end);
        let start = starts[pick.start_seed % starts.len()];
        let end = ends[pick.end_seed % ends.len()];
        edits.push(EditRequest {
            old_text: source[start..end].to_owned(),
            new_text: replacement(tag, &pick.filler, pick.newline),
        });
    }
    edits
}

/// What §edit.4–§edit.6 prescribe for edits whose `oldText`s each hold one
/// anchor and lie on disjoint lines.
struct Expected {
    /// The new content.
    content: String,
    /// Whether the call works in fuzzy-normalised space.
    fuzzy: bool,
    /// Lines (0-based, of the original) that a replacement touches.
    touched: Vec<usize>,
}

/// Computes [`Expected`] independently of the crate, except for
/// `fuzzy_normalize`, which defines the normalised space.
fn expected_edit(original: &str, edits: &[EditRequest]) -> Expected {
    let fuzzy = edits.iter().any(|e| !original.contains(&e.old_text));
    let base = if fuzzy {
        fuzzy_normalize(original).into_owned()
    } else {
        original.to_owned()
    };
    // (position in base, length, new text): exact first, then normalised.
    let mut matches: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| match base.find(&e.old_text) {
            Some(at) => (at, e.old_text.len(), e.new_text.as_str()),
            None => {
                let old = fuzzy_normalize(&e.old_text);
                let at = base.find(old.as_ref()).unwrap_or(usize::MAX);
                (at, old.len(), e.new_text.as_str())
            }
        })
        .collect();
    matches.sort_by_key(|m| m.0);
    let (orig_spans, base_spans) = (line_spans(original), line_spans(&base));
    let line_of = |at: usize| base_spans.iter().position(|s| s.contains(&at)).unwrap_or(0);
    let mut content = String::new();
    let mut touched = Vec::new();
    let mut cursor = 0;
    for (at, len, new) in matches {
        let (first, last) = (line_of(at), line_of(at + len - 1));
        touched.extend(first..=last);
        if fuzzy {
            // The replacement's lines are rewritten from the normalised
            // text; every other line keeps its original bytes.
            content.push_str(&original[cursor..orig_spans[first].start]);
            content.push_str(&base[base_spans[first].start..at]);
            content.push_str(new);
            content.push_str(&base[at + len..base_spans[last].end]);
            cursor = orig_spans[last].end;
        } else {
            content.push_str(&original[cursor..at]);
            content.push_str(new);
            cursor = at + len;
        }
    }
    content.push_str(&original[cursor..]);
    Expected {
        content,
        fuzzy,
        touched,
    }
}

/// An edit text with body characters and line breaks (no `@`, `#`, `\r`).
fn arb_edit_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![8 => arb_body_char(), 1 => Just('\n')], 0..60)
        .prop_map(|c| c.into_iter().collect())
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn disjoint_exact_edits_then_their_inverses_restore_the_file(
        file in arb_anchored_file(12),
        picks in arb_picks(5),
    ) {
        let original = file.lf();
        let edits = concrete_edits(&file, &picks, false);
        let applied = apply_edits(&original, &edits);
        prop_assert!(applied.is_ok(), "{:?}", applied);
        let applied = applied.unwrap_or_else(|_| unreachable!());
        prop_assert!(!applied.fuzzy);
        prop_assert_eq!(&applied.content, &expected_edit(&original, &edits).content);
        let inverses: Vec<EditRequest> = edits
            .iter()
            .rev()
            .map(|e| EditRequest { old_text: e.new_text.clone(), new_text: e.old_text.clone() })
            .collect();
        let restored = apply_edits(&applied.content, &inverses);
        prop_assert_eq!(restored.map(|a| a.content), Ok(original));
    }

    #[test]
    fn fuzzy_edits_rewrite_only_the_lines_they_touch(
        file in arb_anchored_file(12),
        picks in arb_picks(4),
    ) {
        let original = file.lf();
        let edits = concrete_edits(&file, &picks, true);
        let expected = expected_edit(&original, &edits);
        let applied = apply_edits(&original, &edits);
        prop_assert!(applied.is_ok(), "{:?}", applied);
        let applied = applied.unwrap_or_else(|_| unreachable!());
        prop_assert_eq!(applied.fuzzy, expected.fuzzy);
        prop_assert_eq!(&applied.content, &expected.content);
        // Stated directly: every line no replacement touches is still in
        // the file, byte for byte, trailing whitespace and smart quotes
        // included (its anchor makes it unique).
        for (index, line) in lines_of(&original).into_iter().enumerate() {
            if !expected.touched.contains(&index) {
                prop_assert!(
                    applied.content.contains(line),
                    "line {} changed: {:?}",
                    index + 1,
                    line
                );
            }
        }
    }

    #[test]
    fn a_unique_old_text_is_always_found(
        content in arb_edit_text(),
        start in any::<prop::sample::Index>(),
        len in 1usize..20,
    ) {
        let chars: Vec<usize> = content.char_indices().map(|(i, _)| i).collect();
        prop_assume!(!chars.is_empty());
        let from = start.index(chars.len());
        let end = chars.get(from + len).copied().unwrap_or(content.len());
        let old = &content[chars[from]..end];
        let fuzzy_old = fuzzy_normalize(old);
        let unique = !fuzzy_old.is_empty()
            && fuzzy_normalize(&content).matches(fuzzy_old.as_ref()).count() == 1;
        prop_assume!(unique);
        let new = format!("{old}#");
        let applied = apply_edits(&content, &[EditRequest {
            old_text: old.to_owned(),
            new_text: new.clone(),
        }]);
        prop_assert_eq!(applied.map(|a| a.content), Ok(content.replacen(old, &new, 1)));
    }

    #[test]
    fn a_duplicated_old_text_always_fails(
        before in arb_edit_text(),
        dup in arb_edit_text(),
        between in arb_edit_text(),
        after in arb_edit_text(),
    ) {
        prop_assume!(!dup.is_empty());
        let content = format!("{before}{dup}{between}{dup}{after}");
        let result = apply_edits(&content, &[EditRequest {
            old_text: dup.clone(),
            new_text: format!("{dup}#"),
        }]);
        match result {
            Err(MatchError::Duplicate { index: 0, count, .. }) => prop_assert!(count >= 2),
            // Only spaces and tabs: empty once trailing whitespace is
            // ignored, so it cannot identify one place either.
            Err(MatchError::WhitespaceOnly { index: 0 }) => {
                prop_assert!(fuzzy_normalize(&dup).is_empty());
            }
            other => prop_assert!(false, "expected a duplicate error, got {:?}", other),
        }
    }

    #[test]
    fn overlapping_edits_always_fail(
        file in arb_anchored_file(8),
        lines in (any::<prop::sample::Index>(), 0usize..3),
        seeds in (any::<usize>(), any::<usize>(), any::<usize>(), any::<usize>()),
        swap in any::<bool>(),
    ) {
        let text = file.lf();
        let spans = line_spans(&text);
        let n = file.lines.len();
        let i = lines.0.index(n);
        let j = (i + lines.1).min(n - 1);
        let anchor = |k: usize| {
            let r = file.anchor_range(k);
            spans[k].start + r.start..spans[k].start + r.end
        };
        let (ai, aj) = (anchor(i), anchor(j));
        // The first edit holds anchor i, the second anchor j, and the
        // second starts before the first ends.
        let s1 = pick(&text, 0, ai.start, seeds.0);
        let s2 = pick(&text, s1, aj.start, seeds.1);
        let e1 = pick(&text, ai.end.max(s2 + 1), text.len(), seeds.2);
        let e2 = pick(&text, aj.end, text.len(), seeds.3);
        let mut edits = vec![
            EditRequest { old_text: text[s1..e1].to_owned(), new_text: "#1#".to_owned() },
            EditRequest { old_text: text[s2..e2].to_owned(), new_text: "#2#".to_owned() },
        ];
        if swap {
            edits.swap(0, 1);
        }
        // Sorted by position (s1 <= s2), ties in input order.
        let (first, second) = if swap && s1 < s2 { (1, 0) } else { (0, 1) };
        match apply_edits(&text, &edits) {
            Err(MatchError::Overlap { first: f, second: s, .. }) => {
                prop_assert_eq!((f, s), (first, second));
            }
            other => prop_assert!(false, "expected an overlap error, got {:?}", other),
        }
    }
}

/// A char boundary of `text` in `lo..=hi` chosen by `seed` (`lo` itself
/// when `hi < lo`).
fn pick(text: &str, lo: usize, hi: usize, seed: usize) -> usize {
    let options = boundaries(text, lo, hi.max(lo).min(text.len()));
    options
        .get(seed % options.len().max(1))
        .copied()
        .unwrap_or(lo)
}

/// A failing edit to mix into an otherwise good call.
#[derive(Clone, Debug)]
enum Bad {
    NotFound,
    Duplicate,
    Empty,
    WhitespaceOnly,
    OverlapsAnother,
}

fn arb_bad() -> impl Strategy<Value = Bad> {
    prop_oneof![
        Just(Bad::NotFound),
        Just(Bad::Duplicate),
        Just(Bad::Empty),
        Just(Bad::WhitespaceOnly),
        Just(Bad::OverlapsAnother),
    ]
}

proptest! {
    #![proptest_config(cases(96))]

    #[test]
    fn the_edit_tool_keeps_bom_and_line_endings_and_writes_nothing_on_failure(
        file in arb_anchored_file(10),
        picks in arb_picks(4),
        bom in any::<bool>(),
        crlf in any::<bool>(),
        bad in prop::option::weighted(0.5, (arb_bad(), any::<prop::sample::Index>())),
    ) {
        let bench = ToolBench::new();
        let original = file.lf();
        let encode = |lf: &str| {
            let mut out = if bom { "\u{FEFF}".to_owned() } else { String::new() };
            out.push_str(&if crlf { lf.replace('\n', "\r\n") } else { lf.to_owned() });
            out.into_bytes()
        };
        let on_disk = encode(&original);
        std::fs::write(bench.path("f.txt"), &on_disk).unwrap();
        let mut edits = concrete_edits(&file, &picks, true);
        let good = edits.clone();
        if let Some((kind, at)) = &bad {
            let wrong = match kind {
                Bad::NotFound => "~not in the file~".to_owned(),
                Bad::Duplicate => "@".to_owned(),
                Bad::Empty => String::new(),
                Bad::WhitespaceOnly => " \t".to_owned(),
                Bad::OverlapsAnother => good[at.index(good.len())].old_text.clone(),
            };
            edits.insert(at.index(edits.len() + 1), EditRequest {
                old_text: wrong,
                new_text: "#bad#".to_owned(),
            });
        }
        let args = json!({
            "path": "f.txt",
            "edits": edits
                .iter()
                .map(|e| json!({ "oldText": e.old_text, "newText": e.new_text }))
                .collect::<Vec<_>>(),
        });
        let result = bench.call("edit", args);
        let after = std::fs::read(bench.path("f.txt")).unwrap();
        if bad.is_some() {
            prop_assert!(result.is_error, "a bad edit was accepted: {}", result.text());
            prop_assert!(after == on_disk, "the file changed although the call failed");
        } else {
            prop_assert!(!result.is_error, "{}", result.text());
            let expected = expected_edit(&original, &good).content;
            // The first line ending decides; a file without one stays LF.
            let crlf_kept = crlf && original.contains('\n');
            let mut want = if bom { "\u{FEFF}".to_owned() } else { String::new() };
            want.push_str(&if crlf_kept { expected.replace('\n', "\r\n") } else { expected });
            prop_assert_eq!(String::from_utf8_lossy(&after), want);
        }
    }
}
