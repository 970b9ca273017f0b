#!/usr/bin/env python3
"""Opens harness's HTML report in headless Chromium and checks it.

    check_report.py REPORT_DIR [--failing NAME] [--shots DIR] [--harness BIN]
    check_report.py REPORT_DIR --measure [--scale N] [--runs K] [--shots DIR]
    check_report.py REPORT_DIR --readme-shot FILE

REPORT_DIR holds index.html and the run.json of the same run. The checks:
the overview's numbers equal run.json's; the list shows every scenario with
its input tokens and visible bars, and its filters (status, tag, tool, and
text, which searches the calls' arguments and results too) and sorting
work; the browser's back button and the page's back link return to the
list where it was; the charts of every scenario draw lazily, sort, and
cover every scenario whose tokens changed (a second page is made with
`harness report merge --baseline` from a baseline with changes, so that
there are some); the markers' labels of the distribution chart cross no
bar; the failing scenario NAME opens on its own page with its diff
visible; markup from a scenario's output stays text; images decode; a
retry's link is readable (contrast of at least 4.5:1 with its background)
and leads to the call it answers; streamed updates and a long result's
closing notice are shown; nothing is fetched from the network; and the
console has no error or warning. Screenshots go to --shots (default
target/browser).

With --measure, it only times the first screen (first contentful paint,
and when the list was shown); with --scale N it first makes a page of N
scenarios from REPORT_DIR's run.json (its scenarios repeated under new
names, merged with `harness report merge`) and times that, --runs times
(for the 10,000-scenario figures in docs/reports.md). With --readme-shot
it saves the first screen at 1280x860 (README's docs/report.png).

Chromium is the system's (CHROMIUM, else /usr/bin/chromium), driven by
Python Playwright; .ci/run installs both. The harness binary (for the
pages it makes) is --harness, else $CARGO_TARGET_DIR/debug/harness, else
target/debug/harness.
"""

import argparse
import copy
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

from playwright.sync_api import sync_playwright


def fail(message):
    print(f"check_report: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def launch(p):
    executable = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    # CI runs as root, where Chromium's sandbox cannot start.
    return p.chromium.launch(executable_path=executable, args=["--no-sandbox"])


def open_page(browser, url, problems, viewport=None, scale=1):
    page = browser.new_page(viewport=viewport or {"width": 1280, "height": 900}, device_scale_factor=scale)
    page.on(
        "console",
        lambda m: problems.append(f"console {m.type}: {m.text}")
        if m.type in ("error", "warning")
        else None,
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))

    def request(req):
        if not (req.url.startswith("file:") or req.url.startswith("data:")):
            problems.append(f"network request: {req.url}")

    page.on("request", request)
    page.goto(url, wait_until="load")
    page.wait_for_selector("#list .row[data-index]")
    return page


def shown_count(page):
    text = page.inner_text("#list-count")
    return int(text.split(" of ")[0])


def harness_binary(args):
    if args.harness:
        return args.harness
    return str(pathlib.Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "debug" / "harness")


def merge(args, parts, out_html, baseline=None, out_json=None):
    """`harness report merge PARTS --html OUT` (with --baseline, --json); exit 0 or 1."""
    command = [harness_binary(args), "report", "merge", *map(str, parts), "--html", str(out_html)]
    if baseline:
        command += ["--baseline", str(baseline)]
    if out_json:
        command += ["--json", str(out_json)]
    done = subprocess.run(command, capture_output=True, text=True)
    check(done.returncode in (0, 1), f"{' '.join(command)} exited {done.returncode}: {done.stderr}")


# ---- what the page should show, worked out from run.json ------------------

def calls_of(s):
    t = s.get("transcript") or {"turns": []}
    return [c for turn in t["turns"] for c in turn["calls"]]


NOTICE = re.compile(r"truncat|showing|limit|more lines|offset|full output|not shown", re.I)


def is_notice(line):
    t = line.strip()
    return t.startswith("[") and t.endswith("]") and NOTICE.search(t) is not None


