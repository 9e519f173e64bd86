// The state every CPU codec shares (input, decode output, optional
// error-feedback residual, traffic figures), for every codec alike.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cpu::detail {

/// Common state: input, decode output, optional residual, traffic numbers.
class CpuCodecBase : public Codec {
 public:
  CpuCodecBase(std::string name, std::size_t n, bool ef, traffic::Sizes sizes)
      : name_(std::move(name)), n_(n), ef_(ef), sizes_(sizes), x_(n), y_(n), r_(ef ? n : 0) {}
  std::string name() const override { return name_; }
  std::size_t elements() const override { return n_; }
  void set_input(const float* host_values) override { std::copy(host_values, host_values + n_, x_.begin()); }
  void synchronize() override {}
  std::size_t wire_bytes() const override { return sizes_.wire; }
  double encode_traffic_bytes() const override { return sizes_.encode; }
  double decode_traffic_bytes() const override { return sizes_.decode; }
  std::vector<float> decoded() override { return y_; }
  std::vector<float> residual() override { return r_; }

 protected:
  std::string name_;
  std::size_t n_;
  bool ef_;
  traffic::Sizes sizes_;
  std::vector<float> x_, y_, r_;
};

}  // namespace gw::kernels::cpu::detail
