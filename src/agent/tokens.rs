//! Token counting behind one interface, so that the faux provider and the
//! statistics price text the same way.
//!
//! A counter may also promise that its counts add up across line starts
//! ([`TokenCounter::measure`]): the faux provider then prices a request
//! message by message instead of counting the whole prompt again every
//! turn (see [`super::pricing`]). The BPE counters keep a small memo of the
//! long texts they counted last (the tool section and the system prompt of
//! every request, a result priced by the figures, the statistics and the
//! checks), so a text seen again costs a comparison, not a tokenization.

use std::fmt;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::PoisonError;

use tiktoken_rs::CoreBPE;

use super::bpe::Bpe;
use super::bpe::pieces;

/// Longer texts are counted by tiktoken-rs in [`pieces`].
const WHOLE_TEXT: usize = 512 * 1024;

/// The bytes of a text a BPE counter counts exactly: 1 MiB. Past them the
/// text is estimated as `chars4` prices it (UTF-16 units / 4, rounded
/// up), so pricing one text costs at most the counting of 1 MiB, in time
/// and in memory, whatever it holds (a 60 MB word, a tool section of
/// 100,000 tools). A fixed rule, so the figures stay the same on every
/// machine (docs/reports.md, "What is priced").
pub const COUNTED_EXACTLY: usize = 1024 * 1024;

/// `text` cut at [`COUNTED_EXACTLY`] bytes (at a character boundary):
/// what is counted, and what is estimated.
fn split_counted(text: &str) -> (&str, &str) {
    if text.len() <= COUNTED_EXACTLY {
        return (text, "");
    }
    let mut end = COUNTED_EXACTLY;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.split_at(end)
}

/// Counts the tokens of a text.
pub trait TokenCounter: Send + Sync + fmt::Debug {
    /// The counter's name, as reports show it (`chars4`, `o200k` …).
    fn name(&self) -> &str;
    /// The number of tokens of `text`.
    fn count(&self, text: &str) -> u64;

    /// An additive measure of `text`, when the counter has one: for any
    /// texts `a` ending in `\n` and `b` starting with an ASCII letter,
    /// `measure(a + b) == measure(a) + measure(b)` (for the BPE counters,
    /// while `a + b` is at most [`COUNTED_EXACTLY`] bytes), and for every
    /// text `count(t) == tokens_from(measure(t))`. The BPE counters'
    /// measure is the token count itself (their pre-tokenizer always
    /// splits a text there, and each piece is encoded alone); `chars4`
    /// measures UTF-16 units. `None` (the default) promises nothing, and
    /// callers count whole texts.
    fn measure(&self, text: &str) -> Option<u64> {
        let _ = text;
        None
    }

    /// The tokens of a text whose [`measure`](Self::measure) is `measure`.
    fn tokens_from(&self, measure: u64) -> u64 {
        measure
    }
}

/// pi's estimate: characters / 4, rounded up (§faux.3). pi counts UTF-16
/// code units; so do we, so that non-BMP characters cost the same.
#[derive(Clone, Copy, Debug, Default)]
pub struct Chars4;

impl TokenCounter for Chars4 {
    fn name(&self) -> &str {
        "chars4"
    }

    fn count(&self, text: &str) -> u64 {
        self.tokens_from(utf16_units(text))
    }

    fn measure(&self, text: &str) -> Option<u64> {
        Some(utf16_units(text))
    }

    fn tokens_from(&self, measure: u64) -> u64 {
        measure.div_ceil(4)
    }
}

/// The UTF-16 code units of `text`.
fn utf16_units(text: &str) -> u64 {
    let units: usize = text.chars().map(char::len_utf16).sum();
    units as u64
}

/// An OpenAI BPE vocabulary (`o200k_base`, `cl100k_base`), loaded once per
/// process: o200k from the table built into the binary (`src/agent/bpe.rs`, a
/// few milliseconds), cl100k by the `tiktoken-rs` crate (about 0.3 s).
pub struct Tiktoken {
    name: &'static str,
    encoder: Encoder,
    memo: Memo,
}

/// What counts a [`Tiktoken`]'s tokens.
#[derive(Clone, Copy)]
enum Encoder {
    Table(&'static Bpe),
    Crate(&'static CoreBPE),
}

impl fmt::Debug for Tiktoken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tiktoken")
            .field("name", &self.name)
            .finish()
    }
}

impl TokenCounter for Tiktoken {
    fn name(&self) -> &str {
        self.name
    }

    fn count(&self, text: &str) -> u64 {
        if !Memo::keeps(text) {
            return self.encode(text);
        }
        if let Some(tokens) = self.memo.get(text) {
            return tokens;
        }
        let tokens = self.encode(text);
        self.memo.put(text, tokens);
        tokens
    }

