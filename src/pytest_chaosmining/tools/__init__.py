"""The project's commands (console scripts in pyproject.toml), above the suites:
``chaosmining-calibrate`` (bars from calibration runs), ``chaosmining-rebuild``
(one report from several results files), ``chaosmining-annotate`` (GitHub
annotations and step summary of a run's failures) and ``chaosmining-pack``
(the shipped model pack from a model cache).  The plugin never imports them."""
