use pretty_assertions::assert_eq;

use super::*;

/// Every kind this version writes, with its name in reports.
fn written() -> Vec<(CheckKind, &'static str)> {
    let mut all: Vec<(CheckKind, &'static str)> = NAMED.to_vec();
    all.extend([
        (
            CheckKind::DetailsAt {
                pointer: "/truncation/truncated_by".into(),
                matcher: "equals".into(),
            },
            "details_at /truncation/truncated_by equals",
        ),
        (
            CheckKind::DetailsAt {
                pointer: String::new(),
                matcher: "exists".into(),
            },
            "details_at (root) exists",
        ),
        (
            CheckKind::DetailsAt {
                pointer: "/a b".into(),
                matcher: "not_contains".into(),
            },
            "details_at /a b not_contains",
        ),
        (
            CheckKind::ImageBlock {
                block: ImageBlock::Only,
                what: "width".into(),
            },
            "image width",
        ),
        (
            CheckKind::ImageBlock {
                block: ImageBlock::Nth(2),
                what: "mime_type".into(),
            },
            "image 2 mime_type",
        ),
        (
            CheckKind::ImageBlock {
                block: ImageBlock::Listed(0),
                what: "max_bytes".into(),
            },
            "images[0] max_bytes",
        ),
        (CheckKind::Capture("file".into()), "capture.file"),
        (
            CheckKind::Stats("max_input_tokens".into()),
            "stats.max_input_tokens",
        ),
    ]);
    all
}

#[test]
fn each_kind_is_written_as_its_name_and_read_back() {
    for (kind, name) in written() {
        assert_eq!(kind.to_string(), name);
        assert!(kind == name && kind != "", "{name}");
        assert_eq!(CheckKind::from(name), kind, "{name}");
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(json, serde_json::to_string(name).unwrap());
        assert_eq!(serde_json::from_str::<CheckKind>(&json).unwrap(), kind);
    }
    let names: std::collections::BTreeSet<&str> = NAMED.iter().map(|(_, n)| *n).collect();
    assert_eq!(names.len(), NAMED.len(), "a name is given twice");
}

/// A name this version does not write is kept as written, so a report of
/// another version reads and writes back the same.
#[test]
fn an_unknown_name_is_kept_as_written() {
    for name in [
        "latency",
        "",
        "image",
        "image 0x width",
        "images[x] width",
        "details_at nothing",
        "Contains",
        "stats.",
    ] {
        let kind = CheckKind::from(name);
        assert_eq!(kind.to_string(), name);
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(serde_json::from_str::<CheckKind>(&json).unwrap(), kind);
    }
    assert_eq!(
        CheckKind::from("latency"),
        CheckKind::Other("latency".into())
    );
    assert_eq!(
        CheckKind::from("image 0x width"),
        CheckKind::Other("image 0x width".into())
    );
}
