#include "gradwire/model/model_desc.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <system_error>

#include "gradwire/model/data_dir.hpp"
#include "gradwire/model/reference.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw {
namespace {

constexpr double kMaxFlops = 1e30;
constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;
constexpr std::int64_t kMaxSequence = std::int64_t{1} << 24;
/// Relative tolerance when comparing a stated total with a sum of parts; the
/// generated files hold exact integers, hand-written ones may round.
constexpr double kRelTol = 1e-9;

std::string num(double v) {
  char buf[64];
  if (std::fabs(v) < 9e15 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.15g", v);
  }
  return buf;
}

bool close(double a, double b) { return std::fabs(a - b) <= kRelTol * std::max({std::fabs(a), std::fabs(b), 1.0}); }

/// A FLOP count: a finite number >= 0 (> 0 when `positive`).
double flops(const yaml::Node& n, bool positive) {
  double v = n.as_double(-kMaxFlops, kMaxFlops);
  if (v < 0) n.fail("FLOPs cannot be negative, got " + num(v));
  if (positive && v == 0) n.fail("FLOPs must be positive");
  return v;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

TensorDesc load_tensor(const yaml::Node& t, std::map<std::string, int>& seen) {
  t.allow_keys({"name", "shape", "numel", "dtype", "forward_flops", "backward_flops"});
  TensorDesc d;
  yaml::Node name = t.required("name");
  d.name = name.as_string();
  auto [it, inserted] = seen.emplace(d.name, name.line());
  if (!inserted) {
    name.fail("duplicate tensor name \"" + d.name + "\" (first listed on line " + std::to_string(it->second) + ")");
  }

  yaml::Node shape = t.required("shape");
  std::int64_t product = 1;
  for (const auto& dim : shape.elements()) {
    std::int64_t v = dim.as_int(1, kMaxDim);
    if (product > std::numeric_limits<std::int64_t>::max() / v) dim.fail("the tensor has too many elements");
    product *= v;
    d.shape.push_back(v);
  }

  yaml::Node numel = t.required("numel");
  d.numel = numel.as_int(1, std::numeric_limits<std::int64_t>::max());
  if (d.numel != product) {
    numel.fail("numel " + std::to_string(d.numel) + " is not the product of shape " + shape_text(d.shape) + " (" +
               std::to_string(product) + ")");
  }

  d.dtype = "fp32";
  if (auto dt = t.optional("dtype")) d.dtype = dt->as_enum({"fp32", "fp16", "bf16"});

  d.forward_flops_per_sample = flops(t.required("forward_flops"), false);
  if (auto b = t.optional("backward_flops")) {
    d.backward_flops_per_sample = flops(*b, false);
  } else {
    d.backward_flops_per_sample = 2 * d.forward_flops_per_sample;
  }
  return d;
}

}  // namespace

std::int64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "fp32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  throw std::invalid_argument("unknown gradient dtype \"" + dtype + "\"");
}

std::int64_t gradient_bytes(const ModelDesc& model) {
  std::int64_t total = 0;
  for (const auto& t : model.tensors) total += t.numel * dtype_bytes(t.dtype);
  return total;
}

namespace {

/// The schema first, so a file of a later version gets a clear message
/// rather than complaints about keys this version does not know; then the
/// top-level keys, the name, the source and the sequence length.
void read_header(const yaml::Node& root, ModelDesc& m) {
  yaml::Node schema = root.required("schema");
  if (std::string s = schema.as_string(); s != kModelSchema) {
    schema.fail("unsupported schema \"" + s + "\" (this gradwire reads " + std::string(kModelSchema) + ")");
  }
  root.allow_keys({"schema", "name", "description", "source", "parameters", "parameters_source", "input",
                   "sequence_length", "flops", "activation_bytes_per_sample", "activation_dtype", "activation_source",
                   "tensors"});

  yaml::Node name = root.required("name");
  m.name = name.as_string();
  for (char c : m.name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) name.fail("a model name may hold only letters, digits, '-', '_' and '.', got \"" + m.name + "\"");
  }
  m.source = root.required("source").as_string();
  for (const char* text : {"description", "parameters_source", "input", "activation_source"}) {
    if (auto n = root.optional(text)) n->as_string();
  }
  if (auto s = root.optional("sequence_length")) m.sequence_length = s->as_int(1, kMaxSequence);
}

/// Sums over the tensors, checked against the stated totals.
struct TensorSums {
  std::int64_t numel = 0;
  double forward = 0, backward = 0;
};

TensorSums read_tensors(const yaml::Node& root, ModelDesc& m) {
  yaml::Node tensors = root.required("tensors");
  std::vector<yaml::Node> elems = tensors.elements();
  if (elems.empty()) tensors.fail("a model needs at least one tensor");
  std::map<std::string, int> seen;
  TensorSums sum;
  for (const auto& e : elems) {
    TensorDesc t = load_tensor(e, seen);
    if (sum.numel > std::numeric_limits<std::int64_t>::max() - t.numel) e.fail("the parameter total overflows");
    sum.numel += t.numel;
    sum.forward += t.forward_flops_per_sample;
    sum.backward += t.backward_flops_per_sample;
    m.tensors.push_back(std::move(t));
  }

  yaml::Node params = root.required("parameters");
  m.parameters = params.as_int(1, std::numeric_limits<std::int64_t>::max());
  if (m.parameters != sum.numel) {
    params.fail("parameters " + std::to_string(m.parameters) + " differs from the sum of the tensor numels (" +
                std::to_string(sum.numel) + ")");
  }
  return sum;
}

