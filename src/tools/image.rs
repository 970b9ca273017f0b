//! Images as `read` sends them (§read.5): PNG, JPEG, GIF and WebP within
//! the limits go as they are; a BMP is converted to PNG; an image wider or
//! taller than [`MAX_DIMENSION`], or whose base64 is longer than
//! [`MAX_IMAGE_BASE64`], is resized (Lanczos3) to fit, as pi 0.82 does.
//!
//! Resizing tries, in pi's order, PNG and then JPEG at qualities 80, 85,
//! 70, 55 and 40, and sends the first that fits; when none does, both
//! sides shrink to 75% and it tries again, down to 1×1. Decoding is
//! bounded: at most [`MAX_DECODE_BYTES`] of file, [`MAX_DECODE_SIDE`]
//! pixels a side and [`MAX_DECODE_ALLOC`] bytes of memory. The output is
//! the same for the same input on every run.

use std::io::Cursor;

use image::DynamicImage;
use image::ImageDecoder;
use image::ImageFormat;
use image::ImageReader;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;

use super::file_kind::ImageKind;

/// Largest base64 payload sent as an image (pi's 4.5 MiB).
pub const MAX_IMAGE_BASE64: usize = 4_718_592;

/// The longest side of a sent image, in pixels (pi's 2000).
pub const MAX_DIMENSION: u32 = 2000;

/// The largest image file decoded to convert or resize it: 64 MiB.
pub const MAX_DECODE_BYTES: u64 = 64 * 1024 * 1024;

/// The longest side of an image decoded to convert or resize it.
pub const MAX_DECODE_SIDE: u32 = 20_000;

/// The most memory a decoder may use: 256 MiB.
pub const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;

/// JPEG qualities tried after PNG, in pi's order.
const JPEG_QUALITIES: [u8; 5] = [80, 85, 70, 55, 40];

/// An image ready to send.
#[derive(Debug, PartialEq)]
pub(crate) struct Prepared {
    /// The bytes to send (base64-encoded by the caller).
    pub data: Vec<u8>,
    /// Their MIME type.
    pub mime: &'static str,
    /// Set when the file's format was not sent as it is.
    pub converted_from: Option<&'static str>,
    /// `(original, sent)` sizes when the image was resized.
    pub resized: Option<((u32, u32), (u32, u32))>,
}

impl Prepared {
    /// The lines after `Read image file [MIME]`: the conversion note, then
    /// the resize note (pi's wording).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(from) = self.converted_from {
            notes.push(format!("[Image converted from {from} to {}.]", self.mime));
        }
        if let Some(((w0, h0), (w, h))) = self.resized {
            let scale = f64::from(w0) / f64::from(w);
            notes.push(format!(
                "[Image: original {w0}x{h0}, displayed at {w}x{h}. Multiply coordinates by \
                 {scale:.2} to map to original image.]"
            ));
        }
        notes
    }
}

/// Why an image is not sent.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Omitted {
    /// A BMP that could not be decoded.
    NotConverted,
    /// An image too large that could not be decoded or made small enough.
    NotResized,
}

impl Omitted {
    /// Its name in `details.omitted_reason`.
    pub fn reason(&self) -> &'static str {
        match self {
            Omitted::NotConverted => "not_converted",
            Omitted::NotResized => "not_resized",
        }
    }

    /// The note after `Read image file [MIME]` (pi's wording).
    pub fn note(&self) -> &'static str {
        match self {
            Omitted::NotConverted => {
                "[Image omitted: could not be converted to a supported inline image format.]"
            }
            Omitted::NotResized => {
                "[Image omitted: could not be resized below the inline image size limit.]"
            }
        }
    }
}

fn format_of(kind: ImageKind) -> ImageFormat {
    match kind {
        ImageKind::Png => ImageFormat::Png,
        ImageKind::Jpeg => ImageFormat::Jpeg,
        ImageKind::Gif => ImageFormat::Gif,
        ImageKind::WebP => ImageFormat::WebP,
        ImageKind::Bmp => ImageFormat::Bmp,
    }
}

