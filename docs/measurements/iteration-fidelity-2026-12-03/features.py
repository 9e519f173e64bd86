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

def features(s):
    """Per-setting mechanism drivers (seconds), zero on one GPU."""
    cp, t, n, k = s['critical_path'], s['timeline'], s['world_size'], s['accumulation']
    if n <= 1:
        return dict(T=cp['total_s'], ovl=0.0, sync=0.0, ncoll=0, hook=0)
    coll = [(st['start_s'], st['end_s']) for b in s['buckets'] for st in b['steps'] if st['kind'] == 'collective']
    ovl = overlap(coll, t['backward_start_s'], t['backward_end_s'])
    C = cp['forward_s'] + cp['backward_s']
    hook = sum(1 for b in s['buckets'] for st in b['steps'] if st['kind'] != 'collective')
    if '--tensor-rule' in sys.argv: ovl = s['band']['overlapped_compute_s']
    return dict(T=cp['total_s'], ovl=ovl, sync=C / math.sqrt(k) * mu_max(n), ncoll=len(coll), hook=hook)

