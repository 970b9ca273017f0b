#!/usr/bin/env python3
"""Opens harness's HTML report in headless Chromium and checks it.

    check_report.py REPORT_DIR [--failing NAME] [--shots DIR]
    check_report.py REPORT_DIR --measure [--shots DIR]

REPORT_DIR holds index.html and the run.json of the same run. The checks:
the overview's numbers equal run.json's; the list shows every scenario and
its filters (status, tag, tool, text) and sorting work; the failing
scenario NAME opens on its own page with its diff visible; markup from a
scenario's output stays text; nothing is fetched from the network; and the
console has no error or warning. Screenshots go to --shots (default
target/browser). With --measure, it only times the first screen (for the
10,000-scenario figures in docs/reports.md).

Chromium is the system's (CHROMIUM, else /usr/bin/chromium), driven by
Python Playwright; .ci/run installs both.
"""

import argparse
import json
import os
import pathlib
import sys

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


def open_page(browser, url, problems):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
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


def measure(report, shots):
    with sync_playwright() as p:
        browser = launch(p)
        problems = []
        page = open_page(browser, report.joinpath("index.html").as_uri(), problems)
        timing = page.evaluate(
            """() => {
                const nav = performance.getEntriesByType('navigation')[0];
                const fcp = performance.getEntriesByName('first-contentful-paint')[0];
                const ready = performance.getEntriesByName('harness-ready')[0];
                return {
                    list_rendered_ms: ready ? Math.round(ready.startTime) : null,
                    first_contentful_paint_ms: fcp ? Math.round(fcp.startTime) : null,
                    dom_content_loaded_ms: Math.round(nav.domContentLoadedEventEnd),
                    load_ms: Math.round(nav.loadEventEnd),
                    rows_rendered: document.querySelectorAll('#list .row[data-index]').length,
                };
            }"""
        )
        size = report.joinpath("index.html").stat().st_size
        timing["bytes"] = size
        print(json.dumps(timing))
        page.screenshot(path=str(shots / "report-measure.png"))
        browser.close()
        check(not problems, f"problems: {problems}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report", type=pathlib.Path)
    parser.add_argument("--failing", default="browser check - a file check fails with a diff")
    parser.add_argument("--shots", type=pathlib.Path, default=pathlib.Path("target/browser"))
    parser.add_argument("--measure", action="store_true")
    args = parser.parse_args()
    report = args.report.resolve()
    args.shots.mkdir(parents=True, exist_ok=True)
    if args.measure:
        measure(report, args.shots)
        return
    run = json.loads(report.joinpath("run.json").read_text())
    scenarios = run["scenarios"]
    names = [s["name"] for s in scenarios]
    check(args.failing in names, f"the failing scenario {args.failing!r} is not in run.json")

    with sync_playwright() as p:
        browser = launch(p)
        problems = []
        page = open_page(browser, report.joinpath("index.html").as_uri(), problems)

        # The overview equals run.json.
        figures = page.eval_on_selector_all(
            "[data-figure]", "els => els.map(e => [e.dataset.figure, e.textContent])"
        )
        expected = {f"counts.{k}": v for k, v in run["counts"].items()}
        expected.update({f"totals.{k}": v for k, v in run["totals"].items() if k != "duration_ms"})
        if run["comparison"]:
            for side in ("baseline_totals", "current_totals"):
                expected.update({f"{side}.{k}": v for k, v in run["comparison"][side].items()})
        seen = {name: int(text) for name, text in figures if name in expected}
        check(seen == expected, f"overview figures {seen} != run.json {expected}")
        verdict = page.inner_text("#verdict")
        check(verdict == "failed", f"the verdict says {verdict!r} for a run with a failure")
        page.screenshot(path=str(args.shots / "report.png"))

        # The list: every scenario, then each filter.
        check(shown_count(page) == len(scenarios), "the list does not count every scenario")
        page.select_option("#f-status", "failed")
        failed = [s for s in scenarios if s["status"] == "failed"]
        check(shown_count(page) == len(failed), "the status filter")
        rows = page.eval_on_selector_all("#list .row[data-index]", "els => els.map(e => e.dataset.status)")
        check(rows == ["failed"] * len(failed), f"rows after the status filter: {rows}")
        page.select_option("#f-status", "")
        tag = "edit"
        page.select_option("#f-tag", tag)
        check(
            shown_count(page) == sum(tag in s["tags"] for s in scenarios),
            "the tag filter",
        )
        page.select_option("#f-tag", "")
        tool = "grep"
        page.select_option("#f-tool", tool)
        check(
            shown_count(page) == sum(any(c["tool"] == tool for c in s["calls"]) for s in scenarios),
            "the tool filter",
        )
        page.select_option("#f-tool", "")
        page.fill("#f-text", args.failing)
        check(shown_count(page) == 1, "the text filter")
        page.fill("#f-text", "")
        page.select_option("#f-sort", "tokens")
        first = page.get_attribute("#list .row[data-index]", "data-index")
        most = max(range(len(scenarios)), key=lambda i: (scenarios[i]["stats"]["result_tokens"], -i))
        check(int(first) == most, f"sorting by tokens put scenario {first} first, not {most}")
        page.select_option("#f-sort", "index")

        # The failing scenario's page, its diff visible.
        page.fill("#f-text", args.failing)
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
        page.screenshot(path=str(args.shots / "scenario.png"), full_page=True)

        # Back to the overview.
        page.click("#scenario-view a.back")
        page.wait_for_selector("#overview-view", state="visible")

        # Images a result carried are shown (and decode).
        def first_with(predicate):
            return next((i for i, s in enumerate(scenarios) if predicate(s)), None)

        def calls_of(s):
            t = s.get("transcript") or {"turns": []}
            return [c for turn in t["turns"] for c in turn["calls"]]

        with_images = first_with(
            lambda s: any(b["type"] == "image" and "data" in b for c in calls_of(s) for b in c["content"])
        )
        if with_images is not None:
            page.evaluate(f"location.hash = '#s/{with_images}'")
            page.wait_for_selector("#scenario-view .turn")
            expected_images = sum(
                b["type"] == "image" and "data" in b for c in calls_of(scenarios[with_images]) for b in c["content"]
            )
            page.wait_for_function(
                "n => Array.from(document.querySelectorAll('#scenario-view .call img'))"
                ".filter(i => i.complete && i.naturalWidth > 0).length === n",
                arg=expected_images,
            )

        # A retry links to the call it answers.
        with_retry = first_with(lambda s: any(c.get("retry_of") for c in calls_of(s)))
        if with_retry is not None:
            retry = next(c for c in calls_of(scenarios[with_retry]) if c.get("retry_of"))
            page.evaluate(f"location.hash = '#s/{with_retry}'")
            page.wait_for_selector("#scenario-view .turn")
            page.click("#scenario-view .call .badge.note a")
            target = page.locator(f"[id='call-{with_retry}-{retry['retry_of']}']")
            check(target.count() == 1, "the call a retry answers is not on the page")
            check("flash" in (target.get_attribute("class") or ""), "the retry's link did not lead to its call")
        check(with_images is not None and with_retry is not None, "the run has no image or no retry to check")

        browser.close()
    check(not problems, f"problems: {problems}")
    print(f"check_report: ok ({len(scenarios)} scenarios; screenshots in {args.shots})")


if __name__ == "__main__":
    main()
