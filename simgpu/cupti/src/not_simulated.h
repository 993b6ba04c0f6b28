// The weak stand-ins generated for every libcupti.so.13 function (not_simulated.cpp).
#pragma once

extern "C" {
// Prints "simgpu: <name> is not simulated" the first time (per name) and returns
// CUPTI_ERROR_NOT_SUPPORTED.
int simgpu_cupti_not_simulated(const char* name, int* reported);
}

// The stand-in takes no arguments: whatever the real signature, the caller's arguments are
// simply not read, and the int result is the CUptiResult the caller expects.
#define SIMGPU_CUPTI_NOT_SIMULATED(name)                  \
  extern "C" __attribute__((weak)) int name();            \
  extern "C" __attribute__((weak)) int name() {           \
    static int reported;                                  \
    return simgpu_cupti_not_simulated(#name, &reported);  \
  }