def closing_notices(block):
    """The notice lines that close a text block (the page shows them after its box)."""
    lines = (block.get("tail", "") if block.get("omitted_bytes") else block["text"]).split("\n")
    while lines and lines[-1].strip() == "":
        lines.pop()
    notices = []
    while lines and is_notice(lines[-1]):
        notices.insert(0, lines.pop())
    return notices


# The text filter's bounds (app.js): each call's arguments and each result
# block at most CALL_TEXT characters, all of a scenario's at most SCENARIO_TEXT.
CALL_TEXT, SCENARIO_TEXT = 1000, 4000


def search_text(s):
    parts = [s["name"], s["file"], " ".join(s["tags"]), s.get("skip_reason") or ""]
    for f in s["failures"]:
        parts += [f["step"] or "", f["check"]]
    calls = []
    for c in calls_of(s):
        calls.append(c["tool"] + " " + c["arguments"]["text"][:CALL_TEXT])
        for b in c["content"]:
            if b["type"] == "text":
                calls.append((b["text"] + ("\n" + b["tail"] if b.get("tail") else ""))[:CALL_TEXT])
    parts.append("\n".join(calls)[:SCENARIO_TEXT])
    return "\n".join(parts).lower()


def label_text(s, n=30):
    return s if len(s) <= n else s[: n - 1] + "…"


def moved(figures):
    return figures["result_tokens"] + figures["input_tokens"]


def changed_scenarios(run):
    c = run.get("comparison")
    if not c:
        return []
    return [s for s in c["scenarios"] if s["compared"] and moved(s["baseline"]) != moved(s["current"])]


def clip_shown(clip):
    """What clipPre shows of a kept text, newlines aside."""
    text = clip["text"]
    if clip.get("omitted_bytes"):
        text += f"… {clip['omitted_bytes']} bytes the model read are not kept in this report …" + clip.get("tail", "")
    return text.replace("\n", "")


# JS: the contrast (WCAG) between an element's colour and the first opaque
# background behind it, and its box.
CONTRAST = """e => {
    const rgb = c => { const p = c.match(/[\\d.]+/g).map(Number); return p.length > 3 ? p : p.concat([1]); };
    let back = [255, 255, 255, 1];
    for (let n = e; n; n = n.parentElement) {
        const c = rgb(getComputedStyle(n).backgroundColor);
        if (c[3] > 0) { back = c; break; }
    }
    const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
    const fg = rgb(getComputedStyle(e).color);
    const [a, b] = [lum(fg), lum(back)];
    const box = e.getBoundingClientRect();
    return { contrast: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), width: box.width, height: box.height,
             color: getComputedStyle(e).color, background: 'rgb(' + back.slice(0, 3).join(',') + ')' };
}"""


# ---- the checks -----------------------------------------------------------

def check_list(page, scenarios):
    check(shown_count(page) == len(scenarios), "the list does not count every scenario")
    first = page.eval_on_selector_all(
        "#list .row[data-index]",
        """els => els.map(e => ({ index: Number(e.dataset.index),
            input: e.querySelector('[data-col=input_tokens]').textContent,
            result: e.querySelector('[data-col=result_tokens]').textContent,
            bar: e.querySelector('.b-now').getBoundingClientRect().width }))""",
    )
    check(len(first) == min(100, len(scenarios)), f"{len(first)} rows rendered at first")
    for r in first:
        stats = scenarios[r["index"]]["stats"]
        check(
            (r["input"], r["result"]) == (str(stats["input_tokens"]), str(stats["result_tokens"])),
            f"row {r['index']} shows tokens {r['result']}/{r['input']}, run.json has {stats['result_tokens']}/{stats['input_tokens']}",
        )
        if stats["result_tokens"] > 0:
            check(r["bar"] >= 2, f"row {r['index']}'s bar is {r['bar']} px wide for {stats['result_tokens']} tokens")


