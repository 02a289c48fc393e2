"""The verdict, in one place: what judges a record and a run.

- :mod:`.judge`: the :class:`~.judge.Judge`, the one entry a test's checks go through:
  it records, holds each value to its bar (:mod:`.thresholds`) and to the baseline's
  value (:mod:`.baseline`: drops, paired drops, costs), and gives the test one verdict;
- :mod:`.drift`: the checks of an explainer's maps against the baseline's, which a
  suite's judged test hands the judge beside its scores;
- :mod:`.baseline_check`: the run against its baseline at the session's end (the
  compared, new and missing judged results), within :mod:`.baseline_scope`;
- :mod:`.skips`: the kinds of a test that was not judged.
"""