    fn measure(&self, text: &str) -> Option<u64> {
        Some(self.count(text))
    }
}

impl Tiktoken {
    /// The tokens of `text`: its first [`COUNTED_EXACTLY`] bytes counted,
    /// the rest estimated as `chars4` would.
    fn encode(&self, text: &str) -> u64 {
        let (counted, estimated) = split_counted(text);
        self.encode_exactly(counted) + Chars4.count(estimated)
    }

    fn encode_exactly(&self, text: &str) -> u64 {
        // Special-token text such as `<|endoftext|>` in a file is ordinary
        // text to a model reading it, so it is counted as such.
        match self.encoder {
            Encoder::Table(bpe) => bpe.count(text),
            // tiktoken-rs panics where its pattern gives up (a run of
            // about a million blanks), so a long text is counted in
            // pieces short enough for it.
            Encoder::Crate(bpe) if text.len() > WHOLE_TEXT => pieces(text)
                .map(|piece| bpe.encode_ordinary(piece).len() as u64)
                .sum(),
            Encoder::Crate(bpe) => bpe.encode_ordinary(text).len() as u64,
        }
    }
}

/// The last few long texts a counter counted, with their counts: a small,
/// bounded cache (at most [`Memo::ENTRIES`] texts of at most
/// [`Memo::MAX_LEN`] bytes), most recently used first.
#[derive(Default)]
struct Memo {
    entries: Mutex<Vec<(Box<str>, u64)>>,
}

impl Memo {
    /// Texts shorter than this are counted again: a comparison would save
    /// little.
    const MIN_LEN: usize = 512;
    /// Longer texts are not kept, so the memo stays small.
    const MAX_LEN: usize = 256 * 1024;
    /// How many texts are kept.
    const ENTRIES: usize = 32;

    fn keeps(text: &str) -> bool {
        (Self::MIN_LEN..=Self::MAX_LEN).contains(&text.len())
    }

    fn get(&self, text: &str) -> Option<u64> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let at = entries.iter().position(|(kept, _)| **kept == *text)?;
        let entry = entries.remove(at);
        let tokens = entry.1;
        entries.insert(0, entry);
        Some(tokens)
    }

    fn put(&self, text: &str, tokens: u64) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.iter().any(|(kept, _)| **kept == *text) {
            return;
        }
        entries.truncate(Self::ENTRIES - 1);
        entries.insert(0, (text.into(), tokens));
    }
}

type Loaded<T> = Result<T, String>;

fn load<T>(
    cell: &'static OnceLock<Loaded<T>>,
    make: fn() -> Loaded<T>,
) -> Result<&'static T, String> {
    cell.get_or_init(make).as_ref().map_err(Clone::clone)
}

fn o200k() -> Loaded<Bpe> {
    Bpe::o200k()
}

fn cl100k() -> Loaded<CoreBPE> {
    tiktoken_rs::cl100k_base().map_err(|err| err.to_string())
}

/// The tokenizer names `tokenizer_by_name` knows, default first.
pub const TOKENIZERS: [&str; 3] = ["o200k", "cl100k", "chars4"];

/// The name `name` stands for (`o200k_base` is `o200k`), or, when it
/// names no tokenizer, what to say about it. Nothing is loaded.
pub fn tokenizer_name(name: &str) -> Result<&'static str, String> {
    match name {
        "o200k" | "o200k_base" => Ok("o200k"),
        "cl100k" | "cl100k_base" => Ok("cl100k"),
        "chars4" => Ok("chars4"),
        other => Err(format!(
            "unknown tokenizer `{other}` (known: {})",
            TOKENIZERS.join(", ")
        )),
    }
}

