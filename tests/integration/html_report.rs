//! index.html end to end: written by `--report DIR`, by `--html FILE` and
//! by `harness report merge`; its data island is the run of `run.json`
//! (transcripts included); identical runs give identical pages except for
//! durations. The page's own structure and escaping are tested next to
//! the renderer (src/report/html_tests.rs); the browser check is
//! tests/browser/check_report.py.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use pretty_assertions::assert_eq;
use scraper::Html;
use scraper::Selector;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/reports")
}

fn harness(tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(fixtures())
        .env("TMPDIR", tmp)
        .env(
            "HARNESS_STATE_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/harness-state"),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The `run` of the page's data island.
fn island_run(page: &Path) -> Value {
    let page = Html::parse_document(&std::fs::read_to_string(page).unwrap());
    let selector = Selector::parse("script#harness-data").unwrap();
    let island: Vec<_> = page.select(&selector).collect();
    assert_eq!(island.len(), 1);
    data_of(&island[0].text().collect::<String>())["run"].clone()
}

/// The JSON of a gzip+base64 data island.
fn data_of(text: &str) -> Value {
    use base64::Engine as _;
    use std::io::Read as _;
    let packed = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .unwrap();
    let mut json = String::new();
    flate2::read::GzDecoder::new(packed.as_slice())
        .read_to_string(&mut json)
        .unwrap();
    serde_json::from_str(&json).unwrap()
}

fn json(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// `value` without any `duration_ms`.
fn timeless(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("duration_ms");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[test]
fn the_report_dir_and_html_hold_the_run_of_run_json_with_transcripts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let single = tmp.path().join("alone/page.html");
    let done = harness(
        tmp.path(),
        &[
            "run",
            "suite",
            "--report",
            path(&out),
            "--html",
            path(&single),
        ],
    );
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    let run = json(&out.join("run.json"));
    assert_eq!(island_run(&out.join("index.html")), run);
    assert_eq!(
        std::fs::read(&single).unwrap(),
        std::fs::read(out.join("index.html")).unwrap()
    );
    // Every scenario that ran has its transcript; the skipped one has none.
    let kept: Vec<(&str, bool)> = run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["status"].as_str().unwrap(), s.get("transcript").is_some()))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("passed", true),
            ("passed", true),
            ("passed", true),
            ("failed", true),
            ("skipped", false),
        ]
    );
}

#[test]
fn a_merge_writes_the_page_of_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    harness(tmp.path(), &["run", "suite", "--report", path(&whole)]);
    let mut parts = Vec::new();
    for k in 1..=2 {
        let part = tmp.path().join(format!("part{k}.json"));
        let spec = format!("slice:{k}/2");
        harness(
            tmp.path(),
            &["run", "suite", "--partition", &spec, "--json", path(&part)],
        );
        parts.push(part);
    }
    let merged = tmp.path().join("merged");
    let done = harness(
        tmp.path(),
        &[
            "report",
            "merge",
            path(&parts[1]),
            path(&parts[0]),
            "--report",
            path(&merged),
        ],
    );
    assert_eq!(done.status.code(), Some(1), "{done:?}");
    assert_eq!(
        timeless(island_run(&merged.join("index.html"))),
        timeless(island_run(&whole.join("index.html")))
    );
}

#[test]
fn identical_runs_give_identical_pages_but_for_durations() {
    let pages: Vec<(String, Value)> = (0..2)
        .map(|i| {
            let tmp = tempfile::tempdir().unwrap();
            // Temp dirs of different lengths: nothing of them may show.
            let dir = tmp.path().join("x".repeat(1 + 40 * i));
            std::fs::create_dir(&dir).unwrap();
            let page = tmp.path().join("index.html");
            harness(&dir, &["run", "suite", "--html", path(&page)]);
            let text = std::fs::read_to_string(&page).unwrap();
            // The page around the island, without the run's wall time.
            let start = text.find("id=\"harness-data\"").unwrap();
            let end = start + text[start..].find("</script>").unwrap();
            let rest = format!("{}{}", &text[..start], &text[end..]);
            let rest = regex::Regex::new(r#"<span class="duration">[^<]*</span>"#)
                .unwrap()
                .replace_all(&rest, "")
                .into_owned();
            (rest, timeless(island_run(&page)))
        })
        .collect();
    assert!(pages[0].1["scenarios"][0]["transcript"].is_object());
    assert!(pages[0] == pages[1], "the pages differ beyond durations");
}
