#!/usr/bin/env bash
# Sweep tests: results do not depend on -j, re-running resumes (after a kill too), the composable invariants
# hold (more uplink bandwidth is never slower, a longer cable is never faster), and the
# plots render as images.
set -euo pipefail
src="$1"; bin="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$src"
"$bin" sweep tests/data/sweep-small.json --out "$tmp/a" -j 2 2>/dev/null
"$bin" sweep tests/data/sweep-small.json --out "$tmp/b" -j 1 2>/dev/null
cmp "$tmp/a/results.csv" "$tmp/b/results.csv" || { echo "FAILED: results differ between -j 2 and -j 1"; exit 1; }
out=$("$bin" sweep tests/data/sweep-small.json --out "$tmp/a" -j 2 2>/dev/null)
echo "$out" | grep -q "12 reused" || { echo "FAILED: re-run did not resume: $out"; exit 1; }
# A plain kill (SIGTERM) stops the sweep as Ctrl-C does: exit 130, no results.csv, and the
# same command resumes it.
"$bin" sweep tests/data/sweep-small.json --out "$tmp/k" -j 1 >/dev/null 2>&1 & pid=$!
for _ in $(seq 100); do [ -d "$tmp/k/points" ] && break; sleep 0.05; done
kill -TERM "$pid"; rc=0; wait "$pid" || rc=$?
[ "$rc" = 130 ] || { echo "FAILED: SIGTERM to a sweep: exit $rc, expected 130"; exit 1; }
[ ! -e "$tmp/k/results.csv" ] || { echo "FAILED: an interrupted sweep wrote results.csv"; exit 1; }
"$bin" sweep tests/data/sweep-small.json --out "$tmp/k" -j 2 >/dev/null 2>&1
cmp "$tmp/a/results.csv" "$tmp/k/results.csv" || { echo "FAILED: the resumed sweep differs"; exit 1; }
/usr/bin/python3 - "$tmp/a/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 12 and all(not r["error"] for r in rows), rows
t = {(r["ranks"], r["uplink_gen"], r["length_m"]): float(r["predicted_iteration_s"]) for r in rows}
bad = []
for (ranks, gen, length), v in t.items():
    for g2 in ("3", "4", "5"):
        if int(g2) > int(gen) and t[(ranks, g2, length)] > v * (1 + 1e-9):
            bad.append(f"Gen{g2} slower than Gen{gen} at {ranks} ranks, {length} m")
    if length == "1" and t[(ranks, gen, "100")] < v * (1 - 1e-9):
        bad.append(f"100 m faster than 1 m at {ranks} ranks, Gen{gen}")
assert not bad, bad
print("invariants hold on", len(rows), "points")
PY
"$bin" plot "$tmp/a" >/dev/null
for f in sweep_iteration.png sweep_breakdown.png sweep_iteration.pdf; do
  /usr/bin/python3 -c "import sys; d=open(sys.argv[1],'rb').read(); sys.exit(0 if (d[:8]==b'\x89PNG\r\n\x1a\n' or d[:4]==b'%PDF') and len(d)>5000 else 1)" "$tmp/a/$f" \
    || { echo "FAILED: $f is not a valid image"; exit 1; }
done
# A run directory: link utilisation over time and iterations.
"$bin" run --trace examples/traces/ddp2_rank0.json --trace examples/traces/ddp2_rank1.json --topology composable-falcon4016 --out "$tmp/run" >/dev/null
"$bin" plot "$tmp/run" >/dev/null
for f in links.png iterations.png links.pdf; do
  /usr/bin/python3 -c "import sys; d=open(sys.argv[1],'rb').read(); sys.exit(0 if (d[:8]==b'\x89PNG\r\n\x1a\n' or d[:4]==b'%PDF') and len(d)>5000 else 1)" "$tmp/run/$f" \
    || { echo "FAILED: $f is not a valid image"; exit 1; }
done
# A directory of per-rank traces is a sweep's trace, as it is `run --trace DIR`'s: each
# point's prediction is that of `run` on the point's topology.
cat > "$tmp/dir.json" <<EOF
{"name": "dir", "traces": ["examples/traces"],
 "generate": {"gpus": 8, "gpu_model": "V100-PCIe-32GB", "levels": 2, "fanout": 4, "placement": "chassis"},
 "axes": {"uplink_gen": [3, 4]}}
EOF
"$bin" sweep "$tmp/dir.json" --out "$tmp/d" -j 2 >/dev/null 2>&1 || { echo "FAILED: a sweep over a trace directory"; exit 1; }
for i in 0 1; do
  want=$("$bin" run --trace examples/traces --topology "$tmp/d/points/$i/topology.json" --out "$tmp/d$i" >/dev/null && /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['predicted_iteration_s'])" "$tmp/d$i/summary.json")
  got=$(/usr/bin/python3 -c "import csv,sys; print(list(csv.DictReader(open(sys.argv[1])))[$i]['predicted_iteration_s'])" "$tmp/d/results.csv")
  /usr/bin/python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b)<=1e-9*b else 1)" "$got" "$want" \
    || { echo "FAILED: sweep point $i over the trace directory gave $got, run gave $want"; exit 1; }
done
echo "sweep tests: 7 passed, 0 failed"
