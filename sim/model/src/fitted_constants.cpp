// The iteration model's fitted constants (iteration_model.hpp,
// FittedConstants), fitted over the validation devset. Refit after any change
// to the model: `gradwire validate iterations --fit` prints the line below;
// tests/validate fails while these differ from the fit by more than 1%
// (docs/validation.md, "Fitted constants and the band").
#include "gradwire/model/iteration_model.hpp"

namespace gw {

// compute_under_nccl, rank_jitter, host_per_collective (s)
const FittedConstants kFittedConstants{0.06937, 0.04794, 0};

}  // namespace gw
