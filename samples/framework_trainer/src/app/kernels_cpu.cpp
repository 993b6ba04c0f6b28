// CPU implementations of framework_trainer's kernels, for simgpu (docs/simgpu.md, "Kernels:
// names, parameters, CPU implementations"): simgpu looks up `simgpu_cpu_<mangled kernel name>`
// in the program's dynamic symbol table (the executable is linked with ENABLE_EXPORTS) and calls
// it with the launch's argument array, so that the data on simgpu is what a GPU computes. Each
// one loops over the indices the kernel's threads cover and calls the same body
// (framework_trainer/kernel_bodies.hpp). The test framework_trainer.cpu_kernels checks that
// every kernel of the binary has one, so a changed signature (and mangled name) cannot go
// unnoticed.
#include "framework_trainer/kernel_bodies.hpp"

#include <cstring>

namespace {

namespace b = framework_trainer::body;
using namespace framework_trainer;

// The value of the launch's parameter `index` (args[index] points at it).
template <class T>
T arg(void** args, int index) {
  T value;
  std::memcpy(&value, args[index], sizeof(T));
  return value;
}

template <class Metadata, class Functor>
void multiTensor(void** args) {
  const auto lists = arg<Metadata>(args, 1);
  const auto f = arg<Functor>(args, 2);
  for (int block = 0; block < lists.blocks_this_launch; ++block) b::multiTensorBlock(lists, f, block, 0, 1);
}

template <class Functor, int arity>
void elementwise(void** args) {
  const int numel = arg<int>(args, 1);
  const auto f = arg<Functor>(args, 2);
  const auto data = arg<PointerArray<arity>>(args, 3);
  for (int i = 0; i < numel; ++i) b::elementwise(f, data, i);
}

}  // namespace

// gemm<GemmRole::AB>(long, long, long, GemmArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device4gemmILNS_8GemmRoleE0EEEvlllNS_8GemmArgsE(void** args) {
  const auto g = arg<GemmArgs>(args, 3);
  for (int r = 0; r < g.rows; ++r) b::gemmABRow(g, r);
}

// gemm<GemmRole::ABt>(long, long, long, GemmArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device4gemmILNS_8GemmRoleE1EEEvlllNS_8GemmArgsE(void** args) {
  const auto g = arg<GemmArgs>(args, 3);
  for (int i = 0; i < g.rows * g.k; ++i) b::gemmABt(g, i);
}

// gemm<GemmRole::WeightGrad>(long, long, long, GemmArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device4gemmILNS_8GemmRoleE2EEEvlllNS_8GemmArgsE(void** args) {
  const auto g = arg<GemmArgs>(args, 3);
  const std::int64_t numel = static_cast<std::int64_t>(g.k) * g.n;
  for (std::int64_t i = 0; i < numel; ++i) b::gemmWeightGrad(g, i);
}

// layer_norm_forward(long, LayerNormArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device18layer_norm_forwardElNS_13LayerNormArgsE(void** args) {
  const auto a = arg<LayerNormArgs>(args, 1);
  for (int r = 0; r < a.rows; ++r) b::layerNormRow(a, r);
}

// layer_norm_backward(long, LayerNormBackwardArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device19layer_norm_backwardElNS_21LayerNormBackwardArgsE(void** args) {
  const auto a = arg<LayerNormBackwardArgs>(args, 1);
  for (int r = 0; r < a.rows; ++r) b::layerNormBackwardRow(a, r);
  for (int j = 0; j < a.width; ++j) b::layerNormParamGrad(a, j);
}

// flash_attention_forward(long, long, long, AttentionParams)
extern "C" void simgpu_cpu__ZN17framework_trainer6device23flash_attention_forwardElllNS_15AttentionParamsE(void** args) {
  const auto p = arg<AttentionParams>(args, 3);
  for (int i = 0; i < p.rows * p.heads; ++i) b::attentionForward(p, i);
}

// flash_attention_backward(long, long, long, AttentionParams)
extern "C" void simgpu_cpu__ZN17framework_trainer6device24flash_attention_backwardElllNS_15AttentionParamsE(void** args) {
  const auto p = arg<AttentionParams>(args, 3);
  for (int i = 0; i < p.rows * p.heads; ++i) b::attentionBackward(p, i);
}

