#!/usr/bin/env python3
"""Generates the datasheet-derived gradwire profiles (schema gradwire-profile/1).

    python3 calibrate/profiles/make_datasheet_profiles.py   # rewrites calibrate/profiles/<name>.yaml

Standard library only. Every number in the generated files comes from the
vendor figures in GPUS below and the derivation constants in this file, so
the derivation can be reviewed here (see also docs/profiles.md). A measured
profile (gradwire calibrate) should always be preferred to these.
"""
import math
import os

# ---------------------------------------------------------------------------
# Derivation constants
# ---------------------------------------------------------------------------
TENSOR_GEMM_EFFICIENCY = 0.70   # achieved / dense peak for tf32, bf16, fp16 (tensor cores)
FP32_GEMM_EFFICIENCY = 0.80     # achieved / peak for fp32 SIMT GEMM
MEMORY_EFFICIENCY = 0.80        # achieved / datasheet memory bandwidth for streaming kernels
COPY_EFFICIENCY = 0.85          # device-to-device cudaMemcpy (bytes read + written) / bandwidth
LAUNCH_OVERHEAD_S = 5e-6        # per kernel launch: low end of the 5-20 us CPU-side launch time in Meta's HTA docs (cuda_kernel_launch_stats.rst)
LINK_EFFICIENCY = 0.80          # NCCL ring bus bandwidth / per-GPU unidirectional link bandwidth
STEP_LATENCY_NVLINK_S = 1.5e-6  # per ring step (LL protocol) over NVLink
STEP_LATENCY_PCIE_S = 4.0e-6    # per ring step over PCIe through the host bridge
CODEC_SIZES = [2 ** e for e in range(10, 31)]   # elements (fp32) at which knots are written
COLLECTIVE_GPUS = [2, 4, 8]

# Sparse-codec parameters assumed (the kernels' defaults, kernels/include/gradwire/kernels/codec.hpp)
SPARSE_RATIO = 0.01
MAJORITY_WORKERS = 8
POWERSGD_RANK = 4

GiB = 1024 ** 3

