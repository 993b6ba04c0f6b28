// The real model dp_trainer trains: `layers` residual blocks of width `width`,
//   out = in + tanh(W in + b),
// with a mean-squared-error loss against a fixed target function. Parameters and gradients
// live in one flat buffer, layer after layer, each layer its W (row-major, W[out][in]) then
// its b, so that any run of consecutive layers is one contiguous range (one bucket).
#pragma once

#include <cstddef>

namespace dp_trainer {

struct ModelShape {
  int layers = 0;
  int width = 0;  // features per sample = W's rows and columns
  int batch = 0;  // samples per rank per step

  std::size_t paramsPerLayer() const {
    return static_cast<std::size_t>(width) * static_cast<std::size_t>(width) + static_cast<std::size_t>(width);
  }
  std::size_t paramCount() const { return paramsPerLayer() * static_cast<std::size_t>(layers); }
  std::size_t layerOffset(int layer) const { return paramsPerLayer() * static_cast<std::size_t>(layer); }
  // Offset of the bias inside a layer's parameters.
  std::size_t biasOffset() const { return static_cast<std::size_t>(width) * static_cast<std::size_t>(width); }
  // Elements of one activation tensor (batch x width).
  std::size_t activationCount() const {
    return static_cast<std::size_t>(batch) * static_cast<std::size_t>(width);
  }
  std::size_t gradientBytesPerLayer() const { return paramsPerLayer() * sizeof(float); }
};

// Limits the kernels' launch geometry relies on (one thread per feature in a block's row).
inline constexpr int kMaxWidth = 1024;
inline constexpr int kMaxBatch = 4096;

}  // namespace dp_trainer
