// Same-traffic reference kernels for gw_kernels_bench: pure data movement
// with no arithmetic, so a decoder's bandwidth can be compared with what the
// memory system gives for the same mix of reads and writes, not only with a
// copy (equal reads and writes).
//
//   expand S:  out[i] = in[i >> S] over 16-byte units; writes W bytes and
//              reads W / 2^S (S = 0 is a copy kernel, to check against
//              cudaMemcpy). A decoder that reads R and writes W is compared
//              with S = round(log2(W / R)).
//   write:     out[i] = a value of i; writes W bytes, reads nothing.
//
// Each comes with plain stores and with streaming stores (st.global.cs,
// evict-first), so the run also shows whether cache hints help a write-bound
// kernel. Launches are persistent (all SMs x resident blocks), tiles of
// 4 x 256 units with all loads of a tile issued before its stores, the shape
// of the decoders themselves.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gw::kernels::bench {

/// Largest expansion exponent instantiated (reads = writes / 2^kMaxExpandShift).
inline constexpr int kMaxExpandShift = 7;

/// out[i] = in[i >> shift] for i in [0, units), 16-byte units. shift in
/// [0, kMaxExpandShift]; in holds (units + 2^shift - 1) >> shift units.
cudaError_t expand_reference(const void* in, void* out, std::size_t units, int shift, bool streaming_stores,
                             cudaStream_t stream);

/// out[i] = {i, i, i, i} (as uint32) for i in [0, units), 16-byte units.
cudaError_t write_reference(void* out, std::size_t units, bool streaming_stores, cudaStream_t stream);

}  // namespace gw::kernels::bench
