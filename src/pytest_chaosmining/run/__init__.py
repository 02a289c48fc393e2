"""The run's parts: the session and what it composes (roster, placement,
result reuse, model memo, case selection, progress, threads)."""
