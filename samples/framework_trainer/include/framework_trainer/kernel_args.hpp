// The by-value parameter structs of framework_trainer's kernels, shared by the CUDA kernels
// (src/app/kernels.cu) and their CPU implementations (src/app/kernels_cpu.cpp). As in the
// libraries a PyTorch job runs (TensorIterator's array of data pointers, CUTLASS's and
// flash-attention's Params, the multi-tensor apply metadata in tensor_lists.hpp), a kernel's
// device pointers travel inside these structs, never as pointer parameters of their own: a
// tool that wants to know what a launch touches has to read the parameter buffer.
//
// Every kernel's first parameters are 64-bit integers carrying the modelled cost (the FLOPs'
// dimensions or the bytes the full-size operation moves), which simgpu's machine profile
// prices (profiles/*.json); the real work is described by the struct. Real activations are
// one token's (docs/framework_trainer.md, "What is real").
#pragma once

#include <cstdint>

namespace framework_trainer {

// The rule that writes a gradient from its parameter: grad = scale * param + shift, or
// grad += that when `accumulate` (the tied embedding's second contribution). The host picks
// scale and shift per rank, iteration and tensor, so it can recompute any element
// (device_math.hpp, grad_check.hpp).
struct GradRule {
  float scale = 0.0f;
  float shift = 0.0f;
  int accumulate = 0;
};

// at::detail::Array<char*, N>: the data pointers of a TensorIterator-based elementwise kernel.
template <int N>
struct PointerArray {
  char* data[N];
};

// Elementwise functors (what PyTorch passes as the kernel's lambda): output is data[0].
struct GeluForward {};   // out = gelu(in)
struct GeluBackward {};  // grad_in = grad_out * gelu'(in)
struct AddTensors {};    // out = a + b (the residual connections, forward and backward)
// out = in * scale: at::mul_out by a scalar, and div_ by one (in place: out is in), as DDP's
// reducer divides each gradient by the world size on its way into the bucket.
struct ScaleTensor {
  float scale = 1.0f;
};

// What a GEMM launch computes (cuBLAS's op(B) and the weight-gradient GEMM).
enum class GemmRole : int {
  AB = 0,          // c[rows x n] = a[rows x k] * b[k x n] + bias: a linear layer's forward
  ABt = 1,         // c[rows x k] = a[rows x n] * b[k x n]^T: its input gradient, the tied LM head
  WeightGrad = 2,  // the weight b's gradient c, by `rule` (no real GEMM: docs/framework_trainer.md)
};

// CUTLASS-style GEMM parameters.
struct GemmArgs {
  const float* a;
  const float* b;     // the weight [k x n]
  const float* bias;  // AB: [n], or null
  float* c;
  int rows, k, n;
  GradRule rule;  // WeightGrad
};

struct LayerNormArgs {
  const float* x;
  const float* gamma;
  const float* beta;
  float* y;
  float* mean;  // [rows], kept for backward
  float* rstd;
  int rows, width;
  float eps;
};

struct LayerNormBackwardArgs {
  const float* grad_y;
  const float* x;
  const float* mean;
  const float* rstd;
  const float* gamma;
  const float* beta;
  float* grad_x;
  float* grad_gamma;  // by rule_gamma from gamma
  float* grad_beta;   // by rule_beta from beta
  int rows, width;
  GradRule rule_gamma, rule_beta;
};

// In the manner of flash-attention's Flash_fwd_params / Flash_bwd_params.
struct AttentionParams {
  const float* qkv;  // [rows x 3 x hidden]: q, k, v of each head side by side
  float* out;        // [rows x hidden]
  float* lse;        // [heads x rows] log-sum-exp, kept for backward
  const float* grad_out;  // backward
  float* grad_qkv;        // backward
  int rows, heads, head_dim;
  float softmax_scale;
  int is_causal;
};

struct EmbeddingArgs {
  const int* tokens;  // [rows]
  const float* wte;   // [vocab x hidden]
  const float* wpe;   // [seq_len x hidden]
  float* out;         // [rows x hidden]
  int rows, hidden, vocab;
};

struct EmbeddingBackwardArgs {
  const int* tokens;
  const float* grad_out;  // [rows x hidden]
  const float* wte;
  const float* wpe;
  float* grad_wte;  // += by rule_wte (the LM head wrote the first contribution)
  float* grad_wpe;  // by rule_wpe
  std::int64_t wte_numel, wpe_numel;
  GradRule rule_wte, rule_wpe;
};

// at::native::ReduceOp's role here: a bias gradient (the sum of the output gradient over the
// tokens), written by rule from the bias.
struct BiasGradArgs {
  const float* grad_out;  // [rows x n]
  const float* bias;
  float* grad_bias;
  int rows, n;
  GradRule rule;
};

struct CrossEntropyArgs {
  const float* logits;  // [rows x vocab]
  const int* targets;   // [rows]
  float* loss;          // forward: [1], the mean over rows
  float* grad_logits;   // backward: [rows x vocab]
  int rows, vocab;
};

// Multi-tensor apply functors (tensor_lists.hpp).
struct SgdFunctor {  // lists: params, grads
  float lr;
};
struct InitFunctor {  // lists: params; the values of device_math.hpp's initValue
  std::uint64_t seed;
};
// lists: grads. Writes one FNV-1a hash per chunk at chunk_hashes[chunk_base[tensor] + chunk],
// and each tensor's first and last element at probes[2 * tensor], probes[2 * tensor + 1].
struct ChecksumFunctor {
  std::uint64_t* chunk_hashes;
  const std::int64_t* chunk_base;
  float* probes;
};

}  // namespace framework_trainer
