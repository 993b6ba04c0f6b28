#include "kernel_names.hpp"

#include <array>
#include <string>
#include <vector>

namespace simgpu::nccl {
namespace {

constexpr const char* kTypeSuffix[ncclNumTypes] = {"i8", "u8", "i32", "u32", "i64", "u64",
                                                   "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2"};
constexpr const char* kOpName[] = {"Sum", "Prod", "Max", "Min", "Avg", "PreMulSum"};
constexpr int kOps = 6;
constexpr int kKinds = 8;

bool reduces(CollKind kind) {
  return kind == CollKind::AllReduce || kind == CollKind::Reduce || kind == CollKind::ReduceScatter;
}

// AlltoAll, Gather and Scatter are made of sends and receives in NCCL.
bool pointToPoint(CollKind kind) {
  return kind == CollKind::AlltoAll || kind == CollKind::Gather || kind == CollKind::Scatter;
}

std::size_t index(int kind, int op, int type, int tree) {
  return ((static_cast<std::size_t>(kind) * kOps + op) * ncclNumTypes + type) * 2 + tree;
}

std::vector<std::string> buildNames() {
  std::vector<std::string> names(index(kKinds, 0, 0, 0));
  for (int k = 0; k < kKinds; ++k) {
    const auto kind = static_cast<CollKind>(k);
    for (int op = 0; op < kOps; ++op) {
      for (int type = 0; type < ncclNumTypes; ++type) {
        for (int tree = 0; tree < 2; ++tree) {
          std::string name;
          if (pointToPoint(kind)) {
            name = kSendRecvKernel;
          } else {
            const bool uses_tree = tree == 1 && kind == CollKind::AllReduce;
            name = std::string("ncclDevKernel_") + collKindName(kind);
            if (reduces(kind)) name += std::string("_") + kOpName[op] + "_" + kTypeSuffix[type];
            name += uses_tree ? "_TREE_LL" : "_RING_LL";
          }
          names[index(k, op, type, tree)] = std::move(name);
        }
      }
    }
  }
  return names;
}

}  // namespace

std::string_view collectiveKernelName(CollKind kind, RedOp op, bool premul, ncclDataType_t datatype,
                                      Algorithm algorithm) {
  static const std::vector<std::string> names = buildNames();
  const int op_index = premul ? kOps - 1 : static_cast<int>(op);
  return names[index(static_cast<int>(kind), op_index, static_cast<int>(datatype), algorithm == Algorithm::Tree ? 1 : 0)];
}

}  // namespace simgpu::nccl
