use std::sync::Arc;

use super::BASH_FILE_PREFIX;
use super::OutputAccumulator;
use super::full_log::FILE_BUFFER;
use super::utf8::Utf8Decoder;
use crate::tools::ops::LocalFs;
use crate::tools::testutil::disk;
use crate::tools::truncate::TruncatedBy;
use crate::tools::truncate::TruncationLimits;
use crate::tools::truncate::count_lines;
use crate::tools::truncate::truncate_tail;
use pretty_assertions::assert_eq;

fn limits() -> TruncationLimits {
    TruncationLimits::default()
}

fn acc_in(dir: &tempfile::TempDir) -> OutputAccumulator {
    OutputAccumulator::new(limits(), BASH_FILE_PREFIX, Arc::new(LocalFs)).in_dir(dir.path())
}

fn feed(acc: &mut OutputAccumulator, bytes: &[u8], chunk: usize) {
    for piece in bytes.chunks(chunk.max(1)) {
        acc.append(piece);
    }
    acc.finish();
}

fn decode_all(pieces: &[&[u8]]) -> String {
    let mut decoder = Utf8Decoder::default();
    let mut out = String::new();
    for piece in pieces {
        decoder.decode(piece, |t| out.push_str(t));
    }
    decoder.finish(|t| out.push_str(t));
    out
}

#[test]
fn decoder_joins_characters_split_across_chunks() {
    let text = "aé🙂€b".as_bytes();
    for cut in 0..=text.len() {
        assert_eq!(
            decode_all(&[&text[..cut], &text[cut..]]),
            "aé🙂€b",
            "cut at {cut}"
        );
    }
    let singles: Vec<&[u8]> = text.chunks(1).collect();
    assert_eq!(decode_all(&singles), "aé🙂€b");
}

#[test]
fn decoder_replaces_invalid_sequences_like_a_whole_stream_decode() {
    let cases: &[&[u8]] = &[
        b"\xff\xfeA\n",
        b"a\xe2\x82",
        b"a\xe2\x82b",
        b"\xe0\x80\x80A",
        b"\xf0\x9f\x99",
        b"\xc3",
        b"x\xed\xa0\x80y",
        b"\x80\x80",
        b"\xe0\x80",
        b"\xf4\x90\x80",
        b"\xf0\x9f\x99\x82\xf0",
    ];
    for bytes in cases {
        let want = String::from_utf8_lossy(bytes).into_owned();
        assert_eq!(decode_all(&[bytes]), want, "{bytes:?}");
        for cut in 0..=bytes.len() {
            assert_eq!(
                decode_all(&[&bytes[..cut], &bytes[cut..]]),
                want,
                "{bytes:?} cut at {cut}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_all(&singles), want, "{bytes:?} byte by byte");
    }
    assert_eq!(decode_all(&[b"\xff\xfeA\n"]), "\u{FFFD}\u{FFFD}A\n");
}

#[test]
fn small_output_is_kept_whole_without_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir);
    feed(&mut acc, b"a\r\nb\r\n", 3);
    let snap = acc.snapshot();
    assert_eq!(snap.content, "a\r\nb\r\n");
    assert!(!snap.truncation.truncated);
    assert_eq!(snap.truncation.total_lines, 2);
    assert_eq!(snap.full_output_path, None);
    assert!(!snap.cleaned);
    assert_eq!(disk::names(dir.path()).len(), 0);
}

#[test]
fn exactly_the_line_limit_is_not_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir);
    let text: String = (1..=2000).map(|i| format!("{i}\n")).collect();
    feed(&mut acc, text.as_bytes(), 4096);
    let snap = acc.snapshot();
    assert_eq!(snap.content, text);
    assert!(!snap.truncation.truncated);
    assert_eq!(snap.full_output_path, None);
}

