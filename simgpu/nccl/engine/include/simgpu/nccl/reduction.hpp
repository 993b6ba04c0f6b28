// Elementwise reductions in fixed rank order, the rule every simgpu collective follows:
//
//   out[i] = op(...op(op(in[0][i], in[1][i]), in[2][i])..., in[n-1][i])
//
// The result of an element depends only on the n values of that element, never on how
// elements are grouped into calls or chunks, so it is bit-identical however gradients are
// bucketed, and identical on every rank (each rank runs this same function on the same
// inputs).
//
// Arithmetic, per type:
//   - integers: sum and prod wrap around (two's complement); avg is the wrapped sum divided
//     by n with C++ integer division (truncation towards zero), as NCCL's SumPostDiv.
//   - float32 accumulates in float, float64 in double.
//   - float16, bfloat16, fp8 e4m3 and fp8 e5m2 are converted to float, accumulated in float
//     in rank order, and rounded back once at the end (round to nearest even; fp8 saturates
//     to its largest finite value). NCCL's GPU kernels round after every step instead, so
//     simgpu can differ from a GPU in the last bit of these types; it never differs from itself.
//   - avg of floating types is the sum divided by n in the accumulation type, rounded once.
//   - max and min of floating types use fmax/fmin (a NaN operand is ignored).
#pragma once

#include <nccl.h>

#include <cstddef>

namespace simgpu::nccl {

// The built-in reduction operators. ncclRedOpCreatePreMulSum operators are applied as a
// pre-multiplication of each rank's own input (preMultiply) followed by Sum.
enum class RedOp : unsigned char { Sum = ncclSum, Prod = ncclProd, Max = ncclMax, Min = ncclMin, Avg = ncclAvg };

const char* redOpName(RedOp op);

// inputs[r] points at `count` elements of rank r; out may be one of the inputs (the same
// address: each block of elements is read entirely before it is written), never a partial
// overlap.
void reduceInRankOrder(ncclDataType_t datatype, RedOp op, const void* const* inputs, int ninputs,
                       void* out, std::size_t count);

// dst[i] = src[i] * scalar, with the arithmetic above (narrow floats multiply in float and
// round once). `scalar` points at one value of `datatype`. dst may equal src.
void preMultiply(ncclDataType_t datatype, const void* src, void* dst, std::size_t count,
                 const void* scalar);

}  // namespace simgpu::nccl
