//! What a file is, from its first bytes: images by magic bytes (§read.5)
//! and the common binary formats (D2), never by extension.

/// An image format `read` recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ImageKind {
    /// PNG (not animated).
    Png,
    /// JPEG.
    Jpeg,
    /// GIF.
    Gif,
    /// WebP.
    WebP,
    /// BMP (recognised, but not inlined).
    Bmp,
}

impl ImageKind {
    /// The MIME type.
    pub(crate) fn mime_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::WebP => "image/webp",
            Self::Bmp => "image/bmp",
        }
    }
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Recognises an image from its first bytes (at least the first 4100 are
/// needed to see an animated PNG's `acTL` chunk).
pub(crate) fn sniff_image(head: &[u8]) -> Option<ImageKind> {
    if head.len() >= 4 && head[..3] == [0xFF, 0xD8, 0xFF] && head[3] != 0xF7 {
        return Some(ImageKind::Jpeg);
    }
    if head.starts_with(PNG_SIGNATURE) {
        return (is_png(head) && !is_animated_png(head)).then_some(ImageKind::Png);
    }
    if head.starts_with(b"GIF") {
        return Some(ImageKind::Gif);
    }
    if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return Some(ImageKind::WebP);
    }
    if is_bmp(head) {
        return Some(ImageKind::Bmp);
    }
    None
}

fn is_png(head: &[u8]) -> bool {
    head.len() >= 16 && head[8..12] == [0, 0, 0, 13] && &head[12..16] == b"IHDR"
}

/// An `acTL` chunk before the first `IDAT` marks an animated PNG.
fn is_animated_png(head: &[u8]) -> bool {
    let mut pos = PNG_SIGNATURE.len();
    while pos + 8 <= head.len() {
        let len = u32::from_be_bytes([head[pos], head[pos + 1], head[pos + 2], head[pos + 3]]);
        let kind = &head[pos + 4..pos + 8];
        if kind == b"acTL" {
            return true;
        }
        if kind == b"IDAT" {
            return false;
        }
        pos = pos.saturating_add(12).saturating_add(len as usize);
    }
    false
}

fn read_u32_le(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at + 4)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn read_u16_le(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at + 2)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// `BM` plus the header sanity checks of §read.5.
fn is_bmp(head: &[u8]) -> bool {
    if !head.starts_with(b"BM") {
        return false;
    }
    let (Some(size), Some(offset), Some(dib), Some(planes), Some(bpp)) = (
        read_u32_le(head, 2),
        read_u32_le(head, 10),
        read_u32_le(head, 14),
        read_u16_le(head, 26),
        read_u16_le(head, 28),
    ) else {
        return false;
    };
    let dib_ok = dib == 12 || (40..=124).contains(&dib);
    let (planes, bpp) = if dib == 12 {
        // The old OS/2 header keeps these two fields two bytes earlier.
        match (read_u16_le(head, 22), read_u16_le(head, 24)) {
            (Some(p), Some(b)) => (p, b),
            _ => return false,
        }
    } else {
        (planes, bpp)
    };
    (size == 0 || size >= 26)
        && offset >= 14 + dib
        && (size == 0 || offset < size)
        && dib_ok
        && planes == 1
        && [1, 4, 8, 16, 24, 32].contains(&bpp)
}

/// What a JPEG's frame header says about decoding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JpegFrame {
    /// Anything but sequential Huffman coding (baseline or extended):
    /// progressive decoding keeps every coefficient until the last scan.
    pub progressive: bool,
    /// The number of colour components (1 to 4).
    pub components: u8,
}

impl Default for JpegFrame {
    /// The costliest frame to decode, for a header that cannot be read.
    fn default() -> Self {
        Self {
            progressive: true,
            components: 4,
        }
    }
}

/// Finds a JPEG's start-of-frame segment, walking the segments before it
/// (a frame header may come after large EXIF or ICC segments).
pub(crate) fn jpeg_frame(data: &[u8]) -> Option<JpegFrame> {
    if !data.starts_with(&[0xFF, 0xD8]) {
        return None;
    }
    let mut pos = 2;
    loop {
        // A marker: 0xFF, any fill bytes 0xFF, then its code.
        if *data.get(pos)? != 0xFF {
            return None;
        }
        while *data.get(pos)? == 0xFF {
            pos += 1;
        }
        let code = *data.get(pos)?;
        pos += 1;
        match code {
            // Markers without a length.
            0x01 | 0xD0..=0xD7 => continue,
            // Start of frame, every kind but the DHT, JPG and DAC codes.
            0xC0..=0xCF if !matches!(code, 0xC4 | 0xC8 | 0xCC) => {
                let components = *data.get(pos + 7)?;
                return Some(JpegFrame {
                    progressive: !matches!(code, 0xC0 | 0xC1),
                    components,
                });
            }
            // Scan data or the end before a frame header: not a JPEG.
            0xD8..=0xDA => return None,
            _ => {
                let high = *data.get(pos)?;
                let low = *data.get(pos + 1)?;
                pos += usize::from(u16::from_be_bytes([high, low]));
            }
        }
    }
}

