// How the CUDA decoders write their dense fp32 output. Both forms give the
// same values bit for bit; they differ only in the cache policy of the stores,
// a tuning knob for write-bound kernels whose output is larger than L2.
#pragma once

namespace gw::kernels {

enum class StoreHint {
  plain,      ///< ordinary global stores (st.global), the default
  streaming,  ///< streaming stores (st.global.cs, evict-first)
};

}  // namespace gw::kernels
