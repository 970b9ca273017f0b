//! Writes the o200k vocabulary as a flat table into `OUT_DIR` for the
//! token counter (src/agent/bpe.rs), taken from the `tiktoken-rs` crate
//! at build time. Reading the table takes a few milliseconds; building
//! `tiktoken-rs`'s own tokenizer takes about 0.3 s of CPU in every
//! process that counts tokens.
//!
//! The table is a sequence of entries, in rank order, each the rank
//! (`u32`, little-endian), the length of the token's bytes (`u16`) and
//! the bytes. Special tokens (`<|endoftext|>` …) are left out: the
//! counter counts their text as ordinary text.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo::rerun-if-changed=build.rs");
    #[cfg(feature = "cli")]
    vocabulary::write()?;
    Ok(())
}

#[cfg(feature = "cli")]
mod vocabulary {
    use std::error::Error;
    use std::path::PathBuf;

    /// Ranks above this are not looked for (o200k's ordinary tokens end
    /// below 200,000).
    const MAX_RANK: u32 = 1 << 20;

    pub fn write() -> Result<(), Box<dyn Error>> {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
        let bpe = tiktoken_rs::o200k_base()?;
        let specials = bpe.special_tokens();
        let mut table = Vec::new();
        let mut count = 0u32;
        for rank in 0..MAX_RANK {
            let Ok(bytes) = bpe.decode_bytes(&[rank]) else {
                continue;
            };
            if std::str::from_utf8(&bytes).is_ok_and(|text| specials.contains(text)) {
                continue;
            }
            let len = u16::try_from(bytes.len())?;
            table.extend_from_slice(&rank.to_le_bytes());
            table.extend_from_slice(&len.to_le_bytes());
            table.extend_from_slice(&bytes);
            count += 1;
        }
        if count < 100_000 {
            return Err(format!("the o200k vocabulary has only {count} tokens").into());
        }
        std::fs::write(out.join("o200k.vocab"), table)?;
        Ok(())
    }
}
