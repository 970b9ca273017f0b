//! `harness tokens [FILE] [--tokenizer NAME]`: the token count of a file or
//! of standard input, counted exactly as the harness prices text.

use std::io::Read as _;
use std::path::PathBuf;

use clap::Args;

use crate::exit;

/// Flags of `harness tokens`.
#[derive(Debug, Args)]
pub struct TokensArgs {
    /// The file to count (default, or `-`: standard input). It must be
    /// UTF-8 text.
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
    /// Token counter: o200k (default), cl100k or chars4.
    #[arg(long, value_name = "NAME", default_value = "o200k")]
    tokenizer: String,
}

pub fn run(args: TokensArgs) -> u8 {
    let tokens = match super::run::tokenizer(&args.tokenizer) {
        Ok(t) => t,
        Err(err) => return super::usage_error(format!("--tokenizer: {err}")),
    };
    let (name, bytes) = match args.file.as_deref() {
        None => read_stdin(),
        Some(path) if path.as_os_str() == "-" => read_stdin(),
        Some(path) => (
            path.display().to_string(),
            std::fs::read(path).map_err(|err| err.to_string()),
        ),
    };
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(err) => return super::usage_error(format!("cannot read {name}: {err}")),
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            return super::usage_error(format!(
                "{name} is not UTF-8 text (invalid byte at offset {}); the harness prices text only",
                err.utf8_error().valid_up_to()
            ));
        }
    };
    println!("{}", tokens.count(&text));
    exit::SUCCESS
}

fn read_stdin() -> (String, Result<Vec<u8>, String>) {
    let mut bytes = Vec::new();
    let result = std::io::stdin()
        .read_to_end(&mut bytes)
        .map(|_| bytes)
        .map_err(|err| err.to_string());
    ("standard input".to_owned(), result)
}
