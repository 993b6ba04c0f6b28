// A module loaded with RTLD_LOCAL by kernel_launch_test: it holds a kernel's host stub and
// its CPU implementation, which RTLD_DEFAULT cannot see.
extern "C" void module_kernel_stub() {}

extern "C" void simgpu_cpu__Z13module_kernelPi(void** args) { **static_cast<int**>(args[0]) = 42; }
