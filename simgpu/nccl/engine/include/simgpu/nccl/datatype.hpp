// NCCL data types: sizes, names and the conversions of the narrow floating types to and
// from float, done with the CUDA toolkit's own host conversion routines (cuda_fp16.h,
// cuda_bf16.h, cuda_fp8.h) so that rounding matches what a GPU does.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>

namespace simgpu::nccl {

bool isValidDatatype(int datatype);
std::size_t datatypeSize(ncclDataType_t datatype);  // 0 for an invalid type
const char* datatypeName(ncclDataType_t datatype);  // "float32", ..., "invalid"

// Narrow floating types, stored as their raw bits.
float halfToFloat(std::uint16_t bits);
std::uint16_t floatToHalf(float value);        // round to nearest even; overflow gives inf
float bfloat16ToFloat(std::uint16_t bits);
std::uint16_t floatToBfloat16(float value);    // round to nearest even
float fp8e4m3ToFloat(std::uint8_t bits);
std::uint8_t floatToFp8e4m3(float value);      // round to nearest even, saturating to the largest finite
float fp8e5m2ToFloat(std::uint8_t bits);
std::uint8_t floatToFp8e5m2(float value);      // round to nearest even, saturating to the largest finite

}  // namespace simgpu::nccl
