"""The hostile-input suite's shared machinery (strategies, oracles, counters, atheris runner)."""
