"""The suites: one folder each, behind one :class:`Suite` seam, and their registry.

A suite folder holds its suite (``suite.py``: the :class:`Suite` object, binding the
light declarations to the heavy half), its heavy half (``evaluation.py``: training,
explaining, scoring; torch at its top), for the suites that share them with it the
light declarations both import (``spec.py``: name, cases, code keys; one direction:
evaluation imports spec, never suite), tier settings, report section and figures,
thresholds (``thresholds.toml``) and its
shipped tests (``test_chaosmining_<name>.py``: the prefix keeps their node ids
apart from a user's own test files); its data and models are its own
(``data.py``, ``models.py``) or a shared testbed's
(:mod:`pytest_chaosmining.testbeds`), named in one import.  What every suite is
built from (the seam, the verdict path, the own-merit checks, the
parametrisation) is :mod:`pytest_chaosmining.suite_kit`; this face hands its
public names on for a suite's author.  A shipped suite is one new folder plus
one line in :data:`BUILTIN_SUITES`; a package adds its own by entry point
(group :data:`ENTRY_POINT_GROUP`, ``name = "module:Class"``).  This module
stays light: the entry module imports it.
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
    TrainedModel,
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
    "TrainedModel",
    "all_suites",
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
    "thresholds_files",
]
