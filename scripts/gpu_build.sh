#!/usr/bin/env bash
# gpu_build.sh — run on a build machine (Debian, no GPU needed).
#
# Builds the GPU-side binaries for the H200 machine (sm_90) and leaves only
# what must travel in build-gpu/ (< 64 MiB):
#   build-gpu/bin/      test_kernels_gpu, test_kernels_cpu, gw_kernels_bench
#                       (+ gradwire-calibrate when that target exists), built
#                       with static libstdc++/libgcc, static gtest / yaml-cpp /
#                       program_options, static cudart; cuBLAS and NCCL stay
#                       dynamic and are found on the GPU machine.
#   build-gpu/deps/     googletest source (/usr/src/googletest), the
#                       nlohmann/json headers and Boost.Program_options
#                       (its header closure and static library), for
#                       gpu_check.sh's fallback build of the kernels, GPU
#                       tests and benchmark there.
#   build-gpu/manifest.txt  what was built, from which commit, and ldd output.
# The CMake tree itself lives in build-gpu-work/ (not carried).
#
# Usage: scripts/gpu_build.sh            (env: JOBS=2, GW_CUDA_ARCH=90)
# Then the GPU machine runs: scripts/gpu_check.sh OUTDIR  (carry build-gpu)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTB=$ROOT/build-gpu
WORK=$ROOT/build-gpu-work
JOBS=${JOBS:-2}
ARCH=${GW_CUDA_ARCH:-90}
LIMIT_MIB=60

cmake -S "$ROOT" -B "$WORK" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DGRADWIRE_GPU_ONLY=ON -DGRADWIRE_STATIC_DEPS=ON -DGRADWIRE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$ARCH"

targets=(test_kernels_gpu test_kernels_cpu gw_kernels_bench)
targets+=(gw_topk_powersgd_bench)  # Top-K / PowerSGD vs radix sort and PyTorch
if ninja -C "$WORK" -t targets all 2>/dev/null | grep -q '^gradwire-calibrate:'; then
  targets+=(gradwire-calibrate)
else
  echo "gpu_build: no gradwire-calibrate target; building without the calibrator"
fi
ninja -C "$WORK" -j"$JOBS" "${targets[@]}"

rm -rf "$OUTB"
mkdir -p "$OUTB/bin" "$OUTB/deps/include"
for t in "${targets[@]}"; do
  f=$(find "$WORK" -type f -name "$t" -perm -u+x | head -n 1)
  if [[ -z "$f" ]]; then echo "gpu_build: built target $t not found" >&2; exit 1; fi
  cp "$f" "$OUTB/bin/$t"
  strip --strip-unneeded "$OUTB/bin/$t"
done
cp -r /usr/src/googletest "$OUTB/deps/googletest"
cp -r /usr/include/nlohmann "$OUTB/deps/include/nlohmann"
# Boost.Program_options for the benchmarks' fallback build there (no Boost on
# that machine): every header <boost/program_options.hpp> pulls in here, all
# of Boost.Config (it picks headers by compiler), and the static library.
mkdir -p "$OUTB/deps/lib"
echo '#include <boost/program_options.hpp>' | g++ -std=c++20 -x c++ -M -MT deps - | tr ' \\' '\n\n' |
  grep '^/usr/include/boost/' | sort -u | while read -r h; do
    rel=${h#/usr/include/}
    mkdir -p "$OUTB/deps/include/$(dirname "$rel")"
    cp "$h" "$OUTB/deps/include/$rel"
  done
cp -r /usr/include/boost/config "$OUTB/deps/include/boost/"
cp /usr/lib/x86_64-linux-gnu/libboost_program_options.a "$OUTB/deps/lib/"

{
  echo "built: $(date -u +%FT%TZ) on $(hostname)"
  echo "commit: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "cuda arch: $ARCH"
  for t in "${targets[@]}"; do
    echo "== NEEDED $t"
    readelf -d "$OUTB/bin/$t" | awk '/NEEDED/ {print "   ", $NF}'
    echo "== ldd $t (here; cuBLAS/NCCL pull in the system libstdc++ themselves)"
    ldd "$OUTB/bin/$t" || true
  done
} > "$OUTB/manifest.txt"

# The binaries themselves must not need the Debian-only shared libraries.
for t in "${targets[@]}"; do
  if readelf -d "$OUTB/bin/$t" | grep NEEDED | grep -E 'libyaml-cpp|libboost|libgtest|libstdc\+\+|libgcc_s|libcudart\.so'; then
    echo "gpu_build: $t still links one of the libraries above dynamically" >&2
    exit 1
  fi
done

size_mib=$(( $(du -sb "$OUTB" | cut -f1) / 1048576 ))
echo "gpu_build: build-gpu is ${size_mib} MiB"
ls -la "$OUTB/bin"
if (( size_mib > LIMIT_MIB )); then
  echo "gpu_build: build-gpu exceeds ${LIMIT_MIB} MiB" >&2
  exit 1
fi
