#!/usr/bin/env bash
# composim sweep --slurm on a real one-node Slurm (started by scripts/slurm-localhost.sh):
# the job array's results, once collected, equal a local run's. Skipped (exit 77) without
# Slurm and munge installed or without root.
set -uo pipefail
src="$1"; bin="$2"
cd "$src"
out=$(bash scripts/slurm-localhost.sh start 2>&1); rc=$?
if [ $rc -eq 3 ]; then echo "skipped: $out"; exit 77; fi
[ $rc -eq 0 ] || { echo "FAILED: could not start Slurm: $out"; exit 1; }
set -e
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$bin" sweep tests/data/sweep-small.json --out "$tmp/slurm" --slurm --tasks 3
timeout 240 sbatch --wait "$tmp/slurm/sweep.slurm"
ls "$tmp"/slurm/slurm-*.out | wc -l | grep -qx 3 || { echo "FAILED: expected 3 array task logs"; exit 1; }
"$bin" sweep --collect "$tmp/slurm"
"$bin" sweep tests/data/sweep-small.json --out "$tmp/local" -j 2 2>/dev/null
cmp "$tmp/slurm/results.csv" "$tmp/local/results.csv" || { echo "FAILED: Slurm results differ from a local run"; exit 1; }
echo "slurm sweep: 1 passed, 0 failed"