def check_filters(page, scenarios, failing):
    page.select_option("#f-status", "failed")
    failed = [s for s in scenarios if s["status"] == "failed"]
    check(shown_count(page) == len(failed), "the status filter")
    rows = page.eval_on_selector_all("#list .row[data-index]", "els => els.map(e => e.dataset.status)")
    check(rows == ["failed"] * len(failed), f"rows after the status filter: {rows}")
    page.select_option("#f-status", "")
    tag = "edit"
    page.select_option("#f-tag", tag)
    check(shown_count(page) == sum(tag in s["tags"] for s in scenarios), "the tag filter")
    page.select_option("#f-tag", "")
    tool = "grep"
    page.select_option("#f-tool", tool)
    check(
        shown_count(page) == sum(any(c["tool"] == tool for c in s["calls"]) for s in scenarios),
        "the tool filter",
    )
    page.select_option("#f-tool", "")
    page.fill("#f-text", failing)
    check(shown_count(page) == 1, "the text filter")
    # Text from a call's result, in no name, file, tag or failure: the
    # filter searches what the calls sent and read.
    names = "\n".join(
        "\n".join([s["name"], s["file"], " ".join(s["tags"])] + [f["check"] for f in s["failures"]]) for s in scenarios
    ).lower()
    term = next(
        (
            line.strip().lower()
            for s in scenarios
            for c in calls_of(s)
            for b in c["content"]
            if b["type"] == "text"
            for line in b["text"][:CALL_TEXT].split("\n")[:-1]
            if 16 <= len(line.strip()) <= 60 and line.strip().isascii() and line.strip().lower() not in names
        ),
        None,
    )
    check(term is not None, "no result text to search for")
    expected = sum(term in search_text(s) for s in scenarios)
    page.fill("#f-text", term)
    check(expected >= 1 and shown_count(page) == expected, f"searching {term!r} shows {shown_count(page)}, not {expected}")
    page.fill("#f-text", "")
    page.select_option("#f-sort", "tokens")
    first = page.get_attribute("#list .row[data-index]", "data-index")
    most = max(range(len(scenarios)), key=lambda i: (scenarios[i]["stats"]["result_tokens"], -i))
    check(int(first) == most, f"sorting by tokens put scenario {first} first, not {most}")
    page.select_option("#f-sort", "input")
    first = page.get_attribute("#list .row[data-index]", "data-index")
    most = max(range(len(scenarios)), key=lambda i: (scenarios[i]["stats"]["input_tokens"], -i))
    check(int(first) == most, f"sorting by input tokens put scenario {first} first, not {most}")
    page.select_option("#f-sort", "index")


def check_back(page, scenarios):
    """Back from a scenario's page returns to the list where it was."""
    page.select_option("#f-status", "passed")
    page.select_option("#f-sort", "tokens")
    rows = page.locator("#list .row[data-index]")
    check(rows.count() > 40, "too few passed scenarios to scroll the list")
    row = rows.nth(40)
    row.scroll_into_view_if_needed()
    y = page.evaluate("window.scrollY")
    index = row.get_attribute("data-index")
    check(y > 0, "the list did not scroll")
    for how in ("the browser's back button", "the page's back link"):
        page.locator(f"#list .row[data-index='{index}']").click()
        page.wait_for_selector("#scenario-view h2", state="visible")
        check(page.evaluate("window.scrollY") == 0, "a scenario's page does not open at its top")
        if how == "the page's back link":
            page.click("#scenario-view a.back")
        else:
            page.go_back()
        page.wait_for_function(
            "y => !document.getElementById('overview-view').hidden && window.scrollY === y", arg=y, timeout=5000
        )
        check(
            (page.input_value("#f-status"), page.input_value("#f-sort")) == ("passed", "tokens"),
            f"{how} lost the list's filters",
        )
        inside = page.evaluate(
            f"""() => {{ const r = document.querySelector("#list .row[data-index='{index}']").getBoundingClientRect();
                return r.top >= 0 && r.bottom <= window.innerHeight; }}"""
        )
        check(inside, f"{how} did not return to the row that was opened")
    page.select_option("#f-status", "")
    page.select_option("#f-sort", "index")


