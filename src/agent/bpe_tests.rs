use std::sync::OnceLock;

use proptest::prelude::*;
use tiktoken_rs::CoreBPE;

use super::*;

fn ours() -> &'static Bpe {
    static BPE: OnceLock<Bpe> = OnceLock::new();
    BPE.get_or_init(|| Bpe::o200k().unwrap())
}

fn reference() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().unwrap())
}

fn reference_count(text: &str) -> u64 {
    reference().encode_ordinary(text).len() as u64
}

#[test]
fn the_table_holds_every_ordinary_token_of_the_vocabulary() {
    let bpe = ours();
    assert_eq!(bpe.ranks.len(), 199_998);
    // Every token is found by its bytes, with its rank.
    for rank in [0u32, 1, 255, 256, 1000, 100_000, 199_997] {
        let bytes = reference().decode_bytes(&[rank]).unwrap();
        assert_eq!(bpe.ranks.get(bytes.as_slice()), Some(&rank), "{rank}");
    }
    // Special tokens are text like any other.
    assert_eq!(
        ours().count("<|endoftext|>"),
        reference_count("<|endoftext|>")
    );
}

#[test]
fn a_table_cut_short_is_an_error() {
    let cut = &O200K_TABLE[..O200K_TABLE.len() - 1];
    assert_eq!(
        Bpe::new(cut, "x").err().as_deref(),
        Some("the vocabulary table ends inside a token")
    );
    assert_eq!(
        Bpe::new(&O200K_TABLE[..3], "x").err().as_deref(),
        Some("the vocabulary table ends inside an entry")
    );
}

/// Every source file and document of this repository counts as tiktoken
/// counts it: real code, prose, tables, long lines.
#[test]
fn the_repository_s_own_files_count_as_tiktoken_counts_them() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = 0;
    let mut tokens = 0;
    for dir in ["src", "docs", "scenarios", "tests/fixtures"] {
        let mut stack = vec![root.join(dir)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    assert_eq!(
                        ours().count(&text),
                        reference_count(&text),
                        "{}",
                        path.display()
                    );
                    files += 1;
                    tokens += ours().count(&text);
                }
            }
        }
    }
    assert!(files > 300, "{files} files");
    assert!(tokens > 500_000, "{tokens} tokens");
}

#[test]
fn long_pieces_count_as_tiktoken_counts_them() {
    let texts = [
        "=".repeat(10_000),
        "-=".repeat(3000),
        format!("x{}", "ab".repeat(2000)),
        "aGVsbG8gd29ybGQ".repeat(400),
        " ".repeat(5000),
        format!("{}\n{}", "\t ".repeat(700), "/*".repeat(900)),
        "日本語".repeat(300),
        "🙂".repeat(400),
    ];
    for text in &texts {
        assert_eq!(ours().count(text), reference_count(text), "{text:.40}");
    }
}

/// Characters from every class the pre-tokenizer tells apart.
fn mixed_text(max: usize) -> impl Strategy<Value = String> {
    let chars = prop::sample::select(vec![
        'a', 'b', 'e', 'z', 'A', 'Q', 'Z', 'é', 'ß', 'Ω', 'ж', '日', '本', 'ー', '0', '7', '9',
        '٣', ' ', ' ', '\t', '\n', '\r', '\u{a0}', '.', ',', '\'', '"', '/', '=', '-', '_', '(',
        ')', '{', '}', '#', '🙂', '🚀', '\u{301}',
    ]);
    prop::collection::vec(chars, 0..max).prop_map(|chars| chars.into_iter().collect())
}

/// Pieces that are not tokens: bytes from a small alphabet, so that many
/// pairs join and ties between equal pairs are common.
fn piece(min: usize, max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop::sample::select(b"aabe =-_.\xe6\x97\xa5".to_vec()),
        min..max,
    )
}

proptest! {
    #[test]
    fn generated_texts_count_as_tiktoken_counts_them(text in mixed_text(400)) {
        prop_assert_eq!(ours().count(&text), reference_count(&text));
    }

    #[test]
    fn generated_long_texts_count_as_tiktoken_counts_them(text in mixed_text(4000)) {
        prop_assert_eq!(ours().count(&text), reference_count(&text));
    }

    #[test]
    fn the_two_merges_agree(piece in piece(2, 700)) {
        let bpe = ours();
        prop_assert_eq!(bpe.merge_scanning(&piece), bpe.merge_with_heap(&piece));
    }
}

/// A run of blanks so long that the pre-tokenizer's backtracking gives up
/// (tiktoken-rs panics on it) is counted in pieces: about what the run
/// would cost at the rate of shorter runs, and the text after it counts too.
#[test]
fn a_blank_run_the_pattern_gives_up_on_is_counted_in_pieces() {
    let text = format!("{}x", " ".repeat(1_000_000));
    assert!(ours().pattern.find_iter(&text).any(|found| found.is_err()));
    let short = ours().count(&format!("{}x", " ".repeat(250_000)));
    assert_eq!(short, reference_count(&format!("{}x", " ".repeat(250_000))));
    // The run, then three tokens of words after it.
    let tokens = ours().count(&format!("{text} and then words"));
    assert!(
        (4 * short + 3 - 64..=4 * short + 3 + 64).contains(&tokens),
        "{tokens} tokens against {short} for a quarter of the run"
    );
    // Pieces end at character boundaries and hold the whole text.
    let wide = "é🙂".repeat(30_000);
    let cut: Vec<&str> = pieces(&wide).collect();
    assert_eq!(cut.concat(), wide);
    assert!(cut.iter().all(|piece| piece.len() <= GIVE_UP_PIECE));
    assert_eq!(cut.len(), wide.len().div_ceil(GIVE_UP_PIECE));
    // A text shorter than a piece is its own only piece.
    let small = format!("{} and then words", " ".repeat(40_000));
    assert_eq!(pieces(&small).collect::<Vec<_>>(), vec![small.as_str()]);
}
