#!/usr/bin/env bash
# The GPU part of the capture issue, as one short script for a machine with an NVIDIA GPU
# (run from the repository root): build with CUPTI, run the demo without and with the
# tracer (overhead), replay the capture on a one-GPU host topology, and keep the results
# under $OUT (or out/gpu-check).
set -euo pipefail
OUT=${OUT:-out/gpu-check}
mkdir -p "$OUT"
bash scripts/install-deps.sh >/dev/null
cmake --preset default -DCOMPOSIM_WITH_CUPTI=ON >/dev/null
cmake --build --preset default --target composim composim_cupti capture_demo 2>&1 | tail -2
nvidia-smi --query-gpu=name,pcie.link.gen.max,pcie.link.width.max --format=csv | tee "$OUT/gpu.csv"
DEMO=build/traces/capture/capture_demo
$DEMO 30 | tee "$OUT/demo_plain.txt"
build/sim/composim capture --out "$OUT/trace" -- $DEMO 30 | tee "$OUT/demo_captured.txt"
ls -l "$OUT/trace"
TRACE=$(ls "$OUT"/trace/*.pt.trace.json.gz | head -1)
build/sim/composim import "$TRACE" | tee "$OUT/import.txt"
build/sim/composim run --trace "$TRACE" --topology examples/topologies/h200-host.json --out "$OUT/replay" | tee "$OUT/replay.txt"
