// The wire format of compressed sharded traffic
// (gradwire/model/sharded_wire.hpp): qwZ's int8 blocks and their scales,
// qgZ's int4 hierarchical all-to-all with its fallback, FSDP2's fp8
// all-gather, the kernels' costs, the ZeRO++ volumes of devset part E3 and
// the buffers they add to a GPU's memory.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/sharded_wire.hpp"
#include "gradwire/model/sharding.hpp"
#include "synthetic.hpp"

namespace gw {
namespace {

ShardingSpec spec_of(const std::string& text) { return test::sharding_of(text); }

/// One block (a 64 x 32 matrix and its 32-element norm) and a 100 x 32 head.
ModelDesc block_and_head() {
  return test::model_of({test::tensor("lm_head.weight", {100, 32}, 1), test::tensor("layers.0.norm", {32}, 1),
                         test::tensor("layers.0.w", {64, 32}, 1)});
}

// Codec times as a record of what was asked: 1 ns per element, the name and
// direction kept.
struct CodecLog {
  std::vector<std::string> calls;
  CodecTimeFn fn() {
    return [this](const std::string& name, bool encode, double elements) {
      calls.push_back(name + (encode ? " encode" : " decode"));
      return elements * 1e-9;
    };
  }
};

TEST(ShardedWire, UnitElementsSplitByWhatEachFormatTakes) {
  const ModelDesc m = block_and_head();
  const auto units = shard_units(m);
  ASSERT_EQ(units.size(), 2u);  // lm_head, layers.0
  const UnitElements head = unit_elements(m, units[0], 8), block = unit_elements(m, units[1], 8);
  EXPECT_DOUBLE_EQ(head.all, 3200);
  EXPECT_DOUBLE_EQ(head.matrices, 3200);   // 3,200 divides by 2 x 8
  EXPECT_DOUBLE_EQ(head.qgz_groups, 100);  // max(100, 32, 8)
  EXPECT_DOUBLE_EQ(head.float8, 0);        // the head stays in param_dtype
  EXPECT_DOUBLE_EQ(block.all, 2048 + 32);
  EXPECT_DOUBLE_EQ(block.matrices, 2048);  // the norm falls back to a reduce-scatter
  EXPECT_DOUBLE_EQ(block.float8, 2048);    // the block's linear weight
  // 2 W = 4,096 divides neither matrix: qgZ reduce-scatters both.
  EXPECT_DOUBLE_EQ(unit_elements(m, units[1], 2048).matrices, 0);
  EXPECT_DOUBLE_EQ(model_elements(m, 8).all, 3200 + 2080);
}

TEST(ShardedWire, QwzSendsInt8BlocksAndTheirScales) {
  const ShardWireFormat f = wire_format(spec_of("{scheme: zeropp, hpz: false}"), 2, true);
  ASSERT_TRUE(f.qwz && f.qgz);
  CodecLog log;
  const WireKernels k{log.fn(), 1e12};
  const UnitElements u{8 * 20000.0, 0, 0, 0};
  const GatherWire g = gather_wire(f, u, 8, k);
  EXPECT_DOUBLE_EQ(g.bytes, u.all);              // one byte per element
  EXPECT_DOUBLE_EQ(g.scale_bytes, 4.0 * 3 * 8);  // ceil(20,000 / 8,000) fp32 scales per rank
  // The int8 codec at the element count moving the same bytes: the shard
  // read in 16 bits and written in 8 (3 of the codec's 5 bytes per element).
  EXPECT_DOUBLE_EQ(g.sender_seconds, 20000 * 3.0 / 5 * 1e-9);
  // Every receiver dequantizes the unit, then casts fp16 to bf16 (4 bytes per element).
  EXPECT_DOUBLE_EQ(g.receiver_seconds, u.all * 3.0 / 5 * 1e-9 + 4 * u.all / 1e12);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"int8 encode", "int8 decode"}));
  EXPECT_DOUBLE_EQ(g.unsharded_bytes, 2 * u.all);
  EXPECT_DOUBLE_EQ(g.buffer_bytes, g.bytes + g.scale_bytes);
}

