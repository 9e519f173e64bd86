"""Prototype for issue 32: mechanisms added to today's per-case parts, constants
fitted once over all scored iteration cases, leave-one-case-out, calibrated band.
Input: parts.json (gradwire simulate --format json of every case's scenario and
baseline, collect_parts.py) and validate.json (gradwire validate iterations
--format json). Usage: fit.py PARTS VALIDATE LOSS MECHANISMS [--tensor-rule|--gpu-busy]
LOSS: linear, huber, soft_l1; MECHANISMS: comma list of int, sync, bucket, cap (or none)."""
import json, sys, math  # --tensor-rule: interference driver = the band's overlapped_compute_s (today's tensor-granularity rule)
import numpy as np
from scipy.optimize import least_squares
from scipy.stats import norm
from scipy.integrate import quad

PARTS = json.load(open(sys.argv[1]))
VAL = {c['case']: c for c in json.load(open(sys.argv[2]))['iterations']['cases']}
LOSS = sys.argv[3] if len(sys.argv) > 3 else 'linear'
MECH = sys.argv[4].split(',') if len(sys.argv) > 4 else ['int', 'sync', 'bucket']

from features import mu_max, overlap, intra_bandwidth, gpu_busy_overlap, features

def added(fe, p):
    f, cv, h = p[:3]
    # 'cap' (M2's second constant): the slowest rank's excess is capped at m_max
    # standard deviations, mu_N -> min(mu_N, m_max); p[3] = m_max (inf without)
    sync = fe['C'] * min(fe['mu'], p[3]) if len(p) > 3 else fe['sync']
    return f * fe['ovl'] + cv * sync + h * fe['ncoll']

CASES = []
for name, r in PARTS.items():
    v = VAL[name]
    if v['published'] is None or v['unscored']: continue
    c = dict(name=name, id=v['devset'], kind=v['kind'], q=v['quantity'], pub=v['published'],
             pred=v['predicted'], n=v['gpus'], s=features(r['scenario']),
             b=features(r['baseline']) if 'baseline' in r else None)
    CASES.append(c)

def quantity(c, p):
    s = c['s']; Ts = s['T'] + added(s, p)
    if c['b'] is None: return c['pred'] * Ts / s['T']
    b = c['b']; Tb = b['T'] + added(b, p)
    return c['pred'] * (s['T'] / Ts) * (Tb / b['T'])

def time_err(c, p):
    e = quantity(c, p) / c['pub'] - 1
    return e if c['q'] == 'iteration_time' else 1 / (1 + e) - 1

CAP = 'cap' in MECH
MASK = np.array([m in MECH for m in ('int', 'sync', 'bucket')] + ([1.0] if CAP else []), float)
SCALE = np.array([1.0, 0.1, 1e-4] + ([1.0] if CAP else []))  # f, cv, h (s), m_max

def fit(cases):
    def res(x): return [time_err(c, x * SCALE * MASK) for c in cases]
    x0 = np.full(len(MASK), 0.01)
    if CAP: x0[3] = 2.0
    r = least_squares(res, x0, bounds=(0, np.inf), loss=LOSS, f_scale=0.05, x_scale=1.0)
    return r.x * SCALE * MASK

P = fit(CASES)
ins = {c['name']: time_err(c, P) for c in CASES}
today = {c['name']: time_err(c, (0, 0, 0)) for c in CASES}  # no mechanism
loo, loop = {}, {}
for i, c in enumerate(CASES):
    pi = fit(CASES[:i] + CASES[i + 1:])
    loo[c['name']] = time_err(c, pi); loop[c['name']] = pi

print(f"loss={LOSS} mechanisms={MECH}")
print(f"fitted: f_nccl={P[0]:.4f}  cv={P[1]:.4f}  h_coll={P[2]*1e6:.1f} us" + (f"  m_max={P[3]:.3f}" if CAP else ""))
lo_ = np.array([loop[n] for n in loo]); print("LOO constants range: f %.3f..%.3f cv %.4f..%.4f h %.1f..%.1f us" % (
    lo_[:, 0].min(), lo_[:, 0].max(), lo_[:, 1].min(), lo_[:, 1].max(), lo_[:, 2].min()*1e6, lo_[:, 2].max()*1e6))
print("%-4s %-40s %5s %-18s %8s %8s %8s %8s" % ('id', 'case', 'GPUs', 'quantity', 'today', 'in-samp', 'LOO', 'band?'))
def band_of(r, alpha=0.2):
    """Split-conformal 10-90% band from n residuals: the k_lo-th smallest and the
    k_hi-th, k_lo = floor((n+1) alpha/2), k_hi = ceil((n+1)(1-alpha/2)); a new case
    falls inside with probability >= 1 - alpha when the cases are exchangeable."""
    r = np.sort(r); n = len(r)
    klo = max(1, math.floor((n + 1) * alpha / 2)); khi = min(n, math.ceil((n + 1) * (1 - alpha / 2)))
    return r[klo - 1], r[khi - 1]
# band: for case i, 10/90% quantiles of the LOO residuals of the other cases (nested)
cover = 0
names = [c['name'] for c in CASES]
for c in CASES:
    others = np.sort([loo[n] for n in names if n != c['name']])
    elo, ehi = band_of(others)
    # measured time = predicted time / (1 + e); inside when e_i in [elo, ehi]
    inside = elo <= loo[c['name']] <= ehi
    cover += inside
    print("%-4s %-40s %5d %-18s %+7.1f%% %+7.1f%% %+7.1f%% %s" % (c['id'], c['name'][:40], c['n'], c['q'],
          100 * today[c['name']], 100 * ins[c['name']], 100 * loo[c['name']], 'in' if inside else 'OUT'))
def summ(sel, d):
    a = np.abs([d[c['name']] for c in CASES if sel(c)]); return np.median(a), a.max()
ddp = lambda c: c['kind'] == 'ddp'
for lab, d in (('today', today), ('in-sample', ins), ('LOO', loo)):
    m, w = summ(ddp, d)
    cs = [c for c in CASES if not ddp(c)]
    sign = sum(1 for c in cs if (quantity(c, P if d is not today else (0,0,0)) > 1) == (c['pub'] > 1))
    within = sum(1 for c in cs if abs(d[c['name']]) <= 0.25)
    print(f"{lab:10s} DDP median |e| {100*m:.1f}%  worst {100*w:.1f}%   compression/accum within 25%: {within}/{len(cs)}")
allr = np.array(list(loo.values()))
blo, bhi = band_of(allr)
print(f"conformal band from all {len(allr)} LOO residuals: e_lo {100*blo:+.1f}%  e_hi {100*bhi:+.1f}% (plain 10/90% quantiles {100*np.quantile(allr,0.1):+.1f}/{100*np.quantile(allr,0.9):+.1f}%); nested out-of-sample coverage {cover}/{len(CASES)} = {100*cover/len(CASES):.0f}%")
json.dump(dict(P=list(P), ins=ins, loo=loo, today=today), open('/tmp/r-fid/fit-%s-%s.json' % (LOSS, '+'.join(MECH)), 'w'))
if '--probe' in sys.argv:
    for p in [(0,0,0),(0.2,0,0),(0,0.02,0),(0,0,20e-6)]:
        print(p, sum(time_err(c,p)**2 for c in CASES), [round(100*time_err(c,p),1) for c in CASES if c['id'] in ('B2','D1','B3')])
