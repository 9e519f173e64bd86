// Sharding schemes: names and the `workload.sharding` reader
// (gradwire/model/sharding.hpp). The rules each framework imposes are stated
// beside the check that enforces them; their sources are in docs/model.md,
// "Sharded data parallelism".
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/core/suggest.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {

namespace {

struct SchemeName {
  const char* name;
  ShardingScheme scheme;
  ShardingFramework framework;  ///< the default for this name
};

// One row per accepted name: FSDP1's ShardingStrategy names default to FSDP1,
// ZeRO's stage names to DeepSpeed, hsdp to FSDP2's 2-D mesh.
const std::vector<SchemeName>& scheme_names() {
  static const std::vector<SchemeName> names{
      {"ddp", ShardingScheme::Ddp, ShardingFramework::PyTorchDdp},
      {"zero1", ShardingScheme::Zero1, ShardingFramework::DeepSpeed},
      {"zero2", ShardingScheme::Zero2, ShardingFramework::DeepSpeed},
      {"zero3", ShardingScheme::Zero3, ShardingFramework::DeepSpeed},
      {"hsdp", ShardingScheme::Hsdp, ShardingFramework::Fsdp2},
      {"zeropp", ShardingScheme::ZeroPP, ShardingFramework::DeepSpeed},
      {"zero++", ShardingScheme::ZeroPP, ShardingFramework::DeepSpeed},
      {"full_shard", ShardingScheme::Zero3, ShardingFramework::Fsdp1},
      {"shard_grad_op", ShardingScheme::Zero2, ShardingFramework::Fsdp1},
      {"hybrid_shard", ShardingScheme::Hsdp, ShardingFramework::Fsdp1},
  };
  return names;
}

const std::vector<std::pair<const char*, ShardingFramework>>& framework_names() {
  static const std::vector<std::pair<const char*, ShardingFramework>> names{
      {"pytorch-ddp", ShardingFramework::PyTorchDdp},
      {"fsdp1", ShardingFramework::Fsdp1},
      {"fsdp2", ShardingFramework::Fsdp2},
      {"deepspeed", ShardingFramework::DeepSpeed},
  };
  return names;
}

const std::vector<std::pair<const char*, ActivationCheckpointing>>& checkpointing_names() {
  static const std::vector<std::pair<const char*, ActivationCheckpointing>> names{
      {"none", ActivationCheckpointing::None},
      {"selective", ActivationCheckpointing::Selective},
      {"full", ActivationCheckpointing::Full},
  };
  return names;
}

/// A name from `choices`; otherwise the error lists them and suggests the nearest.
std::string read_choice(const yaml::Node& node, const std::vector<std::string>& choices) {
  const std::string s = node.as_name();
  if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  node.fail("\"" + s + "\" is not one of: " + list + did_you_mean(s, choices));
}

double read_dtype_bytes(const yaml::Node& node) {
  return static_cast<double>(dtype_bytes(read_choice(node, {"fp32", "bf16", "fp16"})));
}

/// Which frameworks run a scheme.
bool framework_runs(ShardingFramework f, ShardingScheme s) {
  switch (f) {
    case ShardingFramework::PyTorchDdp:
      return s == ShardingScheme::Ddp;
    case ShardingFramework::DeepSpeed:
      return s != ShardingScheme::Ddp && s != ShardingScheme::Hsdp;
    case ShardingFramework::Fsdp1:
    case ShardingFramework::Fsdp2:
      return s == ShardingScheme::Zero2 || s == ShardingScheme::Zero3 || s == ShardingScheme::Hsdp;
  }
  return false;
}

void read_scheme(const yaml::Node& node, ShardingSpec& s) {
  std::vector<std::string> names;
  for (const auto& n : scheme_names()) names.emplace_back(n.name);
  const std::string name = read_choice(node, names);
  for (const auto& n : scheme_names()) {
    if (name == n.name) {
      s.scheme = n.scheme;
      s.framework = n.framework;
    }
  }
}

void read_framework(const yaml::Node& node, ShardingSpec& s) {
  std::vector<std::string> names;
  for (const auto& [n, f] : framework_names()) names.emplace_back(n);
  const std::string name = read_choice(node, names);
  for (const auto& [n, f] : framework_names()) {
    if (name == n) s.framework = f;
  }
  if (!framework_runs(s.framework, s.scheme)) node.fail(name + " does not run " + to_string(s.scheme));
}

/// The parameter life cycle and gradient sync a framework gives a scheme
/// before the keys that may change them are read.
void apply_defaults(ShardingSpec& s) {
  const bool deepspeed = s.framework == ShardingFramework::DeepSpeed;
  // DDP: no_sync on (workload.no_sync's default); DeepSpeed ZeRO-1 reduces at
  // the accumulation boundary only; ZeRO-2/3 and FSDP after every backward.
  s.gradient_sync = (s.scheme == ShardingScheme::Ddp || (deepspeed && s.scheme == ShardingScheme::Zero1))
                        ? GradientSync::LastMicroStep
                        : GradientSync::EveryMicroStep;
  const bool keeps =
      s.scheme == ShardingScheme::Zero2 || s.scheme == ShardingScheme::Zero1 || s.scheme == ShardingScheme::Ddp;
  s.reshard_after_forward = keeps ? kReshardNone : kReshardFull;
  if (s.scheme == ShardingScheme::ZeroPP) s.qwz = s.hpz = s.qgz = true;
}

void read_reshard_after_forward(const yaml::Node& node, ShardingSpec& s) {
  if (s.framework != ShardingFramework::Fsdp2)
    node.fail("reshard_after_forward is FSDP2's (fully_shard); " + to_string(s.framework) + " fixes it by scheme");
  const std::string v = node.is_scalar() ? node.raw().Scalar() : "";
  if (v == "true" || v == "false") {
    s.reshard_after_forward = v == "true" ? kReshardFull : kReshardNone;
  } else {
    s.reshard_after_forward = static_cast<int>(node.as_int(2, 1 << 20));
  }
  // FSDP2's reshard_after_forward=False is SHARD_GRAD_OP's life cycle: keep
  // the two names apart so that a label says what runs.
  if (s.scheme == ShardingScheme::Zero2 && s.reshard_after_forward != kReshardNone)
    node.fail("zero2 keeps the parameters after forward (reshard_after_forward: false); resharding is zero3");
  if (s.scheme != ShardingScheme::Zero2 && s.reshard_after_forward == kReshardNone)
    node.fail("reshard_after_forward: false is zero2 (FSDP SHARD_GRAD_OP); write scheme: zero2");
}

void read_gradient_sync(const yaml::Node& node, ShardingSpec& s) {
  const std::string v = read_choice(node, {"every", "last"});
  const GradientSync g = v == "every" ? GradientSync::EveryMicroStep : GradientSync::LastMicroStep;
  if (s.framework == ShardingFramework::DeepSpeed && g != s.gradient_sync) {
    node.fail(s.scheme == ShardingScheme::Zero1
                  ? "DeepSpeed ZeRO-1 reduces gradients at the accumulation boundary only (gradient_sync: last)"
                  : "DeepSpeed ZeRO-2/3 reduce after every backward: no_sync is refused with gradient "
                    "partitioning (gradient_sync: every)");
  }
  s.gradient_sync = g;
}

/// The compressed formats of the sharded traffic: ZeRO++'s parts, torchao's fp8 all-gather.
void read_zeropp(const yaml::Node& root, ShardingSpec& s) {
  for (const char* key : {"qwz", "hpz", "qgz"}) {
    auto n = root.optional(key);
    if (!n) continue;
    if (s.scheme != ShardingScheme::ZeroPP) n->fail(std::string(key) + " is a part of ZeRO++ (scheme: zeropp)");
    bool& flag = std::string(key) == "qwz" ? s.qwz : std::string(key) == "hpz" ? s.hpz : s.qgz;
    flag = n->as_bool();
  }
  if (auto n = root.optional("float8_all_gather")) {
    if (s.framework != ShardingFramework::Fsdp2)
      n->fail("float8_all_gather is torchao's with FSDP2 (enable_fsdp_float8_all_gather); framework is " +
              to_string(s.framework));
    s.float8_all_gather = n->as_bool();
  }
}

void read_options(const yaml::Node& root, ShardingSpec& s) {
  if (auto n = root.optional("framework")) read_framework(*n, s);
  apply_defaults(s);
  if (auto n = root.optional("gradient_sync")) read_gradient_sync(*n, s);
  if (auto n = root.optional("group")) {
    if (s.scheme != ShardingScheme::Hsdp) n->fail("group is the shard group of hsdp");
    s.group = static_cast<int>(n->as_int(1, 1 << 20));
  }
  if (auto n = root.optional("reshard_after_forward")) read_reshard_after_forward(*n, s);
  if (auto n = root.optional("reshard_after_backward")) {
    if (s.framework != ShardingFramework::Fsdp2)
      n->fail("reshard_after_backward is FSDP2's (set_reshard_after_backward)");
    s.reshard_after_backward = n->as_bool();
  }
  if (auto n = root.optional("prefetch")) s.prefetch = static_cast<int>(n->as_int(0, 16));
  read_zeropp(root, s);
  if (auto n = root.optional("reduce_dtype")) s.reduce_bytes = read_dtype_bytes(*n);
  if (auto n = root.optional("param_dtype")) s.gather_bytes = read_dtype_bytes(*n);
}

}  // namespace

std::string to_string(ShardingScheme s) {
  for (const auto& n : scheme_names()) {
    if (n.scheme == s) return n.name;  // the first row of each scheme is its canonical name
  }
  return "?";
}

std::string to_string(ShardingFramework f) {
  for (const auto& [n, v] : framework_names()) {
    if (v == f) return n;
  }
  return "?";
}

std::string to_string(GradientSync g) { return g == GradientSync::EveryMicroStep ? "every" : "last"; }

std::string to_string(ActivationCheckpointing a) {
  for (const auto& [n, v] : checkpointing_names()) {
    if (v == a) return n;
  }
  return "?";
}

ShardingSpec sharding_defaults(ShardingScheme scheme) {
  ShardingSpec s;
  for (auto it = scheme_names().rbegin(); it != scheme_names().rend(); ++it) {
    if (it->scheme == scheme) s.framework = it->framework;  // ends at the scheme's first row
  }
  s.scheme = scheme;
  apply_defaults(s);
  return s;
}

ShardingSpec parse_sharding(const yaml::Node& node) {
  ShardingSpec s;
  if (node.is_scalar()) {
    read_scheme(node, s);
    apply_defaults(s);
    return s;
  }
  node.allow_keys({"scheme", "framework", "gradient_sync", "group", "reshard_after_forward", "reshard_after_backward",
                   "prefetch", "qwz", "hpz", "qgz", "float8_all_gather", "reduce_dtype", "param_dtype"});
  read_scheme(node.required("scheme"), s);
  read_options(node, s);
  return s;
}

ActivationCheckpointing parse_activation_checkpointing(const yaml::Node& node) {
  std::vector<std::string> names;
  for (const auto& [n, v] : checkpointing_names()) names.emplace_back(n);
  const std::string name = read_choice(node, names);
  for (const auto& [n, v] : checkpointing_names()) {
    if (name == n) return v;
  }
  return ActivationCheckpointing::None;
}

}  // namespace gw
