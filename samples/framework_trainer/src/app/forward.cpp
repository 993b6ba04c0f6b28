#include "forward.hpp"

#include "kernels.hpp"

#include "framework_trainer/device_math.hpp"
#include "framework_trainer/fsdp_units.hpp"

#include <cmath>

namespace framework_trainer {
namespace {

constexpr float kLayerNormEps = 1e-5f;

void layerNorm(const StepContext& ctx, const DeviceTensor<float>& x, int weight, DeviceTensor<float>& y,
               DeviceTensor<float>& mean, DeviceTensor<float>& rstd) {
  const int d = ctx.config().hidden;
  y = ctx.activation(static_cast<std::int64_t>(kRealTokens) * d);
  mean = ctx.activation(kRealTokens);
  rstd = ctx.activation(kRealTokens);
  const LayerNormArgs args{x.get(), ctx.param(weight), ctx.param(weight + 1), y.get(), mean.get(), rstd.get(),
                           kRealTokens, d, kLayerNormEps};
  // fp32 in, fp32 out (autocast keeps layer norm in float).
  FT_KERNEL(ctx.issue, kernels::layerNormForward(ctx.compute, ctx.config().activationBytes(d, 8), args));
}

// y = x * W + b for a Conv1D weight W [in x out].
DeviceTensor<float> linear(const StepContext& ctx, const DeviceTensor<float>& x, int weight, int bias) {
  const ParamSpec& w = ctx.layout[weight];
  DeviceTensor<float> y = ctx.activation(kRealTokens * w.cols);
  GemmArgs args{};
  args.a = x.get();
  args.b = ctx.param(weight);
  args.bias = ctx.param(bias);
  args.c = y.get();
  args.rows = kRealTokens;
  args.k = static_cast<int>(w.rows);
  args.n = static_cast<int>(w.cols);
  FT_KERNEL(ctx.issue, kernels::gemm(ctx.compute, GemmRole::AB, ctx.config().tokens(), w.cols, w.rows, args));
  return y;
}

}  // namespace

void fillTokens(int* tokens_host, std::uint64_t seed, int rank, int iteration, int vocab) {
  for (int t = 0; t < kRealTokens; ++t) {
    const std::uint64_t key = math::mix64(seed ^ 0x746f6b656e73ull) ^ (static_cast<std::uint64_t>(rank) << 40) ^
                              (static_cast<std::uint64_t>(iteration) << 8) ^ static_cast<std::uint64_t>(t);
    tokens_host[t] = static_cast<int>(math::mix64(key) % static_cast<std::uint64_t>(vocab));
    tokens_host[kRealTokens + t] = static_cast<int>(math::mix64(key + 1) % static_cast<std::uint64_t>(vocab));
  }
}

Activations issueForward(const StepContext& ctx, const int* tokens_host, UnitHooks& units) {
  const ModelConfig& c = ctx.config();
  units.beforeForward(kRootUnit);
  const int d = c.hidden;
  Activations act;
  act.tokens = DeviceTensor<int>(ctx.allocator, 2 * kRealTokens, ctx.compute);
  ctx.issue.copy(act.tokens.get(), tokens_host, act.tokens.bytes(), cudaMemcpyHostToDevice, ctx.compute);

  DeviceTensor<float> x = ctx.activation(static_cast<std::int64_t>(kRealTokens) * d);
  const EmbeddingArgs embedding{act.tokens.get(), ctx.param(ctx.layout.tokenEmbedding()),
                                ctx.param(ctx.layout.positionEmbedding()), x.get(), kRealTokens, d, c.vocab};
  FT_KERNEL(ctx.issue, kernels::embeddingForward(ctx.compute, c.activationBytes(d, 12), embedding));

  for (int l = 0; l < c.layers; ++l) {
    const BlockParams& p = ctx.layout.block(l);
    BlockActivations& b = act.blocks.emplace_back();
    units.beforeForward(blockUnit(l));
    b.input = std::move(x);
    layerNorm(ctx, b.input, p.ln1_weight, b.h1, b.mean1, b.rstd1);
    b.qkv = linear(ctx, b.h1, p.attn_weight, p.attn_bias);
    b.attn = ctx.activation(static_cast<std::int64_t>(kRealTokens) * d);
    b.lse = ctx.activation(static_cast<std::int64_t>(kRealTokens) * c.heads);
    AttentionParams attention{};
    attention.qkv = b.qkv.get();
    attention.out = b.attn.get();
    attention.lse = b.lse.get();
    attention.rows = kRealTokens;
    attention.heads = c.heads;
    attention.head_dim = c.headDim();
    attention.softmax_scale = 1.0f / std::sqrt(static_cast<float>(c.headDim()));
    attention.is_causal = 1;
    FT_KERNEL(ctx.issue, kernels::attentionForward(ctx.compute, static_cast<std::int64_t>(c.micro_batch) * c.heads,
                                                   c.seq_len, c.headDim(), attention));
    b.proj = linear(ctx, b.attn, p.attn_proj_weight, p.attn_proj_bias);
    b.x2 = ctx.activation(static_cast<std::int64_t>(kRealTokens) * d);
    // The residual stream stays in float: two reads and a write of 4 bytes.
    FT_KERNEL(ctx.issue, kernels::add(ctx.compute, c.activationBytes(d, 12), kRealTokens * d, b.x2.get(), b.input.get(),
                                      b.proj.get()));
    layerNorm(ctx, b.x2, p.ln2_weight, b.h2, b.mean2, b.rstd2);
    b.f = linear(ctx, b.h2, p.fc_weight, p.fc_bias);
    b.g = ctx.activation(static_cast<std::int64_t>(kRealTokens) * 4 * d);
    // bf16 in and out under autocast.
    FT_KERNEL(ctx.issue, kernels::gelu(ctx.compute, c.activationBytes(4 * d, 4), kRealTokens * 4 * d, b.g.get(), b.f.get()));
    b.m = linear(ctx, b.g, p.mlp_proj_weight, p.mlp_proj_bias);
    x = ctx.activation(static_cast<std::int64_t>(kRealTokens) * d);
    FT_KERNEL(ctx.issue,
              kernels::add(ctx.compute, c.activationBytes(d, 12), kRealTokens * d, x.get(), b.x2.get(), b.m.get()));
    units.afterForward(blockUnit(l));
  }
  act.last = std::move(x);
  layerNorm(ctx, act.last, ctx.layout.finalNormWeight(), act.hf, act.mean_f, act.rstd_f);

  // The LM head is the token embedding, transposed: logits = hf * wte^T.
  act.logits = ctx.activation(static_cast<std::int64_t>(kRealTokens) * c.vocab);
  GemmArgs head{};
  head.a = act.hf.get();
  head.b = ctx.param(ctx.layout.tokenEmbedding());
  head.c = act.logits.get();
  head.rows = kRealTokens;
  head.k = c.vocab;
  head.n = d;
  FT_KERNEL(ctx.issue, kernels::gemm(ctx.compute, GemmRole::ABt, c.tokens(), c.vocab, d, head));

  act.loss = ctx.activation(1);
  CrossEntropyArgs loss{act.logits.get(), act.tokens.get() + kRealTokens, act.loss.get(), nullptr, kRealTokens, c.vocab};
  FT_KERNEL(ctx.issue, kernels::crossEntropyForward(ctx.compute, c.activationBytes(c.vocab, 4), loss));
  units.afterForward(kRootUnit);
  return act;
}

}  // namespace framework_trainer
