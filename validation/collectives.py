#!/usr/bin/env python3
"""Scores composim's collective model against measured nccl-tests sweeps.

For every source in ../shared/data/measured (nccl_tests.csv and vtrain_v100_allreduce/)
that a shipped topology can express, runs `composim collective` on the same GPUs and
sizes and compares: bus bandwidth for messages of 1 MiB and up (target: within 10% on
single-node sources, 20% on the 2 x 8 H100 one), time for smaller messages (target: 25%).

  validation/collectives.py [--composim build/sim/composim] [--data ../shared/data]
                            [--out DIR] [--check] [--all-sizes]

--out writes collectives.csv (one row per size) and collectives.png (measured vs
predicted busbw by size, one panel per source). The accuracy targets are reported for every
source. --check asserts the whole target on every source marked "target" (today, all of
them) and exits 1 when one misses it. --all-sizes scores every row of
vTrain's sweeps (1 MiB steps, 1,024 sizes per GPU count) instead of the powers of two: most
of those sizes were not used to fit anything (a few minutes).
"""
import argparse
import concurrent.futures
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# source id -> how to run it on composim, and whether CI asserts the target.
SOURCES = [
    # (source id, label, topology, composim args, guard: "target" or "" for none)
    ("llm_insights_dgxa100_4gpu_nvswitch", "DGX A100, 4 GPUs, NVSwitch", "dgx-a100", ["--placement", "gpu4,gpu5,gpu6,gpu7"], "target"),
    ("llm_insights_dgxa100_4gpu_p2pdisabled", "DGX A100, 4 GPUs, P2P disabled", "dgx-a100",
     ["--placement", "gpu4,gpu5,gpu6,gpu7", "--p2p", "off"], "target"),
    # GCP's TCPXO set-up as apple/axlearn copies it (axlearn/cloud/gcp/nccl/a3_mega): the guest
    # config enforces NCCL_PROTO=Simple (until LL128 became the default in May 2025) and
    # NCCL_BUFFSIZE=8388608, and the tuner plugin's rules run all-reduce on 2 nodes x 8 GPUs as
    # Tree/Simple at every size. The file prints no NCCL version or date, and its curve has no
    # LL regime (a flat 123 us up to 4 KiB, where LL would take about 28 us). One parameter is
    # fitted to its 8 B-4 KiB rows: the latency TCPXO's plugin adds to each network step (the
    # topology's nccl_net_latency_s). README.md says more. Guard: the aim (20% at 1 MiB and
    # up, 25% in time below), met since the trees' channels hop at NCCL's per-channel rate.
    ("gcp_a3mega_2x8_h100", "2 x 8 H100 (A3 Mega, TCPX)", os.path.join(HERE, "topologies", "gcp-a3mega-2x8-h100.json"),
     ["--algo", "tree", "--proto", "Simple", "--nccl-buffsize", "8M"], "target"),
] + [(f"vtrain_v100_{n}gpu", f"V100 DGX-1, {n} GPUs (vTrain)", "dgx1-v100", ["--gpus", str(n)],
      "target") for n in range(2, 9)]

MIB = 1 << 20


def measured_rows(data, all_sizes=False):
    """{source id: [(bytes, time_us, busbw_GBps)]} from nccl_tests.csv and the vTrain LUTs."""
    rows = {}
    with open(os.path.join(data, "measured", "nccl_tests.csv")) as f:
        for r in csv.DictReader(f):
            if r["collective"] != "all_reduce" or not r["time_us"]:
                continue
            rows.setdefault(r["source_id"], []).append((int(r["bytes"]), float(r["time_us"]), float(r["busbw_GBps"])))
    for n in range(2, 9):
        path = os.path.join(data, "measured", "vtrain_v100_allreduce", f"AR_GPU{n}_1M_1024M_LUT")
        with open(path) as f:
            next(f)
            for line in f:
                b, _, _, t_ns, busbw = line.strip().split(",")[:5]
                b = int(b)
                if all_sizes or b & (b - 1) == 0:  # powers of two: 1 MiB ... 1 GiB
                    rows.setdefault(f"vtrain_v100_{n}gpu", []).append((b, float(t_ns) / 1000, float(busbw)))
    return rows


