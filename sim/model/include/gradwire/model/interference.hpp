// Compute/communication interference (docs/model.md, section 7): how much a
// GPU's compute slows while NCCL or a codec runs beside it, and the codecs
// while compute runs. Measured figures live in a profile's `interference:`
// section (docs/profiles.md); without them the model uses 0 and the band
// spans the published range below. Plain C++.
#pragma once

#include <optional>

namespace gw {

/// Slow-downs as fractions (0.2: 20% longer), each optional (not measured).
struct InterferenceFigures {
  std::optional<double> compute_under_nccl;   ///< a GEMM stream beside NCCL collectives
  std::optional<double> compute_under_codec;  ///< a GEMM stream beside a codec's kernels
  std::optional<double> codec_under_compute;  ///< a codec beside a GEMM stream
  bool operator==(const InterferenceFigures&) const = default;
};

/// Upper end of the published compute slow-down under overlapped
/// communication, used for the band when nothing is measured: Lee et al.,
/// "Characterizing Compute-Communication Overlap in GPU-Accelerated
/// Distributed Deep Learning: Performance and Power Implications",
/// arXiv:2507.03114 (2025): GPT and LLaMA layers on 4 A100, H100, MI250 and
/// MI210, compute slowed 18.9% on average and 40.0% at most while overlapped.
inline constexpr double kInterferenceRangeHigh = 0.40;

/// What the comm stream runs when a backward tensor starts: nothing, a
/// collective (or its launches: compute slows by the NCCL figure) or a codec.
enum class CommActivity { Idle, Collective, Codec };

}  // namespace gw
