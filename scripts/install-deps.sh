#!/usr/bin/env bash
# Installs every build, test and plot dependency of composim from Debian 12 packages.
# Used by the README's first command and by .ci/run, so CI and a fresh machine match.
set -euo pipefail
pkgs=(
  build-essential cmake pkg-config git
  libsimgrid-dev            # SimGrid 3.32: event engine and network model
  libboost-graph-dev        # Boost.Graph: topology graph and routing
  nlohmann-json3-dev        # JSON configs, IR and outputs
  libeigen3-dev             # least-squares calibration
  libgtest-dev libgmock-dev # tests
  libbenchmark-dev          # Google Benchmark
  zlib1g-dev                # .json.gz traces
  libcli11-dev              # command line
  python3-matplotlib        # plots (run with /usr/bin/python3)
)
# --with-slurm also installs Slurm and munge, to test `composim sweep --slurm` on a
# one-node cluster (CI does; users need it only to try that on this machine).
if [ "${1:-}" = "--with-slurm" ]; then pkgs+=(slurm-wlm munge); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