/// The token counter called `name`: `o200k` (default), `cl100k` or
/// `chars4`.
pub fn tokenizer_by_name(name: &str) -> Result<Arc<dyn TokenCounter>, String> {
    static O200K: OnceLock<Loaded<Bpe>> = OnceLock::new();
    static CL100K: OnceLock<Loaded<CoreBPE>> = OnceLock::new();
    match tokenizer_name(name)? {
        "o200k" => Ok(Arc::new(Tiktoken {
            name: "o200k",
            encoder: Encoder::Table(load(&O200K, o200k)?),
            memo: Memo::default(),
        })),
        "cl100k" => Ok(Arc::new(Tiktoken {
            name: "cl100k",
            encoder: Encoder::Crate(load(&CL100K, cl100k)?),
            memo: Memo::default(),
        })),
        _ => Ok(Arc::new(Chars4)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars4_rounds_up_and_counts_utf16_units() {
        assert_eq!(Chars4.count(""), 0);
        assert_eq!(Chars4.count("a"), 1);
        assert_eq!(Chars4.count("abcd"), 1);
        assert_eq!(Chars4.count("abcde"), 2);
        assert_eq!(Chars4.count("éé"), 1);
        assert_eq!(Chars4.count("🙂🙂🙂"), 2);
    }

    /// Texts and their token counts from the reference tokenizer (Python
    /// `tiktoken`, `encode_ordinary`), on the same vocabulary files.
    const REFERENCE_TEXTS: [&str; 8] = [
        "",
        "hello world",
        "Successfully wrote 11 bytes to a.txt",
        "fn main() {\n    println!(\"héllo, wörld\");\n}\n",
        "日本語のテキストとемодзи 🙂🚀 and Ελληνικά",
        "[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]",
        "<|endoftext|> is plain text here",
        "    indented\tline\r\nwith CRLF\r\n",
    ];

    #[test]
    fn o200k_matches_tiktoken() {
        let t = tokenizer_by_name("o200k").unwrap();
        let counts: Vec<u64> = REFERENCE_TEXTS.iter().map(|s| t.count(s)).collect();
        assert_eq!(counts, vec![0, 2, 8, 15, 16, 21, 11, 9]);
    }

    #[test]
    fn cl100k_matches_tiktoken() {
        let t = tokenizer_by_name("cl100k").unwrap();
        let counts: Vec<u64> = REFERENCE_TEXTS.iter().map(|s| t.count(s)).collect();
        assert_eq!(counts, vec![0, 2, 8, 16, 27, 21, 11, 9]);
    }

    #[test]
    fn the_memo_answers_as_counting_and_stays_bounded() {
        let t = Tiktoken {
            name: "o200k",
            encoder: Encoder::Table(load(&O200K_TEST, o200k).unwrap()),
            memo: Memo::default(),
        };
        let texts: Vec<String> = (0..Memo::ENTRIES + 8)
            .map(|i| format!("fn item_{i}() {{ {} }}\n", "let x = 1; ".repeat(60 + i)))
            .collect();
        for _ in 0..2 {
            for text in &texts {
                assert_eq!(t.count(text), t.encode(text), "{text}");
            }
        }
        let kept = t.memo.entries.lock().unwrap();
        assert_eq!(kept.len(), Memo::ENTRIES);
        // Most recently used first; short and huge texts are not kept.
        assert_eq!(&*kept[0].0, texts.last().unwrap().as_str());
        assert!(!Memo::keeps("short"));
        assert!(!Memo::keeps(&"x".repeat(Memo::MAX_LEN + 1)));
    }

    static O200K_TEST: OnceLock<Loaded<Bpe>> = OnceLock::new();

    /// A run of blanks that tiktoken-rs's pattern gives up on (it panics
    /// there) is counted in pieces, at about the rate of shorter runs.
    #[test]
    fn cl100k_counts_a_blank_run_it_would_give_up_on_in_pieces() {
        let t = tokenizer_by_name("cl100k").unwrap();
        let short = t.count(&format!("{}x", " ".repeat(250_000)));
        let tokens = t.count(&format!("{}x", " ".repeat(1_000_000)));
        assert!(
            (4 * short - 64..=4 * short + 64).contains(&tokens),
            "{tokens} tokens against {short} for a quarter of the run"
        );
    }

    /// Issue 42, item 2: a text over 1 MiB is counted exactly up to
    /// there and estimated as `chars4` after, so one text costs at most
    /// the counting of 1 MiB (a 60 MB word took 80 s and 2.5 GB).
    #[test]
    fn a_text_past_the_counted_bytes_is_estimated_after_them() {
        let t = tokenizer_by_name("o200k").unwrap();
        // Two tokens in 12 bytes counted, three estimated.
        let line = " hello world";
        let text = line.repeat(COUNTED_EXACTLY / line.len() + 1000);
        let (counted, estimated) = split_counted(&text);
        assert_eq!(
            (counted.len(), counted.len() + estimated.len()),
            (COUNTED_EXACTLY, text.len())
        );
        let whole = t.count(&text);
        assert_eq!(whole, t.count(counted) + Chars4.count(estimated));
        // The 11,996 bytes past the counted ones, at 4 a token.
        assert_eq!(whole - t.count(counted), 2999);
        // A character is never cut: `é` is two bytes.
        let cut = format!("{}é", "x".repeat(COUNTED_EXACTLY - 1));
        assert_eq!(split_counted(&cut).0.len(), COUNTED_EXACTLY - 1);
    }

    #[test]
    fn names_and_errors() {
        assert_eq!(tokenizer_by_name("o200k_base").unwrap().name(), "o200k");
        assert_eq!(tokenizer_by_name("chars4").unwrap().name(), "chars4");
        assert_eq!(
            tokenizer_by_name("gpt2").unwrap_err(),
            "unknown tokenizer `gpt2` (known: o200k, cl100k, chars4)"
        );
    }
}