/// forward_per_token / backward_per_token: the per-sample figure over the
/// sequence length.
void check_per_token(const yaml::Node& fl, const ModelDesc& m) {
  struct PerToken {
    const char* key;
    double per_sample;
  };
  for (PerToken pt : {PerToken{"forward_per_token", m.forward_flops_per_sample},
                      PerToken{"backward_per_token", m.backward_flops_per_sample}}) {
    auto n = fl.optional(pt.key);
    if (!n) continue;
    double v = flops(*n, true);
    if (m.sequence_length == 0) n->fail("per-token FLOPs need a sequence_length at the top level");
    double expected = pt.per_sample / static_cast<double>(m.sequence_length);
    if (!close(v, expected)) {
      n->fail(std::string(pt.key) + " " + num(v) + " is not the per-sample figure divided by sequence_length " +
              std::to_string(m.sequence_length) + " (" + num(expected) + ")");
    }
  }
}

void read_flops(const yaml::Node& root, const TensorSums& sum, ModelDesc& m) {
  yaml::Node fl = root.required("flops");
  fl.allow_keys({"convention", "forward_per_sample", "backward_per_sample", "forward_per_token", "backward_per_token"});
  if (auto c = fl.optional("convention")) c->as_string();
  yaml::Node fwd = fl.required("forward_per_sample");
  m.forward_flops_per_sample = flops(fwd, true);
  if (!close(m.forward_flops_per_sample, sum.forward)) {
    fwd.fail("forward_per_sample " + num(m.forward_flops_per_sample) +
             " differs from the sum of the tensors' forward_flops (" + num(sum.forward) + ")");
  }
  if (auto bwd = fl.optional("backward_per_sample")) {
    m.backward_flops_per_sample = flops(*bwd, true);
    if (!close(m.backward_flops_per_sample, sum.backward)) {
      bwd->fail("backward_per_sample " + num(m.backward_flops_per_sample) +
                " differs from the sum of the tensors' backward FLOPs (" + num(sum.backward) +
                "; a tensor without backward_flops counts 2 x forward_flops)");
    }
  } else {
    m.backward_flops_per_sample = sum.backward;
  }
  check_per_token(fl, m);
}

}  // namespace

ModelDesc load_model_file(const std::string& path) {
  yaml::Document doc = yaml::load_file(path);
  yaml::Node root = doc.root();
  ModelDesc m;
  m.path = path;
  read_header(root, m);
  const TensorSums sum = read_tensors(root, m);
  read_flops(root, sum, m);

  // Activation memory: plain bytes, or a size with its unit ("90MiB").
  yaml::Node act = root.required("activation_bytes_per_sample");
  if (act.is_scalar() && units::parse_number(act.raw().Scalar())) {
    m.activation_bytes_per_sample = act.as_double(0, 1e18);
  } else {
    m.activation_bytes_per_sample = act.as_size(0, 1e18);
  }
  if (auto d = root.optional("activation_dtype")) m.activation_dtype = d->as_enum({"fp32", "fp16", "bf16"});
  return m;
}

std::string default_models_dir() {
  if (const char* env = std::getenv("GRADWIRE_MODELS"); env != nullptr && *env != '\0') return env;
  return data_dir() + "/models";
}

std::vector<std::string> list_models(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    // Model descriptions only: a scenario beside them is not a model.
    const auto& p = it->path();
    if (p.extension() != ".yaml" || !it->is_regular_file(ec)) continue;
    const auto schema = declared_schema(p.string());
    if (schema && schema->find(kModelSchema) != std::string::npos) names.push_back(p.stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

ModelDesc load_model(const std::string& name_or_path, const std::vector<std::string>& search_dirs) {
  if (looks_like_path(name_or_path)) return load_model_file(name_or_path);
  if (name_or_path.empty()) throw InputError("", 0, 0, "model", "no model name given");
  std::vector<std::string> dirs = search_dirs;
  dirs.push_back(default_models_dir());
  std::error_code ec;
  for (const auto& dir : dirs) {
    std::filesystem::path candidate = std::filesystem::path(dir) / (name_or_path + ".yaml");
    if (std::filesystem::is_regular_file(candidate, ec)) return load_model_file(candidate.string());
  }
  std::string searched, available;
  for (const auto& dir : dirs) {
    searched += (searched.empty() ? "" : ", ") + dir;
    for (const auto& n : list_models(dir)) available += (available.empty() ? "" : ", ") + n;
  }
  throw InputError("", 0, 0, "model",
                   "no model named \"" + name_or_path + "\" (searched " + searched +
                       "; available: " + (available.empty() ? std::string("none") : available) +
                       "); give a name from that list or a path to a .yaml file");
}

}  // namespace gw
