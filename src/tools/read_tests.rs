use pretty_assertions::assert_eq;
use serde_json::json;

use crate::tools::Content;
use crate::tools::Limits;
use crate::tools::testutil::Harness;

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn small_file_is_returned_unchanged_with_its_final_newline() {
    let h = Harness::memory();
    h.add_file("a.txt", "one\ntwo\n");
    let r = h.call("read", json!({"path": "a.txt"})).await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "one\ntwo\n");
    assert_eq!(r.details, None);
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_say_how_many_remain() {
    let h = Harness::memory();
    h.add_file("a.txt", lines(10));
    let r = h
        .call("read", json!({"path": "a.txt", "offset": 3, "limit": 2}))
        .await;
    assert_eq!(
        r.text(),
        "line 3\nline 4\n\n[6 more lines in file. Use offset=5 to continue.]"
    );
    assert_eq!(r.details, None);
}

#[tokio::test]
async fn limit_covering_the_rest_has_no_phantom_line() {
    // D4: pi says "[1 more lines in file. Use offset=101 …]" here.
    let h = Harness::memory();
    h.add_file("a.txt", lines(100));
    let r = h.call("read", json!({"path": "a.txt", "limit": 100})).await;
    assert_eq!(r.text(), lines(100));
    let r = h
        .call("read", json!({"path": "a.txt", "offset": 91, "limit": 50}))
        .await;
    assert_eq!(
        r.text(),
        (91..=100)
            .map(|i| format!("line {i}\n"))
            .collect::<String>()
    );
}

#[tokio::test]
async fn truncated_by_lines_counts_total_without_phantom_line() {
    let h = Harness::memory();
    h.add_file("big.txt", lines(2500));
    let r = h.call("read", json!({"path": "big.txt"})).await;
    let text = r.text();
    assert!(text.starts_with("line 1\nline 2\n"));
    assert!(
        text.ends_with("line 2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]")
    );
    let t = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(t["truncated"], true);
    assert_eq!(t["truncated_by"], "lines");
    assert_eq!(t["total_lines"], 2500);
    assert_eq!(t["output_lines"], 2000);
    assert_eq!(t["total_bytes"], lines(2500).len());
    assert_eq!(t["output_bytes"], lines(2000).len() - 1);
    let r = h
        .call("read", json!({"path": "big.txt", "offset": 2001}))
        .await;
    assert_eq!(
        r.text(),
        (2001..=2500)
            .map(|i| format!("line {i}\n"))
            .collect::<String>()
    );
}

#[tokio::test]
async fn exactly_max_lines_with_final_newline_is_not_truncated() {
    let h = Harness::memory();
    h.add_file("a.txt", lines(2000));
    let r = h.call("read", json!({"path": "a.txt"})).await;
    assert_eq!(r.text(), lines(2000));
    assert_eq!(r.details, None);
}

#[tokio::test]
async fn truncated_by_bytes_names_the_limit() {
    let h = Harness::memory_with(Limits {
        max_bytes: 20,
        ..Limits::default()
    });
    h.add_file("a.txt", "aaaa\nbbbb\ncccc\ndddd\neeee\n");
    let r = h.call("read", json!({"path": "a.txt"})).await;
    assert_eq!(
        r.text(),
        "aaaa\nbbbb\ncccc\ndddd\n\n[Showing lines 1-4 of 5 (20B limit). Use offset=5 to continue.]"
    );
    let t = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(t["truncated_by"], "bytes");
    assert_eq!(t["output_bytes"], 19);
    assert_eq!(t["total_bytes"], 25);
}

#[tokio::test]
async fn first_line_too_long_points_to_bash() {
    let h = Harness::memory();
    let mut text = "x".repeat(60_000);
    text.push_str("\nshort\n");
    h.add_file("min.js", text);
    let r = h.call("read", json!({"path": "min.js"})).await;
    assert_eq!(
        r.text(),
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' min.js | head -c 51200]"
    );
    let t = &r.details.as_ref().unwrap()["truncation"];
    assert_eq!(t["first_line_exceeds_limit"], true);
    assert_eq!(t["output_lines"], 0);
    let r = h.call("read", json!({"path": "min.js", "offset": 2})).await;
    assert_eq!(r.text(), "short\n");
}

