"""How results are judged and kept: records, thresholds and baselines."""