/// A non-image binary format (D2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinaryKind {
    /// An ELF executable or library.
    Elf,
    /// A Mach-O binary.
    MachO,
    /// A Windows PE executable.
    WindowsExe,
    /// A WebAssembly module.
    Wasm,
    /// A PDF document.
    Pdf,
    /// A zip archive (also jar, docx, xlsx …).
    Zip,
    /// A gzip stream.
    Gzip,
    /// A bzip2 stream.
    Bzip2,
    /// An xz stream.
    Xz,
    /// A zstd stream.
    Zstd,
    /// A tar archive.
    Tar,
    /// A SQLite database.
    Sqlite,
    /// An animated PNG.
    AnimatedPng,
    /// Text in UTF-16 (with a byte-order mark).
    Utf16,
    /// Anything else with NUL bytes or invalid UTF-8.
    Data,
}

impl BinaryKind {
    /// A name for people and models.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Elf => "ELF executable",
            Self::MachO => "Mach-O executable",
            Self::WindowsExe => "Windows executable",
            Self::Wasm => "WebAssembly module",
            Self::Pdf => "PDF document",
            Self::Zip => "zip archive",
            Self::Gzip => "gzip-compressed data",
            Self::Bzip2 => "bzip2-compressed data",
            Self::Xz => "xz-compressed data",
            Self::Zstd => "zstd-compressed data",
            Self::Tar => "tar archive",
            Self::Sqlite => "SQLite database",
            Self::AnimatedPng => "animated PNG image",
            Self::Utf16 => "UTF-16 text",
            Self::Data => "binary data",
        }
    }

    /// A shell command that shows something useful about such a file.
    pub(crate) fn suggestion(self, quoted_path: &str) -> String {
        match self {
            Self::Pdf => format!("pdftotext {quoted_path} - | head -n 200"),
            Self::Zip => format!("unzip -l {quoted_path}"),
            Self::Tar => format!("tar -tvf {quoted_path}"),
            Self::Gzip => format!("gzip -dc {quoted_path} | head -n 200"),
            Self::Bzip2 => format!("bzip2 -dc {quoted_path} | head -n 200"),
            Self::Xz => format!("xz -dc {quoted_path} | head -n 200"),
            Self::Zstd => format!("zstd -dc {quoted_path} | head -n 200"),
            Self::Sqlite => format!("sqlite3 {quoted_path} .schema"),
            Self::Utf16 => format!("iconv -f UTF-16 -t UTF-8 {quoted_path} | head -n 200"),
            Self::Elf | Self::MachO | Self::WindowsExe | Self::Wasm => {
                format!("file {quoted_path}")
            }
            Self::AnimatedPng | Self::Data => format!("xxd {quoted_path} | head -n 20"),
        }
    }
}

/// Recognises a binary file from its first bytes: a known format, or NUL
/// bytes / invalid UTF-8 anywhere in `head` (an incomplete character at the
/// very end of `head` is not counted, since `head` may cut it).
pub(crate) fn sniff_binary(head: &[u8]) -> Option<BinaryKind> {
    let magic: &[(&[u8], BinaryKind)] = &[
        (b"\x7fELF", BinaryKind::Elf),
        (b"\xCF\xFA\xED\xFE", BinaryKind::MachO),
        (b"\xCE\xFA\xED\xFE", BinaryKind::MachO),
        (b"\xFE\xED\xFA\xCF", BinaryKind::MachO),
        (b"\xFE\xED\xFA\xCE", BinaryKind::MachO),
        (b"\0asm", BinaryKind::Wasm),
        (b"%PDF-", BinaryKind::Pdf),
        (b"PK\x03\x04", BinaryKind::Zip),
        (b"PK\x05\x06", BinaryKind::Zip),
        (b"\x1F\x8B", BinaryKind::Gzip),
        (b"BZh", BinaryKind::Bzip2),
        (b"\xFD7zXZ\0", BinaryKind::Xz),
        (b"\x28\xB5\x2F\xFD", BinaryKind::Zstd),
        (b"SQLite format 3\0", BinaryKind::Sqlite),
        (b"\xFF\xFE", BinaryKind::Utf16),
        (b"\xFE\xFF", BinaryKind::Utf16),
        (PNG_SIGNATURE, BinaryKind::AnimatedPng),
    ];
    for (prefix, kind) in magic {
        if head.starts_with(prefix) {
            return Some(*kind);
        }
    }
    if head.len() > 262 && &head[257..262] == b"ustar" {
        return Some(BinaryKind::Tar);
    }
    if head.starts_with(b"MZ") && head.contains(&0) {
        return Some(BinaryKind::WindowsExe);
    }
    if memchr::memchr(0, head).is_some() {
        return Some(BinaryKind::Data);
    }
    match std::str::from_utf8(head) {
        Ok(_) => None,
        // `error_len() == None` means the input ended inside a character.
        Err(err) if err.error_len().is_none() => None,
        Err(_) => Some(BinaryKind::Data),
    }
}