#[tokio::test]
async fn offset_beyond_end_is_an_error_with_the_range() {
    let h = Harness::memory();
    h.add_file("a.txt", "a\nb\n");
    let r = h.call("read", json!({"path": "a.txt", "offset": 3})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Offset 3 is beyond the end of a.txt (2 lines total). Use an offset between 1 and 2."
    );
    // The smallest offset (0 and below are refused: registry tests).
    let r = h.call("read", json!({"path": "a.txt", "offset": 1})).await;
    assert_eq!(r.text(), "a\nb\n");
}

#[tokio::test]
async fn an_offset_into_an_empty_file_says_to_read_it_without_one() {
    let h = Harness::memory();
    h.add_file("empty.txt", "");
    let r = h
        .call("read", json!({"path": "empty.txt", "offset": 3}))
        .await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Offset 3 is beyond the end of empty.txt (0 lines total). empty.txt is empty: read it \
         without an offset."
    );
    // Offset 1 of an empty file is its (empty) whole.
    let r = h
        .call("read", json!({"path": "empty.txt", "offset": 1}))
        .await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "");
}

#[tokio::test]
async fn empty_file_reads_as_empty() {
    let h = Harness::memory();
    h.add_file("e.txt", "");
    let r = h.call("read", json!({"path": "e.txt"})).await;
    assert!(!r.is_error);
    assert_eq!(r.text(), "");
}

#[tokio::test]
async fn bom_is_stripped_and_crlf_kept() {
    let h = Harness::memory();
    h.add_file("b.txt", b"\xEF\xBB\xBFx = 1\r\ny = 2\r\n");
    let r = h.call("read", json!({"path": "b.txt"})).await;
    assert_eq!(r.text(), "x = 1\r\ny = 2\r\n");
}

#[tokio::test]
async fn missing_file_suggests_close_names() {
    let h = Harness::memory();
    h.add_file("src/main.rs", "fn main() {}\n");
    let r = h.call("read", json!({"path": "src/mian.rs"})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "File not found: src/mian.rs. Did you mean src/main.rs?"
    );
    let r = h.call("read", json!({"path": "nothing/like/it.py"})).await;
    assert_eq!(
        r.text(),
        "File not found: nothing/like/it.py. No similar name exists there; use the find tool \
         (pattern \"**/it.py\") or ls to locate it."
    );
}

#[tokio::test]
async fn directory_and_unreadable_file() {
    let h = Harness::memory();
    h.add_file("src/lib.rs", "");
    h.add_file_with_mode("secret", "x", 0o200);
    let r = h.call("read", json!({"path": "src"})).await;
    assert_eq!(
        r.text(),
        "Cannot read src: it is a directory. Use ls to list it, or read a file inside it."
    );
    let r = h.call("read", json!({"path": "secret"})).await;
    assert!(r.is_error);
    assert!(
        r.text()
            .starts_with("Permission denied: cannot read secret.")
    );
}

#[tokio::test]
async fn binary_files_are_refused_with_their_kind_and_size() {
    let h = Harness::memory();
    let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
    elf.resize(2048, 0);
    h.add_file("bin/tool", elf);
    let r = h.call("read", json!({"path": "bin/tool"})).await;
    assert!(r.is_error);
    assert_eq!(
        r.text(),
        "Cannot read bin/tool: it is a binary file (ELF executable, 2.0KB), and read only \
         returns text and images. To inspect it, use bash, e.g. `file bin/tool`."
    );
    assert_eq!(
        r.details,
        Some(json!({"binary": "ELF executable", "bytes": 2048}))
    );
    h.add_file("data.bin", b"abc\0def");
    let r = h.call("read", json!({"path": "data.bin"})).await;
    assert!(r.text().contains("(binary data, 7B)"));
}

