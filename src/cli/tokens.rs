//! `harness tokens [FILE] [--tokenizer NAME]`: the token count of a file or
//! of standard input, counted exactly as the harness prices text.

use std::path::Path;
use std::path::PathBuf;

use clap::Args;

use crate::exit;

/// Flags of `harness tokens`.
#[derive(Debug, Args)]
pub(super) struct TokensArgs {
    /// The file to count (default, or `-`: standard input). It must be
    /// UTF-8 text.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Token counter: o200k (default), cl100k or chars4.
    #[arg(long, value_name = "NAME", default_value = "o200k")]
    tokenizer: String,
}

pub(super) fn run(args: TokensArgs) -> u8 {
    let tokens = match super::common::tokenizer(&args.tokenizer) {
        Ok(t) => t,
        Err(err) => return super::common::usage_error(format!("--tokenizer: {err}")),
    };
    let (name, bytes) = match args.file.as_deref() {
        None => read_stdin(),
        Some(path) if path.as_os_str() == "-" => read_stdin(),
        Some(path) => {
            let name = path.display().to_string();
            let bytes = read_file(path, &name);
            (name, bytes)
        }
    };
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(err) => return super::common::usage_error(err),
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            return super::common::usage_error(format!(
                "{name} is not UTF-8 text (invalid byte at offset {}); the harness prices text only",
                err.utf8_error().valid_up_to()
            ));
        }
    };
    println!("{}", tokens.count(&text));
    exit::SUCCESS
}

fn read_stdin() -> (String, Result<Vec<u8>, String>) {
    let name = "standard input".to_owned();
    let bytes = super::common::read_bounded(std::io::stdin().lock(), &name);
    (name, bytes)
}

/// A regular file's bytes, bounded; a device, FIFO or socket is refused
/// before it is opened (opening a FIFO waits for a writer, and a device may
/// never end).
fn read_file(path: &Path, name: &str) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|err| format!("cannot read {name}: {err}"))?;
    if meta.is_dir() {
        return Err(format!("{name} is a directory; give a file"));
    }
    if !meta.is_file() {
        return Err(format!(
            "{name} is not a regular file (a device, FIFO or socket); harness tokens reads \
             regular files, or standard input (`harness tokens < {name}`) up to {} MiB",
            super::common::MAX_INPUT_BYTES >> 20
        ));
    }
    let file = std::fs::File::open(path).map_err(|err| format!("cannot read {name}: {err}"))?;
    super::common::read_bounded(file, name)
}
