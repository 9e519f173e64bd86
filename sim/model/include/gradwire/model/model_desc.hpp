// Model descriptions: the gradient tensors of a network in the order their
// gradients become ready in the backward pass, with per-sample FLOPs and
// activation memory. Loaded from models/<name>.yaml (schema gradwire-model/1,
// see docs/models.md). No SimGrid.
//
//   gw::ModelDesc m = gw::load_model("resnet50");
//   for (const auto& t : m.tensors) { ... t.numel, t.backward_flops_per_sample ... }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gw {

/// The schema string every model file must carry.
inline constexpr const char* kModelSchema = "gradwire-model/1";

/// One parameter tensor (one gradient).
struct TensorDesc {
  std::string name;                      ///< e.g. "layer4.2.conv3.weight"
  std::vector<std::int64_t> shape;       ///< empty for a scalar
  std::int64_t numel = 0;                ///< product of shape
  std::string dtype;                     ///< gradient dtype: "fp32", "fp16" or "bf16"
  double forward_flops_per_sample = 0;   ///< FLOPs of the op that owns it (may be 0)
  double backward_flops_per_sample = 0;  ///< 2 x forward unless the file says otherwise
};

/// A whole model.
struct ModelDesc {
  std::string name;
  std::int64_t parameters = 0;          ///< total, equal to the sum of tensor numels
  std::vector<TensorDesc> tensors;      ///< backward (gradient-ready) order
  double forward_flops_per_sample = 0;  ///< per sample; per sequence for sequence models
  double backward_flops_per_sample = 0;
  std::int64_t sequence_length = 0;  ///< tokens per sample; 0 = not a sequence model
  double activation_bytes_per_sample = 0;
  /// The dtype activation_bytes_per_sample was measured in ("fp32", "fp16",
  /// "bf16"); empty when the file does not say (the figure is used as is).
  std::string activation_dtype;
  std::string source;  ///< reference for the architecture
  std::string path;    ///< the file it was loaded from
};

/// Bytes per element of a gradient dtype ("fp32" 4, "fp16"/"bf16" 2).
/// Throws std::invalid_argument for any other name.
std::int64_t dtype_bytes(const std::string& dtype);

/// Total gradient bytes of a model (sum of numel x dtype bytes).
std::int64_t gradient_bytes(const ModelDesc& model);

/// Loads and validates one model file. Throws gw::InputError naming the file,
/// line, column and key path for any problem: unknown or duplicate keys, an
/// unsupported schema, an empty tensor list, duplicate tensor names, a numel
/// that is not the product of the shape, a parameter total that is not the
/// sum of the numels, negative or non-finite FLOPs, model FLOPs that are zero
/// or differ from the sum over tensors, ...
ModelDesc load_model_file(const std::string& path);

/// Loads a model by name or path. A value containing '/' or ending in ".yaml"
/// is a path; otherwise <dir>/<name>.yaml is tried in each of `search_dirs`,
/// then in default_models_dir(). Not found: gw::InputError listing the
/// directories searched and the models available there.
ModelDesc load_model(const std::string& name_or_path, const std::vector<std::string>& search_dirs = {});

/// The bundled model directory: $GRADWIRE_MODELS when set and non-empty, else
/// the source tree's models/ folder.
std::string default_models_dir();

/// Names of the models (<name>.yaml files) in `dir`, sorted; empty if the
/// directory cannot be read.
std::vector<std::string> list_models(const std::string& dir);

}  // namespace gw
