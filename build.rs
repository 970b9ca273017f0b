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
    relr::enable_where_it_works();
    Ok(())
}

/// Links the `harness` binary with packed relative relocations (`-z
/// pack-relative-relocs`, `DT_RELR`) where the linker and the C library
/// of this machine support them: the dynamic loader then applies about
/// 36,000 relocations from a 10 KB table instead of an 870 KB one, which
/// takes about 0.5 ms off every start (`harness call ls` on an empty
/// directory: 2.8 → 2.3 ms). Only for a native GNU/Linux build with the
/// default linker: a small C program is linked the same way and run first,
/// and anything unusual (cross-compiling, another linker, a probe that
/// fails) leaves the link as it was.
mod relr {
    use std::path::PathBuf;
    use std::process::Command;
    use std::process::Stdio;

    const FLAG: &str = "-Wl,-z,pack-relative-relocs";

    pub(super) fn enable_where_it_works() {
        for var in ["TARGET", "HOST", "CARGO_ENCODED_RUSTFLAGS", "RUSTC_LINKER"] {
            println!("cargo::rerun-if-env-changed={var}");
        }
        if probe().is_some() {
            println!("cargo::rustc-link-arg-bins={FLAG}");
        }
    }

    fn probe() -> Option<()> {
        let target = std::env::var("TARGET").ok()?;
        let host = std::env::var("HOST").ok()?;
        if target != host || !target.ends_with("-linux-gnu") {
            return None;
        }
        let linker_var = format!(
            "CARGO_TARGET_{}_LINKER",
            target.to_uppercase().replace('-', "_")
        );
        println!("cargo::rerun-if-env-changed={linker_var}");
        let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
        if std::env::var_os("RUSTC_LINKER").is_some()
            || std::env::var_os(&linker_var).is_some()
            || flags.contains("linker")
            || flags.contains("fuse-ld")
        {
            return None;
        }
        let out = PathBuf::from(std::env::var_os("OUT_DIR")?);
        let source = out.join("relr_probe.c");
        let program = out.join("relr_probe");
        // A table of pointers: relative relocations for the loader to apply.
        std::fs::write(
            &source,
            "static const char *names[] = {\"a\", \"b\"};\n\
             int main(void) { return names[1][0] == 'b' ? 0 : 1; }\n",
        )
        .ok()?;
        let quiet = |command: &mut Command| {
            command
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()
                .filter(|status| status.success())
        };
        quiet(
            Command::new("cc")
                .args(["-fPIE", "-pie", FLAG, "-Wl,--fatal-warnings", "-o"])
                .arg(&program)
                .arg(&source),
        )?;
        quiet(&mut Command::new(&program))?;
        Some(())
    }
}

#[cfg(feature = "cli")]
mod vocabulary {
    use std::error::Error;
    use std::path::PathBuf;

    /// Ranks above this are not looked for (o200k's ordinary tokens end
    /// below 200,000).
    const MAX_RANK: u32 = 1 << 20;

    pub(super) fn write() -> Result<(), Box<dyn Error>> {
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
