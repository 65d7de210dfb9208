#!/usr/bin/env python3
"""Generate a SYNTHETIC Kineto-format (PyTorch profiler) trace of a 2-stage pipeline.

THE OUTPUT IS NOT A REAL PROFILE. It is produced by a small analytical model so that
composim has a small, self-consistent example of pipeline parallelism, whose sends and
receives name their peers as PyTorch 2.4+ records them ("Dst Rank" / "Src Rank"). Every
file carries "synthetic": true and "generator" at the top level.

Job: an 8-layer fp32 MLP (hidden 1024) split 4 + 4 over 2 V100-PCIe GPUs (rank 0 runs
layers 0-3, rank 1 layers 4-7 and the loss), GPipe schedule with 4 micro-batches of 8192
rows per step: rank 0 sends each micro-batch's activations (8192 x 1024 fp32 = 32 MiB) to
rank 1, which sends the gradients back after its backward pass; then both run the
optimizer and synchronise. 3 steps.

Usage: make_synthetic_pipeline.py --out-dir DIR writes DIR/rank0.json and DIR/rank1.json
(compact JSON).

Timing model (integer nanoseconds, written as microseconds with three decimals):
  * CPU: one thread per rank; each CUDA call takes 5 us (event calls 2 us) and starts 8 us
    after the previous one, so the CPU runs ahead of the GPU until cudaDeviceSynchronize
    at the end of the step, which returns 5 us after its own GPU's last op.
  * GPU: compute on stream 7, sends and receives on stream 21 (PyTorch's stream of a
    peer pair). An op starts at max(its launch's end + 2 us, the end of the previous op on
    its stream, the op its stream waits for: cudaEventRecord after the producer, then
    cudaStreamWaitEvent before the consumer's launch). GEMMs run at 11.5 TFLOP/s + 6 us,
    element-wise kernels at 750 GB/s + 3 us.
  * A send and its receive (NCCL's rendezvous) both end at max(their starts) + 20 us +
    bytes / 10 GB/s, as a PCIe Gen3 switch between the two GPUs would give; the side that
    starts first shows the longer kernel (it waits).

Standard library only; deterministic.
"""

import argparse
import json
import os
import sys

GENERATOR = "traces/tools/make_synthetic_pipeline.py"
WORLD = 2
STEPS = 3
MICRO_BATCHES = 4
ROWS = 8192
HIDDEN = 1024
LAYERS_PER_STAGE = 4
BASE_TIME_NS = 1700000000000000000
COMPUTE_STREAM, P2P_STREAM = 7, 21
US = 1000

GEMM_FLOPS_PER_NS = 11.5e3
GEMM_OVERHEAD_NS = 6 * US
HBM_BYTES_PER_NS = 750.0
ELEM_OVERHEAD_NS = 3 * US
P2P_BYTES_PER_NS = 10.0  # 10 GB/s
P2P_LATENCY_NS = 20 * US
CALL_NS, EVENT_CALL_NS, CALL_GAP_NS, LAUNCH_LATENCY_NS = 5 * US, 2 * US, 8 * US, 2 * US
ACT_BYTES = ROWS * HIDDEN * 4

DEVICE_PROPS = {"name": "Tesla V100-PCIE-32GB", "totalGlobalMem": 34089730048, "computeMajor": 7,
                "computeMinor": 0, "numSms": 80}
GEMM = "volta_sgemm_128x64_nn"
ELEM = "void at::native::vectorized_elementwise_kernel<4, at::native::ReluFunctor>(int, float*)"
NCCL = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"  # NCCL 2.20, as PyTorch 2.4 ships


def gemm_ns(m, n, k):
    return int(2 * m * n * k / GEMM_FLOPS_PER_NS) + GEMM_OVERHEAD_NS


def elem_ns(nbytes):
    return int(nbytes / HBM_BYTES_PER_NS) + ELEM_OVERHEAD_NS


def ts(ns):
    """Kineto's microseconds with three decimals, relative to baseTimeNanoseconds."""
    return float("%.3f" % (ns / 1000.0))


