#!/usr/bin/env python3
"""Generate a SYNTHETIC Kineto-format (PyTorch profiler) trace of a 2-rank DDP step.

THE OUTPUT IS NOT A REAL PROFILE. It is produced by a small analytical model
(a 12-layer MLP, fp32, batch 2048, data parallel over 2 V100-PCIe GPUs on one
PCIe Gen3 switch, NCCL ring all-reduce at ~10 GB/s bus bandwidth) so that
composim has a small, self-consistent, multi-rank example trace to replay.
Every file carries "synthetic": true and "generator" at the top level.

Output: DIR/ddp2_rank0.json and DIR/ddp2_rank1.json (compact JSON).

Timing model (integer nanoseconds internally, written as microseconds with
exactly three decimals, relative to baseTimeNanoseconds like Kineto does):
  * CPU: a main thread (forward, optimizer, loss.item()) and an autograd
    backward thread; a cudaLaunchKernel takes 4-6 us, launches are ~8-15 us
    apart, so the CPU runs ahead of the GPU except at cudaStreamSynchronize.
  * GPU: an op starts at max(launch end + ~2 us, end of the previous op on its
    stream, the time of any event its stream waits on). cudaEventRecord
    captures the current tail of the recording stream; cudaStreamWaitEvent
    makes the waiting stream's next op start no earlier than that.
  * All-reduce (stream 20): both ranks' kernels of one collective end at the
    same time, max(ready time over ranks) + 2*(n-1)/n * bytes / 10 GB/s + 20 us;
    the rank that is ready first shows the longer kernel (it waits).
  * Ranks are simulated jointly, one ProfilerStep at a time, with a
    fixed-point iteration over the collectives' end times.

Standard library only; deterministic for a given --seed.
"""

import argparse
import json
import os
import random
import sys

GENERATOR = "traces/tools/make_synthetic_ddp.py"
WORLD = 2
BASE_TIME_NS = 1700000000000000000

MAIN_STREAM = 7
NCCL_STREAM = 20

# Workload ---------------------------------------------------------------------------------
BATCH = 2048
DIMS = [1536, 768, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 512, 1000]
NLAYERS = len(DIMS) - 1  # 12 Linear layers; ReLU after all but the last
LAYERS_PER_BUCKET = 4
ITERATIONS = 4

# Device model -----------------------------------------------------------------------------
GEMM_FLOPS_PER_NS = 11.5e3  # ~11.5 TFLOP/s fp32 sustained (V100-PCIe peak 14)
GEMM_OVERHEAD_NS = 6000
HBM_BYTES_PER_NS = 750.0  # ~750 GB/s achieved
ELEM_OVERHEAD_NS = 3000
PCIE_H2D_BYTES_PER_NS = 11.8  # pinned HtoD over PCIe Gen3 x16
PCIE_D2H_BYTES_PER_NS = 12.5
MEMCPY_OVERHEAD_NS = 1500
BUSBW_BYTES_PER_NS = 10.0  # 10 GB/s NCCL bus bandwidth
NCCL_LATENCY_NS = 20000

DEVICE_PROPS = {
    "name": "Tesla V100-PCIE-32GB",
    "totalGlobalMem": 34089730048,
    "computeMajor": 7,
    "computeMinor": 0,
    "numSms": 80,
}

# Kernel names (as they appear in PyTorch 2.x traces on V100) --------------------------------
K_GEMM_FWD = "volta_sgemm_128x64_tn"
K_GEMM_DGRAD = "volta_sgemm_128x64_nn"
K_GEMM_WGRAD = "volta_sgemm_128x64_nt"
K_ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
         "at::detail::Array<char*, 3>)")
K_RELU = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
          "clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::"
          "operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, "
          "at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::"
          "clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)::{lambda()#1}::"
          "operator()() const::{lambda()#8}::operator()() const::{lambda(float)#1}, "
          "at::detail::Array<char*, 2>)")
