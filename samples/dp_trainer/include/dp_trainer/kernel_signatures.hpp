// dp_trainer's kernels as simgpu's profile sees them: their names (profile `kernels[].name`)
// and the 0-based positions of the integer parameters that carry the modelled LLM block's
// sizes (profile `params`). The kernels themselves are in src/app/kernels.cu; their parameter
// lists must keep these positions (the profiles in samples/dp_trainer/profiles/ rely on them):
//
//   layer_forward        (float* out, float* act, const float* in, const float* params,
//                         int batch, int width, int cost_tokens, int cost_hidden, int cost_block_width)
//   mse_loss             (float* grad_out, float* loss, const float* out, const float* target,
//                         int batch, int width, int cost_tokens, int cost_hidden)
//   layer_backward_params(float* grad_params, const float* grad_out, const float* act, const float* in,
//                         int batch, int width, int cost_tokens, int cost_hidden, int cost_block_width)
//   layer_backward_input (float* grad_in, const float* grad_out, const float* act, const float* params,
//                         int batch, int width, int cost_tokens, int cost_hidden, int cost_block_width)
//   sgd_update           (float* params, const float* grads, int count, float lr,
//                         int cost_hidden, int cost_block_width)
#pragma once

#include <string_view>

namespace dp_trainer::kernels {

inline constexpr std::string_view kLayerForward = "layer_forward";
inline constexpr std::string_view kMseLoss = "mse_loss";
inline constexpr std::string_view kLayerBackwardParams = "layer_backward_params";
inline constexpr std::string_view kLayerBackwardInput = "layer_backward_input";
inline constexpr std::string_view kSgdUpdate = "sgd_update";

// Positions in the four layer kernels and mse_loss.
inline constexpr int kLayerParamCount = 9;
inline constexpr int kBatchIndex = 4;
inline constexpr int kWidthIndex = 5;
inline constexpr int kCostTokensIndex = 6;
inline constexpr int kCostHiddenIndex = 7;
inline constexpr int kCostBlockWidthIndex = 8;  // not in mse_loss
inline constexpr int kLossParamCount = 8;

// Positions in sgd_update.
inline constexpr int kSgdParamCount = 6;
inline constexpr int kSgdCountIndex = 2;
inline constexpr int kSgdCostHiddenIndex = 4;
inline constexpr int kSgdCostBlockWidthIndex = 5;

}  // namespace dp_trainer::kernels
