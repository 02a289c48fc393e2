"""What is measured: attribution metrics, time and peak memory, and the catalog that
declares each metric once."""
