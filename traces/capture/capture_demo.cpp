// A small CUDA program of ours to capture with `composim capture` on a GPU machine: each
// iteration (an NVTX range "step N") copies a batch host-to-device on a copy stream,
// makes the compute stream wait for it with an event, runs a loop of cuBLAS SGEMMs, copies
// a result back, and synchronizes. Prints the mean wall time per iteration, so capture
// overhead can be measured by running it with and without the tracer.
//
//   capture_demo [iterations=20] [n=4096] [gemms_per_step=8]
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                                               \
  do {                                                                                         \
    auto rc = (x);                                                                             \
    if (rc != 0) {                                                                             \
      std::fprintf(stderr, "capture_demo: %s failed (%d) at line %d\n", #x, (int)rc, __LINE__); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  const int n = argc > 2 ? std::atoi(argv[2]) : 4096;
  const int gemms = argc > 3 ? std::atoi(argv[3]) : 8;
  const size_t bytes = static_cast<size_t>(n) * n * sizeof(float);
  float *a, *b, *c, *host_pinned;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMallocHost(&host_pinned, bytes));
  std::vector<float> host_pageable(1024, 0.0f);
  for (size_t i = 0; i < static_cast<size_t>(n) * n; ++i) host_pinned[i] = 1.0f / static_cast<float>(1 + i % 97);
  CHECK(cudaMemset(b, 0, bytes));
  cudaStream_t compute, copy;
  CHECK(cudaStreamCreate(&compute));
  CHECK(cudaStreamCreate(&copy));
  cudaEvent_t ready;
  CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  CHECK(cublasSetStream(handle, compute));
  const float one = 1.0f, zero = 0.0f;

  double total_ms = 0;
  for (int it = 0; it < iterations; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string name = "step " + std::to_string(it);
    nvtxRangePushA(name.c_str());
    CHECK(cudaMemcpyAsync(a, host_pinned, bytes, cudaMemcpyHostToDevice, copy));
    CHECK(cudaEventRecord(ready, copy));
    CHECK(cudaStreamWaitEvent(compute, ready, 0));
    for (int g = 0; g < gemms; ++g)
      CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, g % 2 ? c : b, n, &zero, g % 2 ? b : c, n));
    CHECK(cudaMemcpyAsync(host_pageable.data(), c, host_pageable.size() * sizeof(float), cudaMemcpyDeviceToHost, compute));
    CHECK(cudaStreamSynchronize(compute));
    nvtxRangePop();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (it > 0) total_ms += ms;  // the first iteration warms up cuBLAS
  }
  std::printf("capture_demo: %d iterations of %d SGEMM(%d) + %zu-byte HtoD, mean step %.3f ms (excluding the first)\n", iterations,
              gemms, n, bytes, iterations > 1 ? total_ms / (iterations - 1) : 0.0);
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFreeHost(host_pinned);
  return 0;
}