def predict(composim, topology, args, sizes):
    """{bytes: (time_us, busbw_GBps, algorithm, protocol)}: one composim run per size, in parallel."""
    def one(b):
        with tempfile.TemporaryDirectory() as d:
            cmd = [composim, "collective", "--op", "all_reduce", "--bytes", f"{b}:{b}", "--topology", topology, "--out", d] + args
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(d, "collective.csv")) as f:
                r = next(csv.DictReader(f))
                return b, (float(r["time_us"]), float(r["busbw_GBps"]), r["algorithm"], r["protocol"])
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return dict(pool.map(one, sorted(set(sizes))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--composim", default=os.path.join(ROOT, "build", "sim", "composim"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--out")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--all-sizes", action="store_true")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.data, "measured")):
        print(f"skipped: {a.data}/measured is absent (measurements are read from there, never copied)")
        return 0
    measured = measured_rows(a.data, a.all_sizes)
    table, failures = [], []
    print(f"{'source':36} {'n':>3} {'>=1MiB: busbw err':>20} {'<1MiB: time err':>18}  target  vs target      guard")
    for sid, label, topo, args, guarded in SOURCES:
        rows = measured.get(sid.replace("vtrain_v100_", "vtrain_v100_"), [])
        if not rows:
            continue
        pred = predict(a.composim, topo, args, [b for b, _, _ in rows])
        multi = "2x8" in sid or "a3mega" in sid
        big_target, small_target = (0.20 if multi else 0.10), 0.25
        big_err, small_err = [], []
        for b, t_us, busbw in sorted(rows):
            pt, pbus, algo, proto = pred[b]
            if b >= MIB:
                err = (pbus - busbw) / busbw
                big_err.append(err)
            else:
                err = (pt - t_us) / t_us
                small_err.append(err)
            table.append(dict(source=sid, label=label, bytes=b, measured_time_us=t_us, predicted_time_us=pt, measured_busbw_GBps=busbw,
                              predicted_busbw_GBps=pbus, error_pct=100 * err, metric="busbw" if b >= MIB else "time", algorithm=algo,
                              protocol=proto))
        worst_big = max((abs(e) for e in big_err), default=0)
        worst_small = max((abs(e) for e in small_err), default=0)
        ok = worst_big <= big_target and worst_small <= small_target
        guard_ok = ok or guarded != "target"
        guard = ("ok" if guard_ok else "FAILED") + " (target)" if guarded else "-"
        fmt = lambda errs: f"max {100 * max(abs(e) for e in errs):5.1f}% mean {100 * sum(abs(e) for e in errs) / len(errs):5.1f}%" if errs else "-"
        print(f"{label:36} {len(rows):3} {fmt(big_err):>20} {fmt(small_err):>18}  {int(big_target * 100):3}/{int(small_target * 100)}%  "
              f"{'met' if ok else 'missed':12}   {guard}")
        if guarded and not guard_ok:
            failures.append(label)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "collectives.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
            w.writeheader()
            w.writerows(table)
        try:
            plot(table, os.path.join(a.out, "collectives.png"))
        except ImportError:
            print("note: matplotlib not available to this python; run with /usr/bin/python3 for the plot")
    if a.check and failures:
        print("FAILED: " + ", ".join(failures) + " miss the regression guard")
        return 1
    return 0


def plot(table, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = []
    for r in table:
        if r["label"] not in labels:
            labels.append(r["label"])
    cols = 3
    rows = (len(labels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    for ax, label in zip(axes.flat, labels):
        pts = sorted((r["bytes"], r["measured_busbw_GBps"], r["predicted_busbw_GBps"]) for r in table if r["label"] == label)
        dense = len(pts) > 40
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "-" if dense else "o-", label="measured")
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "--" if dense else "s--", label="composim")
        ax.set_xscale("log", base=2)
        ax.set_ylim(bottom=0)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("all-reduce bus bandwidth (GB/s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(labels):]:
        ax.axis("off")
    fig.suptitle("all-reduce bus bandwidth: nccl-tests measurements vs composim", fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
