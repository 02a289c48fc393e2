"""The suites: one folder each, behind one :class:`Suite` seam, and their registry.

A suite folder holds its data, models, tier settings, cases, evaluation, report
section and figures, thresholds (``thresholds.toml``) and its shipped tests
(``test_chaosmining_<name>.py``: the prefix keeps their node ids apart from a
user's own test files).  A shipped suite is one new folder plus one line in
:data:`BUILTIN_SUITES`; a package adds its own by entry point (group
:data:`ENTRY_POINT_GROUP`, ``name = "module:Class"``).  This module stays light:
the entry module imports it.
"""

from pytest_chaosmining.suites.defaults import SuiteDefaults
from pytest_chaosmining.suites.parametrize import (
    case_groups,
    group_name,
    in_shard,
    parametrize_cases,
    planned,
    sharded,
)
from pytest_chaosmining.suites.registry import (
    BUILTIN_SUITES,
    ENTRY_POINT_GROUP,
    SUITES_DIR,
    all_suites,
    folder_of_suite,
    get_model_suite,
    get_suite,
    metric_catalog,
    registered_suites,
    shapes_of,
    shipped_thresholds,
    suite_folder,
    suite_of,
    suite_roots,
    suite_test_file,
)
from pytest_chaosmining.suites.seam import (
    Calibration,
    Case,
    CaseFields,
    CheckedSuite,
    DomainPick,
    ModelSuite,
    ScoreCheck,
    Scored,
    Suite,
    TrainedModel,
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
    "TrainedModel",
    "all_suites",
    "case_groups",
    "folder_of_suite",
    "get_model_suite",
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
]
