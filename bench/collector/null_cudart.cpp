// A CUDA runtime that does nothing, as fast as possible: what the collector's overhead is
// measured against, so that the figures are the collector's own cost and not the runtime's
// (simgpu's launch path alone costs microseconds). A benchmark fixture only: the launch
// benchmark runs on it and on simgpu, and docs/collector.md quotes both. Events complete at
// once and are 0 ms apart; kernels have the name "null_kernel".
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>

namespace {
std::atomic<unsigned long long> nextHandle{0x1000};
void* newHandle() { return reinterpret_cast<void*>(nextHandle.fetch_add(16)); }
}  // namespace

extern "C" {

// What nvcc's generated code calls at load time to register a module's kernels.
void** __cudaRegisterFatBinary(void*) { return static_cast<void**>(newHandle()); }
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*, dim3*, int*) {}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int) {
  std::memset(prop, 0, sizeof *prop);
  std::strcpy(prop->name, "null device");
  return cudaSuccess;
}
cudaError_t cudaDeviceGetPCIBusId(char* id, int length, int) {
  std::strncpy(id, "0000:00:00.0", static_cast<size_t>(length));
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** pointer, size_t) {
  *pointer = newHandle();  // an address the benchmark passes to kernels, never dereferenced
  return cudaSuccess;
}
cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaFuncGetName(const char** name, const void*) {
  *name = "null_kernel";
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int) {
  *stream = static_cast<cudaStream_t>(newHandle());
  return cudaSuccess;
}
cudaError_t cudaStreamGetFlags(cudaStream_t, unsigned int* flags) {
  *flags = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamGetPriority(cudaStream_t, int* priority) {
  *priority = 0;
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus* status) {
  *status = cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode*) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int) {
  *event = static_cast<cudaEvent_t>(newHandle());
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.0f;
  return cudaSuccess;
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaPeekAtLastError() { return cudaSuccess; }

}  // extern "C"
