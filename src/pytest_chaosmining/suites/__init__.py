"""The suites: one folder each, behind one :class:`Suite` seam, and their registry.

A suite folder holds its data, models, tier settings, cases, evaluation, report
section and figures, thresholds (``thresholds.toml``) and its shipped tests
(``test_chaosmining_<name>.py``: the prefix keeps their node ids apart from a
user's own test files).  Adding a suite is one new folder plus one line in
:data:`REGISTRY`.  This module stays light: the entry module imports it.
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
    REGISTRY,
    SUITES_DIR,
    all_suites,
    folder_of_suite,
    get_model_suite,
    get_suite,
    metric_catalog,
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
    DomainPick,
    ModelSuite,
    Suite,
    TrainedModel,
)

__all__ = [
    "REGISTRY",
    "SUITES_DIR",
    "Calibration",
    "Case",
    "CaseFields",
    "DomainPick",
    "ModelSuite",
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
    "shapes_of",
    "sharded",
    "shipped_thresholds",
    "suite_folder",
    "suite_of",
    "suite_roots",
    "suite_test_file",
]