// embedding_forward(long, EmbeddingArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device17embedding_forwardElNS_13EmbeddingArgsE(void** args) {
  const auto a = arg<EmbeddingArgs>(args, 1);
  for (int i = 0; i < a.rows * a.hidden; ++i) b::embeddingForward(a, i);
}

// embedding_backward(long, EmbeddingBackwardArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device18embedding_backwardElNS_21EmbeddingBackwardArgsE(void** args) {
  const auto a = arg<EmbeddingBackwardArgs>(args, 1);
  for (std::int64_t i = 0; i < a.wte_numel; ++i) b::embeddingWteGrad(a, i);
  for (std::int64_t i = 0; i < a.wpe_numel; ++i) b::embeddingWpeGrad(a, i);
}

// bias_grad(long, BiasGradArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device9bias_gradElNS_12BiasGradArgsE(void** args) {
  const auto a = arg<BiasGradArgs>(args, 1);
  for (int j = 0; j < a.n; ++j) b::biasGrad(a, j);
}

// cross_entropy_forward(long, CrossEntropyArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device21cross_entropy_forwardElNS_16CrossEntropyArgsE(void** args) {
  b::crossEntropyForward(arg<CrossEntropyArgs>(args, 1));
}

// cross_entropy_backward(long, CrossEntropyArgs)
extern "C" void simgpu_cpu__ZN17framework_trainer6device22cross_entropy_backwardElNS_16CrossEntropyArgsE(void** args) {
  const auto a = arg<CrossEntropyArgs>(args, 1);
  for (int r = 0; r < a.rows; ++r) b::crossEntropyBackwardRow(a, r);
}

// vectorized_elementwise_kernel<GeluForward, 2>(long, int, GeluForward, PointerArray<2>)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device29vectorized_elementwise_kernelINS_11GeluForwardELi2EEEvliT_NS_12PointerArrayIXT0_EEE(
    void** args) {
  elementwise<GeluForward, 2>(args);
}

// vectorized_elementwise_kernel<GeluBackward, 3>(long, int, GeluBackward, PointerArray<3>)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device29vectorized_elementwise_kernelINS_12GeluBackwardELi3EEEvliT_NS_12PointerArrayIXT0_EEE(
    void** args) {
  elementwise<GeluBackward, 3>(args);
}

// vectorized_elementwise_kernel<AddTensors, 3>(long, int, AddTensors, PointerArray<3>)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device29vectorized_elementwise_kernelINS_10AddTensorsELi3EEEvliT_NS_12PointerArrayIXT0_EEE(
    void** args) {
  elementwise<AddTensors, 3>(args);
}

// vectorized_elementwise_kernel<ScaleTensor, 2>(long, int, ScaleTensor, PointerArray<2>)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device29vectorized_elementwise_kernelINS_11ScaleTensorELi2EEEvliT_NS_12PointerArrayIXT0_EEE(
    void** args) {
  elementwise<ScaleTensor, 2>(args);
}

// multi_tensor_apply_kernel<TensorListMetadata<2>, SgdFunctor>(long, TensorListMetadata<2>, SgdFunctor)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device25multi_tensor_apply_kernelINS_18TensorListMetadataILi2EEENS_10SgdFunctorEEEvlT_T0_(
    void** args) {
  multiTensor<TensorListMetadata<2>, SgdFunctor>(args);
}

// multi_tensor_apply_kernel<TensorListMetadata<1>, InitFunctor>(long, TensorListMetadata<1>, InitFunctor)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device25multi_tensor_apply_kernelINS_18TensorListMetadataILi1EEENS_11InitFunctorEEEvlT_T0_(
    void** args) {
  multiTensor<TensorListMetadata<1>, InitFunctor>(args);
}

// multi_tensor_apply_kernel<TensorListMetadata<1>, ChecksumFunctor>(long, TensorListMetadata<1>, ChecksumFunctor)
extern "C" void
simgpu_cpu__ZN17framework_trainer6device25multi_tensor_apply_kernelINS_18TensorListMetadataILi1EEENS_15ChecksumFunctorEEEvlT_T0_(
    void** args) {
  multiTensor<TensorListMetadata<1>, ChecksumFunctor>(args);
}
