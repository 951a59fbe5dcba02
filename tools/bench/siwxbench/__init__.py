"""siwxbench: the modules of tools/bench/bench, the benchmark of siwx
against upstream siw, rxe and raw TCP in the QEMU guests.

  common   constants (stacks, operations, sizes, paths) and small helpers
  plan     the steps each stack runs, the option defaults
  run      overlay, boots and rounds in the guests (tests/vm/run)
  layout   where the boots' logs live (logs/boot*, logs/<stack>*)
  parse    the guests' logs and the programs' outputs into measurements
  stats    medians over boots, ratios, the issue's targets
  report   results.json, results.csv, summary.md
  plots    bandwidth.png, latency.png (matplotlib)
  rstream  the rsockets steps: rstream's commands and its output
"""
