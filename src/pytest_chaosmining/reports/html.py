"""report.html: one self-contained page (no network, no external files) with the
run's metadata, the leaderboard (sortable), the failures, one table per suite (value, threshold, margin and
verdict per row, failures first), filters by suite and explainer, and every
figure embedded."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_chaosmining.core.records import MODEL_LEVEL, Record
from pytest_chaosmining.explainers import CONTROL_NAME
from pytest_chaosmining.reports.leaderboard import CONTROL_PASSED, EXPECTED_FAIL, FAIL, PASS
from pytest_chaosmining.reports.scorecard import HEADS, scorecards
from pytest_chaosmining.reports.tables import SKIP_LEGEND, baseline_change, meta_rows, outcome_columns, outcome_rows

if TYPE_CHECKING:
    from pytest_chaosmining.reports.leaderboard import Leaderboard
    from pytest_chaosmining.reports.run_results import RunResults

#: the size the default run's page keeps within (bytes; a project test checks the committed one):
#: the judged results and the figures, the rest of the records in results.csv
HTML_BUDGET = 2_500_000

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:left}
th{background:#f2f2f2;position:sticky;top:0}
tr.fail td{background:#fde2e1} tr.pass td.verdict{color:#17692b}
tr.reported td.verdict,tr.expected td.verdict{color:#777}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.filters{position:sticky;top:0;background:#fff;padding:.4rem 0;border-bottom:1px solid #ddd;z-index:2}
figure{display:inline-block;margin:.5rem 1rem .5rem 0} figure img{max-width:720px;border:1px solid #ddd}
#meta th{text-align:left;background:none;font-weight:600}
#leaderboard th{cursor:pointer} #leaderboard td.v-pass{background:#dff3e4} #leaderboard td.v-fail{background:#fde2e1}
#leaderboard td.v-control{background:#eee} #leaderboard td.v-open{color:#777} td small{color:#555}
"""

_SCRIPT = """
function applyFilters(){
  const suite=document.getElementById('suite').value, explainer=document.getElementById('explainer').value;
  document.querySelectorAll('section.suite').forEach(s=>{
    s.style.display=(suite===''||s.dataset.suite===suite)?'':'none';});
  document.querySelectorAll('tr[data-explainer]').forEach(r=>{
    const inSuite=(suite===''||!r.dataset.suite||r.dataset.suite===suite);
    r.style.display=(inSuite&&(explainer===''||r.dataset.explainer===explainer))?'':'none';});
  const shown=[...document.querySelectorAll('section.suite tr[data-explainer]')].filter(r=>r.style.display!=='none'
    && r.closest('section').style.display!=='none').length;
  document.getElementById('shown').textContent=shown+' rows shown';
  const sort=new URLSearchParams(location.hash.slice(1)).get('sort');
  history.replaceState(null,'','#suite='+encodeURIComponent(suite)+'&explainer='+encodeURIComponent(explainer)
    +(sort?'&sort='+encodeURIComponent(sort):''));
}
function sortBoard(col, down){
  const table=document.getElementById('leaderboard');
  if(!table||!table.tHead.rows[0].cells[col]) return;
  const body=table.tBodies[0], rows=[...body.rows];
  if(down===undefined) down=table.dataset.sorted!==String(col);
  rows.sort((a,b)=>{const x=a.cells[col].dataset.sort, y=b.cells[col].dataset.sort;
    const d=(isNaN(x)||isNaN(y))?String(x).localeCompare(String(y)):Number(x)-Number(y); return down?-d:d;});
  rows.forEach(r=>body.appendChild(r)); table.dataset.sorted=down?String(col):'';
}
document.addEventListener('DOMContentLoaded',()=>{
  const wanted=new URLSearchParams(location.hash.slice(1));
  for(const id of ['suite','explainer']){
    const v=wanted.get(id), el=document.getElementById(id);
    if(v!==null && [...el.options].some(o=>o.value===v)) el.value=v;}
  const sort=Number(wanted.get('sort'));
  if(wanted.get('sort')!==null && Number.isInteger(sort)) sortBoard(Math.abs(sort), sort>0);
  applyFilters();
});
window.addEventListener('load',()=>document.querySelectorAll('img').forEach(i=>{
  if(i.complete&&i.naturalWidth>0) i.dataset.decoded='yes';}));
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _verdict(record: Record) -> str:
    """pass, fail, reported (no bar), or expected (the random control missing a bar, as it must, or a
    built-in failing a check as its library's known defect makes it)."""
    if record.threshold is None:
        return "reported"
    if record.explainer == CONTROL_NAME or record.expected:  # the control, or a known library defect
        return "pass" if record.passed else "expected"
    return "pass" if record.passed else "fail"


def _condition(record: Record) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(record.case.items()))