/// The length of `n` bytes in base64.
fn base64_len(n: usize) -> usize {
    n.div_ceil(3).saturating_mul(4)
}

fn fits(data: &[u8]) -> bool {
    base64_len(data.len()) <= MAX_IMAGE_BASE64
}

fn reader(kind: ImageKind, data: &[u8]) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::with_format(Cursor::new(data), format_of(kind));
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    reader
}

/// Decodes `data`, turned upright per its EXIF orientation.
fn decode(kind: ImageKind, data: &[u8]) -> Option<DynamicImage> {
    let mut decoder = reader(kind, data).into_decoder().ok()?;
    let orientation = decoder.orientation().ok();
    let mut image = DynamicImage::from_decoder(decoder).ok()?;
    if let Some(orientation) = orientation {
        image.apply_orientation(orientation);
    }
    Some(image)
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let rgb = image.to_rgb8();
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .ok()?;
    Some(out)
}

/// `(w, h)` scaled to fit within [`MAX_DIMENSION`] a side, keeping the
/// aspect ratio (each side at least 1).
fn fitted(w: u32, h: u32) -> (u32, u32) {
    if w <= MAX_DIMENSION && h <= MAX_DIMENSION {
        return (w, h);
    }
    let scale = f64::from(MAX_DIMENSION) / f64::from(w.max(h));
    let side = |n: u32| ((f64::from(n) * scale).round() as u32).clamp(1, MAX_DIMENSION);
    (side(w), side(h))
}

/// Prepares the image file `data` of kind `kind` for sending.
pub(crate) fn prepare(kind: ImageKind, data: Vec<u8>) -> Result<Prepared, Omitted> {
    let too_big = || {
        if kind == ImageKind::Bmp {
            Omitted::NotConverted
        } else {
            Omitted::NotResized
        }
    };
    if kind != ImageKind::Bmp {
        let size = reader(kind, &data).into_dimensions().ok();
        let within = size.is_none_or(|(w, h)| w <= MAX_DIMENSION && h <= MAX_DIMENSION);
        // Within the limits (or with a header the decoder cannot read,
        // which the model may still make sense of): sent as it is.
        if within && fits(&data) {
            return Ok(Prepared {
                data,
                mime: kind.mime_type(),
                converted_from: None,
                resized: None,
            });
        }
    }
    if data.len() as u64 > MAX_DECODE_BYTES {
        return Err(too_big());
    }
    let image = decode(kind, &data).ok_or_else(too_big)?;
    drop(data);
    let original = (image.width(), image.height());
    if kind == ImageKind::Bmp && fitted(original.0, original.1) == original {
        let png = encode_png(&image).ok_or(Omitted::NotConverted)?;
        if fits(&png) {
            return Ok(Prepared {
                data: png,
                mime: "image/png",
                converted_from: Some(kind.mime_type()),
                resized: None,
            });
        }
    }
    let (mut w, mut h) = fitted(original.0, original.1);
    // Sent in another format than the file's: said in a note.
    let from = |mime: &'static str| (mime != kind.mime_type()).then_some(kind.mime_type());
    loop {
        let scaled = if (w, h) == original {
            image.clone()
        } else {
            image.resize_exact(w, h, FilterType::Lanczos3)
        };
        let resized = ((w, h) != original).then_some((original, (w, h)));
        let png = encode_png(&scaled)
            .filter(|png| fits(png))
            .map(|png| (png, "image/png"));
        let chosen = png.or_else(|| {
            JPEG_QUALITIES.into_iter().find_map(|quality| {
                encode_jpeg(&scaled, quality)
                    .filter(|jpeg| fits(jpeg))
                    .map(|jpeg| (jpeg, "image/jpeg"))
            })
        });
        if let Some((data, mime)) = chosen {
            return Ok(Prepared {
                data,
                mime,
                converted_from: from(mime),
                resized,
            });
        }
        if (w, h) == (1, 1) {
            return Err(too_big());
        }
        w = ((f64::from(w) * 0.75) as u32).max(1);
        h = ((f64::from(h) * 0.75) as u32).max(1);
    }
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
