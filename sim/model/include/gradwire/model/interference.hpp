// Compute/communication interference (docs/model.md, section 7): how much a
// GPU's compute slows while NCCL or a codec runs beside it, and the codecs
// while compute runs. Measured figures live in a profile's `interference:`
// section (docs/profiles.md); without them the model uses 0 and the band
// spans the published range below. Plain C++.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace gw {

/// The largest slow-down a profile may record (11 times as long): above it
/// a measurement is broken, not slow.
inline constexpr double kMaxInterference = 10;

/// One codec's own figures (`interference.codecs.<codec>`), each optional.
struct CodecInterference {
  std::optional<double> compute_under_codec;  ///< a GEMM stream beside this codec's kernels
  std::optional<double> codec_under_compute;  ///< this codec beside a GEMM stream
  bool operator==(const CodecInterference&) const = default;
};

/// Slow-downs as fractions (0.2: 20% longer), each optional (not measured).
struct InterferenceFigures {
  std::optional<double> compute_under_nccl;   ///< a GEMM stream beside NCCL collectives
  std::optional<double> compute_under_codec;  ///< a GEMM stream beside a codec's kernels
  std::optional<double> codec_under_compute;  ///< a codec beside a GEMM stream
  /// Per codec key of the compressor table (no _ef suffix): measured beside
  /// that codec's gradwire kernels; the two codec figures above are then
  /// the median over the codecs (the calibrator's summary).
  std::map<std::string, CodecInterference> codecs{};
  bool operator==(const InterferenceFigures&) const = default;

  /// The figures a run whose gradwire codec is `codec` uses: that codec's
  /// own where measured, the summary figures otherwise. An empty `codec`
  /// (no compression, or PyTorch's hooks, whose kernels are not gradwire's)
  /// keeps the summary figures.
  InterferenceFigures for_codec(const std::string& codec) const {
    InterferenceFigures f{compute_under_nccl, compute_under_codec, codec_under_compute, {}};
    const auto it = codecs.find(codec);
    if (codec.empty() || it == codecs.end()) return f;
    if (it->second.compute_under_codec) f.compute_under_codec = it->second.compute_under_codec;
    if (it->second.codec_under_compute) f.codec_under_compute = it->second.codec_under_compute;
    return f;
  }
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
