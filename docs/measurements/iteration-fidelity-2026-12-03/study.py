"""Today's answer of the compression study and what the prototype's mechanisms
change. Input: study-parts.json (gradwire simulate --format json of each study
point). Mechanisms as in fit.py (features()), plus the PyTorch per-op host cost
of the hooks' kernels: u_extra per kernel beyond the 5 us launch already
counted (from docs/model.md's PowerSGD check: 11.8 us measured per Gram-Schmidt
kernel against 5 us modelled -> u_extra = 6.8 us), on the critical path."""
import json, sys, collections
sys.argv += []  # fit.py's features() is reused
import importlib.util
spec = importlib.util.spec_from_file_location('fitmod', __file__.replace('study.py', 'features.py'))
F = importlib.util.module_from_spec(spec); spec.loader.exec_module(F)
pts = json.load(open(sys.argv[1]))
f, cv, h, u = (float(x) for x in sys.argv[2:6])
# kernels per step launched by PyTorch/GRACE code, from docs/model.md's plan table:
MATS = {'resnet50': 54, 'resnet101': 105, 'bert-base': 74}   # weight matrices (ndim > 1)
def kernels(p):
    s = p['sim']; nb = len(s['buckets']); N = s['world_size']; m = MATS[p['model']]
    return {'none': 0, 'fp16': 3 * nb, 'powersgd': m * (2 * (7 * 4 - 4) + 4) + 8 * nb,
            'topk': nb * (8 + 2 * N + N + 1), 'sign': nb * (7 + 4 * N + N + 1),
            'int8': nb * (8 + 2 * N + N + 1)}[p['comp']]
def powersgd_sync(s):
    """M6: powerSGD_hook's decompress callback calls torch.cuda.synchronize(device)
    and runs inline on the autograd thread (the NCCL future is completed at
    enqueue), so the backward after bucket b waits for b's whole chain: every
    step after the first (already in the backward) is serial with the compute."""
    chain = sum(st['end_s'] - st['start_s'] for b in s['buckets'] for st in b['steps'][1:])
    cp = s['critical_path']
    return max(cp['total_s'], cp['forward_s'] + cp['backward_s'] + chain + cp['optimizer_s'])
def T(p, mech):
    fe = F.features(p['sim'])
    if mech and p['comp'] == 'powersgd': fe = dict(fe, T=powersgd_sync(p['sim']))
    add = f * fe['ovl'] + cv * fe['sync'] + h * fe['ncoll'] if mech else 0.0
    return fe['T'] + add + (u * kernels(p) if mech else 0.0)
by = collections.defaultdict(dict)
for p in pts: by[(p['model'], p['batch'], p['gbps'])][p['comp']] = p
for mech in (False, True):
    print('=== with mechanisms (f=%.3f cv=%.4f h=%.1fus u=%.1fus)' % (f, cv, h * 1e6, u * 1e6) if mech else '=== today')
    wins = collections.Counter(); confs = collections.Counter(); be = {}
    table = []
    for k in sorted(by):
        d = by[k]; t0 = T(d['none'], mech)
        sp = {c: t0 / T(p, mech) for c, p in d.items() if c != 'none'}
        table.append((k, sp))
        for c, s in sp.items():
            confs[k[2]] += 1; wins[k[2]] += s > 1.0
            if s > 1.0: be[(k[0], k[1])] = max(be.get((k[0], k[1]), 0), k[2])
    for g in sorted(confs): print(f"  {g:4.0f} Gbps: {wins[g]:2d}/{confs[g]} (workload, compressor) configurations beat none;", 
                                   sum(1 for k, sp in table if k[2] == g and max(sp.values()) > 1), "of", sum(1 for k, sp in table if k[2] == g), "workloads have a winner")
    print('  break-even (highest swept bandwidth where a compressor still wins):', {f"{m}/{b}": v for (m, b), v in sorted(be.items())})
    print('  at 10 Gbps:', '; '.join(f"{k[0]}/{k[1]}: " + ' '.join(f"{c}={s:.2f}" for c, s in sp.items()) for k, sp in table if k[2] == 10))