class GpuOp:
    def __init__(self, rank, stream, name, launch_end, dur=0, p2p=None, waits=()):
        self.rank, self.stream, self.name = rank, stream, name
        self.launch_end, self.dur, self.p2p, self.waits = launch_end, dur, p2p, list(waits)
        self.start = self.end = None
        self.corr = None


class Rank:
    def __init__(self, r):
        self.r, self.pid, self.tid = r, 1000 + r, 1000 + r
        self.events, self.ops, self.corr = [], [], 10000 + 1000 * r
        self.t = 0  # the CPU thread's clock
        self.last_launched = None  # last op launched (the stream cudaEventRecord captures)
        self.recorded = None  # op the last cudaEventRecord captured
        self.pending_wait = None  # op the next launch's stream waits for

    def call(self, name, dur):
        self.t += CALL_GAP_NS
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": self.pid, "tid": self.tid,
                            "ts": ts(self.t), "dur": ts(dur), "args": {"correlation": self.corr}})
        self.t += dur
        return self.corr

    def launch(self, stream, name, dur=0, p2p=None):
        corr = self.call("cudaLaunchKernel", CALL_NS)
        op = GpuOp(self.r, stream, name, self.t, dur, p2p, [self.pending_wait] if self.pending_wait else [])
        op.corr = corr
        self.pending_wait = None
        self.ops.append(op)
        self.last_launched = op
        return op

    def handoff(self):
        """cudaEventRecord after the producer, cudaStreamWaitEvent before the consumer."""
        self.call("cudaEventRecord", EVENT_CALL_NS)
        self.recorded = self.last_launched
        self.call("cudaStreamWaitEvent", EVENT_CALL_NS)
        self.pending_wait = self.recorded

    def forward(self, last_stage):
        for _ in range(LAYERS_PER_STAGE):
            self.launch(COMPUTE_STREAM, GEMM, gemm_ns(ROWS, HIDDEN, HIDDEN))
            self.launch(COMPUTE_STREAM, ELEM, elem_ns(2 * ACT_BYTES))
        if last_stage:
            self.launch(COMPUTE_STREAM, ELEM, elem_ns(ACT_BYTES))  # loss

    def backward(self):
        for _ in range(LAYERS_PER_STAGE):
            self.launch(COMPUTE_STREAM, ELEM, elem_ns(2 * ACT_BYTES))
            self.launch(COMPUTE_STREAM, GEMM, gemm_ns(ROWS, HIDDEN, HIDDEN))  # input gradient
            self.launch(COMPUTE_STREAM, GEMM, gemm_ns(HIDDEN, HIDDEN, ROWS))  # weight gradient

    def p2p(self, send, peer, key):
        return self.launch(P2P_STREAM, NCCL, p2p=(key, send, peer))


def issue_step(ranks, step):
    """Both ranks' CPU calls of one GPipe step; returns the step annotations."""
    marks = []
    for rk in ranks:
        mark = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step, "pid": rk.pid,
                "tid": rk.tid, "ts": None, "args": {}}
        mark_start = rk.t
        first = rk.r == 0
        for m in range(MICRO_BATCHES):
            if first:
                rk.forward(False)
                rk.handoff()
                rk.p2p(True, 1, ("act", step, m))
            else:
                rk.p2p(False, 0, ("act", step, m))
                rk.handoff()
                rk.forward(True)
        for m in reversed(range(MICRO_BATCHES)):
            if first:
                rk.p2p(False, 1, ("grad", step, m))
                rk.handoff()
                rk.backward()
            else:
                rk.backward()
                rk.handoff()
                rk.p2p(True, 0, ("grad", step, m))
        for _ in range(LAYERS_PER_STAGE):  # optimizer
            rk.launch(COMPUTE_STREAM, ELEM, elem_ns(3 * HIDDEN * HIDDEN * 4))
        marks.append((rk, mark, mark_start))
    return marks