#[test]
fn seq_3000_keeps_lines_1001_to_3000_and_saves_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir);
    let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    feed(&mut acc, text.as_bytes(), 100);
    let snap = acc.snapshot();
    let want: String = (1001..=3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(snap.content, want.trim_end());
    let t = &snap.truncation;
    assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!((t.total_lines, t.output_lines), (3000, 2000));
    assert_eq!(t.total_bytes, text.len());
    let path = snap.full_output_path.unwrap();
    assert_eq!(disk::read(&path), text.as_bytes());
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("harness-bash-") && name.ends_with(".log") && name.len() == 33,
        "{name}"
    );
    assert_eq!(disk::metadata(&path).mode & 0o777, 0o600);
}

#[test]
fn one_long_line_reports_its_true_size_with_or_without_newline() {
    for (len, newline) in [
        (60_000, false),
        (60_000, true),
        (300_000, true),
        (300_000, false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut acc = acc_in(&dir);
        let mut bytes = vec![b'0'; len];
        if newline {
            bytes.push(b'\n');
        }
        feed(&mut acc, &bytes, 8192);
        let snap = acc.snapshot();
        assert_eq!(snap.content, "0".repeat(51_200), "{len} {newline}");
        let t = &snap.truncation;
        assert!(t.last_line_partial);
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(
            (t.total_lines, t.output_lines, t.output_bytes),
            (1, 1, 51_200)
        );
        assert_eq!(t.total_bytes, bytes.len());
        assert_eq!(snap.last_line_bytes, len, "{len} {newline}");
        assert_eq!(disk::read(snap.full_output_path.unwrap()), bytes);
    }
}

#[test]
fn long_line_followed_by_short_lines_is_not_shown_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir);
    let mut text = "x".repeat(500_000);
    text.push_str("\nshort\nend\n");
    feed(&mut acc, text.as_bytes(), 7000);
    let snap = acc.snapshot();
    assert_eq!(snap.content, "short\nend");
    let t = &snap.truncation;
    assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!((t.total_lines, t.output_lines), (3, 2));
    assert!(!t.last_line_partial);
}

#[test]
fn invalid_bytes_become_replacement_characters_and_stay_raw_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = OutputAccumulator::new(
        TruncationLimits {
            max_lines: 1,
            max_bytes: 100,
        },
        "t",
        Arc::new(LocalFs),
    )
    .in_dir(dir.path());
    feed(&mut acc, b"\xff\xfeA\nB\n", 1);
    let snap = acc.snapshot();
    assert_eq!(snap.content, "B");
    assert_eq!(snap.truncation.total_bytes, 10);
    assert_eq!(
        disk::read(snap.full_output_path.unwrap()),
        b"\xff\xfeA\nB\n"
    );
}

#[test]
fn cleaning_is_reported_and_facts_describe_the_cleaned_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = OutputAccumulator::new(
        TruncationLimits {
            max_lines: 2,
            max_bytes: 1000,
        },
        "t",
        Arc::new(LocalFs),
    )
    .in_dir(dir.path());
    feed(&mut acc, b"\x1b[31mred\x1b[0m\n10%\r50%\r100%\ndone\n", 2);
    let snap = acc.snapshot();
    assert!(snap.cleaned);
    assert_eq!(snap.content, "100%\ndone");
    let t = &snap.truncation;
    assert_eq!(
        (t.total_lines, t.total_bytes),
        (3, "red\n100%\ndone\n".len())
    );
    // Raw output: 3 lines, so a file was opened with the raw bytes.
    assert_eq!(
        disk::read(snap.full_output_path.unwrap()),
        b"\x1b[31mred\x1b[0m\n10%\r50%\r100%\ndone\n"
    );
}

#[test]
fn a_long_redrawn_line_does_not_push_earlier_lines_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir);
    acc.append(b"header\n");
    for i in 0..1000 {
        acc.append(format!("\r{}{i}", "#".repeat(500)).as_bytes());
    }
    acc.append(b"\rfinished\n");
    acc.finish();
    let snap = acc.snapshot();
    assert_eq!(snap.content, "header\nfinished\n");
    assert!(!snap.truncation.truncated);
    assert!(snap.cleaned);
    // The raw output was large, so it is saved anyway.
    assert!(snap.full_output_path.is_some());
}

