"""report.html rendered in headless Chromium (Debian's ``chromium``): the tables,
the filters (preset through the URL) and the embedded figures are there."""

import os
import re
import shutil
import subprocess

import pytest

from pytest_chaosmining.core.records import Record
from pytest_chaosmining.reports.html import build_html
from pytest_chaosmining.reports.run_results import RunResults

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium() -> str:
    """The browser, or outside CI a skip; in CI (``CI`` set, as .ci/run and GitHub set
    it) a missing browser fails: the report is tested in a real browser there."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing in CI: .ci/run installs Debian's chromium (apt install chromium)")
        pytest.skip("Chromium is not installed (Debian: apt install chromium)")
    return CHROMIUM


def _records():
    def rec(suite, explainer, value, threshold, metric="fprec"):
        return Record(
            suite,
            "mlp",
            explainer,
            0,
            metric,
            value,
            {"formula": 1},
            threshold,
            None if threshold is None else value >= threshold,
            f"{suite}/test_{suite}.py::t[{explainer}]",
        )

    return [
        rec("symbolic", "SA", 0.9, 0.8),
        rec("symbolic", "mine", 0.5, 0.8),
        rec("symbolic", "mine", 0.3, None, "untrained_fprec"),
        rec("vision", "SA", 0.7, 0.56, "iou"),
        rec("vision", "mine", 0.2, 0.56, "iou"),
    ]


def _page(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = tmp_path / "curves.png"
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [1, 0])
    fig.savefig(figure)
    plt.close(fig)
    failures = [
        {
            "nodeid": "symbolic/test_chaosmining_symbolic.py::t[mine]",
            "suite": "symbolic",
            "explainer": "mine",
            "message": "mine: fprec 0.5000 < threshold 0.8000",
        }
    ]
    outcomes = {"symbolic|SA|passed": 1, "symbolic|mine|failed": 1, "vision|SA|passed": 1, "vision|mine|failed": 1}
    path = tmp_path / "report.html"
    from pytest_chaosmining.reports.leaderboard import build_leaderboard
    from pytest_chaosmining.suites import all_suites

    board = build_leaderboard(_records(), outcomes, all_suites())
    meta = {"tier": "smoke", "seeds": {"symbolic": "0"}}
    path.write_text(build_html(RunResults(_records(), meta, outcomes, failures), [figure], board))
    return path


def _dom(browser, url):
    """The page's DOM after its scripts ran; fails on any message the page wrote to the console."""
    out = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    console = [line for line in out.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console  # no script error, no console output
    return out.stdout


def test_the_page_is_self_contained_with_failures_first():
    control = Record("symbolic", "mlp", "random", 0, "fprec", 0.1, {"formula": 1}, 0.8, False, "t[random]")
    text = build_html(RunResults(_records() + [control], {"tier": "smoke"}), [])
    assert '<tr class="expected" data-explainer="random">' in text  # the control missing a bar is no failure
    assert "http" not in text.replace("http-equiv", "")  # nothing fetched from elsewhere
    rows = re.findall(
        r'<tr class="(\w+)" data-explainer="(\w+)"><td>\w+</td><td>mlp</td><td>formula=1</td>'
        r"<td class=num>0</td><td>(\w+)</td>",
        text,
    )
    assert rows[:2] == [("fail", "mine", "fprec"), ("pass", "SA", "fprec")]  # symbolic: the failure first
    assert all(metric != "untrained_fprec" for _, _, metric in rows)  # recorded without a bar: results.csv
    assert '1 values recorded without a bar (cost, secondary scores) are in <a href="results.csv">' in text
    assert "<td class=num>0.5000</td><td class=num>0.8000</td><td class=num>-0.3000</td>" in text
    assert "{" not in text.split("<table id=meta>")[1].split("</table>")[0]  # metadata in words, not JSON


def test_the_leaderboard_comes_first_with_scores_and_verdicts_in_words():
    from pytest_chaosmining.reports.leaderboard import build_leaderboard
    from pytest_chaosmining.suites import all_suites

    outcomes = {"symbolic|SA|passed": 1, "symbolic|mine|failed": 1, "vision|SA|passed": 1, "vision|mine|failed": 1}
    board = build_leaderboard(_records(), outcomes, all_suites())
    text = build_html(RunResults(_records(), {"tier": "smoke"}, outcomes), [], board)
    assert text.index("id=leaderboard") < text.index("id=outcomes") < text.index("class=suite")
    row = re.search(r'<tr data-explainer="mine">(.*?)</tr>', text).group(1)
    assert re.findall(r'class="num (v-\w+)" data-sort="([\d.]+)">', row) == [("v-fail", "0.5000"), ("v-fail", "0.2000")]
    assert "<small>fail</small>" in row and "SA (paper)" in text


def test_chromium_renders_the_tables_the_figures_and_the_filters(tmp_path):
    browser = chromium()
    page = _page(tmp_path)
    dom = _dom(browser, page.as_uri())
    assert dom.count('<section class="suite"') == 2 and 'id="failures"' in dom and 'id="outcomes"' in dom
    assert "4 rows shown" in dom  # the script ran (the judged rows)
    assert re.search(r'<img alt="curves.png" src="data:image/png;base64,[^"]+" data-decoded="yes"', dom)
    board = re.search(r'<table id="leaderboard".*?</table>', dom, re.S).group(0)
    assert board.index('data-explainer="SA"') < board.index('data-explainer="mine"')
    ranked = _dom(browser, page.as_uri() + "#sort=1")  # sorted by the symbolic column, ascending after descending
    board = re.search(r'<table id="leaderboard".*?</table>', ranked, re.S).group(0)
    assert board.index('data-explainer="SA"') < board.index('data-explainer="mine"')
    ascending = _dom(browser, page.as_uri() + "#sort=-1")
    board = re.search(r'<table id="leaderboard".*?</table>', ascending, re.S).group(0)
    assert board.index('data-explainer="mine"') < board.index('data-explainer="SA"')
    filtered = _dom(browser, page.as_uri() + "#suite=vision&explainer=mine")
    assert "1 rows shown" in filtered
    assert re.search(r'<section class="suite" data-suite="symbolic" style="display: none;"', filtered)


def test_the_committed_smoke_report_keeps_its_size_budget_and_reads_as_words():
    """The committed default-run report: report.html within its budget, opening on the
    leaderboard; no nan and no raw JSON in report.md or the page's text."""
    from pathlib import Path

    from pytest_chaosmining.reports.html import HTML_BUDGET

    folder = Path(__file__).resolve().parents[1] / "reports" / "smoke"
    page = (folder / "report.html").read_text()
    assert len(page.encode()) <= HTML_BUDGET
    assert page.index("<h2>Leaderboard</h2>") < page.index("<h2>Scorecards</h2>") < page.index("id=outcomes")
    text = re.sub(r"<script>.*?</script>|<style>.*?</style>|<[^>]+>", " ", page, flags=re.S)
    markdown = (folder / "report.md").read_text()
    for shown in (text, markdown):
        assert not re.search(r"\bnan\b", shown) and '{"' not in shown and "{'" not in shown
    assert markdown.index("## Leaderboard") < markdown.index("## Scorecards") < markdown.index("## Conformance tests")
