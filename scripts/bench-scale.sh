#!/usr/bin/env bash
# Scale benchmark (issue: collectives at scale): wall time and peak memory of
#   1. all_reduce of 1 GiB on 1,024 GPUs (128 nodes x 8 H100, rail-optimised fat tree)
#   2. all_to_all of 1 GiB per GPU on 2,048 GPUs (256 nodes x 8)
#   3. replay of the A100 NCCL trace (hta/nccl_parser_config, 3 steps) replicated to 1,024 ranks
# Run from the repository root after building. Writes its topologies under out/bench/.
set -euo pipefail
B=${COMPOSIM:-build/sim/composim}
D=${SHARED_DATA:-../shared/data}
mkdir -p out/bench
/usr/bin/python3 topologies/tools/make_cluster.py --preset hgx-h100 --nodes 128 --out out/bench/cluster-128x8.json
/usr/bin/python3 topologies/tools/make_cluster.py --preset hgx-h100 --nodes 256 --out out/bench/cluster-256x8.json
run() { /usr/bin/time -f "  wall %e s, peak RSS %M KB" "$@" 2>&1 | grep -E "^ +[0-9]|wall|bench:|flows"; }
echo "1. all_reduce 1 GiB, 1024 GPUs"; run $B collective --op all_reduce --bytes 1G --topology out/bench/cluster-128x8.json
echo "2. all_to_all 1 GiB, 2048 GPUs"; run $B collective --op all_to_all --bytes 1G --topology out/bench/cluster-256x8.json
if [ -f "$D/traces/hta/nccl_parser_config/nccl_data.json.gz" ]; then
  echo "3. replay of the A100 NCCL trace on 1024 ranks"
  run $B bench --trace "$D/traces/hta/nccl_parser_config/nccl_data.json.gz" --topology out/bench/cluster-128x8.json --ranks 1024
else
  echo "3. skipped: $D/traces is absent"
fi