def check_distribution(page):
    crossed = page.evaluate(
        """() => {
            const boxes = s => Array.from(document.querySelectorAll('#chart-distribution ' + s)).map(e => e.getBoundingClientRect());
            const labels = boxes('text.marker-label'), bars = boxes('rect');
            return labels.length === 2 && labels.every(l => bars.every(b => b.height === 0 ||
                l.right <= b.left || l.left >= b.right || l.bottom <= b.top || l.top >= b.bottom)) ? [] : labels;
        }"""
    )
    check(crossed == [], f"a marker's label crosses a bar of the distribution chart: {crossed}")


def check_scenario_chart(page, scenarios):
    n = len(scenarios)
    bars = "#c-rows g.bar-row"

    def drawn():
        return page.eval_on_selector_all(
            bars,
            """els => els.map(g => ({ index: Number(g.dataset.index), tokens: Number(g.dataset.tokens),
                title: g.querySelector('title').textContent, label: g.querySelector('text').textContent,
                width: g.querySelector('rect').getBoundingClientRect().width }))""",
        )

    first = drawn()
    check(len(first) == min(100, n), f"the scenario chart drew {len(first)} bars at first, not {min(100, n)}")
    by_tokens = sorted(range(n), key=lambda i: (-scenarios[i]["stats"]["result_tokens"], i))
    check([b["index"] for b in first] == by_tokens[:100], "the scenario chart is not sorted by tokens")
    for b in first:
        s = scenarios[b["index"]]
        check(b["tokens"] == s["stats"]["result_tokens"], f"bar {b['index']} has {b['tokens']} tokens")
        check(b["label"] == label_text(s["name"]) and b["title"].startswith(s["name"] + ": "), f"bar label {b['label']!r}")
        if b["tokens"] > 0:
            check(b["width"] >= 2, f"bar {b['index']} is {b['width']} px for {b['tokens']} tokens")
    if n > 100:
        page.eval_on_selector("#c-rows", "box => { box.scrollTop = box.scrollHeight; }")
        page.wait_for_function("n => document.querySelectorAll('#c-rows g.bar-row').length === n", arg=min(200, n))
    page.select_option("#c-sort", "name")
    by_name = sorted(range(n), key=lambda i: (scenarios[i]["name"], i))
    check([b["index"] for b in drawn()] == by_name[:100], "the scenario chart is not sorted by name")
    page.select_option("#c-sort", "index")
    check([b["index"] for b in drawn()] == list(range(min(100, n))), "the scenario chart is not in run order")
    page.select_option("#c-sort", "tokens")
    # A bar opens its scenario.
    page.locator("#c-rows g.bar-row rect").first.click()
    page.wait_for_selector("#scenario-view h2", state="visible")
    check(page.evaluate("location.hash") == f"#s/{by_tokens[0]}", "a bar did not open its scenario")
    page.go_back()
    page.wait_for_selector("#overview-view", state="visible")


def check_baseline_chart(page, run):
    changed = changed_scenarios(run)
    count = page.get_attribute("#chart-baseline", "data-changed")
    check(count == str(len(changed)), f"the baseline chart counts {count} changed scenarios, not {len(changed)}")
    if not changed:
        check("No scenario's tokens changed." in page.inner_text("#chart-baseline"), "the baseline chart's note")
        return
    names = [s["name"] for s in run["scenarios"]]
    drawn = page.eval_on_selector_all(
        "#b-rows g.bar-row",
        "els => els.map(g => [Number(g.dataset.index), g.querySelector('text').textContent, g.querySelector('title').textContent])",
    )
    by_change = sorted(changed, key=lambda s: (-abs(moved(s["current"]) - moved(s["baseline"])), names.index(s["name"])))
    expected = [names.index(s["name"]) for s in by_change][:100]
    check([d[0] for d in drawn] == expected, f"the baseline chart draws {[d[0] for d in drawn]}, not {expected}")
    for (index, label, title), s in zip(drawn, by_change):
        check(label == label_text(s["name"]), f"the baseline chart labels {s['name']!r} as {label!r}")
        b, now = moved(s["baseline"]), moved(s["current"])
        check(title.startswith(f"{s['name']}: {b} → {now} "), f"the baseline chart's tooltip {title!r}")


