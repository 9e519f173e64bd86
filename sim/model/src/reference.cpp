#include "gradwire/model/reference.hpp"

namespace gw {

bool looks_like_path(std::string_view ref) {
  return ref.find('/') != std::string_view::npos || ref.ends_with(".yaml") || ref.ends_with(".yml");
}

}  // namespace gw
