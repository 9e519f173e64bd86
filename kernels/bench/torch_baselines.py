#!/usr/bin/env python3
"""PyTorch baselines for gradwire's Top-K and PowerSGD kernels.

Times on the current CUDA device, with torch.cuda.Event and the median of
--runs (>= 20) runs after --warmup runs:
  * torch.topk(x.abs(), k) on n = 2^26 fp32 (default) with k = ceil(1% n),
    also with sorted=False (the default sorted=True is the baseline the
    benchmark's headline ratio uses: it is what a user would write);
  * the PowerSGD steps at rank 4 over ResNet-50's conv/fc weights viewed as
    (out, in*kh*kw): P = M Q, Gram-Schmidt over P's columns as torch's
    powerSGD_hook does it, Q = M^T P, approx = P Q^T (out= buffers like the
    hook, fp32, TF32 off), all tensors, and each step alone;
  * per-launch costs, the constant L of docs/model.md "DDP overheads" (5 us
    from a published range until measured): host time to submit one tiny
    kernel (`x.add_(1)` on one element, no synchronization, median over
    batches of 2,000), GPU time per such kernel back to back, and a one-rank
    NCCL all-reduce of 4 bytes through torch.distributed (host submit time,
    and latency with a synchronization after each call). Kernel "launch" and
    "nccl" rows, n = 1, median_ms per call.

Usage: torch_baselines.py OUT  (or --out OUT). Writes JSON lines to OUT, one per measurement, in the format the gradwire
benchmarks read with --baselines:
  {"kernel": "topk", "op": "encode", "n": 67108864, "baseline": "...", "median_ms": 1.2, ...}
"""
import argparse
import json
import math
import socket
import statistics
import sys
import time

import torch


def median_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def resnet50_shapes():
    """(out, in*kh*kw) of every conv/fc weight of ResNet-50, in model order."""
    shapes = [(64, 3 * 7 * 7)]
    channels = 64
    for stage, blocks in enumerate([3, 4, 6, 3]):
        width = 64 << stage
        for block in range(blocks):
            shapes.append((width, channels))           # 1x1 reduce
            shapes.append((width, width * 9))          # 3x3
            shapes.append((4 * width, width))          # 1x1 expand
            if block == 0:
                shapes.append((4 * width, channels))   # downsample 1x1
            channels = 4 * width
    shapes.append((1000, 2048))                        # fc
    return shapes


def gram_schmidt_(p, eps=0.0):
    """In place over the columns of p (m x r), the modified Gram-Schmidt of
    torch's powerSGD_hook (normalize column i, remove it from the later ones)."""
    r = p.shape[1]
    for i in range(r):
        col = p[:, i:i + 1]
        if eps == 0:
            col /= torch.norm(col, dim=0, keepdim=True)
        else:
            col /= torch.norm(col, dim=0, keepdim=True) + eps
        if i + 1 < r:
            rest = p[:, i + 1:]
            rest -= torch.sum(col * rest, dim=0, keepdim=True) * col