def check_changed_baseline(browser, args, report, run, problems, shots):
    """A page against a baseline where some scenarios' tokens differ."""
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        base = copy.deepcopy(run)
        ran = [s for s in base["scenarios"] if s["status"] != "skipped"]
        # The longest name (its label needs an ellipsis) and a few others.
        chosen = sorted(ran, key=lambda s: -len(s["name"]))[:1] + ran[:4]
        for k, s in enumerate(chosen):
            s["stats"]["result_tokens"] += 37 * (k + 1) if k % 2 == 0 else -min(s["stats"]["result_tokens"], 5 * k)
            s["stats"]["input_tokens"] += 11
        base_file = tmp / "baseline.json"
        base_file.write_text(json.dumps(base))
        page_file = tmp / "index.html"
        merge(args, [report / "run.json"], page_file, baseline=base_file, out_json=tmp / "run.json")
        page = open_page(browser, page_file.as_uri(), problems)
        merged = json.loads((tmp / "run.json").read_text())
        changed = changed_scenarios(merged)
        check(len(changed) == len(chosen), f"{len(changed)} scenarios changed against the altered baseline")
        check_baseline_chart(page, merged)
        longest = chosen[0]["name"]
        check(len(longest) > 30, "no name long enough for an ellipsis")
        page.locator("#chart-baseline").screenshot(path=str(shots / "baseline-chart.png"))
        page.close()


def check_scenario_page(page, scenarios, failing, shots):
    page.fill("#f-text", failing)
    page.click("#list .row[data-index]")
    page.wait_for_selector("#scenario-view pre.diff", state="visible")
    check(page.is_hidden("#overview-view"), "the overview stays shown on a scenario's page")
    deleted = page.eval_on_selector_all("#scenario-view pre.diff .del", "els => els.map(e => e.textContent)")
    inserted = page.eval_on_selector_all("#scenario-view pre.diff .ins", "els => els.map(e => e.textContent)")
    check(deleted == ["-three"] and inserted == ["+THREE"], f"the diff shows {deleted} and {inserted}")
    # Its bash output is markup; it must be shown as text, not run.
    check(page.evaluate("window.__pwned === undefined"), "a scenario's output ran as script")
    check(page.locator("#scenario-view img").count() == 0, "a scenario's output became an image")
    result = page.inner_text("#scenario-view .call .result")
    check('<img src=x onerror="window.__pwned=1">' in result, f"the output is not shown as text: {result!r}")
    page.screenshot(path=str(shots / "scenario.png"), full_page=True)
    page.click("#scenario-view a.back")
    page.wait_for_selector("#overview-view", state="visible")
    page.fill("#f-text", "")


def first_with(scenarios, predicate):
    return next((i for i, s in enumerate(scenarios) if predicate(s)), None)


def goto(page, index):
    page.evaluate(f"location.hash = '#s/{index}'")
    page.wait_for_selector("#scenario-view .turn")


def check_images(page, scenarios):
    with_images = first_with(
        scenarios, lambda s: any(b["type"] == "image" and "data" in b for c in calls_of(s) for b in c["content"])
    )
    check(with_images is not None, "the run has no image to check")
    goto(page, with_images)
    expected = sum(b["type"] == "image" and "data" in b for c in calls_of(scenarios[with_images]) for b in c["content"])
    page.wait_for_function(
        "n => Array.from(document.querySelectorAll('#scenario-view .call img'))"
        ".filter(i => i.complete && i.naturalWidth > 0).length === n",
        arg=expected,
    )


