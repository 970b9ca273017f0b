use std::io::Cursor;
use std::io::Write;

use flate2::Compression;
use flate2::write::ZlibEncoder;
use image::ImageFormat;
use image::Rgb;
use image::RgbImage;
use pretty_assertions::assert_eq;

use super::*;

/// Images made with Pillow 13 (`Image.save`, flat colours with a few
/// bands): a progressive JPEG (4:4:4), a progressive CMYK JPEG, a baseline
/// JPEG of 4200×500 whose EXIF turns it a quarter (orientation 6), a lossy
/// WebP with alpha. The image crate writes none of these.
const PROGRESSIVE: &[u8] = include_bytes!("../../tests/fixtures/images/progressive-444.jpg");
const PROGRESSIVE_CMYK: &[u8] = include_bytes!("../../tests/fixtures/images/progressive-cmyk.jpg");
const ROTATED: &[u8] = include_bytes!("../../tests/fixtures/images/rotated-90.jpg");
const LOSSY_ALPHA: &[u8] = include_bytes!("../../tests/fixtures/images/lossy-alpha.webp");

/// The whole of what read does with an image file, without a budget.
fn sent(kind: ImageKind, data: Vec<u8>) -> Result<Prepared, Omitted> {
    match plan(kind, &data) {
        Plan::Send => Ok(Prepared::as_is(kind, data)),
        Plan::Decode(decoding) => prepare(&decoding, data),
        Plan::Omit(omitted) => Err(omitted),
    }
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// A PNG of `w × h` pixels of colour type `colour` and `depth` bits a
/// sample, every sample zero; with `rows: false`, only its header and an
/// empty data stream (enough for the header to be read, not decoded).
fn zero_png(w: u32, h: u32, depth: u8, colour: u8, rows: bool) -> Vec<u8> {
    let channels = match colour {
        0 | 3 => 1,
        4 => 2,
        2 => 3,
        _ => 4,
    };
    let row = (w as usize * channels * depth as usize).div_ceil(8);
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    if rows {
        let zeros = vec![0u8; row + 1];
        for _ in 0..h {
            z.write_all(&zeros).unwrap();
        }
    }
    let idat = z.finish().unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[depth, colour, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &idat);
    chunk(&mut png, b"IEND", &[]);
    png
}

/// A baseline JPEG whose frame header says `w × h` (its data is a 16×16
/// picture's: enough to read the header, not to decode).
fn jpeg_header(w: u16, h: u16) -> Vec<u8> {
    let mut jpeg = encoded(&picture(16, 16, false), ImageFormat::Jpeg);
    let sof = jpeg.windows(2).position(|m| m == [0xFF, 0xC0]).unwrap();
    jpeg[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    jpeg[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    jpeg
}

/// A deterministic picture: a gradient, or noise that does not compress.
fn picture(w: u32, h: u32, noise: bool) -> DynamicImage {
    let mut state: u32 = 12345;
    let image = RgbImage::from_fn(w, h, |x, y| {
        if noise {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let [a, b, c, _] = state.to_le_bytes();
            Rgb([a, b, c])
        } else {
            Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        }
    });
    DynamicImage::ImageRgb8(image)
}

fn encoded(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

fn decoded(data: &[u8]) -> DynamicImage {
    image::load_from_memory(data).unwrap()
}

#[test]
fn a_bmp_becomes_a_png_of_the_same_pixels() {
    let original = picture(3, 2, false);
    let bmp = encoded(&original, ImageFormat::Bmp);
    let prepared = sent(ImageKind::Bmp, bmp).unwrap();
    assert_eq!(
        (prepared.mime, prepared.converted_from, prepared.resized),
        ("image/png", Some("image/bmp"), None)
    );
    assert_eq!(
        prepared.notes(),
        vec!["[Image converted from image/bmp to image/png.]".to_owned()]
    );
    assert_eq!(
        image::guess_format(&prepared.data).unwrap(),
        ImageFormat::Png
    );
    assert_eq!(decoded(&prepared.data).to_rgb8(), original.to_rgb8());
}

#[test]
fn an_image_within_the_limits_is_sent_unchanged() {
    let png = encoded(&picture(40, 30, false), ImageFormat::Png);
    let prepared = sent(ImageKind::Png, png.clone()).unwrap();
    assert_eq!(
        prepared,
        Prepared {
            data: png,
            mime: "image/png",
            converted_from: None,
            resized: None
        }
    );
    assert_eq!(prepared.notes(), Vec::<String>::new());
}

#[test]
fn a_wide_image_is_resized_to_fit_and_the_same_every_time() {
    let png = encoded(&picture(2400, 600, false), ImageFormat::Png);
    let prepared = sent(ImageKind::Png, png.clone()).unwrap();
    assert_eq!(
        (prepared.mime, prepared.converted_from, prepared.resized),
        ("image/png", None, Some(((2400, 600), (2000, 500))))
    );
    assert_eq!(
        prepared.notes(),
        vec![
            "[Image: original 2400x600, displayed at 2000x500. Multiply coordinates by 1.20 to \
             map to original image.]"
                .to_owned()
        ]
    );
    let image = decoded(&prepared.data);
    assert_eq!((image.width(), image.height()), (2000, 500));
    assert_eq!(sent(ImageKind::Png, png).unwrap().data, prepared.data);
}

#[test]
fn an_image_too_heavy_for_png_is_sent_as_jpeg() {
    // 1200x1200 of noise: about 4.3 MB as PNG, over the 3.5 MB that fit in
    // the base64 limit; the size already fits, so it is not resized.
    let png = encoded(&picture(1200, 1200, true), ImageFormat::Png);
    assert!(!fits(&png));
    let prepared = sent(ImageKind::Png, png).unwrap();
    assert_eq!(
        (prepared.mime, prepared.converted_from, prepared.resized),
        ("image/jpeg", Some("image/png"), None)
    );
    assert_eq!(
        prepared.notes(),
        vec!["[Image converted from image/png to image/jpeg.]".to_owned()]
    );
    assert!(fits(&prepared.data));
}

#[test]
fn what_cannot_be_decoded_is_omitted_with_pi_s_notes() {
    let mut garbage = b"BM".to_vec();
    garbage.resize(100, 0xAB);
    assert_eq!(sent(ImageKind::Bmp, garbage), Err(Omitted::NotConverted));
    assert_eq!(
        Omitted::NotConverted.note(),
        "[Image omitted: could not be converted to a supported inline image format.]"
    );
    // A PNG 3000 wide whose pixel data is cut short.
    let mut png = encoded(&picture(3000, 1, false), ImageFormat::Png);
    png.truncate(png.len() - 24);
    assert_eq!(sent(ImageKind::Png, png), Err(Omitted::NotResized));
    assert_eq!(
        Omitted::NotResized.note(),
        "[Image omitted: could not be resized below the inline image size limit.]"
    );
}

#[test]
fn an_image_larger_than_the_decoding_limits_is_never_decoded() {
    // A BMP header declaring 30000x30000 pixels (2.7 GB decoded).
    let mut bmp = b"BM".to_vec();
    bmp.extend_from_slice(&70u32.to_le_bytes());
    bmp.extend_from_slice(&[0; 4]);
    bmp.extend_from_slice(&54u32.to_le_bytes());
    bmp.extend_from_slice(&40u32.to_le_bytes());
    bmp.extend_from_slice(&30_000i32.to_le_bytes());
    bmp.extend_from_slice(&30_000i32.to_le_bytes());
    bmp.extend_from_slice(&[1, 0, 24, 0]);
    bmp.resize(70, 0);
    assert_eq!(sent(ImageKind::Bmp, bmp), Err(Omitted::NotConverted));
}

#[test]
fn the_images_of_issue_21_are_left_out_from_their_header_alone() {
    // 20000×20000 RGBA of 16 bits (3.2 GB of pixels; 3 MB as a file of
    // zeros) and of 1 bit (400 MB once expanded to 8 bits; 48 KB).
    for (depth, colour) in [(16, 6), (1, 0)] {
        let png = zero_png(20_000, 20_000, depth, colour, false);
        let (plan, held) = peak::peak_of(|| plan(ImageKind::Png, &png));
        assert_eq!(plan, Plan::Omit(Omitted::NotResized));
        // Nothing was decoded: reading the header took the decoder's
        // buffers, a few hundred KiB.
        assert!(held < 1024 * 1024, "{held} bytes to read a header");
    }
    // A 16-bit image that fits the budget is decoded and resized.
    assert!(matches!(
        plan(ImageKind::Png, &zero_png(3000, 3000, 16, 6, false)),
        Plan::Decode(_)
    ));
}

#[test]
fn a_48_megapixel_photo_is_averaged_down_then_resized_within_the_budget() {
    let Plan::Decode(decoding) = plan(ImageKind::Jpeg, &jpeg_header(8000, 6000)) else {
        panic!("not decoded");
    };
    assert_eq!(
        (decoding.target, decoding.averaged),
        ((2000, 1500), Some((4000, 3000)))
    );
    assert!(decoding.need <= MAX_DECODE_ALLOC);
    // 16000×12000 is 576 MB of pixels: over the budget.
    assert_eq!(
        plan(ImageKind::Jpeg, &jpeg_header(16_000, 12_000)),
        Plan::Omit(Omitted::NotResized)
    );
}

/// Every format and the costly variants of each (16 bits, 1 bit expanded,
/// progressive and CMYK JPEG, an EXIF quarter turn, averaging, a PNG too
/// heavy to send, alpha), decoded and made to fit with an allocation
/// counter: the most memory held at once, the file's bytes included, is
/// never more than the plan reserved.
#[test]
fn decoding_holds_no_more_than_the_header_plan_reserved() {
    let stripes = {
        let image = RgbImage::from_fn(2100, 1200, |_, y| Rgb([(y / 100 * 20) as u8, 40, 200]));
        DynamicImage::ImageRgb8(image)
    };
    let gradient = picture(2100, 1200, false);
    let cases: Vec<(&str, ImageKind, Vec<u8>)> = vec![
        (
            "png rgb8",
            ImageKind::Png,
            encoded(&gradient, ImageFormat::Png),
        ),
        (
            "png rgba16",
            ImageKind::Png,
            zero_png(2400, 1600, 16, 6, true),
        ),
        (
            "png 1 bit, averaged",
            ImageKind::Png,
            zero_png(6000, 500, 1, 0, true),
        ),
        (
            "png of noise",
            ImageKind::Png,
            encoded(&picture(1200, 1200, true), ImageFormat::Png),
        ),
        (
            "jpeg baseline",
            ImageKind::Jpeg,
            encoded(&gradient, ImageFormat::Jpeg),
        ),
        ("jpeg progressive", ImageKind::Jpeg, PROGRESSIVE.to_vec()),
        (
            "jpeg progressive cmyk",
            ImageKind::Jpeg,
            PROGRESSIVE_CMYK.to_vec(),
        ),
        ("jpeg turned, averaged", ImageKind::Jpeg, ROTATED.to_vec()),
        ("gif", ImageKind::Gif, encoded(&stripes, ImageFormat::Gif)),
        (
            "webp lossless",
            ImageKind::WebP,
            encoded(&gradient, ImageFormat::WebP),
        ),
        ("webp lossy alpha", ImageKind::WebP, LOSSY_ALPHA.to_vec()),
        (
            "bmp resized",
            ImageKind::Bmp,
            encoded(&gradient, ImageFormat::Bmp),
        ),
        (
            "bmp converted",
            ImageKind::Bmp,
            encoded(&picture(900, 700, false), ImageFormat::Bmp),
        ),
    ];
    for (name, kind, data) in cases {
        let len = data.len() as u64;
        let (planned, header) = peak::peak_of(|| plan(kind, &data));
        assert!(len + header <= first_hold(len), "{name}: header {header}");
        let Plan::Decode(decoding) = planned else {
            panic!("{name}: {planned:?}");
        };
        let (result, held) = peak::peak_of(|| prepare(&decoding, data));
        let result = result.unwrap_or_else(|omitted| panic!("{name}: {omitted:?}"));
        assert!(
            len + held <= decoding.need,
            "{name}: held {} at most, planned {}",
            len + held,
            decoding.need
        );
        if name == "jpeg turned, averaged" {
            assert_eq!(result.resized, Some(((500, 4200), (238, 2000))));
        }
    }
}

#[test]
fn the_budget_is_shared_waited_for_in_turn_and_left_when_cancelled() {
    let budget = DecodeBudget::new(1024 * 1024);
    let never = CancellationToken::new();
    assert!(budget.acquire(1024 * 1024 + 1, &never).is_none());
    let mut first = budget.acquire(600 * 1024, &never).unwrap();
    assert_eq!(first.bytes(), 600 * 1024);
    // Growing only takes what is free at once.
    assert!(!budget.try_grow(&mut first, 1024 * 1024 + 1));
    assert!(budget.try_grow(&mut first, 700 * 1024));
    assert_eq!((first.bytes(), budget.free()), (700 * 1024, 324 * 1024));
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| budget.acquire(500 * 1024, &never).map(|h| h.bytes()));
        while budget.waiting() == 0 {
            std::thread::yield_now();
        }
        drop(first);
        assert_eq!(waiter.join().unwrap(), Some(500 * 1024));
    });
    assert_eq!(budget.free(), 1024 * 1024);
    let all = budget.acquire(1024 * 1024, &never).unwrap();
    let cancel = CancellationToken::new();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| budget.acquire(1024, &cancel).is_none());
        while budget.waiting() == 0 {
            std::thread::yield_now();
        }
        cancel.cancel();
        assert!(waiter.join().unwrap());
    });
    drop(all);
    assert_eq!(budget.free(), 1024 * 1024);
}

