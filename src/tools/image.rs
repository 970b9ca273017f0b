//! Images as `read` sends them (§read.5): PNG, JPEG, GIF and WebP within
//! the limits go as they are; a BMP is converted to PNG; an image wider or
//! taller than [`MAX_DIMENSION`], or whose base64 is longer than
//! [`MAX_IMAGE_BASE64`], is resized (Lanczos3) to fit, as pi 0.82 does.
//!
//! Resizing tries, in pi's order, PNG and then JPEG at qualities 80, 85,
//! 70, 55 and 40, and sends the first that fits; when none does, both
//! sides shrink to 75% and it tries again, down to 1×1. An image more than
//! twice the size it is resized to is first averaged down to twice that
//! size, so that the Lanczos3 pass works on the smaller copy.
//!
//! Decoding is bounded before it starts. [`plan`] reads the header only
//! (dimensions, pixel format, EXIF orientation, and for a JPEG whether it
//! is progressive) and works out the most memory every step will hold at
//! once: the file's bytes, the decoder's own buffers, the pixels, the
//! averaged copy, the resampling buffer, the candidates. That figure is
//! reserved from one [`DecodeBudget`] of [`MAX_DECODE_ALLOC`] for the whole
//! process before anything is decoded, so parallel reads share it (a read
//! waits its turn); an image that needs more than the whole budget is left
//! out and never decoded. The output is the same for the same input on
//! every run, whatever else runs at the same time.

use std::borrow::Cow;
use std::future::Future;
use std::io::Cursor;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::task::Context;
use std::task::Poll;
use std::task::Wake;
use std::task::Waker;

use image::DynamicImage;
use image::ImageDecoder;
use image::ImageFormat;
use image::ImageReader;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::metadata::Orientation;
use tokio::sync::Semaphore;
use tokio::sync::SemaphorePermit;
use tokio_util::sync::CancellationToken;

use super::file_kind::ImageKind;
use super::file_kind::jpeg_frame;

/// Largest base64 payload sent as an image (pi's 4.5 MiB).
pub(super) const MAX_IMAGE_BASE64: usize = 4_718_592;

/// The longest side of a sent image, in pixels (pi's 2000).
pub(super) const MAX_DIMENSION: u32 = 2000;

/// The largest image file decoded to convert or resize it: 64 MiB.
pub(super) const MAX_DECODE_BYTES: u64 = 64 * 1024 * 1024;

/// The longest side of an image decoded to convert or resize it.
pub(super) const MAX_DECODE_SIDE: u32 = 20_000;

/// The most memory image decoding holds at once in the whole process,
/// file bytes included: 256 MiB.
pub(super) const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;

/// What the budget counts in: one permit is a KiB.
const UNIT: u64 = 1024;

/// Room for what no formula below names (allocator rounding, small
/// tables, the encoders' state).
const SLACK: u64 = 1024 * 1024;

/// Memory that image decoding may hold at once, shared by every read that
/// takes from it. Reads wait for their turn in the order they asked.
#[derive(Debug)]
pub(crate) struct DecodeBudget {
    permits: Semaphore,
    capacity: u64,
    /// Reads waiting for their turn.
    waiting: AtomicUsize,
}

/// The one budget of the process.
pub(crate) static DECODE_BUDGET: DecodeBudget = DecodeBudget::new(MAX_DECODE_ALLOC);

/// Memory taken from a [`DecodeBudget`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Hold<'a> {
    permit: SemaphorePermit<'a>,
}

impl Hold<'_> {
    /// The bytes held (rounded up to whole KiB).
    pub(super) fn bytes(&self) -> u64 {
        self.permit.num_permits() as u64 * UNIT
    }
}

impl DecodeBudget {
    /// A budget of `bytes` (whole KiB).
    pub(crate) const fn new(bytes: u64) -> Self {
        Self {
            permits: Semaphore::const_new((bytes / UNIT) as usize),
            capacity: bytes / UNIT * UNIT,
            waiting: AtomicUsize::new(0),
        }
    }

