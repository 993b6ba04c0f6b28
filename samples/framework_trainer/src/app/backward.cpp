#include "backward.hpp"

#include "kernels.hpp"

#include "framework_trainer/fsdp_units.hpp"
#include "framework_trainer/grad_check.hpp"

#include <cmath>

namespace framework_trainer {
namespace {

class BackwardPass {
 public:
  BackwardPass(const StepContext& ctx, int iteration, const GradReady& ready, UnitHooks& units)
      : ctx_(ctx), c_(ctx.config()), iteration_(iteration), ready_(ready), units_(units) {}

  GradRule rule(int param, int contribution = 0) const {
    return gradRule(ctx_.options.seed, ctx_.rank, iteration_, param, contribution);
  }

  DeviceTensor<float> activation(std::int64_t width) const { return ctx_.activation(kRealTokens * width); }

  // The input gradient of a Conv1D layer (d_x = d_y * W^T), then its weight's and bias's gradients.
  DeviceTensor<float> linear(const DeviceTensor<float>& grad_out, int weight, int bias) {
    const ParamSpec& w = ctx_.layout[weight];
    DeviceTensor<float> grad_in = activation(w.rows);
    GemmArgs dgrad{};
    dgrad.a = grad_out.get();
    dgrad.b = ctx_.param(weight);
    dgrad.c = grad_in.get();
    dgrad.rows = kRealTokens;
    dgrad.k = static_cast<int>(w.rows);
    dgrad.n = static_cast<int>(w.cols);
    FT_KERNEL(ctx_.issue, kernels::gemm(ctx_.compute, GemmRole::ABt, c_.tokens(), w.rows, w.cols, dgrad));
    weightGrad(weight, 0, w.rows, w.cols);
    ready_(weight);
    const BiasGradArgs bias_args{grad_out.get(), ctx_.param(bias), ctx_.grad(bias), kRealTokens,
                                 static_cast<int>(w.cols), rule(bias)};
    // The sum over tokens of the bf16 output gradient.
    FT_KERNEL(ctx_.issue, kernels::biasGrad(ctx_.compute, c_.activationBytes(w.cols, 2), bias_args));
    ready_(bias);
    return grad_in;
  }

  // The gradient of weight `param` [rows x cols], by the rule; the modelled GEMM is
  // d_W[rows x cols] = X^T[rows x tokens] * d_Y[tokens x cols].
  void weightGrad(int param, int contribution, std::int64_t rows, std::int64_t cols) {
    GemmArgs wgrad{};
    wgrad.b = ctx_.param(param);
    wgrad.c = ctx_.grad(param);
    wgrad.k = static_cast<int>(rows);
    wgrad.n = static_cast<int>(cols);
    wgrad.rule = rule(param, contribution);
    FT_KERNEL(ctx_.issue, kernels::gemm(ctx_.compute, GemmRole::WeightGrad, rows, cols, c_.tokens(), wgrad));
  }

  DeviceTensor<float> layerNorm(const DeviceTensor<float>& grad_y, const DeviceTensor<float>& x,
                                const DeviceTensor<float>& mean, const DeviceTensor<float>& rstd, int weight) {
    DeviceTensor<float> grad_x = activation(c_.hidden);
    const LayerNormBackwardArgs args{grad_y.get(), x.get(),          mean.get(),           rstd.get(),
                                     ctx_.param(weight), ctx_.param(weight + 1), grad_x.get(), ctx_.grad(weight),
                                     ctx_.grad(weight + 1), kRealTokens, c_.hidden, rule(weight), rule(weight + 1)};
    FT_KERNEL(ctx_.issue, kernels::layerNormBackward(ctx_.compute, c_.activationBytes(c_.hidden, 12), args));
    ready_(weight);
    ready_(weight + 1);
    return grad_x;
  }

  DeviceTensor<float> add(const DeviceTensor<float>& a, const DeviceTensor<float>& b) {
    DeviceTensor<float> sum = activation(c_.hidden);
    FT_KERNEL(ctx_.issue, kernels::add(ctx_.compute, c_.activationBytes(c_.hidden, 12), kRealTokens * c_.hidden, sum.get(),
                                       a.get(), b.get()));
    return sum;
  }

