// make_cuda_backend in builds without CUDA.
#include "gradwire/calibrate/calibrate.hpp"

namespace gw::calibrate {

std::unique_ptr<Backend> make_cuda_backend(std::string* why) {
  if (why) *why = "this gradwire was built without CUDA (nvcc was not found at configure time)";
  return nullptr;
}

}  // namespace gw::calibrate
