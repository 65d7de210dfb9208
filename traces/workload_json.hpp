// File: traces/workload_json.hpp
//
// JSON form of the workload IR (traces/workload.hpp), for inspection and editing:
//
//   {"composim_workload": 1, "source": ..., "rank": 0, "world_size": 2, "gpu_model": ...,
//    "threads": [{"id": "pid/tid", "ops": [{"name": "cudaLaunchKernel", "ts_ns": 10,
//                 "dur_ns": 5, "launches": 3, "blocking": false, "waits_on": []}, ...]}],
//    "streams": [{"id": 7, "device": 0, "ops": [0, 3, ...]}],
//    "gpu_ops": [{"kind": "kernel", "name": ..., "stream": 0, "ts_ns": .., "dur_ns": ..,
//                 "bytes": 0, "copy": "none", "waits_on": [..], "collective": -1}],
//    "communicators": [{"name": "0", "ranks": [0, 1]}],
//    "collectives": [{"kind": "all_reduce", "in_bytes": 26550272, "dtype": "Float",
//                     "communicator": 0, "seq": 0, "protocol": "LL", ...},
//                    {"kind": "send_recv", ..., "p2p": "send", "peer": 1},  // peer: a global rank
//                    {"kind": "send_recv", "in_bytes": 8192, ...,             // a batched send/recv:
//                     "batch": [{"p2p": "send", "peer": 2, "in_bytes": 4096},  // its parts, whose sizes
//                               {"p2p": "recv", "peer": 0, "in_bytes": 4096}]}], // add up to in_bytes
//    "iterations": [{"name": "ProfilerStep#4", "ts_ns": .., "dur_ns": .., "thread": 1}]}
//
// "source" is the trace the IR was imported from (kept as Workload::origin); errors name the
// IR file itself.
//
// Errors: workload_from_json() throws InputError naming the file and the JSON path of a
// missing or ill-typed field, an index out of range, or what Workload::check() refuses
// (overlapping or repeated steps, a repeated collective sequence number, a peer that is not
// another rank of the job and of the communicator, a batch's parts that do not add up to its
// in_bytes).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "traces/workload.hpp"

namespace composim::trace {

std::string workload_to_json(const Workload& w);
// From a parsed IR document; `path` names the file in errors.
Workload workload_from_json(const nlohmann::json& doc, const std::string& path);

}  // namespace composim::trace