  DeviceTensor<float> block(BlockActivations b, const BlockParams& p, const DeviceTensor<float>& grad_y) {
    const int d = c_.hidden;
    DeviceTensor<float> grad_g = linear(grad_y, p.mlp_proj_weight, p.mlp_proj_bias);
    DeviceTensor<float> grad_f = activation(4 * d);
    FT_KERNEL(ctx_.issue, kernels::geluBackward(ctx_.compute, c_.activationBytes(4 * d, 6), kRealTokens * 4 * d,
                                                grad_f.get(), grad_g.get(), b.f.get()));
    DeviceTensor<float> grad_h2 = linear(grad_f, p.fc_weight, p.fc_bias);
    DeviceTensor<float> grad_x2 = add(grad_y, layerNorm(grad_h2, b.x2, b.mean2, b.rstd2, p.ln2_weight));

    DeviceTensor<float> grad_attn = linear(grad_x2, p.attn_proj_weight, p.attn_proj_bias);
    DeviceTensor<float> grad_qkv = activation(3 * d);
    AttentionParams attention{};
    attention.qkv = b.qkv.get();
    attention.out = b.attn.get();
    attention.lse = b.lse.get();
    attention.grad_out = grad_attn.get();
    attention.grad_qkv = grad_qkv.get();
    attention.rows = kRealTokens;
    attention.heads = c_.heads;
    attention.head_dim = c_.headDim();
    attention.softmax_scale = 1.0f / std::sqrt(static_cast<float>(c_.headDim()));
    attention.is_causal = 1;
    FT_KERNEL(ctx_.issue, kernels::attentionBackward(ctx_.compute, static_cast<std::int64_t>(c_.micro_batch) * c_.heads,
                                                     c_.seq_len, c_.headDim(), attention));
    DeviceTensor<float> grad_h1 = linear(grad_qkv, p.attn_weight, p.attn_bias);
    return add(grad_x2, layerNorm(grad_h1, b.input, b.mean1, b.rstd1, p.ln1_weight));
  }

  void run(Activations act) {
    units_.beforeBackward(kRootUnit);
    const int wte = ctx_.layout.tokenEmbedding(), wpe = ctx_.layout.positionEmbedding();
    DeviceTensor<float> grad_logits = activation(c_.vocab);
    const CrossEntropyArgs loss{act.logits.get(), act.tokens.get() + kRealTokens, act.loss.get(), grad_logits.get(),
                                kRealTokens, c_.vocab};
    FT_KERNEL(ctx_.issue, kernels::crossEntropyBackward(ctx_.compute, c_.activationBytes(c_.vocab, 8), loss));

    // The tied LM head: d_hf = d_logits * wte; wte's first gradient contribution.
    DeviceTensor<float> grad_hf = activation(c_.hidden);
    GemmArgs head{};
    head.a = grad_logits.get();
    head.b = ctx_.param(wte);
    head.c = grad_hf.get();
    head.rows = kRealTokens;
    head.k = c_.vocab;
    head.n = c_.hidden;
    FT_KERNEL(ctx_.issue, kernels::gemm(ctx_.compute, GemmRole::AB, c_.tokens(), c_.hidden, c_.vocab, head));
    weightGrad(wte, 0, c_.vocab, c_.hidden);

    DeviceTensor<float> grad =
        layerNorm(grad_hf, act.last, act.mean_f, act.rstd_f, ctx_.layout.finalNormWeight());
    for (int l = c_.layers - 1; l >= 0; --l) {
      units_.beforeBackward(blockUnit(l));
      grad = block(std::move(act.blocks[static_cast<std::size_t>(l)]), ctx_.layout.block(l), grad);
      units_.afterBackward(blockUnit(l));
    }

    const EmbeddingBackwardArgs embedding{act.tokens.get(), grad.get(),   ctx_.param(wte), ctx_.param(wpe),
                                          ctx_.grad(wte),   ctx_.grad(wpe), ctx_.layout[wte].numel(),
                                          ctx_.layout[wpe].numel(),         rule(wte, 1),    rule(wpe)};
    // Reads the output gradient, writes both embeddings' full float gradients.
    const std::int64_t bytes = c_.activationBytes(c_.hidden, 4) + 4 * (ctx_.layout[wte].numel() + ctx_.layout[wpe].numel());
    FT_KERNEL(ctx_.issue, kernels::embeddingBackward(ctx_.compute, bytes, embedding));
    ready_(wte);
    ready_(wpe);
    units_.afterBackward(kRootUnit);
  }

 private:
  const StepContext& ctx_;
  const ModelConfig& c_;
  int iteration_;
  const GradReady& ready_;
  UnitHooks& units_;
};

}  // namespace

void issueBackward(const StepContext& ctx, Activations act, int iteration, const GradReady& ready, UnitHooks& units) {
  BackwardPass(ctx, iteration, ready, units).run(std::move(act));
}

}  // namespace framework_trainer
