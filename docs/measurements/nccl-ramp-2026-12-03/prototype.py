#!/usr/bin/env python3
"""Numerical prototype of issue 31's per-size ramp (design.md beside this file).

Reads the repository's collective validation cases (validation/collectives/*.yaml and
their clusters), takes today's prediction of every point from
`gradwire validate collectives --format json` (the pair NCCL's rule picks and its time),
adds the proposed mechanisms, fits their unknown constants ONCE by least squares over
all cases at the same time (each case weighted equally), and reports per case the
in-sample median |error| below and from 1 MiB and the leave-one-case-out error.

Run from the repository root:
  python3 docs/measurements/nccl-ramp-2026-12-03/prototype.py [--gradwire PATH]
Needs numpy, scipy and PyYAML (not committed; a venv is enough).
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np
import yaml
from scipy.optimize import least_squares

MiB = 1 << 20
KiB = 1 << 10
NCCL_STEPS = 8

# ---------------------------------------------------------------- NCCL structure
# Buffer sizes per protocol (NCCL src/init.cc DEFAULT_*_BUFFSIZE, 2.20.3):
#   LL     8 lines/thread x 512 threads x 8 steps x 16 B = 512 KiB -> step 64 KiB
#   LL128  120 elems/thread x 640 threads x 8 steps x 8 B = 4.6875 MiB -> step 600 KiB
#   Simple 4 MiB -> step 512 KiB
STEP = {"LL": 512 * KiB // NCCL_STEPS, "LL128": 120 * 640 * 8 * 8 // NCCL_STEPS, "Simple": 4 * MiB // NCCL_STEPS}


def chunk_bytes(algo, proto, buffsize=None):
    """enqueue.cc computeCollChunkInfo before the per-algorithm shrinking."""
    step = STEP[proto] if buffsize is None else buffsize // NCCL_STEPS
    steps = 4 if (proto == "Simple" and algo == "ring") else 1  # ALLREDUCE_CHUNKSTEPS = NCCL_STEPS/2
    c = step * steps
    if proto == "LL":
        c //= 2  # half of every LL line is flags
    if proto == "LL128":
        c = c // 16 * 15  # 15 data words of every 16
    return c


def nvls_chunk(S, nch, heads, nodes):
    """enqueue.cc computeCollChunkInfo, NCCL_ALGO_NVLS branch (one node)."""
    c = min(chunk_bytes("nvls", "Simple"), 128 * KiB)
    ops = nch * heads
    if S < 64 * ops * c and c > 64 * KiB:
        c = 64 * KiB
    if S < 8 * ops * c and c > 32 * KiB:
        c = 32 * KiB
    if S < 2 * ops * c and c > 16 * KiB:
        c = 16 * KiB
    return c


def nvlstree_chunk(S, nch, heads, nodes):
    """enqueue.cc computeCollChunkInfo, NCCL_ALGO_NVLS_TREE branch."""
    c = chunk_bytes("nvlstree", "Simple")
    if nodes >= 4:
        c = min(c, 64 * KiB)
    ops = nch * heads
    for mult, lim in ((32, 256 * KiB), (16, 128 * KiB), (4, 64 * KiB), (1, 32 * KiB)):
        if S < mult * ops * c and c > lim:
            c = lim
    return c


def pipeline_shape(op, algo, proto, S, n, m, nch, heads, buffsize):
    """(K, msgs): K = chunk steps one channel runs in sequence (the pipeline's length in chunks),
    msgs = messages in sequence on the busiest network connection (0 on one node)."""
    if algo == "ring":
        c = chunk_bytes("ring", proto, buffsize if proto == "Simple" else None)
        per_rank = S / nch if op == "allreduce" else S / n / nch  # channel's share of one rank's block set
        if op == "allreduce":
            loops = max(1, math.ceil(per_rank / (n * c)))
            steps = 2 * (n - 1) * loops
        else:
            loops = max(1, math.ceil(per_rank / c))
            steps = (n - 1) * loops
        slices = 2 if proto == "Simple" else 1  # Simple: CHUNKSTEPS / SLICESTEPS = 2 proxy messages per chunk
        nc = active_channels(S, nch, "ring", proto, n)
        return steps, ((steps * slices * nc, steps * slices) if m > 1 else (0, 0))
    if algo == "tree":
        c = chunk_bytes("tree", proto)
        if proto == "LL128":
            ppn = n / m
            nst = 1 + int(math.log2(m)) + 0.1 * ppn
            while S / (nch * c) < nst * 64 / ppn and c > 131072:
                c //= 2
            while S / (nch * c) < nst * 16 / ppn and c > 32768:
                c //= 2
        nc = active_channels(S, nch, "tree", proto, n)
        K = max(1, math.ceil(S / (nc * c)))
        # pipelined: one up and one down message per tree level on a chunk's path, each waiting for
        # the proxy's round over the active channels (later chunks overlap them)
        hops = 2 * max(1, int(math.log2(m)))
        return K, ((hops * nc, hops) if m > 1 else (0, 0))
    if algo == "nvls":
        c = nvls_chunk(S, nch, heads, m)
        return max(1, math.ceil(S / (nch * heads * c))), (0, 0)
    if algo == "nvlstree":
        c = nvlstree_chunk(S, nch, heads, m)
        K = max(1, math.ceil(S / (nch * heads * c)))
        hops = 2 * max(1, int(math.log2(m)))  # as the tree: a head's proxy round over its NVLS channels
        return K, (hops * nch, hops)
    return 1, (0, 0)


def active_channels(S, nch, algo, proto, n):
    """enqueue.cc getChannnelThreadInfo: drop a channel while bytes < nc x threads x threshold."""
    nt = {"LL": 512, "LL128": 640, "Simple": 512}[proto]
    thr = {"LL": 8, "LL128": 8, "Simple": 64}[proto] * (n if (algo == "ring" and proto == "LL") else 1)
    nc = nch
    while S < nc * nt * thr and nc > 1:
        nc -= 1
    return nc


# Pipeline depth in chunks, from the kernels' structure (design.md, "Pipeline fill"):
# ring: a chunk's step waits for one hop (the ring is lock-step: depth 1, no fill beyond NCCL's
# latency); NVLS one node: scatter -> multicast reduce/broadcast -> gather (3 stages, all_reduce.h
# runNvls); NVLSTree: scatter -> reduce -> tree up -> tree down -> broadcast -> gather (the
# inter-node tree stage counted once per tree level); tree: the chain's depth in hops.
def depth(algo, n, m):
    g = n // m
    if algo == "nvls":
        return 3
    if algo == "nvlstree":
        return 4 + 2 * max(1, int(math.log2(m)))
    if algo == "tree":
        return 2 * ((g - 1) + max(0, int(math.log2(m)))) if n > 1 else 1
    return 1


# ---------------------------------------------------------------- cases
def load_cases(root, gradwire):
    out = subprocess.run([gradwire, "validate", "collectives", "--cases", os.path.join(root, "validation/collectives"),
                          "--format", "json"], capture_output=True, text=True, check=True)
    js = json.loads(out.stdout)["collectives"]["cases"]
    cases = []
    for c in js:
        doc = yaml.safe_load(open(os.path.join(root, c["file"])))
        cl = yaml.safe_load(open(os.path.join(root, c["cluster"])))["cluster"]
        m, g = int(cl["nodes"]), int(cl["gpus_per_node"])
        n = m * g
        nic = cl.get("nics", {})
        nic_tr = nic.get("transport", "network")
        nic_bw = parse_rate(nic.get("bandwidth", "0Gbps")) * 0.96 * int(nic.get("count", 1))
        intra_bw = parse_rate(cl["intra_node"]["bandwidth"]) * 0.80 if cl["intra_node"].get("transport") in ("nvlink", "nvswitch") \
            else parse_rate(cl["intra_node"]["bandwidth"])
        buffsize = 8 * MiB if c["devset"] in ("A4a", "A4b") else None  # the source's NCCL_BUFFSIZE
        nch = comm_channels(c, m, g, cl)
        heads = g if m == 1 else int(nic.get("count", 1))
        factor = 2 * (n - 1) / n if c["op"] == "allreduce" else (n - 1) / n
        pts = []
        for p in c["points"]:
            if p["published_busbw_bytes_per_s"] <= 0:
                continue
            S = p["size_bytes"]
            t_meas = S * factor / p["published_busbw_bytes_per_s"]
            algo, proto = p["pair"].split("/")
            pts.append(dict(S=S, t_meas=t_meas, t0=p["predicted_time_s"], algo=algo, proto=proto))
        cases.append(dict(id=c["devset"], name=c["case"], op=c["op"], n=n, m=m, g=g, gpu=cl["gpu"], nic_tr=nic_tr,
                          nic_bw=nic_bw, intra_bw=intra_bw, nch=nch, heads=heads, buffsize=buffsize,
                          cluster=os.path.join(root, c["cluster"]), points=pts, doc=doc))
    return cases


def parse_rate(s):
    s = str(s)
    for unit, mul in (("GB/s", 1e9), ("Gbps", 1e9 / 8), ("Tbps", 1e12 / 8)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * mul
    raise ValueError(s)


def comm_channels(c, m, g, cl):
    """NCCL's comm->nChannels as gradwire's outline gives it (docs/engine.md, "Channels"), by case;
    the forced NCCL_MIN/MAX_NCHANNELS of the source where it states them."""
    if c["devset"] in ("A4a", "A4b"):
        return 8
    if c["devset"] == "A8e":
        return 4
    tr = cl.get("nics", {}).get("transport")
    if m > 1 and tr == "socket":
        return 2
    if cl["intra_node"].get("transport") in ("nvswitch",):
        return 24 if m == 1 else 32
    if cl["intra_node"].get("transport") == "nvlink":
        return 24
    return 2


# ---------------------------------------------------------------- pinned latency (NCCL's L of the pair)
_lat_cache = {}


def pair_latency(gradwire, case, algo, proto):
    key = (case["cluster"], case["op"], algo, proto)
    if key not in _lat_cache:
        size = "8B" if case["op"] == "allreduce" else f"{8 * case['n']}B"
        out = subprocess.run([gradwire, "collective", case["cluster"], "--op", case["op"], "--algo", algo, "--proto", proto,
                              "--sizes", size, "--format", "json"], capture_output=True, text=True)
        _lat_cache[key] = json.loads(out.stdout)["results"][0]["time_us"] * 1e-6 if out.returncode == 0 else 0.0
    return _lat_cache[key]


# ---------------------------------------------------------------- mechanisms
PARAMS = ["t_launch", "fill_scale", "o_proxy"]


def features(case, p, gradwire, structural=True):
    """Today's time split into latency and bandwidth parts, with the structural changes
    (no constant) applied, and the regressors of the fitted mechanisms."""
    S, algo, proto = p["S"], p["algo"], p["proto"]
    lat = min(pair_latency(gradwire, case, algo, proto), p["t0"])
    bw = max(p["t0"] - lat, 0.0)
    n, m, g = case["n"], case["m"], case["g"]
    if structural:
        bw = structural_bw(case, p, bw)
    K, (msgs_serial, msgs_path) = pipeline_shape(case["op"], algo, proto, S, n, m, case["nch"] if algo not in ("nvls", "nvlstree") else 16,
                             case["heads"], case["buffsize"])
    d = depth(algo, n, m)
    fill = (d - 1) / K * bw  # (K + d - 1) chunk times instead of K
    tr = case["nic_tr"] if m > 1 else None
    # host-proxied network transports (sockets, TCPX-class plugins): the GPU's proxy thread handles
    # every message of every active channel in turn (proxy.cc progress loop); RDMA posts are left
    # out (a second constant for them fitted to 0.02 us: dropped)
    f = {"t_launch": 1.0, "fill_scale": fill, "o_proxy": msgs_serial if tr in ("socket", "tcpx") else 0.0}
    return lat + bw, f


def structural_bw(case, p, bw):
    """M4/M5: changes with no fitted constant (design.md)."""
    algo, n, m, g = p["algo"], case["n"], case["m"], case["g"]
    if algo == "nvls":
        bw *= 16 / 15  # NCCL's NVLS channels: (nvlsChannels - 1) / nvlsChannels of the link (tuning.cc HEAD)
    if algo == "nvlstree" and m == 2:
        # Two nodes: each node sends S and receives S through its NICs (one tree edge each way per
        # tree, two trees of S/2); NCCL's 5/6 NVLS ratio belongs to the NVLink part only.
        S = p["S"]
        t_intra = (2 * g + 2) * (S / (2 * g)) / case["intra_bw"] / (5 / 6) * 16 / 15
        t_inter = S / case["nic_bw"]
        bw = max(t_intra, t_inter)
    return bw


def predict(theta, feats):
    base, f = feats
    return base + sum(theta[i] * f[k] for i, k in enumerate(PARAMS))


def build(cases, gradwire, structural=True):
    for c in cases:
        for p in c["points"]:
            p["feat"] = features(c, p, gradwire, structural)


def residuals(theta, cases):
    r = []
    for c in cases:
        w = 1.0 / math.sqrt(len(c["points"]))
        for p in c["points"]:
            r.append(w * math.log(predict(theta, p["feat"]) / p["t_meas"]))
    return np.array(r)


def fit(cases, active):
    x0 = np.array([5e-6, 1.0, 5e-6])
    lo = np.zeros(len(PARAMS))
    hi = np.array([1e-3, 10.0, 1e-3])
    mask = np.array([k in active for k in PARAMS])

    def fun(x):
        th = np.where(mask, x, 0.0)
        return residuals(th, cases)

    res = least_squares(fun, np.where(mask, x0, 0.0), bounds=(lo, np.where(mask, hi, 1e-30)))
    return np.where(mask, res.x, 0.0), res


def case_errors(theta, c):
    small, large = [], []
    for p in c["points"]:
        e = p["t_meas"] / predict(theta, p["feat"]) - 1  # busbw error: predicted / published - 1
        (small if p["S"] < MiB else large).append(abs(e))
    med = lambda v: float(np.median(v)) if v else None
    return med(small), med(large)


def fmt(v):
    return "     -" if v is None else f"{100 * v:5.1f}%"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gradwire", default="/work/main/build/bin/gradwire")
    ap.add_argument("--root", default=".")
    ap.add_argument("--no-structural", action="store_true")
    ap.add_argument("--active", default=",".join(PARAMS))
    ap.add_argument("--points", action="store_true", help="print every point")
    a = ap.parse_args()
    cases = load_cases(a.root, a.gradwire)
    build(cases, a.gradwire, structural=not a.no_structural)
    active = a.active.split(",") if a.active else []
    zero = np.zeros(len(PARAMS))
    theta, res = fit(cases, active)
    print("fitted constants (all cases at once, each case weighted equally):")
    for k, v in zip(PARAMS, theta):
        print(f"  {k:12s} = {v * 1e6 if k != 'fill_scale' else v:10.3f} {'us' if k != 'fill_scale' else ''}")
    rms = math.sqrt(np.mean(res.fun ** 2))
    print(f"  weighted rms of log(predicted/measured): {rms:.3f}")
    print()
    print(f"{'id':5s} {'case':36s} {'today <1M':>9s} {'today>=1M':>9s} {'fit <1M':>8s} {'fit>=1M':>8s} {'LOO <1M':>8s} {'LOO>=1M':>8s}")
    ins_s, ins_l, loo_l, loo_s = [], [], [], []
    for i, c in enumerate(cases):
        rest = cases[:i] + cases[i + 1:]
        th_loo, _ = fit(rest, active)
        t_s, t_l = case_errors_today(c)
        f_s, f_l = case_errors(theta, c)
        l_s, l_l = case_errors(th_loo, c)
        for v, lst in ((f_s, ins_s), (f_l, ins_l), (l_s, loo_s), (l_l, loo_l)):
            if v is not None:
                lst.append(v)
        print(f"{c['id']:5s} {c['name'][:36]:36s} {fmt(t_s):>9s} {fmt(t_l):>9s} {fmt(f_s):>8s} {fmt(f_l):>8s} {fmt(l_s):>8s} {fmt(l_l):>8s}"
              f"   LOO constants: " + " ".join(f"{(v * 1e6 if k != 'fill_scale' else v):.2f}" for k, v in zip(PARAMS, th_loo)))
        if a.points:
            for p in c["points"]:
                pr = predict(theta, p["feat"])
                print(f"      {p['S']:>12.0f} {p['algo']}/{p['proto']:6s} meas {p['t_meas']*1e6:10.1f}us today {p['t0']*1e6:10.1f}us fit {pr*1e6:10.1f}us err {100*(p['t_meas']/pr-1):+6.1f}%")
    print()
    within = sum(1 for c in cases if within_target(case_errors(theta, c)))
    today = sum(1 for c in cases if within_target(case_errors_today(c)))
    print(f"cases within target (<= 25% below 1 MiB, <= 10% from 1 MiB): today {today} of {len(cases)}, with the ramp {within}")
    for i, k in enumerate(PARAMS):
        if k == "t_launch":
            using = cases
        else:
            using = [c for c in cases if any(p["feat"][1][k] > 0.01 * p["feat"][0] / max(theta[i], 1e-12) * 0.0 + 1e-12 and
                                             theta[i] * p["feat"][1][k] > 0.02 * p["t_meas"] for p in c["points"])]
        r = [math.log(predict(theta, p["feat"]) / p["t_meas"]) for c in using for p in c["points"]]
        print(f"  {k}: exercised (>2% of a point's time) by {' '.join(c['id'] for c in using)}; "
              f"rms log residual over their points {math.sqrt(np.mean(np.square(r))) if r else 0:.3f}")
    print(f"median over cases: in-sample <1MiB {fmt(float(np.median(ins_s)))}, >=1MiB {fmt(float(np.median(ins_l)))};"
          f" leave-one-case-out <1MiB {fmt(float(np.median(loo_s)))}, >=1MiB {fmt(float(np.median(loo_l)))}")


def within_target(errs):
    s, l = errs
    return (s is None or s <= 0.25) and (l is None or l <= 0.10)


def case_errors_today(c):
    small, large = [], []
    for p in c["points"]:
        e = p["t_meas"] / p["t0"] - 1
        (small if p["S"] < MiB else large).append(abs(e))
    med = lambda v: float(np.median(v)) if v else None
    return med(small), med(large)


if __name__ == "__main__":
    sys.exit(main())