def check_retries(page, scenarios, shots):
    """Every retry's link is readable and leads to the call it answers."""
    # A chain of two retries if there is one (retry 2 answers retry 1).
    chained = first_with(scenarios, lambda s: any(c.get("answers") and c["answers"] != c["retry_of"] for c in calls_of(s)))
    index = chained if chained is not None else first_with(scenarios, lambda s: any(c.get("retry_of") for c in calls_of(s)))
    check(index is not None, "the run has no retry to check")
    goto(page, index)
    retries = [c for c in calls_of(scenarios[index]) if c.get("retry_of")]
    for c in retries:
        answered = c.get("answers") or c["retry_of"]
        link = page.locator(f"[id='call-{index}-{c['id']}'] .badge.note a")
        check(link.count() == 1, f"retry {c['id']} has no link")
        seen = link.evaluate(CONTRAST)
        check(
            seen["contrast"] >= 4.5 and seen["width"] > 0 and seen["height"] > 0,
            f"retry {c['id']}'s link is not readable: {seen}",
        )
        check(link.inner_text().startswith(f"answers {answered}"), f"retry {c['id']}'s link says {link.inner_text()!r}")
        link.click()
        target = page.locator(f"[id='call-{index}-{answered}']")
        check(target.count() == 1, f"the call {answered} retry {c['id']} answers is not on the page")
        check("flash" in (target.get_attribute("class") or ""), f"retry {c['id']}'s link did not lead to {answered}")
    if chained is not None:
        check(any(c["answers"] != c["retry_of"] for c in retries), "no retry answers another retry")
    page.locator(f"[id='call-{index}-{retries[0]['id']}'] .head").screenshot(path=str(shots / "retry.png"))


def check_updates(page, scenarios):
    index = first_with(scenarios, lambda s: any((c.get("updates") or {}).get("last") for c in calls_of(s)))
    check(index is not None, "the run has no call with streamed updates")
    goto(page, index)
    c = next(c for c in calls_of(scenarios[index]) if (c.get("updates") or {}).get("last"))
    fold = page.locator(f"[id='call-{index}-{c['id']}'] details.updates")
    fold.locator("summary").click()
    shown = fold.evaluate("d => Array.from(d.querySelectorAll('pre')).map(p => p.textContent.replace(/\\n/g, ''))")
    expected = [clip_shown(u) for u in (c["updates"]["first"], c["updates"]["last"]) if u["text"] or u.get("omitted_bytes")]
    check(shown == expected, f"the streamed updates shown {shown} are not run.json's {expected}")


def check_notices(page, scenarios):
    """A long result's closing notice is shown after its scrolling box."""
    found = None
    for i, s in enumerate(scenarios):
        for c in calls_of(s):
            blocks = [b for b in c["content"] if b["type"] == "text"]
            if blocks and closing_notices(blocks[-1]) and blocks[-1]["text"].count("\n") > 40:
                found = (i, c, closing_notices(blocks[-1]))
                break
        if found:
            break
    check(found is not None, "the run has no long result with a closing notice")
    index, c, notices = found
    goto(page, index)
    after = page.locator(f"[id='call-{index}-{c['id']}'] .result .notice.after")
    seen = after.evaluate_all("els => els.map(e => [e.textContent, e.closest('pre') === null, e.getBoundingClientRect().height > 0])")
    check(seen == [[n, True, True] for n in notices], f"the closing notice shows as {seen}, not {notices}")


