use pretty_assertions::assert_eq;
use scraper::Html;
use scraper::Selector;
use serde_json::Value;
use serde_json::json;

use super::*;
use crate::report::Baseline;
use crate::report::compare;
use crate::run::CallStat;
use crate::run::Gate;
use crate::run::ScenarioOutcome;
use crate::run::transcript::Block;
use crate::run::transcript::Clip;
use crate::run::transcript::Transcript;
use crate::run::transcript::TranscriptCall;
use crate::run::transcript::TranscriptTurn;
use crate::scenario::Failure;

const HOSTILE: &str = "</script><script>alert(1)</script><img src=x onerror=alert(2)> & \
                       <!-- \u{2028} ]]>";

fn clip(text: &str) -> Clip {
    Clip {
        text: text.to_owned(),
        ..Clip::default()
    }
}

fn outcome(name: &str, status: Status, result_tokens: u64) -> ScenarioOutcome {
    let mut o = ScenarioOutcome::empty(name, &format!("{name}.yaml"), &["t".into()], status);
    o.stats.figures.result_tokens = result_tokens;
    o.stats.figures.input_tokens = 10 * result_tokens;
    o.stats.figures.calls = 1;
    o.stats.duration_ms = 5;
    o
}

/// Three scenarios: one passed with a hostile transcript, one failed with
/// hostile and long texts, one skipped.
fn summary() -> RunSummary {
    let mut passed = outcome("reads a file", Status::Passed, 40);
    passed.calls = vec![CallStat {
        id: "c1".into(),
        tool: "read".into(),
        turn: 1,
        result_tokens: 40,
        ..CallStat::default()
    }];
    passed.transcript = Some(Transcript {
        turns: vec![TranscriptTurn {
            turn: 1,
            stop_reason: "tool_use".into(),
            text: vec![clip(HOSTILE)],
            calls: vec![TranscriptCall {
                id: "c1".into(),
                tool: "read".into(),
                arguments: clip(r#"{"path":"</script>"}"#),
                retry_of: None,
                answers: None,
                finished: true,
                is_error: false,
                content: vec![Block::Text {
                    clip: clip(HOSTILE),
                }],
                details: Some(json!({ "note": HOSTILE })),
                details_omitted_bytes: 0,
                streamed: false,
                updates: None,
            }],
        }],
        error: None,
        cut: false,
    });
    let mut failed = outcome(&format!("fails {HOSTILE}"), Status::Failed, 7);
    failed.calls = vec![CallStat {
        id: "c1".into(),
        tool: "bash".into(),
        turn: 1,
        result_tokens: 7,
        ..CallStat::default()
    }];
    failed.failures = vec![
        Failure::new(Some("step 1 (bash)"), "contains", "ok", HOSTILE),
        Failure::new(
            Some("files: a.txt"),
            "equals",
            "one\ntwo\nthree\nfour\n",
            "one\n2\nthree\nfour\n",
        ),
    ];
    let skipped = outcome("skipped one", Status::Skipped, 0);
    RunSummary {
        scenarios: vec![passed, failed, skipped],
        tokenizer: "o200k".into(),
        duration_ms: 1234,
        gates: vec!["tokens=+5%".into()],
        ..RunSummary::default()
    }
}

fn select<'a>(page: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    let selector = Selector::parse(css).unwrap();
    page.select(&selector).collect()
}

fn rendered(summary: &RunSummary, comparison: Option<&Comparison>) -> (String, Html) {
    let text = String::from_utf8(render(summary, comparison).unwrap()).unwrap();
    let page = Html::parse_document(&text);
    (text, page)
}