# Dense (no structured sparsity) peak figures from the vendor datasheets.
# link_uni: per-GPU unidirectional GPU-to-GPU bandwidth in bytes/s.
GPUS = {
    "v100": dict(
        device="NVIDIA Tesla V100-SXM2-32GB", sm=80, memory=32 * GiB, bw=900e9,
        fp32=15.7e12, tf32=None, bf16=None, fp16=125e12,
        link="NVLink 2 (6 links, 300 GB/s bidirectional per GPU)", link_uni=150e9, nvlink=True,
        refs=["NVIDIA Tesla V100 GPU datasheet (SXM2): 15.7 TFLOPS FP32, 125 TFLOPS tensor, 900 GB/s HBM2, 300 GB/s NVLink; https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf",
              "NVIDIA Tesla V100 GPU architecture whitepaper (80 SMs); https://images.nvidia.com/content/volta-architecture/pdf/volta-architecture-whitepaper.pdf"],
        extra=["V100 has no TF32 or BF16 tensor cores: the profile has no tf32 or bf16 rate (fp32 training runs at the fp32 rate; asking for tf32 or bf16 compute is an input error)."]),
    "a100-40gb": dict(
        device="NVIDIA A100-SXM4-40GB", sm=108, memory=40 * GiB, bw=1555e9,
        fp32=19.5e12, tf32=156e12, bf16=312e12, fp16=312e12,
        link="NVLink 3 (12 links, 600 GB/s bidirectional per GPU)", link_uni=300e9, nvlink=True,
        refs=["NVIDIA A100 Tensor Core GPU datasheet: 19.5 TFLOPS FP32, 156 TFLOPS TF32, 312 TFLOPS BF16/FP16 (dense), 1,555 GB/s HBM2 (40GB), 600 GB/s NVLink; https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
              "NVIDIA A100 Tensor Core GPU architecture whitepaper (108 SMs); https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"],
        extra=[]),
    "a100-80gb": dict(
        device="NVIDIA A100-SXM4-80GB", sm=108, memory=80 * GiB, bw=2039e9,
        fp32=19.5e12, tf32=156e12, bf16=312e12, fp16=312e12,
        link="NVLink 3 (12 links, 600 GB/s bidirectional per GPU)", link_uni=300e9, nvlink=True,
        refs=["NVIDIA A100 Tensor Core GPU datasheet: 19.5 TFLOPS FP32, 156 TFLOPS TF32, 312 TFLOPS BF16/FP16 (dense), 2,039 GB/s HBM2e (80GB SXM), 600 GB/s NVLink; https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
              "NVIDIA A100 Tensor Core GPU architecture whitepaper (108 SMs); https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"],
        extra=[]),
    "h100": dict(
        device="NVIDIA H100 80GB HBM3 (SXM5)", sm=132, memory=80 * GiB, bw=3.35e12,
        fp32=67e12, tf32=494.5e12, bf16=989e12, fp16=989e12,
        link="NVLink 4 (18 links, 900 GB/s bidirectional per GPU)", link_uni=450e9, nvlink=True,
        refs=["NVIDIA H100 Tensor Core GPU datasheet (SXM): 67 TFLOPS FP32, 989 TFLOPS TF32 / 1,979 TFLOPS BF16 and FP16 with sparsity (half dense), 3.35 TB/s HBM3, 900 GB/s NVLink; https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet",
              "NVIDIA H100 Tensor Core GPU architecture whitepaper (132 SMs on SXM5); https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"],
        extra=[]),
    "h200": dict(
        device="NVIDIA H200 (SXM, 141GB HBM3e)", sm=132, memory=141e9, bw=4.8e12,
        fp32=67e12, tf32=494.5e12, bf16=989e12, fp16=989e12,
        link="NVLink 4 (18 links, 900 GB/s bidirectional per GPU)", link_uni=450e9, nvlink=True,
        refs=["NVIDIA H200 Tensor Core GPU datasheet (SXM): 67 TFLOPS FP32, 989 TFLOPS TF32 / 1,979 TFLOPS BF16 and FP16 with sparsity (half dense), 141 GB HBM3e at 4.8 TB/s, 900 GB/s NVLink; https://resources.nvidia.com/en-us-data-center-overview-mc/en-us-data-center-overview/hpc-datasheet-sc23-h200",
              "NVIDIA H100 Tensor Core GPU architecture whitepaper (Hopper, 132 SMs on SXM); https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"],
        extra=["On 8-GPU NVSwitch systems NCCL may use NVLS (in-switch reduction) and beat the ring bound derived here; measure to capture it."]),
    "a10g": dict(
        device="NVIDIA A10G", sm=80, memory=24 * GiB, bw=600e9,
        fp32=31.2e12, tf32=62.5e12, bf16=125e12, fp16=125e12,
        link="PCIe Gen4 x16 (no NVLink), 32 GB/s per direction", link_uni=32e9, nvlink=False,
        refs=["NVIDIA A10 Tensor Core GPU datasheet: 31.2 TFLOPS FP32, 62.5 TFLOPS TF32, 125 TFLOPS BF16/FP16 (dense), 24 GB GDDR6 at 600 GB/s, PCIe Gen4; https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/datasheet-new/nvidia-a10-datasheet.pdf",
              "Amazon EC2 G5 instances (NVIDIA A10G, 24 GB); https://aws.amazon.com/ec2/instance-types/g5/"],
        extra=["NVIDIA publishes no separate A10G datasheet; the A10 figures are used. The A10G (AWS G5) is reported with 80 SMs and lower tensor throughput than the A10, so the tensor figures here are optimistic; measure."]),
    "l4": dict(
        device="NVIDIA L4", sm=58, memory=24 * GiB, bw=300e9,
        fp32=30.3e12, tf32=60e12, bf16=121e12, fp16=121e12,
        link="PCIe Gen4 x16 (no NVLink), 32 GB/s per direction", link_uni=32e9, nvlink=False,
        refs=["NVIDIA L4 Tensor Core GPU datasheet: 30.3 TFLOPS FP32, 120 TFLOPS TF32 / 242 TFLOPS BF16 and FP16 with sparsity (half dense), 24 GB GDDR6 at 300 GB/s, PCIe Gen4 x16; https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet",
              "NVIDIA Ada GPU architecture whitepaper (AD104, 58 SMs on L4); https://images.nvidia.com/aem-dam/Solutions/Data-Center/l4/nvidia-ada-gpu-architecture-whitepaper-v2.1.pdf"],
        extra=[]),
}