#[test]
fn memory_stays_bounded_for_huge_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir);
    let chunk = b"y\n".repeat(32 * 1024);
    let long = vec![b'z'; 64 * 1024];
    let bound = 8 * 2 * limits().max_bytes + 4 * chunk.len() + FILE_BUFFER;
    let mut total = 0u64;
    // 200 MB of short lines, then 50 MB of one line.
    while total < 200_000_000 {
        acc.append(&chunk);
        total += chunk.len() as u64;
        assert!(
            acc.retained_bytes() <= bound,
            "{} > {bound}",
            acc.retained_bytes()
        );
    }
    for _ in 0..800 {
        acc.append(&long);
        total += long.len() as u64;
        assert!(
            acc.retained_bytes() <= bound,
            "{} > {bound}",
            acc.retained_bytes()
        );
    }
    acc.finish();
    let snap = acc.snapshot();
    assert_eq!(acc.raw_bytes(), total);
    let short_bytes = total as usize - 800 * long.len();
    assert_eq!(snap.truncation.total_lines, short_bytes / 2 + 1);
    assert_eq!(snap.truncation.total_bytes, total as usize);
    assert_eq!(snap.last_line_bytes, 800 * long.len());
    assert_eq!(snap.content.len(), 51_200);
    let path = snap.full_output_path.unwrap();
    assert_eq!(disk::metadata(&path).len, total);
}

#[test]
fn the_full_output_file_keeps_only_the_first_bytes_up_to_the_log_cap() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    for (cap, chunk) in [(100u64, 7usize), (5000, 4096), (5000, 1)] {
        let mut acc = acc_in(&dir).with_log_cap(cap);
        feed(&mut acc, text.as_bytes(), chunk);
        let snap = acc.snapshot();
        // What the model reads does not depend on the cap.
        let want: String = (1001..=3000).map(|i| format!("{i}\n")).collect();
        assert_eq!(snap.content, want.trim_end());
        assert!(snap.full_output_truncated);
        assert_eq!(snap.full_output_bytes, cap);
        let path = snap.full_output_path.unwrap();
        assert_eq!(disk::read(&path), &text.as_bytes()[..cap as usize]);
    }
    // Exactly the cap is not cut.
    let mut acc = acc_in(&dir).with_log_cap(text.len() as u64);
    feed(&mut acc, text.as_bytes(), 333);
    let snap = acc.snapshot();
    assert!(!snap.full_output_truncated);
    assert_eq!(snap.full_output_bytes, text.len() as u64);
}

#[test]
fn a_log_cap_of_zero_keeps_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = acc_in(&dir).with_log_cap(0);
    let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    feed(&mut acc, text.as_bytes(), 100);
    let snap = acc.snapshot();
    assert_eq!(
        (
            snap.full_output_path,
            snap.full_output_error,
            snap.full_output_truncated
        ),
        (None, None, true)
    );
    assert!(snap.truncation.truncated);
    assert_eq!(disk::names(dir.path()).len(), 0);
}

#[test]
fn no_output_means_no_lines() {
    let mut acc = OutputAccumulator::new(limits(), "t", Arc::new(LocalFs));
    acc.finish();
    let snap = acc.snapshot();
    assert_eq!(snap.content, "");
    assert_eq!(snap.truncation.total_lines, 0);
    assert_eq!(snap.full_output_path, None);
}

