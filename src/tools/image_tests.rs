use std::io::Cursor;

use image::ImageFormat;
use image::Rgb;
use image::RgbImage;
use pretty_assertions::assert_eq;

use super::*;

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
    let prepared = prepare(ImageKind::Bmp, bmp).unwrap();
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
    let prepared = prepare(ImageKind::Png, png.clone()).unwrap();
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
    let prepared = prepare(ImageKind::Png, png.clone()).unwrap();
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
    assert_eq!(prepare(ImageKind::Png, png).unwrap().data, prepared.data);
}

#[test]
fn an_image_too_heavy_for_png_is_sent_as_jpeg() {
    // 1200x1200 of noise: about 4.3 MB as PNG, over the 3.5 MB that fit in
    // the base64 limit; the size already fits, so it is not resized.
    let png = encoded(&picture(1200, 1200, true), ImageFormat::Png);
    assert!(!fits(&png));
    let prepared = prepare(ImageKind::Png, png).unwrap();
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
    assert_eq!(prepare(ImageKind::Bmp, garbage), Err(Omitted::NotConverted));
    assert_eq!(
        Omitted::NotConverted.note(),
        "[Image omitted: could not be converted to a supported inline image format.]"
    );
    // A PNG 3000 wide whose pixel data is cut short.
    let mut png = encoded(&picture(3000, 1, false), ImageFormat::Png);
    png.truncate(png.len() - 24);
    assert_eq!(prepare(ImageKind::Png, png), Err(Omitted::NotResized));
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
    assert_eq!(prepare(ImageKind::Bmp, bmp), Err(Omitted::NotConverted));
}