#[tokio::test]
async fn invalid_utf8_after_the_sniffed_window_is_replaced() {
    let h = Harness::memory();
    let mut data = "a".repeat(9000).into_bytes();
    data.extend_from_slice(b"\n\xFF\n");
    h.add_file("late.txt", data);
    let r = h
        .call("read", json!({"path": "late.txt", "offset": 2}))
        .await;
    assert_eq!(r.text(), "\u{FFFD}\n");
}

#[tokio::test]
async fn images_come_back_as_image_blocks_by_magic_bytes() {
    let h = Harness::memory();
    let gif = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
    h.add_file("picture.txt", gif);
    let r = h.call("read", json!({"path": "picture.txt"})).await;
    assert!(!r.is_error);
    assert_eq!(r.content[0], Content::text("Read image file [image/gif]"));
    match &r.content[1] {
        Content::Image { data, mime_type } => {
            assert_eq!(mime_type, "image/gif");
            use base64::Engine;
            assert_eq!(
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap(),
                gif
            );
        }
        other => panic!("expected an image, got {other:?}"),
    }
}

#[tokio::test]
async fn a_bmp_is_sent_as_png_with_pi_s_note() {
    let h = Harness::memory();
    let pixels =
        image::RgbImage::from_fn(2, 2, |x, y| image::Rgb([x as u8 * 200, y as u8 * 200, 7]));
    let mut bmp = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels.clone())
        .write_to(&mut bmp, image::ImageFormat::Bmp)
        .unwrap();
    let bmp = bmp.into_inner();
    h.add_file("x.bmp", bmp.clone());
    let r = h.call("read", json!({"path": "x.bmp"})).await;
    assert!(!r.is_error);
    assert_eq!(
        r.content[0],
        Content::text(
            "Read image file [image/png]\n[Image converted from image/bmp to image/png.]"
        )
    );
    let Content::Image { data, mime_type } = &r.content[1] else {
        panic!("expected an image, got {:?}", r.content[1]);
    };
    use base64::Engine;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    assert_eq!(
        (
            mime_type.as_str(),
            image::load_from_memory(&png).unwrap().to_rgb8()
        ),
        ("image/png", pixels)
    );
    assert_eq!(
        r.details,
        Some(json!({"mime_type": "image/png", "bytes": bmp.len(), "converted_from": "image/bmp"}))
    );
}

#[tokio::test]
async fn lenient_arguments_and_validation_errors() {
    let h = Harness::memory();
    h.add_file("a.txt", lines(5));
    let r = h
        .call(
            "read",
            json!({"path": "a.txt", "offset": "2", "limit": "1", "encoding": "utf8"}),
        )
        .await;
    assert_eq!(
        r.text(),
        "line 2\n\n[3 more lines in file. Use offset=3 to continue.]"
    );
    assert_eq!(
        r.details,
        Some(json!({"ignored_fields": ["/encoding"], "coerced_fields": ["/offset", "/limit"]}))
    );
    let r = h.call("read", json!({"path": "a.txt", "limit": 0})).await;
    assert!(r.is_error);
    assert!(
        r.text()
            .contains("  - /limit: expected a number >= 1, received number 0")
    );
    assert_eq!(
        r.details.unwrap()["validation_errors"][0],
        json!({"path": "/limit", "expected": "a number >= 1", "received": "number 0"})
    );
}

#[tokio::test]
async fn at_prefix_and_unicode_spaces_are_normalised() {
    let h = Harness::memory();
    h.add_file("my file.txt", "ok\n");
    let r = h.call("read", json!({"path": "@my\u{00A0}file.txt"})).await;
    assert_eq!(r.text(), "ok\n");
}

#[tokio::test]
async fn huge_file_first_page_on_disk() {
    let h = Harness::local();
    let mut text = String::new();
    for i in 1..=200_000 {
        text.push_str(&format!("row {i}\n"));
    }
    h.add_file("huge.log", &text);
    let r = h
        .call(
            "read",
            json!({"path": "huge.log", "offset": 100_000, "limit": 3}),
        )
        .await;
    assert_eq!(
        r.text(),
        "row 100000\nrow 100001\nrow 100002\n\n[99998 more lines in file. Use offset=100003 to continue.]"
    );
    let r = h.call("read", json!({"path": "huge.log"})).await;
    assert!(
        r.text()
            .ends_with("[Showing lines 1-2000 of 200000. Use offset=2001 to continue.]")
    );
}

