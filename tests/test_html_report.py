"""report.html rendered in headless Chromium (Debian's ``chromium``): the tables,
the filters (preset through the URL) and the embedded figures are there."""

import re
import shutil
import subprocess

import pytest

from pytest_chaosmining.core.verdicts.records import Record
from pytest_chaosmining.reports.html import build_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (Debian: apt install chromium)")


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
    path.write_text(build_html(_records(), {"tier": "smoke", "seeds": {"symbolic": "0"}}, outcomes, failures, [figure]))
    return path


def _dom(url):
    out = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_page_is_self_contained_with_failures_first():
    control = Record("symbolic", "mlp", "random", 0, "fprec", 0.1, {"formula": 1}, 0.8, False, "t[random]")
    text = build_html(_records() + [control], {"tier": "smoke"}, {}, [], [])
    assert '<tr class="expected" data-explainer="random">' in text  # the control missing a bar is no failure
    assert "http" not in text.replace("http-equiv", "")  # nothing fetched from elsewhere
    rows = re.findall(
        r'<tr class="(\w+)" data-explainer="(\w+)"><td>\w+</td><td>mlp</td><td>formula=1</td>'
        r"<td class=num>0</td><td>(\w+)</td>",
        text,
    )
    assert rows[:2] == [("fail", "mine", "fprec"), ("pass", "SA", "fprec")]  # symbolic: the failure first
    assert ("reported", "mine", "untrained_fprec") in rows
    assert "<td class=num>0.5000</td><td class=num>0.8000</td><td class=num>-0.3000</td>" in text


@needs_chromium
def test_chromium_renders_the_tables_the_figures_and_the_filters(tmp_path):
    page = _page(tmp_path)
    dom = _dom(page.as_uri())
    assert dom.count('<section class="suite"') == 2 and 'id="failures"' in dom and 'id="outcomes"' in dom
    assert "5 rows shown" in dom  # the script ran
    assert re.search(r'<img alt="curves.png" src="data:image/png;base64,[^"]+" data-decoded="yes"', dom)
    filtered = _dom(page.as_uri() + "#suite=vision&explainer=mine")
    assert "1 rows shown" in filtered
    assert re.search(r'<section class="suite" data-suite="symbolic" style="display: none;"', filtered)
