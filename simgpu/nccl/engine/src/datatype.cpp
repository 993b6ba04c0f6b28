#include "simgpu/nccl/datatype.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstring>

namespace simgpu::nccl {

bool isValidDatatype(int datatype) { return datatype >= 0 && datatype < ncclNumTypes; }

std::size_t datatypeSize(ncclDataType_t datatype) {
  switch (datatype) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* datatypeName(ncclDataType_t datatype) {
  switch (datatype) {
    case ncclInt8: return "int8";
    case ncclUint8: return "uint8";
    case ncclInt32: return "int32";
    case ncclUint32: return "uint32";
    case ncclInt64: return "int64";
    case ncclUint64: return "uint64";
    case ncclFloat16: return "float16";
    case ncclFloat32: return "float32";
    case ncclFloat64: return "float64";
    case ncclBfloat16: return "bfloat16";
    case ncclFloat8e4m3: return "float8e4m3";
    case ncclFloat8e5m2: return "float8e5m2";
    default: return "invalid";
  }
}

float halfToFloat(std::uint16_t bits) {
  __half_raw raw;
  raw.x = bits;
  return __half2float(__half(raw));
}

std::uint16_t floatToHalf(float value) { return __half_raw(__float2half_rn(value)).x; }

float bfloat16ToFloat(std::uint16_t bits) {
  __nv_bfloat16_raw raw;
  raw.x = bits;
  return __bfloat162float(__nv_bfloat16(raw));
}

std::uint16_t floatToBfloat16(float value) {
  return __nv_bfloat16_raw(__float2bfloat16_rn(value)).x;
}

float fp8e4m3ToFloat(std::uint8_t bits) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E4M3)));
}

std::uint8_t floatToFp8e4m3(float value) {
  return __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E4M3);
}

float fp8e5m2ToFloat(std::uint8_t bits) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(bits, __NV_E5M2)));
}

std::uint8_t floatToFp8e5m2(float value) {
  return __nv_cvt_float_to_fp8(value, __NV_SATFINITE, __NV_E5M2);
}

}  // namespace simgpu::nccl