#[test]
fn facts_match_a_direct_truncation_for_random_shapes() {
    // Whatever the chunking, the accumulator reports what truncating
    // the whole cleaned text at once reports.
    let dir = tempfile::tempdir().unwrap();
    let shapes: Vec<String> = vec![
        (0..5000).map(|i| format!("line {i}\n")).collect(),
        (0..700).map(|i| "w".repeat(i % 300) + "\n").collect(),
        format!("{}\n{}", "a".repeat(120_000), "b".repeat(70_000)),
        format!("{}\n{}\n", "a".repeat(10), "é".repeat(40_000)),
        "\n".repeat(3000),
        (0..30_000).map(|i| format!("line {i}\n")).collect(),
        format!("{}\nshort\n", "a".repeat(300_000)),
        format!("x\n{}", "é".repeat(150_000)),
    ];
    for text in &shapes {
        for chunk in [1usize, 333, 65_536] {
            let mut acc = acc_in(&dir);
            feed(&mut acc, text.as_bytes(), chunk);
            let snap = acc.snapshot();
            let want = truncate_tail(text, limits());
            assert_eq!(snap.content, want.content, "chunk {chunk}");
            assert_eq!(snap.truncation, want.facts, "chunk {chunk}");
            assert_eq!(snap.truncation.total_lines, count_lines(text));
        }
    }
}

mod props {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;
    use crate::tools::bash::ansi::clean;
    use crate::tools::truncate::count_lines;
    use crate::tools::truncate::count_lines_bytes;

    /// Pieces of terminal output: long and short runs, multi-byte and
    /// invalid bytes, line endings, redraws and escape codes.
    fn token() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0usize..4000).prop_map(|n| vec![b'a'; n]),
            (0usize..40).prop_map(|n| b"xy".repeat(n)),
            Just("é🙂".as_bytes().to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\x1b[1;31m".to_vec()),
            Just(b"\x1b]0;title\x07".to_vec()),
            Just(vec![0xff]),
            Just(vec![0xe2, 0x82]),
            Just(vec![0xe0, 0x80]),
            Just(vec![0xf0, 0x9f]),
        ]
    }

    proptest! {
        #![proptest_config(crate::tools::testutil::cases(128))]

        /// Whatever the chunking and the limits, a snapshot says exactly
        /// what truncating the whole cleaned text at once says, and the
        /// file holds every raw byte exactly when the output outgrew a
        /// limit.
        #[test]
        fn snapshot_equals_truncating_the_whole_cleaned_text(
            tokens in vec(token(), 0..150),
            chunk in 1usize..6000,
            max_lines in 1usize..40,
            max_bytes in 1usize..3000,
        ) {
            let raw = tokens.concat();
            let limits = TruncationLimits { max_lines, max_bytes };
            let dir = tempfile::tempdir().unwrap();
            let mut acc = OutputAccumulator::new(limits, "p", Arc::new(crate::tools::ops::LocalFs)).in_dir(dir.path());
            for piece in raw.chunks(chunk) {
                acc.append(piece);
                // Each tail buffer holds at most 4 windows before a trim,
                // so 8 of capacity; raw bytes wait for the file only
                // until they outgrow the limit.
                let bound = 16 * acc.window() + 2 * (max_bytes + chunk) + FILE_BUFFER;
                prop_assert!(acc.retained_bytes() <= bound, "{} > {}", acc.retained_bytes(), bound);
            }
            acc.finish();
            let snap = acc.snapshot();

            let (cleaned, removed) = clean(&String::from_utf8_lossy(&raw));
            let want = truncate_tail(&cleaned, limits);
            prop_assert_eq!(&snap.content, want.content);
            prop_assert_eq!(&snap.truncation, &want.facts);
            prop_assert_eq!(snap.cleaned, removed);
            let body = cleaned.strip_suffix('\n').unwrap_or(&cleaned);
            let last_line = body.rsplit('\n').next().unwrap_or("");
            prop_assert_eq!(snap.last_line_bytes, last_line.len());

            let outgrew = raw.len() > max_bytes
                || count_lines_bytes(&raw) > max_lines
                || cleaned.len() > max_bytes
                || count_lines(&cleaned) > max_lines;
            match &snap.full_output_path {
                Some(path) => {
                    prop_assert!(outgrew);
                    prop_assert_eq!(&crate::tools::testutil::disk::read(path), &raw);
                }
                None => prop_assert!(!outgrew),
            }
        }
    }
}
