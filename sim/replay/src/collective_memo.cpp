#include "gradwire/replay/collective_memo.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace gw {

std::string CollectiveMemo::key(const engine::CollectiveRequest& r) {
  // Exact bits of the size: equal keys are equal requests, nothing rounded.
  std::string k = engine::to_string(r.op) + '/' + engine::to_string(r.algorithm) + '/' +
                  engine::to_string(r.protocol) + '/' +
                  (r.granularity == engine::Granularity::Aggregated ? "aggregated" : "per-step") + '/';
  char bits[sizeof r.bytes];
  std::memcpy(bits, &r.bytes, sizeof bits);
  k.append(bits, sizeof bits);
  for (int rank : r.ranks) k += '/' + std::to_string(rank);
  return k;
}

std::string CollectiveMemo::encode(const Durations& durations) {
  static const char* const kHex = "0123456789abcdef";
  std::string line;
  for (const auto& [k, seconds] : durations) {
    for (unsigned char c : k) {
      line += kHex[c >> 4];
      line += kHex[c & 15];
    }
    char figure[64];
    std::snprintf(figure, sizeof figure, ":%a ", seconds);
    line += figure;
  }
  return line;
}

CollectiveMemo::Durations CollectiveMemo::decode(const std::string& line) {
  Durations out;
  std::istringstream in(line);
  std::string entry;
  auto nibble = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw std::runtime_error("collective memo: bad key digit");
  };
  while (in >> entry) {
    const auto colon = entry.find(':');
    if (colon == std::string::npos || colon % 2 != 0) throw std::runtime_error("collective memo: bad entry");
    std::string k;
    for (std::size_t i = 0; i < colon; i += 2) k += static_cast<char>(nibble(entry[i]) * 16 + nibble(entry[i + 1]));
    char* end = nullptr;
    const double seconds = std::strtod(entry.c_str() + colon + 1, &end);
    if (end == entry.c_str() + colon + 1 || *end != '\0') throw std::runtime_error("collective memo: bad duration");
    out.emplace(std::move(k), seconds);
  }
  return out;
}

double CollectiveMemo::run(engine::Simulation& sim, const engine::CollectiveRequest& request) {
  const long begun = ++runs_begun_;
  const long ended = sim.network_activity().flows_ended;
  const bool alone = in_flight_ == 0;  // no other collective on the network
  const std::string k = enabled_ ? key(request) : std::string();
  ++in_flight_;
  if (enabled_ && alone) {
    if (const auto it = durations_.find(k); it != durations_.end()) {
      engine::Simulation::sleep_for(it->second);
      --in_flight_;
      // Another collective begun in the span, or any flow ended in it: the
      // network was not this collective's alone.
      if (runs_begun_ != begun || sim.network_activity().flows_ended != ended) exact_ = false;
      ++replayed_;
      return it->second;
    }
  }
  const double start = engine::Simulation::now();
  sim.run_collective(request);
  const double duration = engine::Simulation::now() - start;
  --in_flight_;
  ++simulated_;
  if (enabled_ && alone && runs_begun_ == begun) durations_.emplace(k, duration);
  return duration;
}

}  // namespace gw
