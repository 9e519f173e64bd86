"""Per-setting mechanism drivers shared by fit.py and study.py (issue 32 prototype)."""
import math, sys
from scipy.stats import norm
from scipy.integrate import quad

def mu_max(n):
    if n <= 1: return 0.0
    return quad(lambda x: x * n * norm.pdf(x) * norm.cdf(x) ** (n - 1), -10, 10)[0]

def overlap(iv, lo, hi):
    tot, end = 0.0, lo
    for a, b in sorted(iv):
        a, b = max(a, end), min(b, hi)
        if b > a: tot += b - a; end = b
    return tot

def intra_bandwidth(s):
    """Intra-node bandwidth (B/s) of a validation cluster, from its file
    (validation/clusters/<scenario>.yaml, relative to this directory)."""
    import os, yaml
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'validation', 'clusters')
    bw = str(yaml.safe_load(open(os.path.join(root, s['scenario'] + '.yaml')))['cluster']['intra_node']['bandwidth'])
    assert bw.endswith('GB/s'), bw
    return float(bw[:-4]) * 1e9

def gpu_busy_overlap(s):
    """M1 variant: a collective slows the compute only while its kernels move
    data at GPU speed: per collective, min(its overlap with the backward,
    2 (N-1)/N x bytes / intra-node bandwidth); a network-bound collective's
    CTAs mostly wait for the NIC."""
    t, n, B = s['timeline'], s['world_size'], intra_bandwidth(s)
    tot = 0.0
    for b in s['buckets']:
        for st in b['steps']:
            if st['kind'] != 'collective': continue
            o = max(0.0, min(st['end_s'], t['backward_end_s']) - max(st['start_s'], t['backward_start_s']))
            tot += min(o, 2 * (n - 1) / n * st['size_bytes'] / B)
    return tot

def features(s):
    """Per-setting mechanism drivers (seconds), zero on one GPU."""
    cp, t, n, k = s['critical_path'], s['timeline'], s['world_size'], s['accumulation']
    if n <= 1:
        return dict(T=cp['total_s'], ovl=0.0, sync=0.0, C=0.0, mu=0.0, ncoll=0, hook=0)
    coll = [(st['start_s'], st['end_s']) for b in s['buckets'] for st in b['steps'] if st['kind'] == 'collective']
    ovl = overlap(coll, t['backward_start_s'], t['backward_end_s'])
    C = cp['forward_s'] + cp['backward_s']
    hook = sum(1 for b in s['buckets'] for st in b['steps'] if st['kind'] != 'collective')
    if '--tensor-rule' in sys.argv: ovl = s['band']['overlapped_compute_s']
    if '--gpu-busy' in sys.argv: ovl = gpu_busy_overlap(s)
    return dict(T=cp['total_s'], ovl=ovl, sync=C / math.sqrt(k) * mu_max(n), C=C / math.sqrt(k), mu=mu_max(n), ncoll=len(coll), hook=hook)

