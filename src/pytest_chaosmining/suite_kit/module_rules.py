"""The checks on the module patterns where attribution libraries' bugs live
(:mod:`pytest_chaosmining.suite_kit.module_patterns`): every explainer runs on each pattern's
small untrained network with the probe's first images, and

- an explainer that declares completeness is judged on each network by its sums against
  f(x) − f(0) (``pattern_completeness``, one record per pattern, the bar calibrated over
  the networks' initialisations: ``benchmarks/real_bugs/calibrate_patterns.py``); a call
  that raises scores the floor, −1, its message naming the error;
- any other explainer must give a valid map on every network: one that raises or returns
  NaN there fails its test, naming the pattern, the reported bugs it reproduces and the
  library and release the explainer comes from.

They run beside the own-merit checks (:mod:`.merit`), on the suite's first planned case
(the networks do not depend on the case), for a suite that declares patterns (vision)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import torch

from pytest_chaosmining.core.metrics import properties as p
from pytest_chaosmining.explainers import ExplainerError, ExplainerNotApplicable, attribute
from pytest_chaosmining.explainers.provenance import library_of
from pytest_chaosmining.suite_kit.merit import EFFECT_SAMPLES, PROBE_SAMPLES, is_first_case
from pytest_chaosmining.suite_kit.module_patterns import (
    MEMBERS,
    PATTERNS,
    PATTERNS_VERSION,
    ModulePattern,
    pattern_network,
)
from pytest_chaosmining.suite_kit.seam import number

if TYPE_CHECKING:
    from pytest_chaosmining.explainers import Explainer
    from pytest_chaosmining.run_view import RunView
    from pytest_chaosmining.suite_kit.probe import Probe
    from pytest_chaosmining.suite_kit.seam import CaseT, ModelSuite, ModelT, Recorder
    from pytest_chaosmining.verdict.judge import Check

#: the metric of an explainer's completeness on one pattern's network
PATTERN_COMPLETENESS = "pattern_completeness"
#: the record field naming the pattern
PATTERN_FIELD = "pattern"
#: the seed of the networks' initialisation the suites run (calibration uses others)
RUN_SEED = 0
#: the floor a raising call scores (:func:`~pytest_chaosmining.core.metrics.properties.completeness_fit`'s)
RAISED = -1.0


def measured_patterns(explainer: Explainer, probe: Probe, seed: int = RUN_SEED) -> dict[str, dict[str, object]]:
    """Per pattern name: ``completeness`` of ``explainer``'s maps of the probe's first
    :data:`~.merit.PROBE_SAMPLES` images, each for the class whose logit moved most from the
    zero baseline, pooled over the pattern's :data:`~pytest_chaosmining.suite_kit.module_patterns.MEMBERS`
    networks (where it declares completeness),
    or ``raised``: what its call raised or returned wrong (NaN, a wrong shape), or
    ``not_applicable``: why it does not apply there."""
    inputs = probe.inputs[:PROBE_SAMPLES]
    found: dict[str, dict[str, object]] = {}
    for pattern in PATTERNS:
        sums, changes = [], []
        for member in range(MEMBERS):
            model = pattern_network(pattern, seed, member, inputs.device)
            with torch.no_grad():
                moved = model(inputs) - model(torch.zeros_like(inputs))
            target = moved.abs().argmax(dim=1)  # the class whose logit moved most from the baseline
            try:
                with probe.guard():
                    maps = attribute(explainer, model, inputs, target, probe.context)
            except ExplainerNotApplicable as exc:
                found[pattern.name] = {"not_applicable": str(exc)}
                break
            except ExplainerError as exc:
                found[pattern.name] = {"raised": str(exc).splitlines()[0]}
                break
            sums.append(maps.detach().flatten(1).sum(1).cpu().double().numpy())
            changes.append(moved.gather(1, target[:, None])[:, 0].cpu().double().numpy())
        if pattern.name not in found:
            fit = p.completeness_fit(np.concatenate(sums), np.concatenate(changes))
            found[pattern.name] = {"completeness": fit} if explainer.completeness else {}
    return found


def _pattern(name: str) -> ModulePattern:
    return next(pattern for pattern in PATTERNS if pattern.name == name)


def pattern_checks(
    run: RunView,
    suite: ModelSuite[CaseT, ModelT],
    case: CaseT,
    explainer_name: str,
    node: pytest.Item,
    record: Recorder,
    what: str,
) -> list[Check]:
    """On the suite's first planned case, an explainer declaring completeness: a check per pattern
    network with the suite's ``pattern_completeness`` bar; any other explainer fails the
    test here if its call raised or returned NaN on a network.  Elsewhere, and for the
    control, none."""
    explainer = run.explainers[explainer_name]
    if not suite.module_patterns or explainer.control or not is_first_case(run, suite, case):
        return []
    trained = suite.model(run, case)
    probe = suite.probe(trained, EFFECT_SAMPLES)
    key = {
        "check": "module_patterns",
        "version": PATTERNS_VERSION,
        "seed": RUN_SEED,
        "samples": PROBE_SAMPLES,
        "model": getattr(case, "training_config")(run.runtime.device.type),
    }
    found = run.results.evaluated(suite.name, key, explainer, lambda: measured_patterns(explainer, probe))
    library = library_of(explainer)
    broken = [
        f"{name} ({', '.join(_pattern(name).references)}): {values['raised']}"
        for name, values in found.items()
        if "raised" in values and not explainer.completeness
    ]
    if broken:
        pytest.fail(
            f"{what}: {explainer_name} ({library}) failed on the module-pattern networks where reported bugs live: "
            + "; ".join(broken),
            pytrace=False,
        )
    if not explainer.completeness:
        return []
    bars, tier = run.judge.thresholds, run.plan.tier
    checks: list[Check] = []
    for name, values in found.items():
        if "not_applicable" in values:
            continue
        made = record(PATTERN_COMPLETENESS, number(values, "completeness") if "completeness" in values else RAISED)
        made.case = {**made.case, PATTERN_FIELD: name}
        raised = f"; it raised: {values['raised']}" if "raised" in values else ""
        checks.append(
            (
                made,
                bars.optional_metric(suite.name, tier, PATTERN_COMPLETENESS, "default", explainer_name),
                f"{what}: completeness on the '{name}' network ({', '.join(_pattern(name).references)}; "
                f"{library}; untrained, seed {RUN_SEED}): 1 - mean |sum of attributions - (f(x) - f(0))| / mean "
                f"|f(x) - f(0)| over {PROBE_SAMPLES} images on each of {MEMBERS} networks{raised}",
            )
        )
    return checks
