"""The run's parts: the session and what it composes (settings, roster, placement,
result reuse, model memo, case selection, progress, threads)."""
