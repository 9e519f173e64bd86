// The model zoo and its loader: every bundled model loads, its parameter total
// equals the published figure, tensor sums match the model totals, and bad
// files are rejected with the right line and key path.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/model/model_desc.hpp"

namespace {

const std::string kZoo = std::string(GW_SOURCE_DIR) + "/models";
const std::string kFixtures = GW_TEST_MODELS_DIR;

// Published parameter totals (the references, not derived from our files):
//   torchvision model cards (num_params): resnet50, resnet101, vgg16;
//   Hugging Face reference implementations: BertModel (with pooler) for
//   bert-base-uncased / bert-large-uncased, GPT2LMHeadModel for gpt2 / gpt2-xl
//   (wte and lm_head tied, counted once), LlamaForCausalLM for Llama-2-7b-hf;
//   LlamaForCausalLM from the public config.json of Llama-2-13b-hf,
//   Meta-Llama-3-8B and Meta-Llama-3-70B (the Hub's "8.03B" and "70.6B";
//   docs/models.md, "Models from the Hugging Face Hub"); Llama-2-70B and the
//   Llama 2 paper's 34B (unreleased; Code Llama 34B's and IBM fms-fsdp's
//   shape) summed by hand from their architecture below.
// A Llama's parameters from its architecture: embedding and untied lm_head
// V h each, per layer q and o h^2 each, k and v h x (h / heads x kv_heads)
// each, gate, up and down h x ffn each, two RMSNorm scales h; the final norm h.
constexpr std::int64_t llama_parameters(std::int64_t h, std::int64_t ffn, std::int64_t layers, std::int64_t heads,
                                        std::int64_t kv_heads, std::int64_t vocab) {
  const std::int64_t kv = h / heads * kv_heads;
  return 2 * vocab * h + layers * (2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h) + h;
}
static_assert(llama_parameters(4096, 11008, 32, 32, 32, 32000) == 6'738'415'616);   // Llama-2-7B, "6.74B"
static_assert(llama_parameters(5120, 13824, 40, 40, 40, 32000) == 13'015'864'320);  // Llama-2-13B, "13.0B"
static_assert(llama_parameters(4096, 14336, 32, 32, 8, 128256) == 8'030'261'248);   // Llama-3-8B, "8.03B"
static_assert(llama_parameters(8192, 28672, 80, 64, 8, 128256) == 70'553'706'496);  // Llama-3-70B, "70.6B"
const std::map<std::string, std::int64_t> kPublished = {
    {"resnet50", 25'557'032},
    {"resnet101", 44'549'160},
    {"vgg16", 138'357'544},
    {"bert-base", 109'482'240},
    {"bert-large", 335'141'888},
    {"gpt2", 124'439'808},
    {"gpt2-xl", 1'557'611'200},
    {"llama2-7b", 6'738'415'616},
    {"llama2-13b", 13'015'864'320},
    {"llama3-8b", 8'030'261'248},
    {"llama3-70b", 70'553'706'496},
    {"mlp-tiny", 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10},
    {"llama2-34b", llama_parameters(8192, 22016, 48, 64, 8, 32000)},  // 33,743,970,304: "34B"
    {"llama2-70b", llama_parameters(8192, 28672, 80, 64, 8, 32000)},  // 68,976,648,192: "69B" (the Hub's "70B")
};

gw::ModelDesc zoo(const std::string& name) { return gw::load_model(name, {kZoo}); }

TEST(ModelZoo, EveryBundledModelIsPresent) {
  auto names = gw::list_models(kZoo);
  std::set<std::string> have(names.begin(), names.end());
  for (const auto& [name, total] : kPublished) EXPECT_TRUE(have.count(name)) << name;
}

TEST(ModelZoo, EveryFileInModelsLoads) {
  auto names = gw::list_models(kZoo);
  ASSERT_GE(names.size(), kPublished.size());
  for (const auto& name : names) {
    gw::ModelDesc m = zoo(name);
    EXPECT_EQ(m.name, name) << "the name inside " << m.path << " should match its file name";
    EXPECT_FALSE(m.tensors.empty());
    EXPECT_FALSE(m.source.empty());
  }
}

TEST(ModelZoo, ParameterCountsEqualPublishedTotals) {
  for (const auto& [name, total] : kPublished) {
    gw::ModelDesc m = zoo(name);
    EXPECT_EQ(m.parameters, total) << name;
    std::int64_t sum = 0;
    for (const auto& t : m.tensors) sum += t.numel;
    EXPECT_EQ(sum, total) << name;
  }
}

TEST(ModelZoo, TensorSumsMatchModelTotals) {
  for (const auto& [name, total] : kPublished) {
    gw::ModelDesc m = zoo(name);
    double fwd = 0, bwd = 0;
    std::set<std::string> names;
    for (const auto& t : m.tensors) {
      std::int64_t product = 1;
      for (auto d : t.shape) product *= d;
      EXPECT_EQ(product, t.numel) << name << " " << t.name;
      EXPECT_GE(t.forward_flops_per_sample, 0) << t.name;
      EXPECT_GE(t.backward_flops_per_sample, 0) << t.name;
      EXPECT_EQ(t.dtype, "fp32");
      EXPECT_TRUE(names.insert(t.name).second) << "duplicate " << t.name;
      fwd += t.forward_flops_per_sample;
      bwd += t.backward_flops_per_sample;
    }
    // The exported files hold integers below 2^53, so the sums are exact.
    EXPECT_EQ(fwd, m.forward_flops_per_sample) << name;
    EXPECT_EQ(bwd, m.backward_flops_per_sample) << name;
    // Measured backward: at most 2 x forward (input and weight gradients); less
    // by the first layer's input gradient, which nothing needs (mlp-tiny: that
    // layer is 85% of the model, so 1.15 x).
    EXPECT_LE(m.backward_flops_per_sample, 2 * m.forward_flops_per_sample) << name;
    EXPECT_GT(m.backward_flops_per_sample, (name == "mlp-tiny" ? 1.1 : 1.95) * m.forward_flops_per_sample) << name;
    EXPECT_GT(m.activation_bytes_per_sample, 0) << name;
    EXPECT_EQ(gw::gradient_bytes(m), 4 * total) << name;
  }
}

TEST(ModelZoo, SequenceModelsHaveASequenceLength) {
  EXPECT_EQ(zoo("resnet50").sequence_length, 0);
  EXPECT_EQ(zoo("vgg16").sequence_length, 0);
  EXPECT_EQ(zoo("bert-base").sequence_length, 512);
  EXPECT_EQ(zoo("bert-large").sequence_length, 512);
  EXPECT_EQ(zoo("gpt2").sequence_length, 1024);
  EXPECT_EQ(zoo("gpt2-xl").sequence_length, 1024);
  EXPECT_EQ(zoo("llama2-7b").sequence_length, 4096);
  EXPECT_EQ(zoo("llama2-13b").sequence_length, 4096);
  EXPECT_EQ(zoo("llama3-8b").sequence_length, 8192);
  EXPECT_EQ(zoo("llama3-70b").sequence_length, 8192);
  EXPECT_EQ(zoo("llama2-34b").sequence_length, 4096);
  EXPECT_EQ(zoo("llama2-70b").sequence_length, 4096);
}

// Gradient-ready order as observed in a backward pass (docs/models.md): the
// output layer first, the input layer (or the tied embedding) last; within a
// convolution, batch norm or layer norm the weight before the bias, within a
// linear layer the bias before the weight.
TEST(ModelZoo, TensorsAreInGradientReadyOrder) {
  auto first_last = [](const std::string& name) {
    gw::ModelDesc m = zoo(name);
    return std::make_pair(m.tensors.front().name, m.tensors.back().name);
  };
  EXPECT_EQ(first_last("resnet50"), std::make_pair(std::string("fc.bias"), std::string("conv1.weight")));
  EXPECT_EQ(first_last("vgg16"), std::make_pair(std::string("classifier.6.bias"), std::string("features.0.bias")));
  EXPECT_EQ(first_last("bert-base"),
            std::make_pair(std::string("pooler.dense.bias"), std::string("embeddings.word_embeddings.weight")));
  EXPECT_EQ(first_last("gpt2"),
            std::make_pair(std::string("transformer.ln_f.weight"), std::string("transformer.wte.weight")));
  for (const char* name : {"llama2-7b", "llama2-13b", "llama2-34b", "llama2-70b", "llama3-8b", "llama3-70b"})
    EXPECT_EQ(first_last(name), std::make_pair(std::string("lm_head.weight"), std::string("model.embed_tokens.weight")))
        << name;
  // Inside a bottleneck, bn3 (weight, bias) before conv3 before bn2 ...
  gw::ModelDesc r = zoo("resnet50");
  EXPECT_EQ(r.tensors[2].name, "layer4.2.bn3.weight");
  EXPECT_EQ(r.tensors[3].name, "layer4.2.bn3.bias");
  EXPECT_EQ(r.tensors[4].name, "layer4.2.conv3.weight");
  EXPECT_EQ(r.tensors[4].shape, (std::vector<std::int64_t>{2048, 512, 1, 1}));
}

TEST(ModelZoo, FlopCountsFollowTheConvention) {
  // mlp-tiny by hand: 2 FLOPs per multiply-add; FlopCounterMode counts no
  // elementwise op, so a bias add costs nothing.
  gw::ModelDesc mlp = zoo("mlp-tiny");
  EXPECT_EQ(mlp.forward_flops_per_sample, 2.0 * (784 * 256 + 256 * 128 + 128 * 10));
  EXPECT_EQ(mlp.tensors.front().name, "fc3.bias");
  EXPECT_EQ(mlp.tensors.front().forward_flops_per_sample, 0);
  EXPECT_EQ(mlp.tensors[1].forward_flops_per_sample, 2 * 128 * 10);
  // ... and its backward: two matmuls per layer, none for the input's gradient.
  EXPECT_EQ(mlp.backward_flops_per_sample, 4.0 * (784 * 256 + 256 * 128 + 128 * 10) - 2.0 * 784 * 256);

  // ResNet-50: the familiar 4.1 G multiply-adds at 224x224.
  double r50 = zoo("resnet50").forward_flops_per_sample;
  EXPECT_GT(r50, 2 * 4.0e9);
  EXPECT_LT(r50, 2 * 4.2e9);

  // Llama-2-7B in closed form: 2 s x (matmul weights) + 4 s^2 h per layer for
  // attention; the embedding lookup and the RMSNorm scales cost nothing.
  // The same for the other Llamas (grouped-query attention changes the
  // weights, not the 4 s^2 h of the score and value products).
  struct Llama {
    const char* name;
    double s, h, L, V;
  };
  for (const Llama& m : {Llama{"llama2-7b", 4096, 4096, 32, 32000}, Llama{"llama2-13b", 4096, 5120, 40, 32000},
                         Llama{"llama2-34b", 4096, 8192, 48, 32000}, Llama{"llama2-70b", 4096, 8192, 80, 32000},
                         Llama{"llama3-8b", 8192, 4096, 32, 128256}, Llama{"llama3-70b", 8192, 8192, 80, 128256}}) {
    gw::ModelDesc l = zoo(m.name);
    const double norms = (2 * m.L + 1) * m.h;
    const double matmul = static_cast<double>(l.parameters) - m.V * m.h - norms;
    EXPECT_EQ(l.forward_flops_per_sample, 2 * m.s * matmul + 4 * m.s * m.s * m.h * m.L) << m.name;
  }
}

TEST(ModelZoo, ActivationsAreMeasuredInTheTrainingDtype) {
  // The CNNs and the MLP are exported in fp32, the transformers in bf16.
  for (const char* name : {"mlp-tiny", "resnet50", "resnet101", "vgg16"}) EXPECT_EQ(zoo(name).activation_dtype, "fp32");
  for (const char* name : {"bert-base", "bert-large", "gpt2", "gpt2-xl", "llama2-7b", "llama2-13b", "llama2-34b",
                           "llama2-70b", "llama3-8b", "llama3-70b"})
    EXPECT_EQ(zoo(name).activation_dtype, "bf16") << name;
  // mlp-tiny: what autograd saves is each linear layer's fp32 input (the
  // ReLU's output is the same storage), per sample.
  EXPECT_EQ(zoo("mlp-tiny").activation_bytes_per_sample, 4 * (784 + 256 + 128));
  // The transformers against Korthikanti et al. 2022's 16-bit estimate,
  // 34 s h + 5 a s^2 bytes per layer: the measurement keeps more (the eager
  // attention's fp32 softmax, embeddings, logits; docs/models.md), never less,
  // and stays within 1.5 x.
  auto k = [](double layers, double s, double h, double a) { return layers * (34 * s * h + 5 * a * s * s); };
  const std::map<std::string, double> korthikanti = {
      {"bert-base", k(12, 512, 768, 12)}, {"bert-large", k(24, 512, 1024, 16)}, {"gpt2", k(12, 1024, 768, 12)},
      {"gpt2-xl", k(48, 1024, 1600, 25)}, {"llama2-7b", k(32, 4096, 4096, 32)}, {"llama2-13b", k(40, 4096, 5120, 40)}};
  for (const auto& [name, estimate] : korthikanti) {
    const double measured = zoo(name).activation_bytes_per_sample;
    EXPECT_GT(measured, estimate) << name;
    EXPECT_LT(measured, 1.5 * estimate) << name;
  }
}

TEST(ModelLoader, HandWrittenModel) {
  gw::ModelDesc m = gw::load_model(kFixtures + "/good/two-layer.yaml");
  EXPECT_EQ(m.name, "two-layer");
  EXPECT_EQ(m.parameters, 199);
  ASSERT_EQ(m.tensors.size(), 4u);
  EXPECT_EQ(m.tensors[1].dtype, "bf16");
  EXPECT_EQ(m.tensors[1].shape, (std::vector<std::int64_t>{10, 9}));
  EXPECT_EQ(m.tensors[0].dtype, "fp32");
  EXPECT_EQ(m.tensors[3].backward_flops_per_sample, 180);  // given explicitly
  EXPECT_EQ(m.tensors[2].backward_flops_per_sample, 18);   // 2 x forward
  EXPECT_EQ(m.backward_flops_per_sample, 578);
  EXPECT_EQ(m.activation_bytes_per_sample, 1024);  // "1KiB"
  EXPECT_EQ(m.activation_dtype, "");               // not given: the figure is used as is
  EXPECT_EQ(m.sequence_length, 0);
  EXPECT_EQ(gw::gradient_bytes(m), 4 * (10 + 9 + 90) + 2 * 90);
}

TEST(ModelLoader, NameResolution) {
  // A name found in a search directory before the bundled ones.
  gw::ModelDesc m = gw::load_model("two-layer", {kFixtures + "/good"});
  EXPECT_EQ(m.path, kFixtures + "/good/two-layer.yaml");
  // The default directory, overridden by GRADWIRE_MODELS.
  ::setenv("GRADWIRE_MODELS", (kFixtures + "/good").c_str(), 1);
  EXPECT_EQ(gw::default_models_dir(), kFixtures + "/good");
  EXPECT_EQ(gw::load_model("two-layer").parameters, 199);
  ::unsetenv("GRADWIRE_MODELS");
  EXPECT_EQ(gw::default_models_dir(), kZoo);
  EXPECT_EQ(gw::load_model("mlp-tiny").name, "mlp-tiny");
  // An unknown name lists what is available.
  try {
    gw::load_model("resnet-50");
    FAIL() << "expected an error";
  } catch (const gw::InputError& e) {
    EXPECT_EQ(e.key(), "model");
    EXPECT_NE(e.reason().find("resnet50"), std::string::npos) << e.what();
  }
  // Something that looks like a path is a path.
  EXPECT_THROW(gw::load_model("no/such/model"), gw::InputError);
  EXPECT_THROW(gw::load_model("no-such-model.yaml"), gw::InputError);  // a path, not a name
}

struct BadCase {
  const char* file;
  int line;
  const char* key;
  const char* reason;  // a substring of the reason
};

class BadModel : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadModel, RejectedWithLineAndKeyPath) {
  const BadCase& c = GetParam();
  const std::string path = kFixtures + "/bad/" + c.file + ".yaml";
  try {
    gw::load_model_file(path);
    FAIL() << path << " was accepted";
  } catch (const gw::InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.key(), c.key) << e.what();
    EXPECT_NE(e.reason().find(c.reason), std::string::npos) << e.what();
    EXPECT_GT(e.column(), 0) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, BadModel,
    ::testing::Values(
        BadCase{"unknown_key", 18, "tensors[1].dtpye", "unknown key; did you mean \"dtype\"?"},
        BadCase{"numel_mismatch", 17, "tensors[1].numel", "numel 91 is not the product of shape [10, 9] (90)"},
        BadCase{"duplicate_tensor", 20, "tensors[2].name",
                "duplicate tensor name \"fc2.bias\" (first listed on line 11)"},
        BadCase{"total_mismatch", 5, "parameters", "parameters 200 differs from the sum of the tensor numels (199)"},
        BadCase{"negative_flops", 23, "tensors[2].forward_flops", "FLOPs cannot be negative"},
        BadCase{"wrong_type", 25, "tensors[3].shape", "expected a list"},
        BadCase{"fractional_numel", 22, "tensors[2].numel", "expected an integer"},
        BadCase{"bad_activation_dtype", 10, "activation_dtype", "\"int8\" is not one of: fp32, fp16, bf16"},
        BadCase{"bad_dtype", 18, "tensors[1].dtype", "\"int8\" is not one of: fp32, fp16, bf16"},
        BadCase{"nan_flops", 14, "tensors[0].forward_flops", "expected a finite number"},
        BadCase{"bad_schema", 2, "schema", "unsupported schema \"gradwire-model/2\""},
        BadCase{"duplicate_key", 6, "parameters", "duplicate key"},
        BadCase{"empty_tensors", 10, "tensors", "at least one tensor"},
        BadCase{"flops_sum_mismatch", 7, "flops.forward_per_sample",
                "differs from the sum of the tensors' forward_flops (379)"},
        BadCase{"zero_model_flops", 7, "flops.forward_per_sample", "must be positive"},
        BadCase{"per_token_without_sequence", 9, "flops.forward_per_token", "need a sequence_length"}),
    [](const ::testing::TestParamInfo<BadCase>& p) { return std::string(p.param.file); });

}  // namespace
