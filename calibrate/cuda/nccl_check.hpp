// The NCCL overload of the project's one error check (GW_CHECK, in
// gradwire/cuda/check.hpp): a failed NCCL call throws std::runtime_error
// naming the call, its file and line, and NCCL's own error text.
#pragma once

#include <nccl.h>

#include <stdexcept>

#include "gradwire/cuda/check.hpp"

namespace gw::cuda {

inline void check(ncclResult_t e, const char* what, const char* file, int line) {
  if (e != ncclSuccess) throw std::runtime_error(where(what, file, line) + ncclGetErrorString(e));
}

}  // namespace gw::cuda
