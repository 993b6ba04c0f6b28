// Symbols of libsimgpu.so that API layers (libcudart.so.13, libnccl.so.2, libcupti.so.13) and
// tests use; everything else in the core is hidden.
#pragma once

#define SIMGPU_API __attribute__((visibility("default")))
