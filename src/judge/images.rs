//! `image` and `images` (docs/scenarios.md, "Checks on one call"): checks
//! on a result's image blocks: how many there are, and each one's MIME
//! type, size in bytes and dimensions (read from the image's header, never
//! by decoding the pixels).

use base64::Engine;

use crate::tools::Content;

use crate::scenario::detail_spec::ImageChecks;

/// What a check needs to know of one image block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    /// The MIME type the block declares.
    pub mime_type: String,
    /// The decoded bytes, or why the payload is not base64.
    pub bytes: Result<Vec<u8>, String>,
}

/// The image blocks of a result's content, in order.
pub(crate) fn blocks(content: &[Content]) -> Vec<Block> {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Image { data, mime_type } => Some(Block {
                mime_type: mime_type.clone(),
                bytes: base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .map_err(|err| format!("its data is not base64: {err}")),
            }),
            Content::Text { .. } => None,
        })
        .collect()
}

/// The failed checks of `block` against `want`: the check's name, what
/// was expected, what was found.
pub(crate) fn misses(block: &Block, want: &ImageChecks) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    if let Some(mime) = &want.mime_type
        && *mime != block.mime_type
    {
        out.push(("mime_type", mime.clone(), block.mime_type.clone()));
    }
    let bytes = match &block.bytes {
        Ok(bytes) => bytes,
        Err(err) => {
            if want.max_bytes.is_some() || want.width.is_some() || want.height.is_some() {
                out.push(("data", "base64 image data".to_owned(), err.clone()));
            }
            return out;
        }
    };
    if let Some(max) = want.max_bytes
        && bytes.len() as u64 > max
    {
        out.push((
            "max_bytes",
            format!("at most {max} bytes"),
            format!("{} bytes", bytes.len()),
        ));
    }
    if want.width.is_none() && want.height.is_none() {
        return out;
    }
    match imagesize::blob_size(bytes) {
        Ok(size) => {
            let dims = [
                ("width", want.width, size.width),
                ("height", want.height, size.height),
            ];
            for (name, want, got) in dims {
                if let Some(want) = want
                    && u64::from(want) != got as u64
                {
                    out.push((name, format!("{want} px"), format!("{got} px")));
                }
            }
        }
        Err(err) => out.push((
            "dimensions",
            "an image header with its width and height".to_owned(),
            format!("cannot read them: {err}"),
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 3×2 PNG's first bytes: signature and IHDR are all the header
    /// reader needs.
    fn png_header(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR".to_vec();
        bytes.extend_from_slice(&width.to_be_bytes());
        bytes.extend_from_slice(&height.to_be_bytes());
        bytes.extend_from_slice(b"\x08\x06\x00\x00\x00\x00\x00\x00\x00");
        bytes
    }

    #[test]
    fn each_image_check_can_pass_and_fail() {
        let data = base64::engine::general_purpose::STANDARD.encode(png_header(3, 2));
        let content = [
            Content::text("Read image file [image/png]"),
            Content::Image {
                data,
                mime_type: "image/png".to_owned(),
            },
            Content::Image {
                data: "not base64!".to_owned(),
                mime_type: "image/gif".to_owned(),
            },
        ];
        let found = blocks(&content);
        assert_eq!(found.len(), 2);
        let right = ImageChecks {
            mime_type: Some("image/png".to_owned()),
            width: Some(3),
            height: Some(2),
            max_bytes: Some(33),
        };
        assert_eq!(misses(&found[0], &right), []);
        let wrong = ImageChecks {
            mime_type: Some("image/jpeg".to_owned()),
            width: Some(4),
            height: Some(1),
            max_bytes: Some(10),
        };
        assert_eq!(
            misses(&found[0], &wrong),
            [
                ("mime_type", "image/jpeg".to_owned(), "image/png".to_owned()),
                (
                    "max_bytes",
                    "at most 10 bytes".to_owned(),
                    "33 bytes".to_owned()
                ),
                ("width", "4 px".to_owned(), "3 px".to_owned()),
                ("height", "1 px".to_owned(), "2 px".to_owned()),
            ]
        );
        assert_eq!(
            misses(&found[1], &right)
                .iter()
                .map(|m| m.0)
                .collect::<Vec<_>>(),
            ["mime_type", "data"]
        );
        let text_as_image = Block {
            mime_type: "image/png".to_owned(),
            bytes: Ok(b"hello".to_vec()),
        };
        assert_eq!(
            misses(&text_as_image, &right)
                .iter()
                .map(|m| m.0)
                .collect::<Vec<_>>(),
            ["dimensions"]
        );
    }
}
