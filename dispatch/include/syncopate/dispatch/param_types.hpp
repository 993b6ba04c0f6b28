// What a kernel's parameters are, as far as its name tells: a pointer or reference (its value
// is an address the kernel may touch), an arithmetic value (it holds no address), or anything
// else passed by value (a class, struct, union, enum or a template's aggregate, whose bytes may
// carry device pointers: PyTorch's TensorIterator arrays, a multi-tensor-apply optimizer's
// tensor lists). nvcc mangles kernels by the Itanium C++ ABI; the C++ runtime's demangler
// (abi::__cxa_demangle) turns the name into a signature, and this reads the signature's
// parameter list. Offsets and sizes come from the driver (cudaFuncGetParamInfo,
// cuFuncGetParamInfo), never from here, except where a driver has no such query.
#pragma once

#include <cstdint>
#include <string_view>

namespace syncopate::preload {

enum class ParamKind : std::uint8_t {
  Pointer,  // a pointer or reference: its value is a touch
  Scalar,   // bool, an integer or a floating-point number: no address in it
  Scanned,  // anything else: each aligned word that falls inside known device memory is a touch
};

struct ParamType {
  ParamKind kind = ParamKind::Scanned;
  std::uint8_t size = 0;  // bytes, where the type alone says (pointers, arithmetic types); else 0
};

// Parses the parameter list of a demangled kernel signature ("void k<float>(float*, int)") into
// `out` (room for `capacity`). Returns how many parameters there are (more than `capacity`
// means the rest were not written), or -1 when the text is no signature (an extern "C" kernel's
// name, which is not mangled). "f()" has none.
int parameterTypesOf(std::string_view signature, ParamType* out, int capacity) noexcept;

}  // namespace syncopate::preload