/// Quotes a path for a shell command shown to a model, only when needed.
pub(crate) fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,@%:=".contains(&b));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(extra_chunk: Option<&[u8; 4]>) -> Vec<u8> {
        let mut v = PNG_SIGNATURE.to_vec();
        v.extend_from_slice(&[0, 0, 0, 13]);
        v.extend_from_slice(b"IHDR");
        v.extend_from_slice(&[0; 13 + 4]);
        if let Some(kind) = extra_chunk {
            v.extend_from_slice(&[0, 0, 0, 8]);
            v.extend_from_slice(kind);
            v.extend_from_slice(&[0; 8 + 4]);
        }
        v.extend_from_slice(&[0, 0, 0, 0]);
        v.extend_from_slice(b"IDAT");
        v
    }

    #[test]
    fn images_by_magic_bytes() {
        assert_eq!(sniff_image(&png(None)), Some(ImageKind::Png));
        assert_eq!(sniff_image(&png(Some(b"acTL"))), None);
        assert_eq!(
            sniff_binary(&png(Some(b"acTL"))),
            Some(BinaryKind::AnimatedPng)
        );
        assert_eq!(
            sniff_image(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some(ImageKind::Jpeg)
        );
        assert_eq!(sniff_image(&[0xFF, 0xD8, 0xFF, 0xF7]), None);
        assert_eq!(sniff_image(b"GIF89a"), Some(ImageKind::Gif));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageKind::WebP));
        assert_eq!(sniff_image(b"\x89PNG but really text"), None);
    }

    #[test]
    fn a_jpeg_s_frame_header_is_found_after_its_other_segments() {
        let frame = |data: &[u8]| jpeg_frame(data).map(|f| (f.progressive, f.components));
        let rotated = include_bytes!("../../tests/fixtures/images/rotated-90.jpg");
        assert_eq!(
            frame(include_bytes!(
                "../../tests/fixtures/images/progressive-444.jpg"
            )),
            Some((true, 3))
        );
        assert_eq!(
            frame(include_bytes!(
                "../../tests/fixtures/images/progressive-cmyk.jpg"
            )),
            Some((true, 4))
        );
        // Baseline, its frame header after an EXIF segment.
        assert_eq!(frame(rotated), Some((false, 3)));
        // Cut before the frame header, or scan data first: not found.
        assert_eq!(frame(&rotated[..40]), None);
        assert_eq!(frame(b"\xFF\xD8\xFF\xDA\x00\x02"), None);
        assert_eq!(frame(b"not a jpeg"), None);
    }

    #[test]
    fn bmp_header_checks() {
        let mut bmp = b"BM".to_vec();
        bmp.extend_from_slice(&70u32.to_le_bytes()); // size
        bmp.extend_from_slice(&[0; 4]);
        bmp.extend_from_slice(&54u32.to_le_bytes()); // pixel offset
        bmp.extend_from_slice(&40u32.to_le_bytes()); // DIB header size
        bmp.extend_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0]); // width, height
        bmp.extend_from_slice(&1u16.to_le_bytes()); // planes
        bmp.extend_from_slice(&24u16.to_le_bytes()); // bpp
        assert_eq!(sniff_image(&bmp), Some(ImageKind::Bmp));
        assert_eq!(sniff_image(b"BMW owners manual, chapter one"), None);
    }

    #[test]
    fn binary_kinds() {
        assert_eq!(sniff_binary(b"\x7fELF\x02\x01"), Some(BinaryKind::Elf));
        assert_eq!(sniff_binary(b"%PDF-1.7\n"), Some(BinaryKind::Pdf));
        assert_eq!(sniff_binary(b"PK\x03\x04rest"), Some(BinaryKind::Zip));
        assert_eq!(sniff_binary(b"text\0more"), Some(BinaryKind::Data));
        assert_eq!(sniff_binary(b"caf\xE9 latin-1"), Some(BinaryKind::Data));
        assert_eq!(sniff_binary("héllo wörld".as_bytes()), None);
        // A character cut by the end of the sniffed window is still text.
        assert_eq!(sniff_binary(&"é".as_bytes()[..1]), None);
        assert_eq!(sniff_binary(b"plain text\n"), None);
        assert_eq!(sniff_binary(b"MZ is a word"), None);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("src/main.rs"), "src/main.rs");
        assert_eq!(shell_quote("my file.txt"), "'my file.txt'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