# ---------------------------------------------------------------------------
# Codec cost models: bytes of device memory moved per fp32 input element and
# kernel launches, for encode and decode. time = launches x LAUNCH_OVERHEAD_S
# + n x bytes_per_element / (MEMORY_EFFICIENCY x bandwidth).
# ---------------------------------------------------------------------------
K = SPARSE_RATIO
CODECS = {
    # cast: read fp32, write 16-bit; decode the reverse
    "fp16": dict(enc=(4 + 2, 1), dec=(2 + 4, 1), why="cast: read 4 B, write 2 B per element (decode reversed)"),
    "bf16": dict(enc=(4 + 2, 1), dec=(2 + 4, 1), why="cast: read 4 B, write 2 B per element (decode reversed)"),
    # chunk absmax pass then quantize pass
    "int8": dict(enc=(4 + 4 + 1, 2), dec=(1 + 4, 1), why="absmax pass (4 B) + quantize pass (read 4 B, write 1 B); decode read 1 B write 4 B"),
    # mean |g| pass then sign-pack pass; decode unpack
    "sign": dict(enc=(4 + 4 + 0.125, 2), dec=(0.125 + 4, 1), why="scale pass (4 B) + pack pass (read 4 B, write 1 bit); decode read 1 bit write 4 B"),
    "majority_vote": dict(enc=(4 + 0.125, 1), dec=(MAJORITY_WORKERS * 0.125 + 4, 1),
                          why="pack signs (read 4 B, write 1 bit); decode reads %d workers' bits and writes 4 B" % MAJORITY_WORKERS),
    # gather K random elements (a 32 B sector per random read) + write value and index
    "randomk": dict(enc=(K * (32 + 8), 1), dec=(4 + K * (8 + 32), 2),
                    why="gather K=%.2g n values (32 B sector each) and write value+index; decode zero-fills 4 B and scatters K" % K),
    # radix select: ~4 passes over the data, then a compaction pass
    "topk": dict(enc=(4 * 4 + 4 + K * 8, 5), dec=(4 + K * (8 + 32), 2),
                 why="about 4 radix-select passes (4 B each) + compaction (read 4 B, write K x 8 B); decode zero-fill + scatter"),
}


def codec_time(bytes_per_elem, launches, n, bw):
    return launches * LAUNCH_OVERHEAD_S + n * bytes_per_elem / (MEMORY_EFFICIENCY * bw)


def powersgd_times(n, g):
    """Rank-r PowerSGD on a square-ish m x m matrix (m = sqrt(n)).

    encode: P = M Q and Q = M^T P (2 GEMMs of 2 m m r FLOPs, each reading M:
    4 B/element) + Gram-Schmidt of P (negligible); decode: M ~ P Q^T (2 m m r
    FLOPs, writing 4 B/element). Each GEMM costs the larger of its memory
    time and its FLOP time at the achieved fp32 rate; 4 launches to encode,
    1 to decode. The simulator may compute PowerSGD from gemm_flops directly.
    """
    r = POWERSGD_RANK
    mem = MEMORY_EFFICIENCY * g["bw"]
    flops = FP32_GEMM_EFFICIENCY * g["fp32"]
    gemm_enc = max(4 * n / mem, 2 * n * r / flops)
    enc = 4 * LAUNCH_OVERHEAD_S + 2 * gemm_enc
    dec = LAUNCH_OVERHEAD_S + max(4 * n / mem, 2 * n * r / flops)
    return enc, dec


def num(v):
    return repr(float(v))


