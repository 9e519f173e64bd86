// The wire format of sharded traffic (gradwire/model/sharded_wire.hpp;
// docs/model.md, section 7c, "Compressed sharded traffic").
#include "gradwire/model/sharded_wire.hpp"

#include <algorithm>
#include <cmath>

namespace gw {

namespace {

/// Bytes the project's codecs read and write per element: fp32 in, int8 out
/// (the int8 codec's encode; its decode the reverse), fp32 in, 16 bits out
/// (the cast codec).
constexpr double kInt8CodecBytes = 4 + 1;
constexpr double kCastCodecBytes = 4 + 2;

}  // namespace

UnitElements& UnitElements::operator+=(const UnitElements& o) {
  all += o.all;
  matrices += o.matrices;
  qgz_groups += o.qgz_groups;
  float8 += o.float8;
  return *this;
}

UnitElements unit_elements(const ModelDesc& model, const ShardUnit& unit, int world) {
  UnitElements u;
  for (int i : unit.tensors) {
    const TensorDesc& t = model.tensors[static_cast<std::size_t>(i)];
    const double n = static_cast<double>(t.numel);
    u.all += n;
    if (t.shape.size() >= 2 && t.numel % (2LL * world) == 0) {
      u.matrices += n;
      u.qgz_groups += static_cast<double>(std::max({t.shape[0], t.shape[1], static_cast<std::int64_t>(world)}));
    }
    if (unit.repeated && t.shape.size() == 2) u.float8 += n;
  }
  return u;
}

UnitElements model_elements(const ModelDesc& model, int world) {
  UnitElements sum;
  for (const ShardUnit& unit : shard_units(model)) sum += unit_elements(model, unit, world);
  return sum;
}

UnitElements uniform_elements(double parameters) { return {parameters, parameters, 0, parameters}; }

double WireKernels::codec(const std::string& name, bool encode, double elements) const {
  return codec_time && elements > 0 ? codec_time(name, encode, elements) : 0.0;
}

double WireKernels::bandwidth_bound(double bytes) const { return copy_bandwidth > 0 ? bytes / copy_bandwidth : 0.0; }

ShardWireFormat wire_format(const ShardingSpec& s, double element_bytes, bool bf16) {
  ShardWireFormat f;
  f.source_bytes = element_bytes;
  f.gather_bytes = s.gather_bytes > 0 ? s.gather_bytes : element_bytes;
  f.reduce_bytes = s.reduce_bytes > 0 ? s.reduce_bytes : element_bytes;
  f.bf16 = bf16;
  f.qwz = s.scheme == ShardingScheme::ZeroPP && s.qwz;
  f.qgz = s.scheme == ShardingScheme::ZeroPP && s.qgz;
  f.float8 = s.float8_all_gather;
  return f;
}

std::string wire_label(const ShardWireFormat& f) {
  std::string gather = f.qwz ? "int8 weights" : f.float8 ? "fp8 weights" : "";
  std::string reduce = f.qgz ? "int4 gradients" : "";
  if (gather.empty() && reduce.empty()) return "uncompressed";
  return gather + (gather.empty() || reduce.empty() ? "" : " + ") + reduce;
}

std::string scheme_label(const ShardingSpec& s, ActivationCheckpointing ac) {
  const bool checkpointed = ac != ActivationCheckpointing::None;
  if (s.scheme == ShardingScheme::Ddp && !checkpointed) return "";
  std::string label = to_string(s.scheme) + " (" + to_string(s.framework);
  const ShardWireFormat f = wire_format(s, 2);
  if (f.qwz || f.qgz || f.float8) label += ", " + wire_label(f);
  label += ")";
  return checkpointed ? label + " + " + to_string(ac) + " activation checkpointing" : label;
}

GatherWire gather_wire(const ShardWireFormat& f, const UnitElements& u, int ranks, const WireKernels& k) {
  GatherWire g;
  const double e = f.source_bytes, shard = u.all / std::max(1, ranks);
  if (f.qwz) {
    // CUDAQuantizer.quantize on this rank's partition (fp16 in, int8 out,
    // one fp32 scale per group of about 8,000), both all-gathered; wait()
    // dequantizes the gathered int8 to fp16 and casts it to the parameters'
    // dtype (bf16: 2 + 2 bytes per element more).
    g.bytes = u.all;
    g.scale_bytes = 4.0 * std::ceil(shard / kQwzGroupElements) * std::max(1, ranks);
    g.sender_seconds = k.codec("int8", true, shard * (e + 1) / kInt8CodecBytes);
    g.receiver_seconds =
        k.codec("int8", false, u.all * (1 + e) / kInt8CodecBytes) + (f.bf16 ? k.bandwidth_bound(4.0 * u.all) : 0.0);
    g.unsharded_bytes = u.all * e;
    g.buffer_bytes = g.bytes + g.scale_bytes;
    return g;
  }
  const double fp8 = f.float8 ? u.float8 : 0.0;
  // torchao's fsdp_pre_all_gather casts the shard of each Float8Linear
  // weight to fp8 with its precomputed scale; the matmuls take the gathered
  // fp8 weights as they are (fsdp_post_all_gather: no dequantisation).
  g.bytes = (u.all - fp8) * f.gather_bytes + fp8;
  g.sender_seconds = k.codec("bf16", true, fp8 / std::max(1, ranks) * (e + 1) / kCastCodecBytes);
  g.unsharded_bytes = g.bytes;
  return g;
}

ReduceWire reduce_wire(const ShardWireFormat& f, const UnitElements& u, const ShardTopology& t, const WireKernels& k) {
  ReduceWire r;
  if (!f.qgz || u.matrices <= 0) {
    r.reduce_scatter_bytes = u.all * f.reduce_bytes;
    return r;
  }
  const double m = u.matrices, e = f.source_bytes, g = std::min(t.world, t.gpus_per_node);
  r.reduce_scatter_bytes = (u.all - m) * f.reduce_bytes;
  r.all_to_all_bytes = m / 2 + 4.0 * u.qgz_groups;  // int4 + one fp32 scale per group
  // all_to_all_quant_reduce's kernels. Its block quantizers are the int8
  // codec's kind (per-group absmax), charged at the element count moving
  // the same bytes: swizzle_quant (e in, int4 out), quantized_reduction (the
  // node's g int4 slices in, its 1/g out), dequantize (int4 in, e out).
  // Then plain elementwise work over the copy bandwidth: the sum of the n
  // nodes' chunks (n adds of two reads and a write) and the division by n.
  const double w = t.world;
  r.seconds = k.codec("int8", true, m * (e + 0.5) / kInt8CodecBytes) +
              k.codec("int8", true, (m / 2 + m / (2 * g)) / kInt8CodecBytes) +
              k.codec("int8", false, (m / (2 * g) + m * e / g) / kInt8CodecBytes) +
              k.bandwidth_bound(3 * e * m / g + 2 * e * m / w);
  // Live at once: the int4 input and output of each stage and the fp16
  // dequantized slice.
  r.buffer_bytes = m + m / g + m * e / g;
  return r;
}

}  // namespace gw
