// A real nccl-tests log as a validation case (`gradwire collective --compare`):
// its times are the measured points (per size the median of the out-of-place
// and in-place runs, as calibrate --from-nccl-tests records them; the
// out-of-place time alone where the in-place one is missing), scored against the
// simulation with the validation's own score_case (gradwire/validate/collectives.hpp).
#pragma once

#include <string>

#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/validate/collectives.hpp"

namespace gw::validate {

/// The case of `log` measured for `op` on `world` ranks, simulated on
/// `cluster_file`'s cluster with `algorithm`: one point per size > 0 (the
/// first run of increasing sizes), busbw recomputed from the printed times
/// (the printed busbw is rounded to 0.01 GB/s, the times are not).
CollectiveCase case_from_log(const nccl_tests::Log& log, CollectiveOp op, int world, const std::string& cluster_file,
                             const std::string& algorithm);

/// Measured vs predicted per size (time and busbw, error) and the summary
/// line (median |error| below and from 1 MiB, worst), as aligned text.
std::string render_comparison(const CaseResult& r);

}  // namespace gw::validate