/// An allocation counter for this test binary: what each thread holds, and
/// the most it held since [`peak_of`] started.
mod peak {
    use std::alloc::GlobalAlloc;
    use std::alloc::Layout;
    use std::alloc::System;
    use std::cell::Cell;

    thread_local! {
        static LIVE: Cell<i64> = const { Cell::new(0) };
        static PEAK: Cell<i64> = const { Cell::new(0) };
    }

    struct Counting;

    fn add(n: i64) {
        // `try_with`: a thread being torn down has no counters left.
        let _ = LIVE.try_with(|live| {
            let now = live.get() + n;
            live.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        });
    }

    fn size(n: usize) -> i64 {
        i64::try_from(n).unwrap_or(i64::MAX)
    }

    // SAFETY: every call goes to the system allocator unchanged; only
    // thread-local counters are updated beside it.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            add(size(layout.size()));
            // SAFETY: the caller's contract, passed on.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            add(-size(layout.size()));
            // SAFETY: the caller's contract, passed on.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            add(size(layout.size()));
            // SAFETY: the caller's contract, passed on.
            unsafe { System.alloc_zeroed(layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            add(size(new_size) - size(layout.size()));
            // SAFETY: the caller's contract, passed on.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    /// Runs `f`; returns its result and the most memory this thread held
    /// at once meanwhile, above what it held when `f` started.
    pub(super) fn peak_of<T>(f: impl FnOnce() -> T) -> (T, u64) {
        let start = LIVE.with(Cell::get);
        PEAK.with(|peak| peak.set(start));
        let out = f();
        let peak = PEAK.with(Cell::get);
        (out, u64::try_from(peak - start).unwrap_or(0))
    }
}
