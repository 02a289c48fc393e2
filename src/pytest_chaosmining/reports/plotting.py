"""matplotlib on the headless Agg backend (loaded on first use through
:func:`~pytest_chaosmining.reports.figures.headless`): the backend is chosen before pyplot loads."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.patches import Patch  # noqa: E402

__all__ = ["Patch", "plt"]
