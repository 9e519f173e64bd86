#include "gradwire/model/buckets.hpp"

#include <stdexcept>

namespace gw {

std::vector<Bucket> assign_buckets(const ModelDesc& model, double element_bytes, double first_bucket_size,
                                   double bucket_size) {
  if (model.tensors.empty()) throw std::invalid_argument("model '" + model.name + "' has no tensors");
  if (!(element_bytes > 0) || !(first_bucket_size > 0) || !(bucket_size > 0))
    throw std::invalid_argument("bucket caps and element size must be positive");
  std::vector<Bucket> out;
  Bucket open;
  bool has_open = false;
  for (std::size_t j = 0; j < model.tensors.size(); ++j) {
    if (!has_open) {
      open = Bucket{};
      open.index = static_cast<int>(out.size());
      open.first_tensor = j;
      has_open = true;
    }
    open.last_tensor = j;
    open.elements += model.tensors[j].numel;
    open.bytes += static_cast<double>(model.tensors[j].numel) * element_bytes;
    const double cap = out.empty() ? first_bucket_size : bucket_size;
    if (open.bytes >= cap) {
      out.push_back(open);
      has_open = false;
    }
  }
  if (has_open) out.push_back(open);
  return out;
}

std::vector<double> backward_shares(const ModelDesc& model) {
  std::vector<double> share(model.tensors.size(), 0.0);
  double total = 0;
  for (const auto& t : model.tensors) total += t.backward_flops_per_sample;
  const bool by_flops = total > 0;
  if (!by_flops) {
    for (const auto& t : model.tensors) total += static_cast<double>(t.numel);
  }
  if (!(total > 0)) throw std::invalid_argument("model '" + model.name + "' has neither FLOPs nor elements");
  for (std::size_t j = 0; j < share.size(); ++j) {
    const auto& t = model.tensors[j];
    share[j] = (by_flops ? t.backward_flops_per_sample : static_cast<double>(t.numel)) / total;
  }
  return share;
}

}  // namespace gw
