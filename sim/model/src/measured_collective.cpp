// Collectives measured on the cluster: the profile's points as a curve, the
// shape it applies to, and the pins NCCL accepts (measured_collective.hpp).
#include "gradwire/model/measured_collective.hpp"

#include <algorithm>

#include "gradwire/core/units.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/fit.hpp"

namespace gw {

std::string MeasuredCollective::label() const {
  return to_string(op) + " on " + std::to_string(gpus) + " GPUs, " + std::to_string(nodes) +
         (nodes == 1 ? " node" : " nodes");
}

std::string MeasuredCollective::range() const {
  if (curve.knots.empty()) return "";
  return units::format_size(curve.knots.front().x) + ".." + units::format_size(curve.knots.back().x);
}

bool MeasuredCollective::in_range(double bytes) const {
  return curve.knots.empty() || (bytes >= curve.knots.front().x && bytes <= curve.knots.back().x);
}

double MeasuredCollective::seconds(double bytes, const std::function<double(double)>& model) const {
  if (curve.knots.empty()) return line.evaluate(bytes);
  if (in_range(bytes)) return curve.evaluate(bytes);
  const CurvePoint& end = bytes < curve.knots.front().x ? curve.knots.front() : curve.knots.back();
  const double at_end = model(end.x);
  if (!(at_end > 0)) return end.seconds;
  return model(bytes) * (end.seconds / at_end);
}

std::vector<MeasuredCollective> measured_collectives(const Profile& profile) {
  std::vector<MeasuredCollective> out;
  for (const CollectiveCost& cc : profile.collectives) {
    if (cc.points.empty() && cc.nodes < 2) continue;
    MeasuredCollective m;
    m.op = cc.op;
    m.gpus = cc.gpus;
    m.nodes = cc.nodes;
    if (!cc.points.empty()) m.curve.knots = fit::normalize_points(cc.points);
    m.line = cc.fit;
    out.push_back(std::move(m));
  }
  return out;
}

const MeasuredCollective* measured_collective_for(const std::vector<MeasuredCollective>& measured, CollectiveOp op,
                                                  const ClusterSpec& c, int ranks) {
  const NcclShape shape = collective_shape(c, ranks);
  if (shape.nodes > 1 && ranks != shape.nodes * c.gpus_per_node) return nullptr;  // not the same GPUs on every node
  for (const MeasuredCollective& m : measured)
    if (m.op == op && m.gpus == ranks && m.nodes == shape.nodes) return &m;
  return nullptr;
}

bool nccl_accepts(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape) {
  const std::vector<Algorithm> nccl = nccl_algorithms(op);
  if (a != Algorithm::Auto && std::find(nccl.begin(), nccl.end(), a) == nccl.end()) return false;
  for (Algorithm algo : nccl) {
    if (a != Algorithm::Auto && algo != a) continue;
    for (const ProtocolInfo& proto : protocols()) {
      if (p != Protocol::Auto && proto.protocol != p) continue;
      if (nccl_pair_refusal(op, algo, proto.protocol, c, shape).empty()) return true;
    }
  }
  return false;
}

}  // namespace gw
