//! Exact-byte file checks (`bytes_base64`, `sha256`) and the symlink check
//! of `expect.files` (docs/scenarios.md, "Checks on the run"). Each check
//! returns `None` when it holds, else what was expected and what was found.

use base64::Engine;
use sha2::Digest;
use sha2::Sha256;

/// The lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How many base64 characters a failure shows of a file's bytes.
const SHOWN: usize = 96;

fn shown(bytes: &[u8]) -> String {
    let text = base64::engine::general_purpose::STANDARD.encode(bytes);
    if text.len() <= SHOWN {
        text
    } else {
        format!("{}… ({} base64 characters)", &text[..SHOWN], text.len())
    }
}

/// `bytes_base64`: the file's bytes are exactly `want`.
pub(crate) fn bytes(want: &[u8], got: &[u8]) -> Option<(String, String)> {
    if want == got {
        return None;
    }
    let at = want
        .iter()
        .zip(got)
        .position(|(w, g)| w != g)
        .unwrap_or_else(|| want.len().min(got.len()));
    Some((
        format!("{} bytes, base64 {}", want.len(), shown(want)),
        format!(
            "{} bytes, first difference at byte {at}, base64 {}",
            got.len(),
            shown(got)
        ),
    ))
}

/// `sha256`: the file's bytes have this digest (any case).
pub(crate) fn sha256(want: &str, got: &[u8]) -> Option<(String, String)> {
    let digest = sha256_hex(got);
    (!digest.eq_ignore_ascii_case(want)).then(|| {
        (
            format!("sha256 {}", want.to_ascii_lowercase()),
            format!("sha256 {digest} ({} bytes)", got.len()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_report_where_they_differ() {
        assert_eq!(bytes(b"abc", b"abc"), None);
        assert_eq!(
            bytes(b"abc", b"abd\xff"),
            Some((
                "3 bytes, base64 YWJj".to_owned(),
                "4 bytes, first difference at byte 2, base64 YWJk/w==".to_owned()
            ))
        );
        assert_eq!(
            bytes(b"ab", b"abc").map(|(_, actual)| actual),
            Some("3 bytes, first difference at byte 2, base64 YWJj".to_owned())
        );
        let long = vec![b'x'; 100];
        assert_eq!(
            bytes(b"", &long).map(|(_, actual)| actual),
            Some(format!(
                "100 bytes, first difference at byte 0, base64 {}… (136 base64 characters)",
                "eHh4".repeat(24)
            ))
        );
    }

    #[test]
    fn digests_compare_in_any_case() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(sha256_hex(b"abc"), abc);
        assert_eq!(sha256(&abc.to_ascii_uppercase(), b"abc"), None);
        assert_eq!(
            sha256(abc, b"abd"),
            Some((
                format!("sha256 {abc}"),
                "sha256 a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9 (3 bytes)"
                    .to_owned()
            ))
        );
    }
}