def main_check(args, report):
    run = json.loads(report.joinpath("run.json").read_text())
    scenarios = run["scenarios"]
    names = [s["name"] for s in scenarios]
    check(args.failing in names, f"the failing scenario {args.failing!r} is not in run.json")
    shots = args.shots

    with sync_playwright() as p:
        browser = launch(p)
        problems = []
        page = open_page(browser, report.joinpath("index.html").as_uri(), problems)

        # The overview equals run.json.
        figures = page.eval_on_selector_all("[data-figure]", "els => els.map(e => [e.dataset.figure, e.textContent])")
        expected = {f"counts.{k}": v for k, v in run["counts"].items()}
        expected.update({f"totals.{k}": v for k, v in run["totals"].items() if k != "duration_ms"})
        if run["comparison"]:
            for side in ("baseline_totals", "current_totals"):
                expected.update({f"{side}.{k}": v for k, v in run["comparison"][side].items()})
        seen = {name: int(text) for name, text in figures if name in expected}
        check(seen == expected, f"overview figures {seen} != run.json {expected}")
        verdict = page.inner_text("#verdict")
        check(verdict == "failed", f"the verdict says {verdict!r} for a run with a failure")
        check(page.inner_text("header.top .run-verdict") == "run failed", "the header's verdict is not named the run's")
        page.screenshot(path=str(shots / "report.png"))

        check_distribution(page)
        check_scenario_chart(page, scenarios)
        check_baseline_chart(page, run)
        page.locator("#charts").screenshot(path=str(shots / "charts.png"))
        check_list(page, scenarios)
        check_filters(page, scenarios, args.failing)
        check_back(page, scenarios)
        page.locator("#scenarios").screenshot(path=str(shots / "list.png"))
        check_scenario_page(page, scenarios, args.failing, shots)
        check_images(page, scenarios)
        check_retries(page, scenarios, shots)
        check_updates(page, scenarios)
        check_notices(page, scenarios)
        check_changed_baseline(browser, args, report, run, problems, shots)

        browser.close()
    check(not problems, f"problems: {problems}")
    print(f"check_report: ok ({len(scenarios)} scenarios; screenshots in {shots})")


# ---- a run of variants ------------------------------------------------------

def variants_check(args, report):
    """A run of variants (`--variant default=… --variant tight=…`): a scenario whose
    results differ shows each variant's figures, the other variant's transcript and
    the diff of the results, as run.json has them."""
    run = json.loads(report.joinpath("run.json").read_text())
    variants = run.get("variants") or []
    check(len(variants) >= 2, f"run.json has {len(variants)} variants, not at least 2")
    first = {s["name"]: s for s in variants[0]["scenarios"]}
    other = {s["name"]: s for s in variants[1]["scenarios"]}
    names = [s["name"] for s in run["scenarios"]]
    moved = [n for n in names if n in other and first[n]["stats"]["result_tokens"] != other[n]["stats"]["result_tokens"]]
    check(moved, "no scenario's result tokens differ between the first two variants")
    index = names.index(moved[0])
    shots = args.shots
    with sync_playwright() as p:
        browser = launch(p)
        problems = []
        page = open_page(browser, report.joinpath("index.html").as_uri(), problems)
        goto(page, index)
        rows = page.eval_on_selector_all(
            "#scenario-view table.variants tbody tr",
            "rows => rows.map(r => [...r.children].map(c => c.textContent.trim()))",
        )
        expected = [
            [v["name"], by[moved[0]]["status"]] + [str(by[moved[0]]["stats"][f]) for f in ("result_tokens", "input_tokens", "errors", "retries", "calls")]
            for v, by in ((variants[0], first), (variants[1], other))
        ]
        check([r[:7] for r in rows[:2]] == expected, f"the variants table shows {rows}, not {expected}")
        fold = page.locator(f'#scenario-view details.variant[data-variant="{variants[1]["name"]}"]')
        check(fold.count() == 1, f"no fold for variant {variants[1]['name']!r}")
        fold.locator(":scope > summary").click()
        fold.locator("pre.variant-diff").wait_for(state="visible")
        deleted = fold.locator("pre.variant-diff .del").count()
        inserted = fold.locator("pre.variant-diff .ins").count()
        check(deleted > 0 and inserted > 0, f"the results diff has {deleted} lines out and {inserted} in")
        headings = fold.locator("h4").all_inner_texts()
        check(f"Transcript, variant {variants[1]['name']}" in headings, f"the fold's headings are {headings}")
        check(fold.locator(".turn").count() > 0, "the other variant's transcript has no turns")
        check(page.evaluate("window.__pwned === undefined"), "a variant's output ran as script")
        page.screenshot(path=str(shots / "variants.png"), full_page=True)
        browser.close()
    check(not problems, f"problems: {problems}")
    print(f"check_report: variants ok ({len(variants)} variants, {len(moved)} scenarios moved; screenshot in {shots})")