def resolve(ranks):
    """GPU start and end of every op not yet timed, both ranks jointly (a send and its
    receive end together, after both have started)."""
    prev_of = {}  # op -> the op before it on its stream
    for rk in ranks:
        last = {}
        for op in rk.ops:
            prev_of[id(op)] = last.get(op.stream)
            last[op.stream] = op
    pending = [op for rk in ranks for op in rk.ops if op.end is None]
    while pending:
        progress = False
        for op in pending:
            if op.start is None:
                prev = prev_of[id(op)]
                if (prev and prev.end is None) or any(w.end is None for w in op.waits):
                    continue
                op.start = max([op.launch_end + LAUNCH_LATENCY_NS, prev.end if prev else 0] + [w.end for w in op.waits])
                progress = True
            if op.p2p is None:
                op.end = op.start + op.dur
        started = {}
        for op in pending:
            if op.p2p and op.start is not None:
                started.setdefault(op.p2p[0], []).append(op)
        for pair in started.values():
            if len(pair) == 2:
                end = max(o.start for o in pair) + P2P_LATENCY_NS + int(ACT_BYTES / P2P_BYTES_PER_NS)
                for o in pair:
                    o.end = end
                progress = True
        pending = [o for o in pending if o.end is None]
        if not progress:
            sys.exit("internal error: the schedule deadlocks")


def build():
    ranks = [Rank(r) for r in range(WORLD)]
    for rk in ranks:
        rk.t = 2000 * US + 37 * US * rk.r
    for step in range(1, STEPS + 1):
        marks = issue_step(ranks, step)
        resolve(ranks)
        for rk, mark, mark_start in marks:
            gpu_end = max(op.end for op in rk.ops)  # its own device's work (no barrier)
            rk.call("cudaDeviceSynchronize", 0)
            end = max(rk.t, gpu_end) + 5 * US
            rk.events[-1]["dur"] = ts(end - rk.t)
            rk.t = end
            mark["ts"], mark["dur"] = ts(mark_start), ts(rk.t - mark_start)
            rk.events.append(mark)
            rk.t += 50 * US
    docs = []
    for rk in ranks:
        for op in rk.ops:
            args = {"device": rk.r, "context": 1, "stream": op.stream, "correlation": op.corr}
            if op.p2p:
                (kind, step, m), send, peer = op.p2p
                args.update({"Collective name": "send" if send else "recv", "In msg nelems": ROWS * HIDDEN,
                             "Out msg nelems": ROWS * HIDDEN, "Group size": WORLD, "dtype": "Float",
                             "Process Group Name": "0", "Process Group Description": "default_pg",
                             "Process Group Ranks": "[0, 1]", ("Dst Rank" if send else "Src Rank"): peer})
            rk.events.append({"ph": "X", "cat": "kernel", "name": op.name, "pid": rk.r, "tid": op.stream,
                              "ts": ts(op.start), "dur": ts(op.end - op.start), "args": args})
        evs = sorted(rk.events, key=lambda e: e["ts"])
        docs.append({
            "schemaVersion": 1,
            "traceName": "SYNTHETIC pipeline2 rank %d (generated, not a real profile)" % rk.r,
            "synthetic": True,
            "generator": GENERATOR,
            "syntheticNote": ("Synthetic trace produced by %s: 8-layer fp32 MLP split over 2 V100-PCIe GPUs, "
                              "GPipe with %d micro-batches, sends of 32 MiB at 10 GB/s + 20 us. Timings come from "
                              "an analytical model, not from hardware." % (GENERATOR, MICRO_BATCHES)),
            "deviceProperties": [dict({"id": i}, **DEVICE_PROPS) for i in range(WORLD)],
            "distributedInfo": {"backend": "nccl", "rank": rk.r, "world_size": WORLD, "pg_count": 1,
                                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                                               "pg_size": WORLD, "ranks": list(range(WORLD))}],
                                "nccl_version": "2.20.5"},
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": BASE_TIME_NS,
            "traceEvents": evs,
        })
    return docs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, help="directory for rank0.json and rank1.json")
    args = ap.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    for r, doc in enumerate(build()):
        with open(os.path.join(args.out_dir, "rank%d.json" % r), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
