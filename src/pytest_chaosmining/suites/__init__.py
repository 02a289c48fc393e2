"""The suites: one folder each, behind one seam, and their registry.

A suite folder holds its spec (``spec.py``: the :class:`SuiteSpec` with its name,
cases, tiers' use, metrics, checks, code keys; nothing heavy: the registry, the tools
and the report writers read it), its heavy half (``evaluation.py`` or a testbed's:
training, explaining, scoring; torch at its top; it imports the spec, never the suite),
its suite (``suite.py``: the :class:`Suite`, a subclass of the spec binding it to the
heavy half; a run loads it through the spec's ``binding``), tier settings, report
section and figures (``report.py``), thresholds (``thresholds.toml``) and its shipped
tests (``test_chaosmining_<name>.py``: the prefix keeps their node ids apart from a
user's own test files); its data and models are its own (``data.py``, ``models.py``) or
a shared testbed's (:mod:`pytest_chaosmining.testbeds`: declared in ``testbed.py``,
bound in ``bound.py``), named in one import.  What every suite is built from (the
seam, the verdict path, the own-merit checks, the parametrisation) is
:mod:`pytest_chaosmining.suite_kit`; this face hands its public names on for a suite's
author.  A shipped suite is one new folder plus one line in :data:`BUILTIN_SUITES`; a
package adds its own by entry point (group :data:`ENTRY_POINT_GROUP`,
``name = "module:Spec"``; a spec without a ``binding`` is its own suite).  This
module stays light: the entry module imports it.
"""

from pytest_chaosmining.suite_kit.defaults import SuiteDefaults
from pytest_chaosmining.suite_kit.parametrize import (
    group_name,
    in_shard,
    parametrize_cases,
    planned,
    sharded,
)
from pytest_chaosmining.suite_kit.seam import (
    Calibration,
    Case,
    CaseFields,
    CheckedSuite,
    DomainPick,
    ModelSuite,
    ScoreCheck,
    Scored,
    Suite,
    SuiteSpec,
    TrainedModel,
)
from pytest_chaosmining.suites.registry import (
    BUILTIN_SUITES,
    ENTRY_POINT_GROUP,
    SUITES_DIR,
    all_specs,
    all_suites,
    folder_of_suite,
    get_model_suite,
    get_spec,
    get_suite,
    metric_catalog,
    registered_suites,
    shapes_of,
    shipped_thresholds,
    suite_folder,
    suite_of,
    suite_roots,
    suite_test_file,
    thresholds_files,
)

__all__ = [
    "BUILTIN_SUITES",
    "ENTRY_POINT_GROUP",
    "SUITES_DIR",
    "Calibration",
    "Case",
    "CaseFields",
    "DomainPick",
    "ModelSuite",
    "CheckedSuite",
    "ScoreCheck",
    "Scored",
    "Suite",
    "SuiteDefaults",
    "SuiteSpec",
    "TrainedModel",
    "all_specs",
    "all_suites",
    "folder_of_suite",
    "get_model_suite",
    "get_spec",
    "get_suite",
    "group_name",
    "in_shard",
    "metric_catalog",
    "parametrize_cases",
    "planned",
    "registered_suites",
    "shapes_of",
    "sharded",
    "shipped_thresholds",
    "suite_folder",
    "suite_of",
    "suite_roots",
    "suite_test_file",
    "thresholds_files",
]