def per_call_ms(fn, calls, batches, sync_each=False):
    """Median over `batches` of the host wall time per call of `calls` calls
    (no synchronization inside a batch unless sync_each), in ms."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
            if sync_each:
                torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3 / calls)
        torch.cuda.synchronize()
    return statistics.median(times)


def launch_costs(dev, emit):
    """Rows "launch" and "nccl" (n = 1): what one launch costs the host and
    the GPU, and a one-rank NCCL all-reduce's floor on this device."""
    x = torch.zeros(1, device=dev)
    calls = 2000
    emit("launch", "host_submit", 1, "x.add_(1), one element, no sync",
         per_call_ms(lambda: x.add_(1.0), calls, 5), calls=calls)
    emit("launch", "gpu_per_kernel", 1, "x.add_(1), one element, back to back",
         median_ms(lambda: [x.add_(1.0) for _ in range(calls)], 20, 2) / calls, calls=calls)
    try:
        import torch.distributed as dist
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", world_size=1, rank=0)
        t = torch.ones(1, device=dev)
        emit("nccl", "allreduce_1rank_host_submit", 1, "dist.all_reduce, 4 B, one rank, no sync",
             per_call_ms(lambda: dist.all_reduce(t), 500, 5), calls=500)
        emit("nccl", "allreduce_1rank_latency", 1, "dist.all_reduce, 4 B, one rank, sync after each",
             per_call_ms(lambda: dist.all_reduce(t), 200, 5, sync_each=True), calls=200)
        dist.destroy_process_group()
    except Exception as e:  # a missing NCCL build must not lose the other rows
        print(f"torch_baselines.py: one-rank NCCL all-reduce not measured: {e}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="JSON lines file to write")
    parser.add_argument("--out", dest="out_opt", help="same as the positional OUT")
    parser.add_argument("--n", type=int, default=1 << 26, help="Top-K input size")
    parser.add_argument("--ratio", type=float, default=0.01, help="k = ceil(ratio * n)")
    parser.add_argument("--rank", type=int, default=4, help="PowerSGD rank")
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    if args.runs < 20:
        parser.error("--runs must be at least 20")
    out_path = args.out_opt or args.out
    if not out_path:
        parser.error("give the output file (OUT or --out OUT)")
    if not torch.cuda.is_available():
        print("torch_baselines.py: no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(dev),
            "runs": args.runs}
    lines = []

    def emit(kernel, op, n, baseline, ms, **extra):
        rec = {"kernel": kernel, "op": op, "n": n, "baseline": baseline, "median_ms": ms}
        rec.update(extra)
        rec.update(meta)
        lines.append(json.dumps(rec))
        print(f"{kernel:9s} {op:26s} {n:11d} {ms * 1e3:12.2f} us  {baseline}", flush=True)

    # ---- Top-K ---------------------------------------------------------------
    n = args.n
    k = min(max(math.ceil(args.ratio * n), 1), n)
    gen = torch.Generator(device=dev)
    gen.manual_seed(12345)
    x = torch.randn(n, device=dev, generator=gen)
    ms = median_ms(lambda: torch.topk(x.abs(), k, sorted=False), args.runs, args.warmup)
    emit("topk", "encode", n, "torch.topk(x.abs(), k, sorted=False)", ms, k=k)
    # Written last so that a reader keeping one baseline per (kernel, op, n)
    # keeps this one, the plain call.
    ms = median_ms(lambda: torch.topk(x.abs(), k), args.runs, args.warmup)
    emit("topk", "encode", n, "torch.topk(x.abs(), k)", ms, k=k)
    del x

    # ---- PowerSGD over ResNet-50 ------------------------------------------------
    r_req = args.rank
    tensors = []
    total = 0
    for m, cols in resnet50_shapes():
        r = min(r_req, m, cols)
        mat = torch.randn(m, cols, device=dev, generator=gen)
        q = torch.randn(cols, r, device=dev, generator=gen)
        p = torch.empty(m, r, device=dev)
        out = torch.empty(m, cols, device=dev)
        tensors.append((mat, p, q, out))
        total += m * cols

    def step_p():
        for mat, p, q, _ in tensors:
            torch.matmul(mat, q, out=p)

    def step_o():
        for _, p, _, _ in tensors:
            gram_schmidt_(p)

    def step_q():
        for mat, p, q, _ in tensors:
            torch.matmul(mat.t(), p, out=q)

    def step_d():
        for _, p, q, out in tensors:
            torch.matmul(p, q.t(), out=out)

    def all_steps():
        step_p()
        step_o()
        step_q()
        step_d()

    tag = f"resnet50_r{r_req}"
    base = "torch (matmul out=, hook-style Gram-Schmidt)"
    emit("powersgd", tag + "_steps", total, base, median_ms(all_steps, args.runs, args.warmup),
         tensors=len(tensors))
    emit("powersgd", tag + "_compute_p", total, base, median_ms(step_p, args.runs, args.warmup))
    emit("powersgd", tag + "_orthogonalize", total, base,
         median_ms(step_o, args.runs, args.warmup))
    emit("powersgd", tag + "_compute_q", total, base, median_ms(step_q, args.runs, args.warmup))
    emit("powersgd", tag + "_decompress", total, base, median_ms(step_d, args.runs, args.warmup))

    launch_costs(dev, emit)

    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
