//! Notices (D13): what the model reads after the output.

use pretty_assertions::assert_eq;

use super::*;

// ---------------------------------------------------------------- notices (D13)

mod notice_props {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::super::*;
    use crate::tools::truncate::TruncationLimits;

    /// Lines of `a` and `é` of any length (some far over the limits), with
    /// or without a final newline.
    fn text() -> impl Strategy<Value = String> {
        (vec((0usize..2500, any::<bool>()), 0..40), any::<bool>()).prop_map(
            |(lines, final_newline)| {
                let lines: Vec<String> = lines
                    .into_iter()
                    .map(|(n, wide)| {
                        if wide {
                            "é".repeat(n / 2)
                        } else {
                            "a".repeat(n)
                        }
                    })
                    .collect();
                let mut text = lines.join("\n");
                if final_newline && !text.is_empty() {
                    text.push('\n');
                }
                text
            },
        )
    }

    proptest! {
        #![proptest_config(crate::tools::testutil::cases(128))]

        /// The notice states true facts about the text shown, derived here
        /// from the plain text without the truncation code: which lines,
        /// of how many, how big the cut line is, which limit cut.
        #[test]
        fn every_notice_states_true_facts(
            text in text(),
            chunk in 1usize..7000,
            max_lines in 1usize..30,
            max_bytes in 1usize..2000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let limits = TruncationLimits { max_lines, max_bytes };
            let mut output = OutputAccumulator::new(limits, "p", Arc::new(crate::tools::ops::LocalFs)).in_dir(dir.path());
            for piece in text.as_bytes().chunks(chunk) {
                output.append(piece);
            }
            output.finish();
            let snapshot = output.snapshot();
            let shown = snapshot.content.clone();
            let notice = truncation_notice(&snapshot);

            let body = text.strip_suffix('\n').unwrap_or(&text);
            let lines: Vec<&str> = if text.is_empty() { Vec::new() } else { body.split('\n').collect() };
            let total = lines.len();
            prop_assert!(shown.len() <= max_bytes || shown == text);
            if shown == text || shown == body {
                // Everything is shown: no notice.
                prop_assert_eq!(notice, None);
                return Ok(());
            }
            let file = snapshot.full_output_path.unwrap();
            prop_assert_eq!(crate::tools::testutil::disk::read(&file), text.as_bytes());
            let full = format!("Full output: {}", file.display());
            let last = lines[total - 1];
            let expected = if !shown.contains('\n') && last.len() > max_bytes && last.ends_with(shown.as_str()) {
                // Only the end of the last line fits.
                prop_assert!(shown.len() + 4 > max_bytes.min(last.len()));
                if shown.is_empty() {
                    format!(
                        "[Line {total} is {}; not even one character of its end fits in the {} limit. {full}]",
                        format_size(last.len()),
                        format_size(max_bytes)
                    )
                } else {
                    format!(
                        "[Showing last {} of line {total} (line is {}). {full}]",
                        format_size(shown.len()),
                        format_size(last.len())
                    )
                }
            } else {
                // Whole lines: exactly the last k, and one more would not fit.
                let k = shown.split('\n').count();
                let start = total - k + 1;
                prop_assert_eq!(&shown, &lines[start - 1..].join("\n"));
                prop_assert!(k <= max_lines);
                let by_lines = k == max_lines;
                prop_assert!(by_lines || shown.len() + 1 + lines[start - 2].len() > max_bytes);
                if by_lines {
                    format!("[Showing lines {start}-{total} of {total}. {full}]")
                } else {
                    format!(
                        "[Showing lines {start}-{total} of {total} ({} limit). {full}]",
                        format_size(max_bytes)
                    )
                }
            };
            prop_assert_eq!(notice, Some(expected));
        }
    }
}

/// §bash.7, found by replaying recorded sessions: the output's final
/// newline stays before the blank line and the exit notice, as pi wrote it.
#[tokio::test]
async fn failing_output_keeps_its_final_newline_before_the_notice() {
    let h = Harness::local();
    let r = bash(&h, "printf 'a\\nb\\n'; exit 1").await;
    assert_eq!(r.text(), "a\nb\n\n\nCommand exited with code 1");
    let r = bash(&h, "printf 'a\\nb'; exit 1").await;
    assert_eq!(r.text(), "a\nb\n\nCommand exited with code 1");
}
