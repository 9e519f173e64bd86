// Collectives measured on the cluster (docs/model.md): a profile's measured
// points of one collective on one cluster shape (op, GPUs, nodes), which
// give its time in place of NCCL's model on a cluster of that shape
// (`simulate`'s plan, `gradwire collective`). Plain C++, no SimGrid.
//
//   const auto curves = gw::measured_collectives(profile);
//   if (const auto* m = gw::measured_collective_for(curves, op, cluster, ranks))
//     t = m->seconds(bytes, model);  // model: the modelled time at a size
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/nccl_model.hpp"
#include "gradwire/model/profile.hpp"

namespace gw {

struct ClusterSpec;

/// One collective measured on one cluster shape.
struct MeasuredCollective {
  CollectiveOp op = CollectiveOp::AllReduce;
  int gpus = 0;
  int nodes = 1;
  /// The measured points as knots (x: bytes as nccl-tests counts them, the
  /// profile's `points`, every one, as measured): between two, log(time) is
  /// linear in log(size), so the curve passes through each point and is
  /// monotone between two neighbours (PiecewiseLogFit::evaluate). Empty for
  /// an entry written with alpha and beta only.
  PiecewiseLogFit curve;
  /// An entry without points, across two nodes or more: its alpha-beta line
  /// at every size (what such an entry always meant).
  AlphaBetaFit line;

  /// "allreduce on 16 GPUs, 2 nodes".
  std::string label() const;
  /// The measured sizes, "8 B..8.00 GiB" (units::format_size); "" for a line.
  std::string range() const;
  /// Whether `bytes` lies within the measured sizes (always, for a line).
  bool in_range(double bytes) const;
  /// Seconds at `bytes`: within the measured sizes the curve; outside them
  /// the model joined to the curve at the nearer end, model(bytes) x
  /// curve(end) / model(end) (continuous there; the model's growth beyond).
  /// `model` gives the modelled time of this collective at a size.
  double seconds(double bytes, const std::function<double(double)>& model) const;
};

/// The profile's measured collectives: every `collectives[]` entry with
/// points (calibrate --from-nccl-tests, --mpi, a measured single-node run),
/// and every entry across two nodes or more (points or not). Entries of one
/// node without points (the datasheet profiles' derived fits) are not
/// measurements of the user's machine and are left out.
std::vector<MeasuredCollective> measured_collectives(const Profile& profile);

/// The one of `measured` that measured `op` on the shape of the first
/// `ranks` ranks of `c`: its GPU count `ranks`, its node count the nodes they
/// span and, across nodes, whole nodes (the same GPUs per node); nullptr
/// when none did.
const MeasuredCollective* measured_collective_for(const std::vector<MeasuredCollective>& measured, CollectiveOp op,
                                                  const ClusterSpec& c, int ranks);

/// Whether NCCL runs `op` under the pins (a, p) on `c` at `shape`: `a` auto or
/// one of NCCL's algorithms for the op (nccl_algorithms; never gradwire's own
/// hierarchical), and a protocol (`p`, or any when auto) it runs with
/// (nccl_pair_refusal empty). A measured time stands for every such pin: the
/// measurement already is NCCL's choice.
bool nccl_accepts(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape);

}  // namespace gw
