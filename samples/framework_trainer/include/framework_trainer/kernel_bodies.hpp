// What each kernel computes for one index of its work (an output element, a row, a chunk),
// shared by the CUDA kernels (src/app/kernels.cu, which map threads to indices) and their CPU
// implementations for simgpu (src/app/kernels_cpu.cpp, which loop over the indices): one
// definition, so the two cannot drift apart. Shapes are the real (one-token) activations'
// and the full-size weights' (kernel_args.hpp).
#pragma once

#include "framework_trainer/device_math.hpp"
#include "framework_trainer/kernel_args.hpp"
#include "framework_trainer/tensor_lists.hpp"

#include <cmath>
#include <cstdint>

namespace framework_trainer::body {

// --- GEMM ---------------------------------------------------------------------------------------

// c = a * b + bias, output element `index` of [rows x n].
SAMPLE_HOST_DEVICE inline void gemmAB(const GemmArgs& g, int index) {
  const int r = index / g.n, j = index % g.n;
  float sum = g.bias != nullptr ? g.bias[j] : 0.0f;
  for (int k = 0; k < g.k; ++k) sum += g.a[r * g.k + k] * g.b[static_cast<std::int64_t>(k) * g.n + j];
  g.c[index] = sum;
}

// Row r of c = a * b + bias, the weight read row by row: the order a CPU reads memory fastest in
// (the CPU implementation's). The sum's order differs from gemmAB's, so its last bits may too:
// nothing checks activations bit for bit.
SAMPLE_HOST_DEVICE inline void gemmABRow(const GemmArgs& g, int r) {
  float* c = g.c + r * g.n;
  for (int j = 0; j < g.n; ++j) c[j] = g.bias != nullptr ? g.bias[j] : 0.0f;
  for (int k = 0; k < g.k; ++k) {
    const float a = g.a[r * g.k + k];
    const float* w_row = g.b + static_cast<std::int64_t>(k) * g.n;
    for (int j = 0; j < g.n; ++j) c[j] += a * w_row[j];
  }
}

// c = a * b^T, output element `index` of [rows x k]; a is [rows x n].
SAMPLE_HOST_DEVICE inline void gemmABt(const GemmArgs& g, int index) {
  const int r = index / g.k, i = index % g.k;
  float sum = 0.0f;
  const float* w_row = g.b + static_cast<std::int64_t>(i) * g.n;
  for (int j = 0; j < g.n; ++j) sum += g.a[r * g.n + j] * w_row[j];
  g.c[index] = sum;
}

// Weight gradient, element `index` of the weight [k x n], by the rule.
SAMPLE_HOST_DEVICE inline void gemmWeightGrad(const GemmArgs& g, std::int64_t index) {
  math::applyGradRule(g.rule, g.b[index], g.c[index]);
}

// --- layer norm ---------------------------------------------------------------------------------

SAMPLE_HOST_DEVICE inline void layerNormRow(const LayerNormArgs& a, int r) {
  const float* x = a.x + r * a.width;
  float mean = 0.0f;
  for (int j = 0; j < a.width; ++j) mean += x[j];
  mean /= static_cast<float>(a.width);
  float var = 0.0f;
  for (int j = 0; j < a.width; ++j) var += (x[j] - mean) * (x[j] - mean);
  const float rstd = 1.0f / sqrtf(var / static_cast<float>(a.width) + a.eps);
  for (int j = 0; j < a.width; ++j) a.y[r * a.width + j] = (x[j] - mean) * rstd * a.gamma[j] + a.beta[j];
  a.mean[r] = mean;
  a.rstd[r] = rstd;
}

SAMPLE_HOST_DEVICE inline void layerNormBackwardRow(const LayerNormBackwardArgs& a, int r) {
  const float* x = a.x + r * a.width;
  const float* dy = a.grad_y + r * a.width;
  const float mean = a.mean[r], rstd = a.rstd[r];
  float sum_dy_g = 0.0f, sum_dy_g_xhat = 0.0f;
  for (int j = 0; j < a.width; ++j) {
    const float xhat = (x[j] - mean) * rstd;
    sum_dy_g += dy[j] * a.gamma[j];
    sum_dy_g_xhat += dy[j] * a.gamma[j] * xhat;
  }
  const float n = static_cast<float>(a.width);
  for (int j = 0; j < a.width; ++j) {
    const float xhat = (x[j] - mean) * rstd;
    a.grad_x[r * a.width + j] = rstd * (dy[j] * a.gamma[j] - sum_dy_g / n - xhat * sum_dy_g_xhat / n);
  }
}

// The norm's weight and bias gradients, element `j`, by their rules.
SAMPLE_HOST_DEVICE inline void layerNormParamGrad(const LayerNormBackwardArgs& a, int j) {
  math::applyGradRule(a.rule_gamma, a.gamma[j], a.grad_gamma[j]);
  math::applyGradRule(a.rule_beta, a.beta[j], a.grad_beta[j]);
}

// --- attention (causal, over the real tokens) -----------------------------------------------------

SAMPLE_HOST_DEVICE inline float attentionScore(const AttentionParams& p, int r, int s, int h) {
  const int hidden = p.heads * p.head_dim;
  const float* q = p.qkv + r * 3 * hidden + h * p.head_dim;
  const float* k = p.qkv + s * 3 * hidden + hidden + h * p.head_dim;
  float dot = 0.0f;
  for (int d = 0; d < p.head_dim; ++d) dot += q[d] * k[d];
  return dot * p.softmax_scale;
}

// Output row r, head h (`index` = r * heads + h), and its log-sum-exp.
SAMPLE_HOST_DEVICE inline void attentionForward(const AttentionParams& p, int index) {
  const int r = index / p.heads, h = index % p.heads, hidden = p.heads * p.head_dim;
  const int last = p.is_causal != 0 ? r : p.rows - 1;
  float m = -INFINITY;
  for (int s = 0; s <= last; ++s) m = fmaxf(m, attentionScore(p, r, s, h));
  float l = 0.0f;
  float* o = p.out + r * hidden + h * p.head_dim;
  for (int d = 0; d < p.head_dim; ++d) o[d] = 0.0f;
  for (int s = 0; s <= last; ++s) {
    const float w = expf(attentionScore(p, r, s, h) - m);
    l += w;
    const float* v = p.qkv + s * 3 * hidden + 2 * hidden + h * p.head_dim;
    for (int d = 0; d < p.head_dim; ++d) o[d] += w * v[d];
  }
  for (int d = 0; d < p.head_dim; ++d) o[d] /= l;
  p.lse[h * p.rows + r] = m + logf(l);
}

// Gradients of row t's q (as a query) and of its k and v (as a key), head h (`index` = t * heads + h).
SAMPLE_HOST_DEVICE inline void attentionBackward(const AttentionParams& p, int index) {
  const int t = index / p.heads, h = index % p.heads, hidden = p.heads * p.head_dim;
  const auto prob = [&](int r, int s) { return expf(attentionScore(p, r, s, h) - p.lse[h * p.rows + r]); };
  const auto dot_do = [&](int r, const float* vec) {
    float sum = 0.0f;
    for (int d = 0; d < p.head_dim; ++d) sum += p.grad_out[r * hidden + h * p.head_dim + d] * vec[d];
    return sum;
  };
  const auto delta = [&](int r) { return dot_do(r, p.out + r * hidden + h * p.head_dim); };
  float* dq = p.grad_qkv + t * 3 * hidden + h * p.head_dim;
  float* dk = dq + hidden;
  float* dv = dq + 2 * hidden;
  for (int d = 0; d < p.head_dim; ++d) dq[d] = dk[d] = dv[d] = 0.0f;
  const int last_key = p.is_causal != 0 ? t : p.rows - 1;
  for (int s = 0; s <= last_key; ++s) {  // t as the query
    const float* v = p.qkv + s * 3 * hidden + 2 * hidden + h * p.head_dim;
    const float ds = prob(t, s) * (dot_do(t, v) - delta(t)) * p.softmax_scale;
    const float* k = p.qkv + s * 3 * hidden + hidden + h * p.head_dim;
    for (int d = 0; d < p.head_dim; ++d) dq[d] += ds * k[d];
  }
  const float* v_t = p.qkv + t * 3 * hidden + 2 * hidden + h * p.head_dim;
  for (int r = p.is_causal != 0 ? t : 0; r < p.rows; ++r) {  // t as the key
    const float pr = prob(r, t);
    const float ds = pr * (dot_do(r, v_t) - delta(r)) * p.softmax_scale;
    const float* q = p.qkv + r * 3 * hidden + h * p.head_dim;
    for (int d = 0; d < p.head_dim; ++d) {
      dk[d] += ds * q[d];
      dv[d] += pr * p.grad_out[r * hidden + h * p.head_dim + d];
    }
  }
}

// --- embeddings -----------------------------------------------------------------------------------

// Element `index` of [rows x hidden]: token embedding plus position embedding.
SAMPLE_HOST_DEVICE inline void embeddingForward(const EmbeddingArgs& a, int index) {
  const int r = index / a.hidden, j = index % a.hidden;
  const int token = a.tokens[r];
  a.out[index] = a.wte[static_cast<std::int64_t>(token) * a.hidden + j] + a.wpe[index];
}

SAMPLE_HOST_DEVICE inline void embeddingWteGrad(const EmbeddingBackwardArgs& a, std::int64_t i) {
  math::applyGradRule(a.rule_wte, a.wte[i], a.grad_wte[i]);
}

SAMPLE_HOST_DEVICE inline void embeddingWpeGrad(const EmbeddingBackwardArgs& a, std::int64_t i) {
  math::applyGradRule(a.rule_wpe, a.wpe[i], a.grad_wpe[i]);
}

SAMPLE_HOST_DEVICE inline void biasGrad(const BiasGradArgs& a, int j) {
  math::applyGradRule(a.rule, a.bias[j], a.grad_bias[j]);
}

// --- cross-entropy ----------------------------------------------------------------------------------

SAMPLE_HOST_DEVICE inline float logSumExp(const float* logits, int vocab) {
  float m = -INFINITY;
  for (int v = 0; v < vocab; ++v) m = fmaxf(m, logits[v]);
  float sum = 0.0f;
  for (int v = 0; v < vocab; ++v) sum += expf(logits[v] - m);
  return m + logf(sum);
}

// The mean loss over the rows, by one thread.
SAMPLE_HOST_DEVICE inline void crossEntropyForward(const CrossEntropyArgs& a) {
  float total = 0.0f;
  for (int r = 0; r < a.rows; ++r) {
    const float* logits = a.logits + static_cast<std::int64_t>(r) * a.vocab;
    total += logSumExp(logits, a.vocab) - logits[a.targets[r]];
  }
  *a.loss = total / static_cast<float>(a.rows);
}

SAMPLE_HOST_DEVICE inline void crossEntropyBackwardRow(const CrossEntropyArgs& a, int r) {
  const float* logits = a.logits + static_cast<std::int64_t>(r) * a.vocab;
  float* grad = a.grad_logits + static_cast<std::int64_t>(r) * a.vocab;
  const float lse = logSumExp(logits, a.vocab);
  const float inv_rows = 1.0f / static_cast<float>(a.rows);
  for (int v = 0; v < a.vocab; ++v) grad[v] = (expf(logits[v] - lse) - (v == a.targets[r] ? 1.0f : 0.0f)) * inv_rows;
}

// --- elementwise (TensorIterator-style: data[0] is the output) ------------------------------------

SAMPLE_HOST_DEVICE inline void elementwise(GeluForward, const PointerArray<2>& d, int i) {
  reinterpret_cast<float*>(d.data[0])[i] = math::gelu(reinterpret_cast<const float*>(d.data[1])[i]);
}

SAMPLE_HOST_DEVICE inline void elementwise(GeluBackward, const PointerArray<3>& d, int i) {  // grad_in, grad_out, in
  reinterpret_cast<float*>(d.data[0])[i] =
      reinterpret_cast<const float*>(d.data[1])[i] * math::geluGrad(reinterpret_cast<const float*>(d.data[2])[i]);
}

SAMPLE_HOST_DEVICE inline void elementwise(AddTensors, const PointerArray<3>& d, int i) {
  reinterpret_cast<float*>(d.data[0])[i] =
      reinterpret_cast<const float*>(d.data[1])[i] + reinterpret_cast<const float*>(d.data[2])[i];
}

SAMPLE_HOST_DEVICE inline void elementwise(ScaleTensor f, const PointerArray<2>& d, int i) {
  reinterpret_cast<float*>(d.data[0])[i] = reinterpret_cast<const float*>(d.data[1])[i] * f.scale;
}

// --- multi-tensor apply: block `block` of a launch, its threads `thread` in steps of `threads` ------

template <int depth>
SAMPLE_HOST_DEVICE inline std::int64_t chunkStart(const TensorListMetadata<depth>& tl, int block) {
  return static_cast<std::int64_t>(tl.block_to_chunk[block]) * kChunkSize;
}

template <int depth>
SAMPLE_HOST_DEVICE inline std::int64_t chunkEnd(const TensorListMetadata<depth>& tl, int block) {
  const std::int64_t end = chunkStart(tl, block) + kChunkSize;
  const std::int64_t numel = tl.numel_for_tensor[tl.block_to_tensor[block]];
  return end < numel ? end : numel;
}

SAMPLE_HOST_DEVICE inline void multiTensorBlock(const TensorListMetadata<2>& tl, const SgdFunctor& f, int block,
                                                int thread, int threads) {
  const int t = tl.block_to_tensor[block];
  float* params = static_cast<float*>(const_cast<void*>(tl.addresses[0][t]));
  const float* grads = static_cast<const float*>(tl.addresses[1][t]);
  for (std::int64_t i = chunkStart(tl, block) + thread; i < chunkEnd(tl, block); i += threads)
    params[i] = math::sgdElement(params[i], grads[i], f.lr);
}

SAMPLE_HOST_DEVICE inline void multiTensorBlock(const TensorListMetadata<1>& tl, const InitFunctor& f, int block,
                                                int thread, int threads) {
  const int t = tl.block_to_tensor[block];
  float* params = static_cast<float*>(const_cast<void*>(tl.addresses[0][t]));
  for (std::int64_t i = chunkStart(tl, block) + thread; i < chunkEnd(tl, block); i += threads)
    params[i] = math::initValue(f.seed, tl.start_tensor_this_launch + t, i);
}

// One thread hashes the chunk in order (the hash is sequential); thread 0 of the block does it.
SAMPLE_HOST_DEVICE inline void multiTensorBlock(const TensorListMetadata<1>& tl, const ChecksumFunctor& f, int block,
                                                int thread, int /*threads*/) {
  if (thread != 0) return;
  const int t = tl.block_to_tensor[block];
  const int global = tl.start_tensor_this_launch + t;
  const auto* words = static_cast<const std::uint32_t*>(tl.addresses[0][t]);
  std::uint64_t hash = math::kFnvOffset;
  const std::int64_t begin = chunkStart(tl, block), end = chunkEnd(tl, block);
  for (std::int64_t i = begin; i < end; ++i) hash = math::fnvWord(hash, words[i]);
  f.chunk_hashes[f.chunk_base[global] + tl.block_to_chunk[block]] = hash;
  const auto* values = static_cast<const float*>(tl.addresses[0][t]);
  if (begin == 0) f.probes[2 * global] = values[0];
  if (end == tl.numel_for_tensor[t]) f.probes[2 * global + 1] = values[end - 1];
}

}  // namespace framework_trainer::body
