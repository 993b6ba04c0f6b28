// The weak stand-ins generated for every libcudart.so.13 function (not_simulated.cpp).
#pragma once

extern "C" {
// Prints "simgpu: <name> is not simulated" the first time (per name) and returns
// cudaErrorNotSupported, recording it as the thread's last error.
int simgpu_cudart_not_simulated(const char* name, int* reported);
}

// The stand-in takes no arguments: whatever the real signature, the caller's arguments are
// simply not read, and the int result is the cudaError_t the caller expects.
#define SIMGPU_NOT_SIMULATED(name)                          \
  extern "C" __attribute__((weak)) int name();              \
  extern "C" __attribute__((weak)) int name() {             \
    static int reported;                                    \
    return simgpu_cudart_not_simulated(#name, &reported);   \
  }