TEST(ShardedWire, QgzReducesMatricesThroughAHierarchicalAllToAllInInt4) {
  const ShardWireFormat f = wire_format(spec_of("{scheme: zeropp, hpz: false}"), 2);
  const ShardTopology t{32, 8};
  const UnitElements u{1'000'000 + 4096, 1'000'000, 1000, 0};
  CodecLog log;
  const ReduceWire r = reduce_wire(f, u, t, {log.fn(), 1e12});
  EXPECT_DOUBLE_EQ(r.all_to_all_bytes, 500'000 + 4000.0);  // int4 + fp32 scales
  EXPECT_DOUBLE_EQ(r.reduce_scatter_bytes, 4096 * 2.0);    // the rest, in reduce_dtype
  // The block quantizers as the int8 codec at equal bytes (5 per element):
  // quantize (2.5 m bytes), the node's reduction (m/2 + m/16), dequantize
  // (m/16 + m/4); over the copy bandwidth the sum of 4 nodes' chunks (3 x
  // 2 m / 8) and the division (2 x 2 m / 32).
  const double m = 1e6;
  EXPECT_EQ(log.calls, (std::vector<std::string>{"int8 encode", "int8 encode", "int8 decode"}));
  const double codec = (2.5 * m + 0.5 * m + m / 16 + m / 16 + m / 4) / 5 * 1e-9;
  EXPECT_NEAR(r.seconds, codec + (0.75 * m + m / 8) / 1e12, 1e-15);
  EXPECT_DOUBLE_EQ(r.buffer_bytes, m + m / 8 + 2 * m / 8);
  // Without qgZ: one reduce-scatter of everything.
  const ReduceWire plain = reduce_wire(wire_format(spec_of("zero3"), 2), u, t, {});
  EXPECT_DOUBLE_EQ(plain.reduce_scatter_bytes, u.all * 2);
  EXPECT_DOUBLE_EQ(plain.all_to_all_bytes, 0);
}

// FSDP2 with torchao's enable_fsdp_float8_all_gather: the linear weights
// travel in fp8, half their bf16 bytes; the norms stay bf16.
TEST(ShardedWire, Float8AllGatherHalvesTheLinearWeights) {
  const ModelDesc m = load_model("llama2-7b");
  const auto units = shard_units(m);
  const ShardUnit* block = nullptr;
  for (const auto& u : units)
    if (u.repeated) block = &u;
  ASSERT_NE(block, nullptr);
  const UnitElements u = unit_elements(m, *block, 64);
  const ShardWireFormat bf16 = wire_format(spec_of("{scheme: zero3, framework: fsdp2}"), 2);
  const ShardWireFormat fp8 = wire_format(spec_of("{scheme: zero3, framework: fsdp2, float8_all_gather: true}"), 2);
  EXPECT_DOUBLE_EQ(u.all - u.float8, 2 * 4096.0);  // the two RMSNorm scales of a block
  const GatherWire a = gather_wire(bf16, u, 64, {}), b = gather_wire(fp8, u, 64, {});
  EXPECT_DOUBLE_EQ(a.bytes - b.bytes, u.float8);
  EXPECT_NEAR(b.bytes / a.bytes, 0.5, 1e-3);
  EXPECT_EQ(b.scale_bytes, 0);
  EXPECT_EQ(b.receiver_seconds, 0);  // the fp8 matmuls take the gathered weights as they are
  CodecLog log;
  EXPECT_DOUBLE_EQ(gather_wire(fp8, u, 64, {log.fn(), 0}).sender_seconds, u.float8 / 64 * 3.0 / 6 * 1e-9);
  EXPECT_EQ(log.calls, std::vector<std::string>{"bf16 encode"});
  EXPECT_THROW(spec_of("{scheme: zero3, framework: fsdp1, float8_all_gather: true}"), InputError);
  EXPECT_EQ(wire_label(fp8), "fp8 weights");
  EXPECT_EQ(wire_label(wire_format(spec_of("zeropp"), 2)), "int8 weights + int4 gradients");
  EXPECT_EQ(wire_label(bf16), "uncompressed");
}

// Devset part E3 (DeepSpeed blogs/zeropp): per optimizer step across nodes,
// qwZ 0.5 M and qgZ 0.25 M (M the model in 16 bits), here with the scales
// and the fallback reduce-scatter of a real model, at W = 1,024 (128 nodes).
TEST(ShardedWire, ZeroPlusPlusComponentsMatchTheBlogTable) {
  const ModelDesc m = load_model("llama2-7b");
  const ShardTopology t{1024, 8};
  const UnitElements all = model_elements(m, t.world);
  const double big_m = 2.0 * static_cast<double>(m.parameters), ag = 1023.0 / 1024, a2a = 127.0 / 128;
  auto cross = [&](const std::string& s) {
    return sharding_plan(spec_of(s), t, m.parameters, 2, 1, &all).cross_node_bytes_per_node(8);
  };
  const double zero3 = cross("zero3");
  EXPECT_DOUBLE_EQ(zero3, 3 * ag * big_m);
  // qwZ alone: both all-gathers in int8 (no hpZ), the reduce-scatter in bf16.
  const double qwz = cross("{scheme: zeropp, hpz: false, qgz: false}");
  EXPECT_NEAR((qwz - ag * big_m) / 2 / (ag * big_m), 0.5, 1e-3);  // 0.5 M each
  // qgZ alone: int4 matrices, the node's slice across (M / 4 x (n-1)/n),
  // the one-dimensional tensors reduce-scattered in bf16.
  const double qgz = cross("{scheme: zeropp, hpz: false, qwz: false}");
  const double rest = static_cast<double>(m.parameters) - all.matrices;
  EXPECT_DOUBLE_EQ(qgz - 2 * ag * big_m, a2a * (all.matrices / 2 + 4 * all.qgz_groups) + ag * 2 * rest);
  EXPECT_NEAR((qgz - 2 * ag * big_m) / big_m, 0.25, 0.002);
}

// The buffers compressed traffic adds: qwZ's int8 receive buffer for each
// unit in flight, qgZ's int4 buffers; fp8 all-gather shrinks the unsharded units.
TEST(ShardedWire, MemoryOfTheQuantisationBuffers) {
  const ModelDesc m = load_model("llama2-7b");
  WorkloadSpec w;
  w.model = "llama2-7b";
  w.precision = Precision::BF16;
  w.micro_batch = 1;
  const ShardTopology t{32, 8};
  const double cap = 80.0 * (1ull << 30);
  const ShardedMemory zero3 = sharded_memory(m, w, spec_of("zero3"), t, {}, cap);
  EXPECT_EQ(zero3.wire_buffers, 0);
  ShardUnit big;
  for (const auto& unit : shard_units(m))
    if (unit.parameters > big.parameters) big = unit;
  const UnitElements u = unit_elements(m, big, 32);
  const ShardedMemory qwz = sharded_memory(m, w, spec_of("{scheme: zeropp, hpz: false, qgz: false}"), t, {}, cap);
  const double scales = 4.0 * std::ceil(u.all / 32 / kQwzGroupElements) * 32;
  EXPECT_DOUBLE_EQ(qwz.wire_buffers, 2 * (u.all + scales));  // prefetch 1: two units in flight
  EXPECT_DOUBLE_EQ(qwz.unit_buffers, zero3.unit_buffers);
  EXPECT_DOUBLE_EQ(qwz.total - zero3.total, qwz.wire_buffers);
  const ShardedMemory qgz = sharded_memory(m, w, spec_of("{scheme: zeropp, hpz: false, qwz: false}"), t, {}, cap);
  EXPECT_DOUBLE_EQ(qgz.wire_buffers, u.matrices + u.matrices / 8 + 2 * u.matrices / 8);
  const ShardedMemory fp8 =
      sharded_memory(m, w, spec_of("{scheme: zero3, framework: fsdp2, float8_all_gather: true}"), t, {}, cap);
  const ShardedMemory bf16 = sharded_memory(m, w, spec_of("{scheme: zero3, framework: fsdp2}"), t, {}, cap);
  EXPECT_DOUBLE_EQ(bf16.unit_buffers - fp8.unit_buffers, 2 * u.float8);  // two units in flight, 1 byte less each
}

}  // namespace
}  // namespace gw