def q(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(name, g):
    tf32 = g["tf32"] if g["tf32"] else None
    fp32_ach = FP32_GEMM_EFFICIENCY * g["fp32"]
    # A GPU without TF32 or BF16 tensor cores (V100) gets no such rate: a
    # scenario asking for it is an input error, not a silent fp32 figure.
    flops = {"fp32": fp32_ach}
    if tf32:
        flops["tf32"] = TENSOR_GEMM_EFFICIENCY * tf32
    if g["bf16"]:
        flops["bf16"] = TENSOR_GEMM_EFFICIENCY * g["bf16"]
    flops["fp16"] = TENSOR_GEMM_EFFICIENCY * g["fp16"]
    notes = [
        "Datasheet-derived, not measured: prefer a profile from `gradwire calibrate` on the real machine.",
        "GEMM: achieved = dense datasheet peak x %.2f (tf32/bf16/fp16 tensor cores) or x %.2f (fp32)." % (TENSOR_GEMM_EFFICIENCY, FP32_GEMM_EFFICIENCY),
        "Copy bandwidth = %.2f x memory bandwidth (%s B/s)." % (COPY_EFFICIENCY, num(g["bw"])),
        "Codecs: time = launches x %g s + n x bytes_per_element / (%.2f x memory bandwidth); per-codec bytes and launches in calibrate/profiles/make_datasheet_profiles.py." % (LAUNCH_OVERHEAD_S, MEMORY_EFFICIENCY),
        "powersgd (rank %d, square-ish matrix): encode 2 GEMMs reading M, decode 1 GEMM writing M, each max(memory time, 2 n r / achieved fp32 FLOP/s); the simulator may compute PowerSGD from gemm flops instead." % POWERSGD_RANK,
        "Collectives (intra-node, %s): ring model, bus bandwidth = %.2f x %s B/s per direction; alpha = steps x %g s; beta = bus bandwidth / nccl-tests bus factor." % (
            g["link"], LINK_EFFICIENCY, num(g["link_uni"]), STEP_LATENCY_NVLINK_S if g["nvlink"] else STEP_LATENCY_PCIE_S),
    ] + g["extra"]
    for cname, c in CODECS.items():
        notes.append("codec %s: %s; launches encode %d, decode %d." % (cname, c["why"], c["enc"][1], c["dec"][1]))

    out = []
    w = out.append
    w("# Generated by calibrate/profiles/make_datasheet_profiles.py; do not edit by hand.")
    w("# Schema gradwire-profile/1 (docs/profiles.md). Units: s, bytes, bytes/s, FLOP/s.")
    w("schema: 1")
    w("source: datasheet")
    w("name: " + q(name))
    w("device: " + q(g["device"]))
    w("sm_count: %d" % g["sm"])
    w("memory: " + num(g["memory"]))
    w('driver: ""')
    w('cuda: ""')
    w('nccl: ""')
    w('date: ""')
    w('host: ""')
    w('command: "python3 calibrate/profiles/make_datasheet_profiles.py"')
    w("references:")
    for r in g["refs"]:
        w("  - " + q(r))
    w("notes:")
    for n in notes:
        w("  - " + q(n))
    w("compute:")
    for p in ("fp32", "tf32", "bf16", "fp16"):
        if p in flops:
            w("  %s_flops: %s" % (p, num(flops[p])))
    w("  copy_bandwidth: " + num(COPY_EFFICIENCY * g["bw"]))
    w("codecs:")
    for cname, c in CODECS.items():
        w("  %s:" % cname)
        for side, key in (("encode", "enc"), ("decode", "dec")):
            w("    %s:" % side)
            w("      knots:")
            for n in CODEC_SIZES:
                w("        - [%d, %s, 0, 0]" % (n, num(codec_time(c[key][0], c[key][1], n, g["bw"]))))
            w("      max_rel_residual: 0")
    w("  powersgd:")
    for side, idx in (("encode", 0), ("decode", 1)):
        w("    %s:" % side)
        w("      knots:")
        for n in CODEC_SIZES:
            w("        - [%d, %s, 0, 0]" % (n, num(powersgd_times(n, g)[idx])))
        w("      max_rel_residual: 0")
    w("collectives:")
    step = STEP_LATENCY_NVLINK_S if g["nvlink"] else STEP_LATENCY_PCIE_S
    busbw = LINK_EFFICIENCY * g["link_uni"]
    for gpus in COLLECTIVE_GPUS:
        for op in ("allreduce", "allgather", "reducescatter", "broadcast", "alltoall"):
            n = gpus
            if op == "allreduce":
                steps, factor = 2 * (n - 1), 2.0 * (n - 1) / n
            elif op == "broadcast":
                steps, factor = n - 1, 1.0
            else:
                steps, factor = n - 1, (n - 1) / n
            w("  - op: " + op)
            w("    gpus: %d" % gpus)
            w("    alpha: " + num(steps * step))
            w("    beta: " + num(busbw / factor))
            w("    max_rel_residual: 0")
    return "\n".join(out) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, g in GPUS.items():
        path = os.path.join(here, name + ".yaml")
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(generate(name, g))
        os.replace(tmp, path)
        print("wrote", path)


if __name__ == "__main__":
    main()
