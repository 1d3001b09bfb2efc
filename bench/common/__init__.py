"""What the benchmarks share: the environment record and availability checks,
timing, command-line helpers, JSON/README output, the embedded models with
random states and the per-row Python stage loop."""
