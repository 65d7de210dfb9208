// File: traces/kineto.hpp
//
// Importer of PyTorch-profiler / Kineto Chrome-trace JSON, plain or gzip-compressed, in the
// current schema (categories kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver,
// cuda_sync, ac2g flows, distributedInfo, deviceProperties) and the older one (Kernel,
// Runtime, Memcpy, Memset, Operator). See README.md "How a replay works" for the inference rules (event
// record/wait pairing, blocking calls) and ../shared/reference/kineto-notes.md.
//
// Several gzip members in one file (`cat a.gz b.gz`) are read as one text, as gunzip does.
//
// Errors: throws InputError naming the file and the place for unreadable or truncated
// gzip, bytes after the gzip data that are not another member, malformed JSON, a document
// that is not a Chrome trace, a trace with no GPU activity to replay (e.g. a counter-only
// CUPTI range-profiler trace), GPU activity on more than one device (one trace is one rank
// on one GPU), a GPU event without a stream, and overlapping or repeated ProfilerStep marks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "traces/workload.hpp"

namespace composim::trace {

// Reads a whole file, gunzipping it if it is gzip-compressed. Throws InputError.
std::string read_maybe_gzip(const std::string& path);

// Reads and parses a JSON trace file (plain or gzip), keeping only what the importer reads:
// events it does not read are left as empty objects (so that the others keep their index),
// and unread args are dropped. Objects keep their keys in file order. Throws InputError.
nlohmann::ordered_json parse_trace_file(const std::string& path);

// Imports a Kineto trace file into a Workload; `path` names the file in errors.
Workload import_kineto(const std::string& path);
Workload kineto_from_json(const nlohmann::ordered_json& doc, const std::string& path);

// Imports any supported trace file: a composim IR JSON file or a Kineto trace.
Workload load_workload(const std::string& path);

}  // namespace composim::trace
