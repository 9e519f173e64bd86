#include "gradwire/core/wire.hpp"

#include <algorithm>

namespace gw::wire {
namespace {

constexpr std::string_view kMagic = "GW";
constexpr std::size_t kHeader = 2 + 4 + sizeof(std::uint32_t) + sizeof(std::uint64_t);

}  // namespace

std::string seal(std::string_view kind, std::uint32_t version, std::string_view payload) {
  if (kind.size() != 4) throw std::logic_error("wire::seal: a kind is 4 characters");
  std::string out;
  out.reserve(kHeader + payload.size());
  out += kMagic;
  out += kind;
  Writer w;
  w.put(version);
  w.put(static_cast<std::uint64_t>(payload.size()));
  out += w.take();
  out += payload;
  return out;
}

std::string_view open(std::string_view message, std::string_view kind, std::uint32_t version, const std::string& what) {
  Reader header(message.substr(0, std::min(message.size(), kHeader)), what);
  if (message.size() < kHeader)
    header.fail("truncated (" + std::to_string(message.size()) + " bytes, shorter than its " + std::to_string(kHeader) +
                "-byte header)");
  if (message.substr(0, 2) != kMagic || message.substr(2, 4) != kind)
    header.fail("not a " + std::string(kind) + " message");
  char skip[6];
  for (char& c : skip) header.get(c);
  const auto v = header.get<std::uint32_t>();
  if (v != version)
    header.fail("version " + std::to_string(v) + ", this gradwire reads version " + std::to_string(version));
  const auto n = header.get<std::uint64_t>();
  const std::size_t got = message.size() - kHeader;
  if (n != got)
    header.fail(n > got ? "truncated (" + std::to_string(got) + " of " + std::to_string(n) + " payload bytes)"
                        : std::to_string(got - n) + " bytes after the " + std::to_string(n) + "-byte payload");
  return message.substr(kHeader);
}

}  // namespace gw::wire