# ---- measuring --------------------------------------------------------------

def scaled_page(args, report, n, out_dir):
    """A page of n scenarios: report's run.json's scenarios repeated under new names, merged."""
    run = json.loads(report.joinpath("run.json").read_text())
    run["comparison"] = None
    scenarios = run["scenarios"]
    parts = []
    made = 0
    copy_no = 0
    while made < n:
        part = copy.deepcopy(run)
        take = scenarios[: n - made]
        part["scenarios"] = [dict(s, name=f"{s['name']} #{copy_no}") for s in take]
        path = out_dir / f"part{copy_no:05}.json"
        path.write_text(json.dumps(part))
        parts.append(path)
        made += len(take)
        copy_no += 1
    page = out_dir / "index.html"
    merge(args, parts, page)
    return page


def measure(args, report):
    with tempfile.TemporaryDirectory() as tmp:
        page_file = report.joinpath("index.html")
        if args.scale:
            page_file = scaled_page(args, report, args.scale, pathlib.Path(tmp))
        size = page_file.stat().st_size
        runs = []
        with sync_playwright() as p:
            browser = launch(p)
            for k in range(args.runs):
                problems = []
                page = open_page(browser, page_file.as_uri(), problems)
                timing = page.evaluate(
                    """() => {
                        const fcp = performance.getEntriesByName('first-contentful-paint')[0];
                        const ready = performance.getEntriesByName('harness-ready')[0];
                        return {
                            first_contentful_paint_ms: fcp ? Math.round(fcp.startTime) : null,
                            list_shown_ms: ready ? Math.round(ready.startTime) : null,
                            rows_rendered: document.querySelectorAll('#list .row[data-index]').length,
                            chart_bars_rendered: document.querySelectorAll('#c-rows g.bar-row').length,
                            scenarios: Number(document.getElementById('list-count').textContent.split(' of ')[1].split(' ')[0]),
                        };
                    }"""
                )
                if k == 0:
                    page.screenshot(path=str(args.shots / "report-measure.png"))
                page.close()
                check(not problems, f"problems: {problems}")
                runs.append(timing)
                print(json.dumps(timing))
            browser.close()
    summary = {"bytes": size, "scenarios": runs[0]["scenarios"], "runs": len(runs)}
    for key in ("first_contentful_paint_ms", "list_shown_ms"):
        values = [r[key] for r in runs]
        summary[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    summary["load_average"] = os.getloadavg()[0]
    print(json.dumps(summary))


def readme_shot(report, out):
    with sync_playwright() as p:
        browser = launch(p)
        problems = []
        page = open_page(browser, report.joinpath("index.html").as_uri(), problems, viewport={"width": 1280, "height": 860})
        page.screenshot(path=str(out))
        browser.close()
    check(not problems, f"problems: {problems}")
    print(f"check_report: {out} ({out.stat().st_size} bytes)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report", type=pathlib.Path)
    parser.add_argument("--failing", default="browser check - a file check fails with a diff")
    parser.add_argument("--shots", type=pathlib.Path, default=pathlib.Path("target/browser"))
    parser.add_argument("--harness", help="the harness binary, for the pages the check makes")
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--scale", type=int, help="with --measure: time a page of this many scenarios")
    parser.add_argument("--runs", type=int, default=3, help="with --measure: how many times to open it")
    parser.add_argument("--readme-shot", type=pathlib.Path)
    parser.add_argument("--variants", action="store_true", help="REPORT is a run of variants: check its pages")
    args = parser.parse_args()
    report = args.report.resolve()
    args.shots.mkdir(parents=True, exist_ok=True)
    if args.measure:
        measure(args, report)
    elif args.readme_shot:
        readme_shot(report, args.readme_shot)
    elif args.variants:
        variants_check(args, report)
    else:
        main_check(args, report)


if __name__ == "__main__":
    main()
