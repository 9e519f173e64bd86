// The measured-compute document (gradwire-compute/1): strict loader, writer
// and the match with a scenario. Format: docs/model.md, "Measured compute".
#include "gradwire/model/measured_compute.hpp"

#include <cstdio>
#include <map>
#include <stdexcept>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_yaml.hpp"

namespace gw {
namespace {

constexpr double kMaxSeconds = 1e6;
constexpr std::int64_t kMaxParameters = std::int64_t{1} << 50;
constexpr std::int64_t kMaxBatch = 1 << 24;
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 24;
constexpr std::int64_t kMaxRepeats = 1'000'000;

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

/// {median: TIME, spread: TIME}
Timing read_timing(const yaml::Node& n, std::initializer_list<std::string_view> extra = {}) {
  std::vector<std::string> keys{"median", "spread"};
  for (auto k : extra) keys.emplace_back(k);
  n.allow_keys(keys);
  return {n.required("median").as_time(0, kMaxSeconds), n.required("spread").as_time(0, kMaxSeconds)};
}

void read_header(const yaml::Node& root, MeasuredCompute& m) {
  yaml::Node schema = root.required("schema");
  if (std::string s = schema.as_string(); s != kComputeSchema)
    schema.fail("unsupported schema \"" + s + "\" (this gradwire reads " + std::string(kComputeSchema) + ")");
  root.allow_keys({"schema",
                   "device",
                   "date",
                   "host",
                   "tool",
                   "versions",
                   "timer",
                   "model",
                   "parameters",
                   "sequence_length",
                   "micro_batch",
                   "compute_precision",
                   "gradient_precision",
                   "repeats",
                   "warmup",
                   "forward",
                   "backward",
                   "optimizer",
                   "ddp_overheads",
                   "comm_hooks",
                   "tensors"});
  m.device = root.required("device").as_name();
  m.date = root.required("date").as_name();
  if (auto h = root.optional("host")) m.host = h->as_name();
  m.tool = root.required("tool").as_name();
  yaml::Node versions = root.required("versions");
  versions.allow_keys({"torch", "cuda"});
  m.torch_version = versions.required("torch").as_name();
  if (auto c = versions.optional("cuda")) m.cuda_version = c->as_name();
  m.timer = root.required("timer").as_enum({"cuda-events", "perf-counter"});
  m.model = root.required("model").as_name();
  m.parameters = root.required("parameters").as_int(1, kMaxParameters);
  m.micro_batch = static_cast<int>(root.required("micro_batch").as_int(1, kMaxBatch));
  if (auto q = root.optional("sequence_length")) m.sequence_length = q->as_int(1, kMaxSequence);
  m.compute_precision = parse_compute_precision(root.required("compute_precision"));
  m.gradient_precision = root.required("gradient_precision").as_enum({"fp32", "bf16", "fp16"});
  m.repeats = static_cast<int>(root.required("repeats").as_int(1, kMaxRepeats));
  m.warmup = static_cast<int>(root.required("warmup").as_int(0, kMaxRepeats));
}

void read_tensors(const yaml::Node& list, MeasuredCompute& m) {
  std::map<std::string, int> seen;
  double previous = 0;
  for (const auto& t : list.elements()) {
    t.allow_keys({"name", "ready", "spread"});
    yaml::Node name = t.required("name");
    MeasuredTensor mt{name.as_string(), {}};
    if (auto [it, fresh] = seen.emplace(mt.name, name.line()); !fresh)
      name.fail("duplicate tensor name \"" + mt.name + "\" (first listed on line " + std::to_string(it->second) + ")");
    yaml::Node ready = t.required("ready");
    mt.ready = {ready.as_time(0, kMaxSeconds), t.required("spread").as_time(0, kMaxSeconds)};
    if (mt.ready.median < previous)
      ready.fail("ready times must not decrease along the list (gradient-ready order): " + num(mt.ready.median) +
                 " s after " + num(previous) + " s");
    previous = mt.ready.median;
    m.tensors.push_back(std::move(mt));
  }
  if (m.tensors.empty()) list.fail("the tensor list is empty");
}

void read_optional_sections(const yaml::Node& root, MeasuredCompute& m) {
  if (auto o = root.optional("optimizer")) {
    m.optimizer_step = read_timing(*o, {"name"});
    m.optimizer = o->required("name").as_enum({"sgd", "momentum", "adam", "adamw", "lamb", "lars"});
  }
  if (auto d = root.optional("ddp_overheads")) {
    d->allow_keys({"bucket_copy", "hook_dispatch"});
    if (auto c = d->optional("bucket_copy")) m.bucket_copy = read_timing(*c);
    if (auto h = d->optional("hook_dispatch")) m.hook_dispatch = read_timing(*h);
  }
  if (auto hooks = root.optional("comm_hooks")) {
    hooks->expect_map();
    for (const auto& key : hooks->keys()) m.comm_hooks.emplace_back(key, read_timing(hooks->required(key)));
  }
}

std::string time_text(double seconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f us", seconds * 1e6);
  return buf;
}
std::string timing_text(const Timing& t) {
  return "{median: " + time_text(t.median) + ", spread: " + time_text(t.spread) + "}";
}
/// A scalar written as a double-quoted YAML string (names may hold ':' or '#').
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

}  // namespace

std::string MeasuredCompute::label() const { return "measured on " + device + ", " + date; }

MeasuredCompute load_measured_compute(const std::string& path) {
  const yaml::Document doc = yaml::load_file(path);
  const yaml::Node root = doc.root();
  MeasuredCompute m;
  m.path = path;
  read_header(root, m);
  m.forward = read_timing(root.required("forward"));
  yaml::Node backward = root.required("backward");
  m.backward = read_timing(backward);
  read_optional_sections(root, m);
  read_tensors(root.required("tensors"), m);
  if (m.tensors.back().ready.median > m.backward.median)
    backward.required("median").fail("the backward pass (" + num(m.backward.median) +
                                     " s) ends before the last gradient is ready (" +
                                     num(m.tensors.back().ready.median) + " s)");
  return m;
}

std::string measured_compute_yaml(const MeasuredCompute& m) {
  std::string o = std::string("schema: ") + kComputeSchema + "\n";
  o += "device: " + quoted(m.device) + "\ndate: " + quoted(m.date) + "\n";
  if (!m.host.empty()) o += "host: " + quoted(m.host) + "\n";
  o += "tool: " + quoted(m.tool) + "\nversions: {torch: " + quoted(m.torch_version);
  if (!m.cuda_version.empty()) o += ", cuda: " + quoted(m.cuda_version);
  o += "}\ntimer: " + m.timer + "\nmodel: " + quoted(m.model) + "\n";
  o += "parameters: " + std::to_string(m.parameters) + "\n";
  if (m.sequence_length > 0) o += "sequence_length: " + std::to_string(m.sequence_length) + "\n";
  o += "micro_batch: " + std::to_string(m.micro_batch) + "\ncompute_precision: " + m.compute_precision +
       "\ngradient_precision: " + m.gradient_precision + "\n";
  o += "repeats: " + std::to_string(m.repeats) + "\nwarmup: " + std::to_string(m.warmup) + "\n";
  o += "forward: " + timing_text(m.forward) + "\nbackward: " + timing_text(m.backward) + "\n";
  if (!m.optimizer.empty())
    o += "optimizer: {name: " + m.optimizer + ", median: " + time_text(m.optimizer_step.median) +
         ", spread: " + time_text(m.optimizer_step.spread) + "}\n";
  if (m.bucket_copy || m.hook_dispatch) o += "ddp_overheads:\n";
  if (m.bucket_copy) o += "  bucket_copy: " + timing_text(*m.bucket_copy) + "\n";
  if (m.hook_dispatch) o += "  hook_dispatch: " + timing_text(*m.hook_dispatch) + "\n";
  if (!m.comm_hooks.empty()) o += "comm_hooks:\n";
  for (const auto& [name, t] : m.comm_hooks) o += "  " + quoted(name) + ": " + timing_text(t) + "\n";
  o += "tensors:\n";
  for (const auto& t : m.tensors)
    o += "  - {name: " + quoted(t.name) + ", ready: " + time_text(t.ready.median) +
         ", spread: " + time_text(t.ready.spread) + "}\n";
  return o;
}

void check_measured_matches(const MeasuredCompute& m, const ModelDesc& model, const WorkloadSpec& w) {
  const auto mismatch = [&](const std::string& what) {
    throw std::invalid_argument(m.path + " was measured for " + what +
                                "; measure again for this workload "
                                "(gradwire model measure) or remove workload.compute");
  };
  if (m.model != model.name || m.parameters != model.parameters)
    mismatch("model " + m.model + " (" + std::to_string(m.parameters) + " parameters), the scenario's is " +
             model.name + " (" + std::to_string(model.parameters) + " parameters)");
  if (m.sequence_length != model.sequence_length)
    mismatch("sequence length " + std::to_string(m.sequence_length) + ", the model's is " +
             std::to_string(model.sequence_length) + " (0: not a sequence model)");
  if (m.micro_batch != w.micro_batch)
    mismatch("micro-batch " + std::to_string(m.micro_batch) + ", the scenario's is " + std::to_string(w.micro_batch));
  if (m.gradient_precision != to_string(w.precision))
    mismatch("gradient precision " + m.gradient_precision + ", the scenario's is " + to_string(w.precision));
  if (!w.compute_precision.empty() && m.compute_precision != w.compute_precision)
    mismatch("compute precision " + m.compute_precision + ", the scenario's is " + w.compute_precision);
  if (!w.optimizer.step_time && !m.optimizer.empty() && m.optimizer != w.optimizer.kind)
    mismatch("optimizer " + m.optimizer + ", the scenario's is " + w.optimizer.kind);
  if (m.tensors.size() != model.tensors.size())
    mismatch(std::to_string(m.tensors.size()) + " tensors, the model has " + std::to_string(model.tensors.size()));
  std::map<std::string, int> names;
  for (const auto& t : model.tensors) names.emplace(t.name, 0);
  for (const auto& t : m.tensors)
    if (!names.contains(t.name)) mismatch("a tensor \"" + t.name + "\" that model " + model.name + " does not have");
}

std::vector<double> measured_tensor_backward(const MeasuredCompute& m) {
  std::vector<double> d;
  double previous = 0;
  for (const auto& t : m.tensors) {
    d.push_back(t.ready.median - previous);
    previous = t.ready.median;
  }
  d.back() += m.backward.median - previous;
  return d;
}

}  // namespace gw
