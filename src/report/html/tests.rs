use pretty_assertions::assert_eq;
use scraper::Html;
use scraper::Selector;
use serde_json::Value;
use serde_json::json;

use super::data::MAX_ISLAND_BYTES;
use super::data::pack;
use super::data::water_level;
use super::page::render_within;
use super::*;
use crate::judge::Failure;
use crate::judge::tally::CallStat;
use crate::judge::tally::TurnStat;
use crate::report::Baseline;
use crate::report::Comparison;
use crate::report::compare;
use crate::report::json::RunReport;
use crate::report::markup::escape_html as escape;
use crate::run::Gate;
use crate::run::RunSummary;
use crate::run::ScenarioOutcome;
use crate::run::Status;
use crate::run::transcript::Block;
use crate::run::transcript::Clip;
use crate::run::transcript::KeptTranscript;
use crate::run::transcript::TranscriptCall;
use crate::run::transcript::TranscriptTurn;

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
    passed.transcript = Some(KeptTranscript {
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
    let text = String::from_utf8(render(summary, comparison, &[]).unwrap()).unwrap();
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
            ("totals.definition_tokens", "0"),
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
    // The chart of every change is drawn by the script; the page says how
    // many it will draw, and draws none itself.
    let chart = select(&page, "#chart-baseline");
    assert_eq!(chart[0].value().attr("data-changed"), Some("1"));
    assert_eq!(select(&page, "#chart-baseline g").len(), 0);
    assert_eq!(select(&page, "#b-rows").len(), 1);
    // The header's verdict is named the run's.
    assert_eq!(texts("header .run-verdict"), vec!["run failed"]);
    // And it says why.
    assert_eq!(
        texts("header .verdict-why"),
        vec!["1 scenario failed, 2 gates breached"]
    );
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
    let (a, b) = (
        render(&one, None, &[]).unwrap(),
        render(&two, None, &[]).unwrap(),
    );
    // The same run gives the same bytes (the gzip header has no time).
    assert_eq!(render(&one, None, &[]).unwrap(), a);
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

/// A realistic scenario of a large suite, different for each `i`: three
/// turns (a read of a source file, a grep, a bash command whose output was
/// truncated and streamed), every 50th failed with a long file check,
/// every 97th skipped.
fn realistic(i: usize) -> ScenarioOutcome {
    let status = if i % 97 == 96 {
        Status::Skipped
    } else if i % 50 == 49 {
        Status::Failed
    } else {
        Status::Passed
    };
    let name = format!(
        "suite {:02}: a scenario that reads, greps and runs #{i}",
        i % 13
    );
    let mut o = ScenarioOutcome::empty(
        &name,
        &format!("scenarios/t{}/s{i}.yaml", i % 13),
        &[format!("t{}", i % 13), "bench".into()],
        status,
    );
    o.index = i;
    if status == Status::Skipped {
        o.skip_reason = Some("not on this platform".into());
        return o;
    }
    // A pseudo-random number per scenario, so that copies do not compress
    // away.
    let r = |k: usize| (i.wrapping_mul(2_654_435_761).wrapping_add(k * 40_503)) % 100_000;
    let source: String = (1..=40)
        .map(|n| {
            format!(
                "{n:>4}\tlet value_{} = compute({}, \"{}\");\n",
                r(n),
                r(n + 1),
                r(n + 2)
            )
        })
        .collect();
    let grep: String = (0..8)
        .map(|n| {
            format!(
                "src/mod_{}.rs:{}: fn handler_{}()\n",
                r(n + 50),
                r(n + 60) % 900,
                r(n + 70)
            )
        })
        .collect();
    let tail: String = (0..30).map(|n| format!("{}\n", r(n + 100))).collect();
    let tail =
        format!("{tail}\n[Showing lines 971-1000 of 1000. Full output: /scratch/bash-c{i}.log]");
    let call = |id: &str, tool: &str, args: String, text: &str, details: Value| TranscriptCall {
        id: id.into(),
        tool: tool.into(),
        arguments: clip(&args),
        retry_of: None,
        answers: None,
        finished: true,
        is_error: false,
        content: vec![Block::Text { clip: clip(text) }],
        details: Some(details),
        details_omitted_bytes: 0,
        streamed: false,
        updates: None,
    };
    let turn = |n: u64, text: &str, c: TranscriptCall| TranscriptTurn {
        turn: n,
        stop_reason: "tool_use".into(),
        text: vec![clip(text)],
        calls: vec![c],
    };
    let mut bash = call(
        "c3",
        "bash",
        format!(r#"{{"command":"./run.sh {}"}}"#, r(7)),
        &tail,
        json!({"exit_code": 0, "truncation": {"truncated": true, "total_lines": 1000}}),
    );
    bash.streamed = true;
    bash.updates = Some(crate::run::transcript::Updates {
        first: Clip::default(),
        last: Some(clip(&tail[..tail.len() / 2])),
    });
    o.transcript = Some(KeptTranscript {
        turns: vec![
            turn(
                1,
                "Let me read the file first.",
                call(
                    "c1",
                    "read",
                    format!(r#"{{"path":"src/mod_{}.rs"}}"#, r(3)),
                    &source,
                    json!({}),
                ),
            ),
            turn(
                2,
                "Now where it is used.",
                call(
                    "c2",
                    "grep",
                    format!(r#"{{"pattern":"handler_{}"}}"#, r(4)),
                    &grep,
                    json!({"matches": 8}),
                ),
            ),
            turn(3, "And run it.", bash),
        ],
        error: None,
        cut: false,
    });
    o.calls = ["read", "grep", "bash"]
        .iter()
        .enumerate()
        .map(|(k, tool)| CallStat {
            id: format!("c{}", k + 1),
            tool: (*tool).into(),
            turn: k as u64 + 1,
            truncated: k == 2,
            args_tokens: 9 + r(k) as u64 % 5,
            result_tokens: [460, 120, 95][k] + r(k) as u64 % 40,
            duration_ms: 3,
            ..CallStat::default()
        })
        .collect();
    o.turns = (0..4)
        .map(|k| TurnStat {
            input_tokens: 1800 + 300 * k,
            output_tokens: 10,
            cache_read_tokens: 300 * k,
            cache_write_tokens: 1800 + 300 * k,
            scripted: k < 3,
        })
        .collect();
    let f = &mut o.stats.figures;
    f.turns = 4;
    f.calls = 3;
    f.result_tokens = o.calls.iter().map(|c| c.result_tokens).sum();
    f.input_tokens = 9000;
    f.output_tokens = 30;
    o.stats.duration_ms = 40;
    if status == Status::Failed {
        let expected: String = (0..30).map(|n| format!("line {}\n", r(n + 200))).collect();
        let actual = expected.replacen("line", "LINE", 1);
        o.failures = vec![Failure::new(
            Some("files: out.txt"),
            "equals",
            expected,
            actual,
        )];
    }
    o
}

/// The 10,000-scenario claim of docs/reports.md: a suite of realistic
/// scenarios with their transcripts gives a page under 30 MB that keeps
/// every transcript whole (docs/reports.md has the browser's figures for
/// such a page, from tests/browser/check_report.py --measure --scale).
#[test]
fn a_page_of_10000_realistic_scenarios_stays_under_30_mb_whole() {
    let summary = RunSummary {
        scenarios: (0..10_000).map(realistic).collect(),
        tokenizer: "o200k".into(),
        ..RunSummary::default()
    };
    let page = render_within(&summary, None, MAX_ISLAND_BYTES).unwrap();
    assert_eq!(page.trim, None);
    assert!(page.bytes.len() < 30_000_000, "{} bytes", page.bytes.len());
}

/// Incompressible text of `len` bytes (base64's alphabet, from a
/// xorshift generator seeded with `seed`).
fn noise(seed: u64, len: usize) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % 64) as usize] as char
        })
        .collect()
}

