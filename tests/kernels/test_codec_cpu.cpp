// The uniform Codec interface over the CPU twins.
#include <algorithm>
#include <stdexcept>

#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/sign.hpp"
#include "kernel_test_util.hpp"

namespace gw::kernels {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(CodecCpu, RegistryListsTheElementwiseCodecsAndTheirEfVariants) {
  const auto names = codec_names();
  for (const char* want : {"fp16", "bf16", "int8", "sign", "majority_vote", "randomk", "fp16_ef", "bf16_ef", "int8_ef",
                           "sign_ef", "randomk_ef"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  }
  EXPECT_THROW(make_cpu_codec("no_such_codec", 10, {}), std::invalid_argument);
  CodecConfig bad;
  bad.chunk = 48;
  EXPECT_THROW(make_cpu_codec("int8", 10, bad), std::invalid_argument);
}

TEST(CodecCpu, EveryCodecRoundTripsAndReportsSizes) {
  const std::size_t n = 4097;
  const auto x = test::random_gradient(n, 21);
  CodecConfig cfg;
  cfg.chunk = 256;
  cfg.ratio = 0.05;
  for (const auto& name : codec_names()) {
    SCOPED_TRACE(name);
    auto codec = make_cpu_codec(name, n, cfg);
    EXPECT_EQ(codec->name(), name);
    EXPECT_EQ(codec->elements(), n);
    codec->set_input(x.data());
    codec->encode();
    codec->decode();
    codec->synchronize();
    const auto y = codec->decoded();
    ASSERT_EQ(y.size(), n);
    EXPECT_GT(codec->wire_bytes(), 0u);
    EXPECT_LT(codec->wire_bytes(), 4 * n);
    EXPECT_GT(codec->encode_traffic_bytes(), 0.0);
    EXPECT_GT(codec->decode_traffic_bytes(), 0.0);
    if (ends_with(name, "_ef")) {
      const auto r = codec->residual();
      ASSERT_EQ(r.size(), n);
      test::expect_ef_identity(x, y, r, /*always_exact=*/name != "sign_ef");
    } else {
      EXPECT_TRUE(codec->residual().empty());
    }
  }
}

TEST(CodecCpu, WireBytesClosedForm) {
  const std::size_t n = 10000;
  CodecConfig cfg;
  cfg.chunk = 1024;
  cfg.ratio = 0.01;
  EXPECT_EQ(make_cpu_codec("fp16", n, cfg)->wire_bytes(), 2 * n);
  EXPECT_EQ(make_cpu_codec("bf16", n, cfg)->wire_bytes(), 2 * n);
  EXPECT_EQ(make_cpu_codec("int8", n, cfg)->wire_bytes(), n + 4 * 10);
  EXPECT_EQ(make_cpu_codec("sign", n, cfg)->wire_bytes(), 4 * 313 + 4 * 10);
  EXPECT_EQ(make_cpu_codec("randomk", n, cfg)->wire_bytes(), 4 * 100u);
}

TEST(CodecCpu, MajorityVoteOfAgreeingPeersKeepsMostSigns) {
  // Peers flip 25% of signs independently; with 7 workers, the majority sign
  // equals the input's sign for most elements.
  const std::size_t n = 8192;
  const auto x = test::random_gradient(n, 22);
  CodecConfig cfg;
  cfg.workers = 7;
  auto codec = make_cpu_codec("majority_vote", n, cfg);
  codec->set_input(x.data());
  codec->encode();
  codec->decode();
  const auto y = codec->decoded();
  std::size_t agree = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_NE(y[i], 0.0f);  // odd worker count: no ties
    agree += ((y[i] > 0) == (x[i] >= 0.0f)) ? 1 : 0;
  }
  // P(majority of 7 right | each right w.p. 0.75, worker 0 always right) ~ 0.98.
  EXPECT_GT(agree, n * 95 / 100);
  EXPECT_LT(agree, n);
}

}  // namespace
}  // namespace gw::kernels