def _rows(records: Iterable[Record]) -> list[str]:
    order = {"fail": 0, "pass": 1, "expected": 2, "reported": 3}
    ranked = sorted(records, key=lambda r: (order[_verdict(r)], r.explainer, r.model, _condition(r), r.metric, r.seed))
    rows = []
    for r in ranked:
        verdict = _verdict(r)
        threshold = "" if r.threshold is None else f"{r.threshold:.4f}"
        margin = "" if r.threshold is None else f"{r.value - r.threshold:+.4f}"
        rows.append(
            f'<tr class="{verdict}" data-explainer="{_e(r.explainer)}"><td>{_e(r.explainer)}</td><td>{_e(r.model)}</td>'
            f"<td>{_e(_condition(r))}</td><td class=num>{r.seed}</td><td>{_e(r.metric)}</td>"
            f"<td class=num>{r.value:.4f}</td><td class=num>{threshold}</td><td class=num>{margin}</td>"
            f'<td class="verdict">{verdict}</td><td><code>{_e(r.nodeid or "")}</code></td></tr>'
        )
    return rows


def _figure(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (
        f'<figure><img alt="{_e(path.name)}" src="data:image/png;base64,{data}">'
        f"<figcaption>{_e(path.name)}</figcaption></figure>"
    )


def _outcome_table(outcomes: dict[str, int]) -> str:
    """Outcomes per suite and explainer, rows with failures (or a passing control) first."""
    kinds = outcome_columns(outcomes)
    legend = re.sub(r"[*]([^*]+)[*]", r"<em>\1</em>", _e(SKIP_LEGEND))  # the Markdown legend's emphasis
    rows = "".join(
        f'<tr class="{"fail" if c["failed"] or c["xpassed"] else "pass"}" data-suite="{_e(s)}" '
        f'data-explainer="{_e(e)}"><td>{_e(s)}</td><td>{_e(e)}</td>'
        + "".join(f"<td class=num>{c[k]}</td>" for k in kinds)
        + "</tr>"
        for s, e, c in outcome_rows(outcomes)
    )
    return (
        "<h2>Conformance tests</h2><p>Skips are counted by why the test was not judged: "
        f"{legend}.</p><table id=outcomes><tr><th>suite</th><th>explainer</th>"
        + "".join(f"<th>{k}</th>" for k in kinds)
        + f"</tr>{rows}</table>"
    )


def _verdict_class(verdict: str) -> str:
    """The colour class of a leaderboard verdict."""
    return {PASS: "v-pass", FAIL: "v-fail", CONTROL_PASSED: "v-fail", EXPECTED_FAIL: "v-control"}.get(verdict, "v-open")


#: the leaderboard's colours, for a page without this report's stylesheet (pytest-html's)
LEADERBOARD_STYLE = (
    "<style>#leaderboard td.v-pass{background:#dff3e4} #leaderboard td.v-fail{background:#fde2e1}"
    " #leaderboard td.v-control{background:#eee} #leaderboard td.v-open{color:#777}</style>"
)


def leaderboard_table(board: Leaderboard | None, sortable: bool = True) -> str:
    """The leaderboard: a row per explainer, a cell per suite (score, range over seeds,
    verdict in words and colour); where ``sortable``, a click on a column head sorts by
    it (the page must carry this report's script)."""
    if board is None or not board.rows:
        return ""
    click = (lambda i: f' onclick="sortBoard({i})"') if sortable else (lambda i: "")
    heads = "".join(
        f"<th{click(i)}>{_e(f'{suite} {metric}'.strip())}</th>"
        for i, (suite, metric) in enumerate(board.columns, start=1)
    )
    body = []
    for explainer, cells in board.rows:
        tds = "".join(
            f'<td class="num {_verdict_class(c.verdict)}" data-sort="{-1 if c.score is None else c.score:.4f}">'
            f"{'—' if c.score is None else f'{c.score:.3f}'}"
            f"{'' if c.spread is None else f' <small>[{c.spread[0]:.2f}, {c.spread[1]:.2f}]</small>'}"
            f"<br><small>{_e(c.verdict)}</small></td>"
            for c in cells
        )
        body.append(
            f'<tr data-explainer="{_e(explainer)}"><td data-sort="{_e(explainer)}">'
            f"{_e(board.explainer_label(explainer))}</td>{tds}</tr>"
        )
    how = (
        "Click a column head to sort (or open the page with <code>#sort=N</code>, N the column from 1; "
        "<code>-N</code> ascending)."
        if sortable
        else "The full report (sortable) is report.html of <code>--chaosmining-report</code>."
    )
    return (
        "<h2>Leaderboard</h2><p>Per suite: the mean headline score over conditions and seeds (higher is "
        "better), its range over seeds where there are several, and the verdict of the explainer's tests "
        f"there. {how}</p>"
        f"<table id=leaderboard><thead><tr><th{click(0)}>explainer</th>{heads}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _scorecards(records: list[Record], baseline: object, failures: Sequence[Mapping[str, str]]) -> str:
    """A folded scorecard per explainer (reports.scorecard): per suite its checks, failures,
    smallest margin, time relative to SA's and change against the baseline; its summary
    counts the explainer's failed tests as the run's failures do."""
    cards = scorecards(records, baseline)
    if not cards:
        return ""
    head = "".join(f"<th>{_e(h)}</th>" for h in HEADS)
    parts = []
    for explainer, lines in cards.items():
        failed = sum(1 for f in failures if f["explainer"] == explainer)
        body = "".join(
            f'<tr class="{"fail" if line.failed else "pass"}">'
            + "".join(f"<td>{_e(c)}</td>" for c in line.cells())
            + "</tr>"
            for line in lines
        )
        checks = sum(line.failed for line in lines)
        summary = f"{explainer}: " + (
            f"{failed} failed test{'s' if failed > 1 else ''} ({checks} failed checks)" if failed else "no test failed"
        )
        parts.append(f"<details><summary>{_e(summary)}</summary><table><tr>{head}</tr>{body}</table></details>")
    return "<h2>Scorecards</h2>" + "".join(parts)


def _baseline_table(baseline: object) -> str:
    """Every judged result against the baseline (value, baseline, change); missing ones first."""
    if not isinstance(baseline, dict):
        return ""
    rows = []
    for suite, model, explainer, metric, condition, seed, value, old in baseline.get("rows", []):
        change = baseline_change(value, old)
        kind = "fail" if change == "missing" else "pass"
        rows.append(
            (
                change != "missing",
                f'<tr class="{kind}" data-suite="{_e(suite)}" data-explainer="{_e(explainer)}">'
                f"<td>{_e(suite)}</td>"
                f"<td>{_e(explainer)}</td><td>{_e(model)}</td><td>{_e(condition)}</td><td class=num>{seed}</td>"
                f"<td>{_e(metric)}</td><td class=num>{'' if value is None else f'{value:.4f}'}</td>"
                f"<td class=num>{'' if old is None else f'{old:.4f}'}</td><td class=num>{change}</td></tr>",
            )
        )
    body = "".join(row for _, row in sorted(rows, key=lambda r: r[0]))
    return (
        f"<h2>Against the baseline</h2><p>Baseline <code>{_e(baseline.get('source'))}</code>: compared "
        f"{_e(baseline.get('compared', 0))}, new {_e(baseline.get('new', 0))}, missing "
        f"{len(baseline.get('missing', []))} judged results.</p><table id=baseline><tr><th>suite</th>"
        "<th>explainer</th><th>model</th><th>condition</th><th>seed</th><th>metric</th><th>value</th>"
        f"<th>baseline</th><th>change</th></tr>{body}</table>"
    )


def build_html(run: RunResults, figures: list[Path], board: Leaderboard | None = None) -> str:
    """The whole page as a string (figures read from ``figures`` and embedded), the
    leaderboard ``board`` first."""
    records, meta, outcomes, failures = run.records, run.meta, run.outcomes, run.failures
    scored = [r for r in records if r.explainer != MODEL_LEVEL]
    suites = list(dict.fromkeys(r.suite for r in scored))
    explainers = sorted({r.explainer for r in scored})
    meta_table = "".join(f"<tr><th>{_e(label)}</th><td>{_e(text)}</td></tr>" for label, text in meta_rows(meta))
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        "<title>ChaosMining conformance report</title>",
        f"<style>{_STYLE}</style><script>{_SCRIPT}</script></head><body>",
        "<h1>ChaosMining conformance report</h1>",
        f'<p id=verdict class="{"fail" if run.counts.red else "pass"}"><b>{_e(run.counts.headline())}</b></p>',
        *(f"<p class=fail><b>ERROR:</b> {_e(error)}</p>" for error in run.counts.errors),
        f"<table id=meta>{meta_table}</table>",
        leaderboard_table(board),
        '<div class=filters>suite <select id=suite onchange="applyFilters()"><option value="">all</option>'
        + "".join(f'<option value="{_e(s)}">{_e(s)}</option>' for s in suites)
        + '</select> explainer <select id=explainer onchange="applyFilters()"><option value="">all</option>'
        + "".join(f'<option value="{_e(e)}">{_e(e)}</option>' for e in explainers)
        + "</select> <span id=shown></span></div>",
    ]
    if failures:
        parts.append(
            f"<h2>Failures ({len(failures)})</h2><table id=failures><tr><th>test</th><th>explainer</th>"
            "<th>why</th></tr>"
            + "".join(
                f"<tr class=fail><td><code>{_e(f['nodeid'])}</code></td><td>{_e(f['explainer'])}</td>"
                f"<td>{_e(f['message'])}</td></tr>"
                for f in failures
            )
            + "</table>"
        )
    parts.append(_scorecards(scored, meta.get("baseline"), failures))
    if outcomes:
        parts.append(_outcome_table(outcomes))
    header = (
        "<tr><th>explainer</th><th>model</th><th>condition</th><th>seed</th><th>metric</th><th>value</th>"
        "<th>threshold</th><th>margin</th><th>verdict</th><th>test</th></tr>"
    )
    for suite in suites:
        rows = _rows(r for r in scored if r.suite == suite and r.threshold is not None)
        recorded = sum(1 for r in scored if r.suite == suite and r.threshold is None)
        parts.append(
            f'<section class=suite data-suite="{_e(suite)}"><h2>{_e(suite)}</h2>'
            f"<p>The judged results ({len(rows)}); the {recorded} values recorded without a bar (cost, "
            'secondary scores) are in <a href="results.csv">results.csv</a>.</p>'
            f"<table class=results>{header}{''.join(rows)}</table></section>"
        )
    parts.append(_baseline_table(meta.get("baseline")))
    if figures:
        parts.append("<h2>Figures</h2><div id=figures>" + "".join(_figure(p) for p in figures) + "</div>")
    parts.append("</body></html>")
    return "\n".join(parts)