/// Whatever the outputs, the island stays within its bound: scenarios
/// whose results and failures are large and incompressible keep less of
/// each transcript (an equal share, more for the ones that need more when
/// others need less) and cut their failure texts; names, figures and calls
/// stay whole, and the island says how it was trimmed.
#[test]
fn a_page_past_its_bound_keeps_less_of_each_transcript_whatever_the_outputs() {
    let budget = 1024 * 1024;
    let mut summary = RunSummary {
        scenarios: (0..300).map(realistic).collect(),
        tokenizer: "o200k".into(),
        ..RunSummary::default()
    };
    for (i, s) in summary.scenarios.iter_mut().enumerate() {
        // Every tenth has a small transcript; the others 8 KiB results.
        if let Some(t) = &mut s.transcript
            && i % 10 != 0
        {
            for (k, call) in t
                .turns
                .iter_mut()
                .flat_map(|t| t.calls.iter_mut())
                .enumerate()
            {
                call.content = vec![Block::Text {
                    clip: clip(&noise((i * 3 + k) as u64, 8 * 1024)),
                }];
            }
        }
        for f in &mut s.failures {
            f.actual = noise(i as u64, 100_000).into();
        }
        s.agent = Some(agent_record(
            &noise(i as u64 + 1, 4096),
            &noise(i as u64 + 2, 4096),
        ));
    }
    let whole = render_within(&summary, None, usize::MAX).unwrap();
    assert!(whole.bytes.len() > 4 * budget, "{}", whole.bytes.len());
    let page = render_within(&summary, None, budget).unwrap();
    let trim = page.trim.unwrap();
    let text = String::from_utf8(page.bytes).unwrap();
    let html = Html::parse_document(&text);
    let island_text = select(&html, "script#harness-data")[0]
        .text()
        .collect::<String>();
    assert!(island_text.len() <= budget, "{}", island_text.len());
    let island = unpack(&island_text);
    assert_eq!(
        island["trim"],
        json!({
            "transcript_bytes": trim.transcript_bytes,
            "failure_bytes": trim.failure_bytes,
            "diff_lines": trim.diff_lines,
        })
    );
    assert!(trim.transcript_bytes > 0);
    let run = &island["run"];
    // Every scenario is there, with its figures and calls.
    let expected = serde_json::to_value(RunReport::new(&summary, None)).unwrap();
    for key in ["counts", "totals", "tools"] {
        assert_eq!(run[key], expected[key]);
    }
    for (got, want) in run["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .zip(expected["scenarios"].as_array().unwrap())
    {
        for key in ["name", "status", "stats", "calls", "turns"] {
            assert_eq!(got[key], want[key]);
        }
        // Each transcript within the share; a small one whole.
        if let Some(t) = got.get("transcript") {
            let t: KeptTranscript = serde_json::from_value(t.clone()).unwrap();
            let recorded: KeptTranscript =
                serde_json::from_value(want["transcript"].clone()).unwrap();
            assert!(t.kept_bytes() <= trim.transcript_bytes);
            if recorded.kept_bytes() <= trim.transcript_bytes {
                assert_eq!(t, recorded);
            } else {
                assert_eq!(t, recorded.within(trim.transcript_bytes));
            }
        }
        for f in got["failures"].as_array().unwrap() {
            let actual = f["actual"].as_str().unwrap();
            assert!(actual.len() < trim.failure_bytes + 100, "{}", actual.len());
            assert!(actual.contains("bytes not kept in this page; run.json has the whole text"));
        }
        // An agent's output and standard error are cut as failures are;
        // the rest of its record is whole.
        let agent = &got["agent"];
        for key in ["output", "stderr"] {
            let text = agent[key].as_str().unwrap();
            assert!(text.len() < trim.failure_bytes + 100, "{}", text.len());
            assert!(text.contains("bytes not kept in this page; run.json has the whole text"));
        }
        for key in ["name", "api", "exit", "exit_code", "requests", "side_calls"] {
            assert_eq!(agent[key], want["agent"][key]);
        }
    }
}

fn agent_record(output: &str, stderr: &str) -> crate::run::agent_outcome::AgentOutcome {
    crate::run::agent_outcome::AgentOutcome {
        name: "fake".into(),
        api: "openai-chat".into(),
        exit: "exit status 3".into(),
        exit_code: Some(3),
        finished: false,
        requests: 4,
        side_calls: 1,
        output: output.into(),
        stderr: stderr.into(),
        isolation: "process group".into(),
        warnings: vec!["no network namespace here".into()],
    }
}

#[test]
fn an_agents_record_is_in_the_island_whole_and_stays_text() {
    let mut summary = summary();
    summary.scenarios[0].agent = Some(agent_record(HOSTILE, HOSTILE));
    let (_, page) = rendered(&summary, None);
    assert_eq!(select(&page, "img").len(), 0);
    assert_eq!(select(&page, "[onerror]").len(), 0);
    let island = island_of(&page);
    assert_eq!(
        island["run"]["scenarios"][0]["agent"],
        json!({
            "name": "fake",
            "api": "openai-chat",
            "exit": "exit status 3",
            "exit_code": 3,
            "finished": false,
            "requests": 4,
            "side_calls": 1,
            "output": HOSTILE,
            "stderr": HOSTILE,
            "isolation": "process group",
            "warnings": ["no network namespace here"],
        })
    );
    // The page's script shows it as text only.
    let script = include_str!("app.js");
    let part = &script[script.find("function agentPart").unwrap()..];
    let part = &part[..part.find("function scenarioPage").unwrap()];
    assert!(!part.contains("innerHTML") && !part.contains("insertAdjacentHTML"));
}

#[test]
fn the_water_level_shares_a_target_out_by_need() {
    // 10 + 20 fit whole; 70 left for the two large ones: 35 each.
    assert_eq!(water_level(&[100, 10, 200, 20], 100), 35);
    assert_eq!(water_level(&[100, 10, 200, 20], 330), 200);
    assert_eq!(water_level(&[100, 10, 200, 20], 0), 0);
    assert_eq!(water_level(&[], 50), 0);
}

#[test]
fn the_overview_lists_at_most_twenty_breaches_per_gate() {
    let mut before = summary();
    let mut now = summary();
    before.scenarios.clear();
    now.scenarios.clear();
    for i in 0..25 {
        before
            .scenarios
            .push(outcome(&format!("s{i}"), Status::Passed, 10));
        now.scenarios
            .push(outcome(&format!("s{i}"), Status::Passed, 20));
    }
    let gates = vec!["result_tokens=+5%".parse::<Gate>().unwrap()];
    let comparison = compare(&now, &Baseline::of(&before), &gates);
    let (_, page) = rendered(&now, Some(&comparison));
    let cell = select(&page, "table.gates tr[data-gate='result_tokens=+5%'] td")[3]
        .text()
        .collect::<String>();
    // 25 scenarios and the totals breached: 20 listed, 6 more counted.
    let listed: String = (0..20)
        .map(|i| format!("`s{i}` result_tokens 10 → 20 (+100.0%)"))
        .collect();
    assert_eq!(cell, format!("{listed}and 6 more (run.json has them all)"));
}

#[test]
fn variants_are_side_by_side_with_each_ones_transcript_and_a_diff_of_results() {
    let first = summary();
    let mut second = summary();
    second.scenarios[0].stats.figures.result_tokens = 10;
    second.scenarios[0].calls[0].result_tokens = 10;
    // Its read returns another text, with the same first line.
    set_result(&mut second.scenarios[0], &format!("{HOSTILE}\nline two\n"));
    let variant = |name: &str, summary: RunSummary| crate::run::VariantRun {
        name: name.into(),
        file: format!("{HOSTILE}.yaml"),
        summary,
    };
    let mut run = first.clone();
    run.variants = vec![variant("wide", first), variant("tight", second)];
    let (text, page) = rendered(&run, None);
    assert!(!text.contains(HOSTILE), "unescaped text in the page");
    let rows: Vec<String> = select(&page, "table.variants tbody tr th")
        .iter()
        .map(|th| th.text().collect())
        .collect();
    assert_eq!(rows, ["wide", "tight"]);
    let bars: Vec<String> = select(&page, "table.variant-bars tbody tr")
        .iter()
        .map(|tr| tr.text().collect::<Vec<_>>().join("|"))
        .collect();
    assert_eq!(
        bars,
        [
            "bash|wide| 7",
            "bash|tight| 7",
            "read|wide| 40",
            "read|tight| 10"
        ]
    );
    let moves: Vec<String> = select(&page, "ul.variant-moves li")
        .iter()
        .map(|li| li.text().collect())
        .collect();
    assert_eq!(moves, ["reads a file [tight]: result_tokens 40 → 10 (-30)"]);
    let island = island_of(&page);
    assert!(island["run"]["scenarios"][0]["transcript"].is_object());
    // The first variant's transcripts are the top level's, once; the
    // second's are its own.
    let variants = island["run"]["variants"].as_array().unwrap();
    for s in variants[0]["scenarios"].as_array().unwrap() {
        assert!(s.get("transcript").is_none());
    }
    assert_eq!(
        variants[1]["scenarios"][0]["transcript"]["turns"][0]["calls"][0]["content"][0]["text"],
        format!("{HOSTILE}\nline two\n")
    );
    // The results differ in the one scenario: its diff, first variant `-`.
    assert_eq!(
        island["variant_diffs"],
        json!([{
            "scenario": 0,
            "variant": 1,
            "lines": [" ── c1 read ──".to_owned(), format!(" {HOSTILE}"), "+line two".to_owned()],
            "cut": false,
        }])
    );
    // Without variants, no such field.
    let (_, plain) = rendered(&summary(), None);
    assert!(island_of(&plain).get("variant_diffs").is_none());
}

/// Sets the text of the scenario's first call's result.
fn set_result(outcome: &mut ScenarioOutcome, text: &str) {
    let transcript = outcome.transcript.as_mut().unwrap();
    transcript.turns[0].calls[0].content = vec![Block::Text { clip: clip(text) }];
}

#[test]
fn results_text_names_each_call_and_what_a_cut_text_left_out() {
    let mut o = summary().scenarios.remove(0);
    let transcript = o.transcript.as_mut().unwrap();
    let call = &mut transcript.turns[0].calls[0];
    call.is_error = true;
    call.content = vec![
        Block::Text {
            clip: Clip {
                text: "head".into(),
                omitted_bytes: 9,
                tail: "tail".into(),
            },
        },
        Block::Image {
            mime_type: "image/png".into(),
            data: None,
            bytes: 12,
        },
    ];
    assert_eq!(
        super::data::results_text(transcript),
        "── c1 read error ──\nhead\n[… 9 bytes not kept …]\ntail\n[image/png image, 12 base64 bytes]\n"
    );
}

#[test]
fn a_page_of_variants_past_its_bound_trims_every_variants_transcripts() {
    let mut first = summary();
    let long = noise(7, 40_000);
    set_result(&mut first.scenarios[0], &long);
    let mut second = first.clone();
    set_result(&mut second.scenarios[0], &noise(8, 40_000));
    let variant = |name: &str, summary: RunSummary| crate::run::VariantRun {
        name: name.into(),
        file: format!("{name}.yaml"),
        summary,
    };
    let mut run = first.clone();
    run.variants = vec![variant("a", first), variant("b", second)];
    let whole = super::page::render_within_variants(&run, None, &[], usize::MAX).unwrap();
    assert_eq!(whole.trim, None);
    let budget = whole.bytes.len() / 3;
    let page = super::page::render_within_variants(&run, None, &[], budget).unwrap();
    let trim = page.trim.expect("trimmed");
    let island = island_of(&Html::parse_document(
        std::str::from_utf8(&page.bytes).unwrap(),
    ));
    let kept = |t: &Value| -> usize {
        let t: KeptTranscript = serde_json::from_value(t.clone()).unwrap();
        t.kept_bytes()
    };
    let top = kept(&island["run"]["scenarios"][0]["transcript"]);
    let other = kept(&island["run"]["variants"][1]["scenarios"][0]["transcript"]);
    assert!(
        top <= trim.transcript_bytes && other <= trim.transcript_bytes,
        "{top} {other} {trim:?}"
    );
    assert!(other > 0, "the second variant keeps its share");
    assert!(
        island["variant_diffs"][0]["lines"]
            .as_array()
            .unwrap()
            .len()
            <= trim.diff_lines
    );
}

#[test]
fn the_overview_lists_each_mcp_server_in_its_authors_terms() {
    let mut summary = summary();
    let server = |calls, errors, rpc, defs| crate::run::servers::ServerOutcome {
        name: "<mem>".to_owned(),
        transport: "stdio".to_owned(),
        server_name: Some("memory-server".to_owned()),
        server_version: Some("0.6.3".to_owned()),
        calls,
        error_results: errors,
        jsonrpc_errors: rpc,
        result_tokens: calls * 10,
        definition_tokens: Some(defs),
        ..Default::default()
    };
    summary.scenarios[0].servers = vec![server(3, 2, 1, 137)];
    summary.scenarios[1].servers = vec![server(1, 1, 1, 42)];
    let (_, page) = rendered(&summary, None);
    let rows: Vec<String> = select(&page, "table.servers tr")
        .iter()
        .map(|row| {
            row.children()
                .filter_map(scraper::ElementRef::wrap)
                .map(|cell| cell.text().collect::<String>())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "server|scenarios|calls|error results|JSON-RPC errors|result tokens|tool definitions \
             per scenario|did not start|ended early",
            "<mem> memory-server 0.6.3|2|4|3|2|40|42 to 137|0|0",
        ]
    );
    assert!(
        figures(&page).contains(&("servers.0.jsonrpc_errors".to_owned(), "2".to_owned())),
        "the numbers are figures"
    );
}