K_THRESH_BWD = ("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
                "threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::"
                "{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, "
                "at::native::(anonymous namespace)::threshold_kernel_impl<float>("
                "at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}, "
                "at::detail::Array<char*, 3>)")
K_SUM = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
         "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::"
         "operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >("
         "at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
         "at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::"
         "{lambda(float, float)#1}>, unsigned int, float, 4>)")
K_FILL = ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
          "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
          "at::detail::Array<char*, 1>)")
K_LOGSOFTMAX_FWD = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, "
                    "float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>("
                    "float*, float const*, int)")
K_LOGSOFTMAX_BWD = ("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, "
                    "float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>("
                    "float*, float const*, float const*, long)")
K_NLL_FWD = ("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d"
             "<float, float, long>(float*, float*, float const*, long const*, float const*, "
             "bool, long, long, long, long)")
K_NLL_BWD = ("void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d"
             "<float, long>(float*, float const*, long const*, float const*, float const*, "
             "bool, int, int, long, long)")
K_SGD = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"
         "at::native::(anonymous namespace)::TensorListMetadata<3>, "
         "at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3>, double, double, "
         "double, bool, bool, bool, float const*, float const*>("
         "at::native::(anonymous namespace)::TensorListMetadata<3>, "
         "at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 3>, double, double, "
         "double, bool, bool, bool, float const*, float const*)")
K_ALLREDUCE = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"

CBID = {
    "cudaLaunchKernel": 211,
    "cudaMemcpyAsync": 41,
    "cudaEventRecord": 135,
    "cudaStreamWaitEvent": 147,
    "cudaStreamSynchronize": 131,
}

US = 1000  # ns per microsecond