    /// The permits for `bytes`, or `None` when that is more than the
    /// whole budget (it could never be granted).
    fn permits(&self, bytes: u64) -> Option<u32> {
        if bytes > self.capacity {
            return None;
        }
        u32::try_from(bytes.div_ceil(UNIT)).ok()
    }

    /// Takes `bytes`, waiting until they are free; `None` when `bytes` is
    /// more than the whole budget or `cancel` fires first.
    pub(crate) fn acquire(&self, bytes: u64, cancel: &CancellationToken) -> Option<Hold<'_>> {
        let n = self.permits(bytes)?;
        if let Ok(permit) = self.permits.try_acquire_many(n) {
            return Some(Hold { permit });
        }
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let hold = block_on(async {
            tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                permit = self.permits.acquire_many(n) => permit.ok().map(|permit| Hold { permit }),
            }
        });
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        hold
    }

    /// How many reads are waiting for their turn.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// The bytes free right now.
    #[cfg(test)]
    pub(crate) fn free(&self) -> u64 {
        self.permits.available_permits() as u64 * UNIT
    }

    /// Grows `hold` to `bytes` if that much is free right now, without
    /// waiting (a hold that waits for more while holding some could wait
    /// forever on another doing the same).
    pub(crate) fn try_grow<'a>(&'a self, hold: &mut Hold<'a>, bytes: u64) -> bool {
        let Some(n) = self.permits(bytes) else {
            return false;
        };
        let more = n.saturating_sub(u32::try_from(hold.permit.num_permits()).unwrap_or(u32::MAX));
        if more == 0 {
            return true;
        }
        match self.permits.try_acquire_many(more) {
            Ok(extra) => {
                hold.permit.merge(extra);
                true
            }
            Err(_) => false,
        }
    }
}

/// Runs `future` to its end on this (blocking) thread, parked while it
/// waits.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

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
    /// The file's bytes, sent as they are.
    pub(super) fn as_is(kind: ImageKind, data: Vec<u8>) -> Self {
        Self {
            data,
            mime: kind.mime_type(),
            converted_from: None,
            resized: None,
        }
    }

    /// The lines after `Read image file [MIME]`: the conversion note, then
    /// the resize note (pi's wording).
    pub(super) fn notes(&self) -> Vec<String> {
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
    /// A BMP that could not be decoded (or would need more memory than
    /// the budget).
    NotConverted,
    /// An image too large that could not be decoded or made small enough
    /// (or would need more memory than the budget).
    NotResized,
}

impl Omitted {
    /// The reason for an image of `kind` that cannot be decoded.
    pub(crate) fn of(kind: ImageKind) -> Self {
        if kind == ImageKind::Bmp {
            Omitted::NotConverted
        } else {
            Omitted::NotResized
        }
    }