/// The JSON of a packed island.
fn unpack(text: &str) -> Value {
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

fn island_of(page: &Html) -> Value {
    let island = select(page, "script#harness-data");
    assert_eq!(island.len(), 1);
    assert_eq!(island[0].value().attr("data-encoding"), Some("gzip+base64"));
    unpack(&island[0].text().collect::<String>())
}

#[test]
fn hostile_text_stays_text_and_the_island_holds_the_whole_run() {
    let summary = summary();
    let (text, page) = rendered(&summary, None);
    // Two scripts (the island and the page's own), no image, no handler:
    // nothing from the run became markup.
    let scripts: Vec<Option<&str>> = select(&page, "script")
        .iter()
        .map(|s| s.value().attr("type"))
        .collect();
    assert_eq!(scripts, vec![Some("application/octet-stream"), None]);
    assert_eq!(select(&page, "img").len(), 0);
    assert_eq!(select(&page, "[onerror]").len(), 0);
    assert!(!text.contains("{{"), "a placeholder was left");
    // The island reads back as the run, hostile strings intact.
    let island = island_of(&page);
    let expected = serde_json::to_value(RunReport::new(&summary, None)).unwrap();
    assert_eq!(island["run"], expected);
    assert_eq!(
        island["run"]["scenarios"][0]["transcript"]["turns"][0]["text"][0]["text"],
        HOSTILE
    );
    // The title carries the hostile name's count only; the escaped name
    // reaches the page only inside the island.
    assert_eq!(
        select(&page, "title")[0].text().collect::<String>(),
        "harness: failed (3 scenarios)"
    );
    // The long failure's diff is in the island; the short one has none.
    assert_eq!(
        island["diffs"],
        json!([{
            "scenario": 1,
            "failure": 1,
            "lines": [" one", "-two", "+2", " three", " four"],
            "cut": false
        }])
    );
}

#[test]
fn every_scenario_is_in_the_island_in_run_order() {
    let summary = summary();
    let (_, page) = rendered(&summary, None);
    let island = island_of(&page);
    let names: Vec<&str> = island["run"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = summary.scenarios.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, expected);
}

fn figures(page: &Html) -> Vec<(String, String)> {
    select(page, "[data-figure]")
        .iter()
        .map(|e| {
            (
                e.value().attr("data-figure").unwrap().to_owned(),
                e.text().collect::<String>(),
            )
        })
        .collect()
}

#[test]
fn the_overview_shows_the_counts_totals_and_percentiles_of_the_run() {
    let (_, page) = rendered(&summary(), None);
    let owned = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        figures(&page),
        owned(&[
            ("counts.scenarios", "3"),
            ("counts.passed", "1"),
            ("counts.failed", "1"),
            ("counts.skipped", "1"),
            ("totals.turns", "0"),
            ("totals.calls", "3"),
            ("totals.errors", "0"),
            ("totals.retries", "0"),
            ("totals.retries_avoided", "0"),
            ("totals.result_tokens", "47"),
            ("totals.input_tokens", "470"),
            ("totals.output_tokens", "0"),
            ("totals.cache_read_tokens", "0"),
            ("totals.cache_write_tokens", "0"),
            ("calls.result_tokens_p50", "p50 7"),
            ("calls.result_tokens_p95", "p95 40"),
        ])
    );
    // Without a baseline the gates are listed, not judged.
    let gates: Vec<String> = select(&page, "table.gates td")
        .iter()
        .map(|e| e.text().collect())
        .collect();
    assert_eq!(gates, vec!["tokens", "+5%"]);
    let tools: Vec<&str> = select(&page, "#chart-tools g[data-tool]")
        .iter()
        .map(|e| e.value().attr("data-tool").unwrap())
        .collect();
    assert_eq!(tools, vec!["bash", "read"]);
}

#[test]
fn with_a_baseline_the_overview_judges_gates_and_names_regressions_and_movers() {
    let mut before = summary();
    before.scenarios[1].status = Status::Passed;
    before.scenarios[0].stats.figures.result_tokens = 20;
    let baseline = Baseline::of(&before);
    let now = summary();
    let gates = vec!["tokens=+5%".parse::<Gate>().unwrap()];
    let comparison = compare(&now, &baseline, &gates);
    let (_, page) = rendered(&now, Some(&comparison));
    let texts = |css: &str| -> Vec<String> {
        select(&page, css)
            .iter()
            .map(|e| e.text().collect::<String>())
            .collect()
    };
    assert_eq!(
        texts("table.gates tr[data-gate] td:nth-child(3)"),
        vec!["breached", "breached"]
    );
    assert_eq!(texts("#regressions li"), vec![format!("fails {HOSTILE}")]);
    assert_eq!(
        texts("table.movers td"),
        vec![
            "reads a file",
            "20 → 40 (+100.0%)",
            "400 → 400 (±0)",
            "0 → 0 (±0)",
            "0 → 0 (±0)"
        ]
    );
    assert_eq!(
        figures(&page)
            .into_iter()
            .filter(|(name, _)| name.ends_with("totals.result_tokens"))
            .collect::<Vec<_>>(),
        vec![
            ("totals.result_tokens".to_owned(), "47".to_owned()),
            ("baseline_totals.result_tokens".to_owned(), "27".to_owned()),
            ("current_totals.result_tokens".to_owned(), "47".to_owned()),
        ]
    );
    assert_eq!(select(&page, "#chart-baseline g title").len(), 1);
}

/// A page without its durations: the island unpacked with every
/// `duration_ms` removed, and the rest with the run's wall time removed.
fn timeless(bytes: &[u8]) -> (String, Value) {
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
    let text = std::str::from_utf8(bytes).unwrap();
    let page = Html::parse_document(text);
    let mut island = island_of(&page);
    strip(&mut island);
    let start = text.find("id=\"harness-data\"").unwrap();
    let end = start + text[start..].find("</script>").unwrap();
    let rest = format!("{}{}", &text[..start], &text[end..]);
    let rest = regex::Regex::new(r#"<span class="duration">[^<]*</span>"#)
        .unwrap()
        .replace_all(&rest, "")
        .into_owned();
    (rest, island)
}

#[test]
fn pages_of_identical_runs_differ_only_in_durations() {
    let one = summary();
    let mut two = summary();
    two.duration_ms = 98765;
    for s in &mut two.scenarios {
        s.stats.duration_ms = 4321;
    }
    let (a, b) = (render(&one, None).unwrap(), render(&two, None).unwrap());
    // The same run gives the same bytes (the gzip header has no time).
    assert_eq!(render(&one, None).unwrap(), a);
    assert_ne!(a, b);
    assert_eq!(timeless(&a), timeless(&b));
}

#[test]
fn the_island_unpacks_to_the_json_it_packed() {
    let json = br#"{"a":"</script><!--&\u2028","b":[1,2]}"#;
    let packed = pack(json).unwrap();
    assert!(
        packed
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
        "{packed}"
    );
    assert_eq!(
        unpack(&packed),
        serde_json::from_slice::<Value>(json).unwrap()
    );
    assert_eq!(
        escape(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}