def cdiv(a, b):
    return -(-a // b)


class Ts(int):
    """A time in integer nanoseconds, written to JSON as microseconds with 3 decimals."""


def to_json(obj):
    """Compact, deterministic JSON writer that prints Ts values as 'us.nnn'."""
    if isinstance(obj, Ts):
        v = int(obj)
        sign = "-" if v < 0 else ""
        v = abs(v)
        return "%s%d.%03d" % (sign, v // 1000, v % 1000)
    if isinstance(obj, dict):
        return "{" + ",".join(json.dumps(k) + ":" + to_json(v) for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return "[" + ",".join(to_json(v) for v in obj) + "]"
    if isinstance(obj, float):
        return json.dumps(round(obj, 3))
    return json.dumps(obj)


class Cmd:
    """One GPU-relevant command, in the CPU (enqueue) order of one rank."""

    __slots__ = ("kind", "stream", "ready", "dur", "coll", "eid", "gpu_ev", "flow_f",
                 "start", "end", "nbytes")

    def __init__(self, kind, stream, ready=0, dur=0, coll=None, eid=None, gpu_ev=None,
                 flow_f=None, nbytes=0):
        self.kind = kind  # "op" | "record" | "wait"
        self.stream = stream
        self.ready = ready  # launch end + launch latency (op)
        self.dur = dur  # op duration (ns); for collectives: the pure transfer time
        self.coll = coll  # collective index (op on NCCL stream) or None
        self.eid = eid  # event id (record/wait): correlation of the cudaEventRecord
        self.gpu_ev = gpu_ev
        self.flow_f = flow_f
        self.nbytes = nbytes
        self.start = None
        self.end = None


def layer_params(l):
    """Number of parameters (weight + bias) of layer l (1-based)."""
    return DIMS[l - 1] * DIMS[l] + DIMS[l]


def buckets():
    """DDP gradient buckets in all-reduce order: lists of layers, reverse order."""
    order = list(range(NLAYERS, 0, -1))
    return [order[i:i + LAYERS_PER_BUCKET] for i in range(0, NLAYERS, LAYERS_PER_BUCKET)]


def allreduce_transfer_ns(nbytes):
    n = WORLD
    return int(round(2.0 * (n - 1) / n * nbytes / BUSBW_BYTES_PER_NS)) + NCCL_LATENCY_NS


class Rank:
    def __init__(self, rank, rng, t0, sync_events):
        self.r = rank
        self.rng = rng
        self.pid = 1000 + rank
        self.main = 1000 + rank
        self.bwd = 2000 + rank
        self.t = {self.main: t0, self.bwd: t0}
        self.stack = {self.main: [], self.bwd: []}
        self.events = []
        self.corr = 10000
        self.ext = 1
        self.cuda_event_id = 1
        self.cmds = []
        self.tail = {MAIN_STREAM: 0, NCCL_STREAM: 0}
        self.sync_events = sync_events
        self.pending_sync = None

    # -- small helpers ----------------------------------------------------------------------
    def u(self, lo_us, hi_us):
        """Random duration in ns, uniform in [lo_us, hi_us] microseconds."""
        return int(round(self.rng.uniform(lo_us, hi_us) * US))

    def jitter(self, ns, rel=0.02):
        return int(round(ns * self.rng.uniform(1.0 - rel, 1.0 + rel)))

    def gap(self, tid, lo_us, hi_us):
        self.t[tid] += self.u(lo_us, hi_us)

    def next_corr(self):
        c = self.corr
        self.corr += 1
        return c

    # -- CPU-side events --------------------------------------------------------------------
    def open_op(self, tid, name, args=None, cat="cpu_op", pre=(2.0, 4.0)):
        e = self.ext
        self.ext += 1
        a = {"External id": e}
        if args:
            a.update(args)
        ev = {"ph": "X", "cat": cat, "name": name, "pid": self.pid, "tid": tid,
              "ts": Ts(self.t[tid]), "dur": Ts(0), "args": a}
        self.events.append(ev)
        self.stack[tid].append(e)
        if pre:
            self.gap(tid, *pre)
        return ev

    def close_op(self, tid, ev, post=(1.0, 2.0)):
        if post:
            self.gap(tid, *post)
        ev["dur"] = Ts(self.t[tid] - ev["ts"])
        self.stack[tid].pop()

    def annotation(self, tid, name):
        ev = {"ph": "X", "cat": "user_annotation", "name": name, "pid": self.pid, "tid": tid,
              "ts": Ts(self.t[tid]), "dur": Ts(0), "args": {}}
        self.events.append(ev)
        return ev

    def end_annotation(self, tid, ev):
        ev["dur"] = Ts(self.t[tid] - ev["ts"])

    def runtime(self, tid, name, dur_us=(4.0, 6.0)):
        c = self.next_corr()
        ts = self.t[tid]
        d = self.u(*dur_us)
        ext = self.stack[tid][-1] if self.stack[tid] else 0
        ev = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": self.pid, "tid": tid,
              "ts": Ts(ts), "dur": Ts(d), "args": {"cbid": CBID[name], "correlation": c,
                                                   "External id": ext}}
        self.events.append(ev)
        self.t[tid] = ts + d
        return c, ts, ext, ev

    def _flows(self, c, tid, launch_ts, stream):
        s = {"ph": "s", "id": c, "pid": self.pid, "tid": tid, "ts": Ts(launch_ts),
             "cat": "ac2g", "name": "ac2g"}
        f = {"ph": "f", "id": c, "pid": self.r, "tid": stream, "ts": Ts(0),
             "cat": "ac2g", "name": "ac2g", "bp": "e"}
        self.events.append(s)
        self.events.append(f)
        return f

    def launch(self, tid, name, dur_ns, grid, block, stream=MAIN_STREAM, extra=None,
               coll=None):
        c, ts, ext, _ = self.runtime(tid, "cudaLaunchKernel")
        # (Kineto also writes registers/shared memory/occupancy fields; they are left out
        # here to keep the files small.)
        args = {"device": self.r, "context": 1, "stream": stream, "correlation": c,
                "External id": ext, "grid": list(grid), "block": list(block)}
        if extra:
            args.update(extra)
        kev = {"ph": "X", "cat": "kernel", "name": name, "pid": self.r, "tid": stream,
               "ts": Ts(0), "dur": Ts(0), "args": args}
        self.events.append(kev)
        f = self._flows(c, tid, ts, stream)
        ready = self.t[tid] + self.u(1.5, 2.5)
        self.cmds.append(Cmd("op", stream, ready=ready, dur=dur_ns, coll=coll, gpu_ev=kev,
                             flow_f=f))
        return kev

    def memcpy(self, tid, kind, nbytes, stream=MAIN_STREAM):
        c, ts, ext, _ = self.runtime(tid, "cudaMemcpyAsync", dur_us=(6.0, 10.0))
        if kind == "HtoD":
            name = "Memcpy HtoD (Pinned -> Device)"
            dur = MEMCPY_OVERHEAD_NS + nbytes / PCIE_H2D_BYTES_PER_NS
        else:
            name = "Memcpy DtoH (Device -> Pinned)"
            dur = MEMCPY_OVERHEAD_NS + nbytes / PCIE_D2H_BYTES_PER_NS
        dur = self.jitter(int(round(dur)))
        mev = {"ph": "X", "cat": "gpu_memcpy", "name": name, "pid": self.r, "tid": stream,
               "ts": Ts(0), "dur": Ts(0),
               "args": {"device": self.r, "context": 1, "stream": stream, "correlation": c,
                        "External id": ext, "bytes": nbytes,
                        "memory bandwidth (GB/s)": 0.0}}
        self.events.append(mev)
        f = self._flows(c, tid, ts, stream)
        ready = self.t[tid] + self.u(1.5, 2.5)
        self.cmds.append(Cmd("op", stream, ready=ready, dur=dur, gpu_ev=mev, flow_f=f,
                             nbytes=nbytes))
        return mev

    def event_record(self, tid, stream):
        c, ts, ext, _ = self.runtime(tid, "cudaEventRecord", dur_us=(2.0, 3.5))
        self.cmds.append(Cmd("record", stream, eid=c))
        return c

    def stream_wait(self, tid, stream, rec_corr, rec_stream):
        c, ts, ext, rev = self.runtime(tid, "cudaStreamWaitEvent", dur_us=(2.0, 3.5))
        self.cmds.append(Cmd("wait", stream, eid=rec_corr))
        if self.sync_events:
            sev = {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": self.r,
                   "tid": stream, "ts": Ts(ts + self.u(0.5, 1.0)), "dur": Ts(0),
                   "args": {"cuda_sync_kind": "Stream Wait Event", "wait_on_stream": rec_stream,
                            "wait_on_cuda_event_record_corr_id": rec_corr,
                            "wait_on_cuda_event_id": self.cuda_event_id, "stream": stream,
                            "correlation": c, "device": self.r, "context": 1}}
            self.cuda_event_id += 1
            self.events.append(sev)
            f = self._flows(c, tid, ts, stream)
            f["ts"] = sev["ts"]
        return c

    def stream_sync_begin(self, tid, stream):
        """cudaStreamSynchronize; its duration is fixed after the GPU simulation."""
        c, ts, ext, rev = self.runtime(tid, "cudaStreamSynchronize", dur_us=(3.0, 3.0))
        sev = None
        f = None
        if self.sync_events:
            sev = {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": self.r,
                   "tid": stream, "ts": Ts(ts), "dur": Ts(0),
                   "args": {"cuda_sync_kind": "Stream Sync", "stream": stream, "correlation": c,
                            "device": self.r, "context": 1}}
            self.events.append(sev)
            f = self._flows(c, tid, ts, stream)
            f["ts"] = Ts(ts)
        self.pending_sync = (tid, stream, rev, sev)

    # -- GPU simulation ---------------------------------------------------------------------
    def simulate(self, coll_end):
        """Replay this step's commands on the GPU streams. Returns (tail, ready per collective).

        coll_end: collective index -> common end time (unknown ones: ready + transfer).
        """
        tail = dict(self.tail)
        evt = {}
        ready = {}
        for c in self.cmds:
            if c.kind == "op":
                st = max(c.ready, tail[c.stream])
                if c.coll is not None:
                    ready[c.coll] = st
                    en = max(coll_end.get(c.coll, 0), st + c.dur)
                else:
                    en = st + c.dur
                c.start, c.end = st, en
                tail[c.stream] = en
            elif c.kind == "record":
                evt[c.eid] = tail[c.stream]
            elif c.kind == "wait":
                tail[c.stream] = max(tail[c.stream], evt[c.eid])
        return tail, ready

    def commit_gpu(self, tail):
        for c in self.cmds:
            if c.kind != "op":
                continue
            c.gpu_ev["ts"] = Ts(c.start)
            c.gpu_ev["dur"] = Ts(c.end - c.start)
            c.flow_f["ts"] = Ts(c.start)
            if c.gpu_ev["cat"] == "gpu_memcpy":
                c.gpu_ev["args"]["memory bandwidth (GB/s)"] = round(
                    c.nbytes / max(1, c.end - c.start), 3)
        self.tail = tail
        self.cmds = []


# Workload on one rank -----------------------------------------------------------------------
def gemm_ns(rk, m, n, k):
    return rk.jitter(int(round(2.0 * m * n * k / GEMM_FLOPS_PER_NS)) + GEMM_OVERHEAD_NS)


def elem_ns(rk, nbytes):
    return rk.jitter(int(round(nbytes / HBM_BYTES_PER_NS)) + ELEM_OVERHEAD_NS, rel=0.04)


def gemm_grid(m, n):
    return [cdiv(n, 128), cdiv(m, 64), 1]


def elem_grid(nelem):
    return [min(cdiv(nelem, 512), 65535), 1, 1]


def launch_op(rk, tid, opname, kernels, args=None):
    """One cpu_op with one or more kernel launches inside (launches ~8-15 us apart)."""
    ev = rk.open_op(tid, opname, args)
    for i, (kname, dur, grid, block, kw) in enumerate(kernels):
        if i:
            rk.gap(tid, 3.0, 6.0)
        rk.launch(tid, kname, dur, grid, block, **kw)
    rk.close_op(tid, ev)
    rk.gap(tid, 1.0, 3.0)


def phase_a(rk, step):
    """Everything of one ProfilerStep up to (and including) the start of the final sync."""
    main, bwd = rk.main, rk.bwd
    B = BATCH
    rk.step_ev = rk.annotation(main, "ProfilerStep#%d" % step)
    rk.gap(main, 15.0, 40.0)  # data loader bookkeeping

    # Input batch + targets to the GPU (pinned, non_blocking).
    ev = rk.open_op(main, "aten::copy_")
    rk.memcpy(main, "HtoD", B * DIMS[0] * 4)
    rk.close_op(main, ev)
    rk.gap(main, 2.0, 5.0)
    ev = rk.open_op(main, "aten::copy_")
    rk.memcpy(main, "HtoD", B * 8)
    rk.close_op(main, ev)
    rk.gap(main, 5.0, 12.0)

    # Forward.
    fwd = rk.annotation(main, "## forward ##")
    for l in range(1, NLAYERS + 1):
        din, dout = DIMS[l - 1], DIMS[l]
        act = B * dout * 4
        launch_op(rk, main, "aten::mm", [
            (K_GEMM_FWD, gemm_ns(rk, B, dout, din), gemm_grid(B, dout), [256, 1, 1], {})],
            {"Input Dims": [[B, din], [din, dout]]})
        launch_op(rk, main, "aten::add_", [
            (K_ADD, elem_ns(rk, 2 * act + dout * 4), elem_grid(B * dout), [128, 1, 1], {})])
        if l < NLAYERS:
            launch_op(rk, main, "aten::relu", [
                (K_RELU, elem_ns(rk, 2 * act), elem_grid(B * dout), [128, 1, 1], {})])
    ncls = DIMS[-1]
    logits = B * ncls * 4
    launch_op(rk, main, "aten::_log_softmax", [
        (K_LOGSOFTMAX_FWD, elem_ns(rk, 2 * logits), [B, 1, 1], [256, 1, 1], {})])
    launch_op(rk, main, "aten::nll_loss_forward", [
        (K_NLL_FWD, rk.jitter(6000), [1, 1, 1], [32, 1, 1], {})])
    rk.end_annotation(main, fwd)
    # loss.backward(): seed gradient on the main thread, then the autograd thread takes over.
    launch_op(rk, main, "aten::fill_", [
        (K_FILL, rk.jitter(1500), [1, 1, 1], [128, 1, 1], {})])

    # Backward (autograd engine thread).
    rk.t[bwd] = max(rk.t[bwd], rk.t[main] + rk.u(25.0, 35.0))
    launch_op(rk, bwd, "aten::nll_loss_backward", [
        (K_FILL, elem_ns(rk, logits), elem_grid(B * ncls), [128, 1, 1], {}),
        (K_NLL_BWD, rk.jitter(5000), [1, 1, 1], [32, 1, 1], {})])
    launch_op(rk, bwd, "aten::_log_softmax_backward_data", [
        (K_LOGSOFTMAX_BWD, elem_ns(rk, 3 * logits), [B, 1, 1], [256, 1, 1], {})])
    bucket_of = {}
    bl = buckets()
    for k, layers in enumerate(bl):
        for l in layers:
            bucket_of[l] = k
    for l in range(NLAYERS, 0, -1):
        din, dout = DIMS[l - 1], DIMS[l]
        act = B * dout * 4
        if l < NLAYERS:
            launch_op(rk, bwd, "aten::threshold_backward", [
                (K_THRESH_BWD, elem_ns(rk, 3 * act), elem_grid(B * dout), [128, 1, 1], {})])
        launch_op(rk, bwd, "aten::sum", [
            (K_SUM, elem_ns(rk, act), [cdiv(dout, 32), 16, 1], [32, 16, 1], {})],
            {"Input Dims": [[B, dout]]})
        launch_op(rk, bwd, "aten::mm", [
            (K_GEMM_WGRAD, gemm_ns(rk, dout, din, B), gemm_grid(dout, din), [256, 1, 1], {})],
            {"Input Dims": [[dout, B], [B, din]]})
        if l > 1:
            launch_op(rk, bwd, "aten::mm", [
                (K_GEMM_DGRAD, gemm_ns(rk, B, din, dout), gemm_grid(B, din), [256, 1, 1], {})],
                {"Input Dims": [[B, dout], [dout, din]]})
        k = bucket_of[l]
        if l == bl[k][-1]:
            # Bucket k is complete: DDP's reducer launches its all-reduce on the NCCL stream.
            allreduce(rk, bwd, k, sum(layer_params(x) for x in bl[k]))

    # Back on the main thread: compute stream waits for the NCCL stream, then optimizer.
    rk.t[main] = max(rk.t[main], rk.t[bwd] + rk.u(10.0, 20.0))
    ev = rk.open_op(main, "ProcessGroupNCCL::WorkNCCL::synchronize")
    rec = rk.event_record(main, NCCL_STREAM)
    rk.gap(main, 1.0, 2.0)
    rk.stream_wait(main, MAIN_STREAM, rec, NCCL_STREAM)
    rk.close_op(main, ev)
    rk.gap(main, 5.0, 10.0)
    opt = rk.annotation(main, "Optimizer.step#SGD.step")
    rk.gap(main, 8.0, 15.0)
    for k, layers in enumerate(bl):
        n = sum(layer_params(x) for x in layers)
        launch_op(rk, main, "aten::_fused_sgd_", [
            (K_SGD, elem_ns(rk, 5 * 4 * n), [cdiv(n, 65536), 1, 1], [512, 1, 1], {})])
    rk.gap(main, 5.0, 10.0)
    rk.end_annotation(main, opt)
    rk.gap(main, 3.0, 6.0)
    # loss.item(): 4-byte DtoH then wait for the compute stream.
    rk.item_ev = rk.open_op(main, "aten::item")
    rk.lsd_ev = rk.open_op(main, "aten::_local_scalar_dense")
    rk.memcpy(main, "DtoH", 4)
    rk.gap(main, 1.0, 2.0)
    rk.stream_sync_begin(main, MAIN_STREAM)


def phase_b(rk, gpu_tail):
    """Finish the step once the GPU timeline is known; returns the next step's start."""
    tid, stream, rev, sev = rk.pending_sync
    ts = int(rev["ts"])
    end = max(ts + 3 * US, gpu_tail[stream] + rk.u(2.0, 4.0))
    rev["dur"] = Ts(end - ts)
    if sev is not None:
        sev["dur"] = Ts(end - ts)
    rk.t[tid] = end
    rk.pending_sync = None
    rk.close_op(tid, rk.lsd_ev)
    rk.close_op(tid, rk.item_ev)
    rk.gap(tid, 10.0, 25.0)
    rk.end_annotation(tid, rk.step_ev)
    rk.t[tid] += rk.u(0.5, 2.0)
    rk.t[rk.bwd] = max(rk.t[rk.bwd], rk.t[tid])
    return rk.t[tid]


def run_step(ranks, step):
    for rk in ranks:
        phase_a(rk, step)
    ncoll = len(buckets())
    transfer = {}
    for c in ranks[0].cmds:
        if c.coll is not None:
            transfer[c.coll] = c.dur
    for rk in ranks[1:]:
        got = {c.coll: c.dur for c in rk.cmds if c.coll is not None}
        assert got == transfer, "ranks disagree on collectives"
    assert len(transfer) == ncoll
    coll_end = {}
    for _ in range(4 * ncoll + 10):
        results = [rk.simulate(coll_end) for rk in ranks]
        new = {k: max(res[1][k] for res in results) + transfer[k] for k in transfer}
        if new == coll_end:
            break
        coll_end = new
    else:
        raise RuntimeError("collective timing did not converge")
    for rk, (tail, _ready) in zip(ranks, results):
        for c in rk.cmds:
            if c.coll is not None:
                assert c.end == coll_end[c.coll]
        rk.commit_gpu(tail)
    for rk in ranks:
        phase_b(rk, rk.tail)


def allreduce(rk, tid, k, nelems):
    nbytes = 4 * nelems
    comm = {"Collective name": "allreduce", "In msg nelems": nelems, "Out msg nelems": nelems,
            "Group size": WORLD, "dtype": "Float", "In split size": "[]",
            "Out split size": "[]", "Process Group Name": "0",
            "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]"}
    pargs = dict(comm)
    pargs["Rank"] = rk.r
    ev = rk.open_op(tid, "record_param_comms", pargs)
    rec = rk.event_record(tid, MAIN_STREAM)
    rk.gap(tid, 1.0, 2.0)
    rk.stream_wait(tid, NCCL_STREAM, rec, MAIN_STREAM)
    rk.gap(tid, 2.0, 4.0)
    inner = rk.open_op(tid, "nccl:all_reduce")
    rk.launch(tid, K_ALLREDUCE, allreduce_transfer_ns(nbytes), [2, 1, 1], [512, 1, 1],
              stream=NCCL_STREAM, extra=comm, coll=k)
    rk.close_op(tid, inner)
    rk.close_op(tid, ev, post=(3.0, 6.0))
    rk.gap(tid, 2.0, 5.0)


def metadata(rk, t0):
    ts = Ts(t0)
    ev = []

    def m(name, pid, tid, args):
        ev.append({"name": name, "ph": "M", "ts": ts, "pid": pid, "tid": tid, "args": args})

    m("process_name", rk.pid, 0, {"name": "python3"})
    m("process_labels", rk.pid, 0, {"labels": "CPU"})
    m("process_sort_index", rk.pid, 0, {"sort_index": rk.pid})
    m("thread_name", rk.pid, rk.main, {"name": "thread %d (python3)" % rk.main})
    m("thread_sort_index", rk.pid, rk.main, {"sort_index": rk.main})
    m("thread_name", rk.pid, rk.bwd, {"name": "thread %d (pt_autograd_%d)" % (rk.bwd, rk.r)})
    m("thread_sort_index", rk.pid, rk.bwd, {"sort_index": rk.bwd})
    m("process_name", rk.r, 0, {"name": "python3"})
    m("process_labels", rk.r, 0, {"labels": "GPU %d" % rk.r})
    m("process_sort_index", rk.r, 0, {"sort_index": 5000000 + rk.r})
    for s in (MAIN_STREAM, NCCL_STREAM):
        m("thread_name", rk.r, s, {"name": "stream %d" % s})
        m("thread_sort_index", rk.r, s, {"sort_index": s})
    return ev


def build(seed, sync_events=True):
    rng = random.Random(seed)
    rank_seeds = [rng.getrandbits(64) for _ in range(WORLD)]
    t0s = [2000 * US + int(rng.uniform(0.0, 60.0) * US) for _ in range(WORLD)]
    ranks = [Rank(r, random.Random(rank_seeds[r]), t0s[r], sync_events) for r in range(WORLD)]
    for step in range(1, ITERATIONS + 1):
        run_step(ranks, step)
    docs = []
    for rk in ranks:
        order = {"M": 0}
        evs = sorted(rk.events, key=lambda e: (int(e["ts"]), order.get(e["ph"], 1)))
        evs = metadata(rk, t0s[rk.r] - 1000) + evs
        doc = {
            "schemaVersion": 1,
            "traceName": "SYNTHETIC ddp2 rank %d (generated, not a real profile)" % rk.r,
            "synthetic": True,
            "generator": GENERATOR,
            "syntheticNote": ("Synthetic trace produced by %s --seed %d: 12-layer fp32 MLP, "
                              "batch %d, 2-rank DDP on V100-PCIe, NCCL ring all-reduce at "
                              "10 GB/s busbw. Timings come from an analytical model, not from "
                              "hardware." % (GENERATOR, seed, BATCH)),
            "deviceProperties": [dict({"id": i}, **DEVICE_PROPS) for i in range(WORLD)],
            "distributedInfo": {
                "backend": "nccl", "rank": rk.r, "world_size": WORLD, "pg_count": 1,
                "pg_config": [{"pg_name": "0", "pg_desc": "default_pg",
                               "backend_config": "cuda:nccl", "pg_size": WORLD,
                               "ranks": list(range(WORLD))}],
                "nccl_version": "2.17.1"},
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": BASE_TIME_NS,
            "traceEvents": evs,
        }
        docs.append(doc)
    return docs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out-dir", required=True, help="directory for ddp2_rank{0,1}.json")
    ap.add_argument("--seed", type=int, default=1, help="RNG seed (default 1)")
    ap.add_argument("--no-cuda-sync-events", action="store_true",
                    help="omit the optional 'cuda_sync' GPU events (Stream Wait Event / "
                         "Stream Sync) that Kineto emits with enable_cuda_sync_events")
    a = ap.parse_args(argv)
    docs = build(a.seed, sync_events=not a.no_cuda_sync_events)
    os.makedirs(a.out_dir, exist_ok=True)
    for r, doc in enumerate(docs):
        path = os.path.join(a.out_dir, "ddp2_rank%d.json" % r)
        with open(path, "w", encoding="ascii") as fh:
            fh.write(to_json(doc))
            fh.write("\n")
        print("wrote %s (%d events, %d bytes)" % (path, len(doc["traceEvents"]),
                                                   os.path.getsize(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