    /// The note after `Read image file [MIME]` (pi's wording).
    pub(crate) fn note(&self) -> &'static str {
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

/// What to do with an image file, decided from its header.
#[derive(Debug, PartialEq)]
pub(crate) enum Plan {
    /// Within the limits: sent as it is, never decoded.
    Send,
    /// Decoded, then converted or resized, holding at most `need` bytes.
    Decode(Decoding),
    /// Left out without decoding it.
    Omit(Omitted),
}

/// How an image is decoded and made to fit, and the memory that takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Decoding {
    kind: ImageKind,
    /// Width and height as stored in the file.
    stored: (u32, u32),
    /// The EXIF orientation to apply.
    orientation: Orientation,
    /// The image's size upright (what the resize note calls original).
    original: (u32, u32),
    /// The first size tried, upright.
    target: (u32, u32),
    /// The size, as stored, the image is averaged down to first.
    averaged: Option<(u32, u32)>,
    /// What the decoder may allocate besides the pixels it returns.
    decoder_alloc: u64,
    /// The most memory held at once, file bytes included.
    pub need: u64,
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

/// A reader whose decoder may allocate `max_alloc` bytes of its own.
fn reader(kind: ImageKind, data: &[u8], max_alloc: u64) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::with_format(Cursor::new(data), format_of(kind));
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    limits.max_alloc = Some(max_alloc);
    reader.limits(limits);
    reader
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

/// Whether `orientation` turns the image a quarter (swapping its sides).
fn quarter_turn(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

fn swap_if(turned: bool, (w, h): (u32, u32)) -> (u32, u32) {
    if turned { (h, w) } else { (w, h) }
}

/// `w × h × per` bytes, without overflow.
fn area(w: u32, h: u32, per: u64) -> u64 {
    u64::from(w)
        .saturating_mul(u64::from(h))
        .saturating_mul(per)
}

/// What a decoder may allocate for an image's metadata while it reads the
/// header of a `len`-byte file: copies of its segments (at most the file)
/// and a PNG's decompressed colour profile (the decoder refuses more).
fn header_alloc(len: u64) -> u64 {
    len.saturating_add(4 * SLACK)
}

/// What reading a `len`-byte image file and its header holds: the bytes
/// and [`header_alloc`]. Taken from the budget before the file is read.
pub(crate) fn first_hold(len: u64) -> u64 {
    len.saturating_add(header_alloc(len))
}

/// What the decoder of `kind` allocates besides the pixels it returns, at
/// most (measured for each format; image_tests.rs checks it): its
/// metadata ([`header_alloc`]) and
/// - PNG, BMP: a few rows;
/// - JPEG: a few rows of blocks, or for a progressive JPEG every
///   component's coefficients (2 bytes a sample) until the last scan;
/// - GIF: a first frame placed off the logical screen is read into a
///   buffer of its own (the decoder refuses one over this allowance);
/// - WebP: its YUV or ARGB planes and, for an animation, the canvas.
fn decoder_alloc(kind: ImageKind, data: &[u8], (w, h): (u32, u32), bpp: u64) -> u64 {
    let len = data.len() as u64;
    let own = match kind {
        ImageKind::Png | ImageKind::Bmp => area(w.saturating_add(1), 4, 8),
        ImageKind::Jpeg => {
            // Unknown frame: the costliest kind.
            let frame = jpeg_frame(data).unwrap_or_default();
            let components = u64::from(frame.components.clamp(1, 4));
            let padded = (w.saturating_add(16), h.saturating_add(16));
            if frame.progressive {
                area(padded.0, padded.1, 2 * components)
            } else {
                area(padded.0, 64, 2 * components)
            }
        }
        ImageKind::Gif => area(w, h, bpp),
        ImageKind::WebP => area(w, h, 8),
    };
    own.saturating_add(header_alloc(len))
}

/// The most memory `encode_png` or `encode_jpeg` hold for a `w × h` image
/// of `bpp` bytes a pixel (measured): PNG keeps a big-endian copy of
/// 16-bit samples and two growing buffers of the compressed stream; JPEG
/// an RGB copy and its growing output.
fn encode_alloc(w: u32, h: u32, bpp: u64) -> u64 {
    let png = area(w, h, bpp).saturating_mul(5);
    let jpeg = area(w, h, 9);
    png.max(jpeg).saturating_add(SLACK)
}

/// Decides from the header of `data` (an image file of kind `kind`)
/// whether it is sent as it is, decoded, or left out, and what decoding
/// it takes. Nothing is decoded here.
pub(crate) fn plan(kind: ImageKind, data: &[u8]) -> Plan {
    let header = reader(kind, data, header_alloc(data.len() as u64))
        .into_decoder()
        .ok()
        .map(|mut decoder| {
            let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
            (decoder.dimensions(), decoder.color_type(), orientation)
        });
    let Some((stored, color, orientation)) = header else {
        // A header the decoder cannot read, which the model may still
        // make sense of: sent as it is when it fits; never decoded.
        return if kind != ImageKind::Bmp && fits(data) {
            Plan::Send
        } else {
            Plan::Omit(Omitted::of(kind))
        };
    };
    let turned = quarter_turn(orientation);
    let original = swap_if(turned, stored);
    let target = fitted(original.0, original.1);
    if kind != ImageKind::Bmp && target == original && fits(data) {
        return Plan::Send;
    }
    let bpp = u64::from(color.bytes_per_pixel());
    let len = data.len() as u64;
    let pixels = area(stored.0, stored.1, bpp);
    let decoder_alloc = decoder_alloc(kind, data, stored, bpp);
    // Averaged down first when more than twice the target on a side.
    let stored_target = swap_if(turned, target);
    let averaged = (stored.0 / 2 > stored_target.0 || stored.1 / 2 > stored_target.1).then(|| {
        (
            stored_target.0.saturating_mul(2).min(stored.0),
            stored_target.1.saturating_mul(2).min(stored.1),
        )
    });
    let source = averaged.unwrap_or(stored);
    let source_pixels = area(source.0, source.1, bpp);
    let upright_source = swap_if(turned, source);
    // Each step's peak: what it reads, what it makes, what is still alive.
    let decoding = len.saturating_add(pixels).saturating_add(decoder_alloc);
    let averaging = averaged.map_or(0, |_| pixels.saturating_add(source_pixels));
    let turning = source_pixels.saturating_mul(if turned { 2 } else { 1 });
    let (resizing, scaled) = if target == upright_source {
        (source_pixels, 0)
    } else {
        let scaled = area(target.0, target.1, bpp);
        // Lanczos3 samples vertically into a f32 RGBA buffer first.
        let columns = area(upright_source.0, target.1, 16);
        (
            source_pixels.saturating_add(columns).saturating_add(scaled),
            scaled,
        )
    };
    let encoding = source_pixels
        .saturating_add(scaled)
        .saturating_add(encode_alloc(target.0, target.1, bpp));
    let need = [decoding, averaging, turning, resizing, encoding]
        .into_iter()
        .max()
        .unwrap_or(0)
        .saturating_add(SLACK);
    if need > MAX_DECODE_ALLOC {
        return Plan::Omit(Omitted::of(kind));
    }
    Plan::Decode(Decoding {
        kind,
        stored,
        orientation,
        original,
        target,
        averaged,
        decoder_alloc,
        need,
    })
}

/// Decodes `data` as planned; `None` when it is not the image the header
/// promised.
fn decode(plan: &Decoding, data: &[u8]) -> Option<DynamicImage> {
    let decoder = reader(plan.kind, data, plan.decoder_alloc)
        .into_decoder()
        .ok()?;
    if decoder.dimensions() != plan.stored {
        return None;
    }
    DynamicImage::from_decoder(decoder).ok()
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

/// Decodes the image file `data` as [`plan`] decided and makes it fit:
/// converted, resized or both. The caller holds `plan.need` bytes of the
/// budget.
pub(crate) fn prepare(plan: &Decoding, data: Vec<u8>) -> Result<Prepared, Omitted> {
    let kind = plan.kind;
    let mut image = decode(plan, &data).ok_or(Omitted::of(kind))?;
    drop(data);
    if let Some((w, h)) = plan.averaged {
        image = image.thumbnail_exact(w, h);
    }
    image.apply_orientation(plan.orientation);
    let original = plan.original;
    let source = (image.width(), image.height());
    let (mut w, mut h) = plan.target;
    // Sent in another format than the file's: said in a note.
    let from = |mime: &'static str| (mime != kind.mime_type()).then_some(kind.mime_type());
    loop {
        let scaled = if (w, h) == source {
            Cow::Borrowed(&image)
        } else {
            Cow::Owned(image.resize_exact(w, h, FilterType::Lanczos3))
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
            return Err(Omitted::of(kind));
        }
        w = ((f64::from(w) * 0.75) as u32).max(1);
        h = ((f64::from(h) * 0.75) as u32).max(1);
    }
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