#[tokio::test]
async fn symlink_escape_is_refused_on_disk() {
    let h = Harness::local();
    h.add_symlink("outside", "/etc");
    let r = h.call("read", json!({"path": "outside/hostname"})).await;
    assert!(r.is_error);
    assert!(
        r.text().contains("is outside the workspace"),
        "{}",
        r.text()
    );
    assert!(r.text().contains("through a symlink"), "{}", r.text());
}

#[tokio::test]
async fn fifos_are_refused_instead_of_blocking() {
    let h = Harness::local();
    let fifo = h.root().join("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let r = h.call("read", json!({"path": "pipe"})).await;
    assert!(r.is_error);
    assert!(
        r.text()
            .starts_with("Cannot read pipe: it is not a regular file"),
        "{}",
        r.text()
    );
    let r = h
        .call("write", json!({"path": "pipe", "content": "x"}))
        .await;
    assert!(
        r.text()
            .starts_with("Cannot write pipe: it is not a regular file"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn read_finds_names_a_model_cannot_type() {
    let h = Harness::memory();
    h.add_file(
        "Screenshot 2024-01-01 at 10.00.00\u{202F}AM.png.txt",
        "shot\n",
    );
    h.add_file("it\u{2019}s.md", "curly\n");
    h.add_file("cafe\u{301}.txt", "nfd\n");
    let r = h
        .call(
            "read",
            json!({"path": "Screenshot 2024-01-01 at 10.00.00 AM.png.txt"}),
        )
        .await;
    assert_eq!(r.text(), "shot\n");
    let r = h.call("read", json!({"path": "it's.md"})).await;
    assert_eq!(r.text(), "curly\n");
    let r = h.call("read", json!({"path": "café.txt"})).await;
    assert_eq!(r.text(), "nfd\n");
}

/// A PNG of `w × h` that must be resized (a gradient).
fn wide_png(w: u32, h: u32) -> Vec<u8> {
    let pixels = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([x as u8, y as u8, 9]));
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(pixels)
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    png.into_inner()
}

/// `read_image` on `data` within `budget`, as `read` calls it; the number
/// of times the file was opened again comes back with the result.
fn read_image_within(
    budget: &super::DecodeBudget,
    data: &[u8],
    again: &[u8],
) -> (crate::tools::ToolOutput, usize) {
    let opened = std::sync::atomic::AtomicUsize::new(0);
    let reopen = || -> std::io::Result<Box<dyn std::io::Read + Send>> {
        opened.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Box::new(std::io::Cursor::new(again.to_vec())))
    };
    let head = data[..super::SNIFF_BYTES].to_vec();
    let rest = Box::new(std::io::Cursor::new(data[super::SNIFF_BYTES..].to_vec()));
    let out = super::read_image(
        crate::tools::file_kind::ImageKind::Png,
        rest,
        head,
        data.len() as u64,
        "wide.png",
        &reopen,
        budget,
        &tokio_util::sync::CancellationToken::new(),
    )
    .unwrap();
    (out, opened.load(std::sync::atomic::Ordering::SeqCst))
}

#[test]
fn an_image_read_waits_for_its_whole_budget_and_reads_the_file_again() {
    use crate::tools::image::DecodeBudget;
    use crate::tools::image::Plan;
    let png = wide_png(2100, 1200);
    let Plan::Decode(decoding) =
        crate::tools::image::plan(crate::tools::file_kind::ImageKind::Png, &png)
    else {
        panic!("not decoded")
    };
    let budget = DecodeBudget::new(decoding.need.next_multiple_of(1024));
    // Alone: the bytes are held, then grown to what decoding needs.
    let (alone, opened) = read_image_within(&budget, &png, &png);
    assert_eq!(
        (alone.content[0].clone(), opened),
        (
            Content::text(
                "Read image file [image/png]\n[Image: original 2100x1200, displayed at 2000x1143. \
                 Multiply coordinates by 1.05 to map to original image.]"
            ),
            0
        )
    );
    // With another holding all but the first hold: the read lets go,
    // waits for all it needs, reads the file again, and sends the same.
    let never = tokio_util::sync::CancellationToken::new();
    let first = crate::tools::image::first_hold(png.len() as u64);
    let other = budget
        .acquire(
            decoding.need.next_multiple_of(1024) - first.next_multiple_of(1024),
            &never,
        )
        .unwrap();
    let (waited, opened) = std::thread::scope(|scope| {
        let read = scope.spawn(|| read_image_within(&budget, &png, &png));
        while budget.waiting() == 0 {
            std::thread::yield_now();
        }
        drop(other);
        read.join().unwrap()
    });
    assert_eq!((waited, opened), (alone, 1));
    // A file that grew into a larger image meanwhile is left out, not
    // decoded beyond what is held.
    let other = budget
        .acquire(
            decoding.need.next_multiple_of(1024) - first.next_multiple_of(1024),
            &never,
        )
        .unwrap();
    let larger = wide_png(2600, 2600);
    let (changed, opened) = std::thread::scope(|scope| {
        let read = scope.spawn(|| read_image_within(&budget, &png, &larger));
        while budget.waiting() == 0 {
            std::thread::yield_now();
        }
        drop(other);
        read.join().unwrap()
    });
    assert_eq!(
        (changed.content, opened),
        (
            vec![Content::text(
                "Read image file [image/png]\n[Image omitted: could not be resized below the \
                 inline image size limit.]"
            )],
            1
        )
    );
}

/// Issue 21, item 11: names that are not UTF-8 were all `bad�.txt` ("File
/// not found: bad�.txt. Did you mean one of: bad�.txt, bad�.txt?"). They are
/// shown with `\xNN` for each such byte, and a path written that way names
/// the file: read, write and edit reach it.
#[tokio::test]
async fn a_name_that_is_not_utf8_is_shown_and_named_with_hex_escapes() {
    let h = Harness::local();
    h.add_file_named(b"bad\xfd.txt", "fd\n");
    h.add_file_named(b"bad\xfe.txt", "fe\n");
    h.add_file_named(b"bad\xff.txt", "ff\n");
    let r = h.call("read", json!({"path": "bad\u{FFFD}.txt"})).await;
    assert_eq!(
        r.text(),
        "File not found: bad\u{FFFD}.txt. Did you mean one of: bad\\xFD.txt, bad\\xFE.txt, \
         bad\\xFF.txt?"
    );
    let r = h.call("read", json!({"path": "bad\\xFE.txt"})).await;
    assert_eq!((r.is_error, r.text()), (false, "fe\n".to_owned()));
    let r = h
        .call("write", json!({"path": "bad\\xfe.txt", "content": "new\n"}))
        .await;
    assert_eq!(r.text(), "Successfully wrote 4 bytes to bad\\xFE.txt");
    let r = h
        .call(
            "edit",
            json!({"path": "bad\\xFF.txt", "edits": [{"oldText": "ff", "newText": "FF"}]}),
        )
        .await;
    assert!(!r.is_error, "{}", r.text());
    use std::os::unix::ffi::OsStrExt;
    let read =
        |name: &[u8]| std::fs::read(h.root().join(std::ffi::OsStr::from_bytes(name))).unwrap();
    assert_eq!(
        (
            read(b"bad\xfd.txt"),
            read(b"bad\xfe.txt"),
            read(b"bad\xff.txt")
        ),
        (b"fd\n".to_vec(), b"new\n".to_vec(), b"FF\n".to_vec())
    );
    // A name that is written as text is found as written first.
    h.add_file("lit\\xFF.txt", "literal\n");
    h.add_file_named(b"lit\xff.txt", "byte\n");
    let r = h.call("read", json!({"path": "lit\\xFF.txt"})).await;
    assert_eq!(r.text(), "literal\n");
}
