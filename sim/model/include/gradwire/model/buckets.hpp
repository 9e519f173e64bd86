// DDP gradient buckets, as torch.nn.parallel.DistributedDataParallel builds
// them after its first iteration (buckets rebuilt in gradient-ready order):
// tensors in gradient-ready order are appended to the open bucket; a bucket
// closes as soon as its size reaches its cap (the tensor that crosses the cap
// stays in it). The first bucket's cap is first_bucket_size (DDP's
// _DEFAULT_FIRST_BUCKET_BYTES, 1 MiB), every later one bucket_size
// (bucket_cap_mb, 25 MiB). Plain C++, no SimGrid. See docs/model.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gradwire/model/model_desc.hpp"

namespace gw {

struct Bucket {
  int index = 0;                 ///< 0 = the first bucket to become ready
  std::size_t first_tensor = 0;  ///< index into ModelDesc::tensors (gradient-ready order)
  std::size_t last_tensor = 0;   ///< inclusive; the bucket is ready when this gradient is
  std::int64_t elements = 0;
  double bytes = 0;  ///< elements x gradient bytes per element
};

/// Assigns the model's tensors to buckets. element_bytes is the gradient
/// precision's size (4 for fp32, 2 for bf16/fp16). Caps must be > 0.
/// Throws std::invalid_argument for a model without tensors or a bad cap.
std::vector<Bucket> assign_buckets(const ModelDesc& model, double element_bytes, double first_bucket_size,
                                   double bucket_size);

/// Fractions of the backward pass: entry j is the share of the backward time
/// spent on tensor j (its backward FLOPs over the total; by element count when
/// the model gives no backward FLOPs). Sums to 1.
std::vector<double> backward_shares(const ModelDesc& model);

}  // namespace gw
