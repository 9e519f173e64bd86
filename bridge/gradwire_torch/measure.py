"""`gradwire model measure`: time a model's compute on one real device.

Runs real forward and backward passes of the model named by SPEC (resolved
by gradwire_torch.spec.resolve, on the device, with random weights and
synthetic inputs) and writes a measured-compute document (schema
gradwire-compute/1, docs/model.md "Measured compute") that `gradwire
simulate` uses instead of compute_efficiency when a scenario names it with
`workload.compute`.

What is timed, over --repeats runs after --warmup runs (median and spread =
interquartile range, 75th - 25th percentile):

  forward     module(*inputs) and the loss (the mean of every floating output),
              under torch.autocast for --amp
  ready       per parameter, from the start of loss.backward() to its
              post-accumulate-grad hook (Tensor.register_post_accumulate_grad_hook):
              the moment DDP's autograd hook would mark it ready
  backward    the whole loss.backward()
  optimizer   one step of --optimizer (torch.optim defaults: foreach on CUDA)
  ddp_overheads
    bucket_copy    copying every gradient into one flat buffer and back, as
                   DDP's reducer does around its all-reduce when gradients
                   are not bucket views (gradient_as_bucket_view=False, the
                   default)
    hook_dispatch  one Python communication-hook call that returns a
                   completed torch.futures.Future and its .then() callback:
                   the per-bucket Python cost of a comm hook (host time)
  comm_hooks  the local work of PyTorch's DDP communication hooks for the
              whole model taken as one bucket, called as functions on one
              process (no process group): fp16_compress / bf16_compress
              (buffer.to(dtype).div_(world_size), then copy back, as
              default_hooks._compress_hook) and powersgd_rank<R> (the steady
              state of powerSGD_hook with warm start and error feedback:
              error add and clone, cat of the uncompressed tensors,
              orthogonalize Q, P = M Q, unpack, orthogonalize P, Q = M^T P,
              M = P Q^T, the new error), using the hook module's own
              _orthogonalize and _should_compress.

Clocks: CUDA events on the current stream on a GPU (the hook records its
event in stream order), time.perf_counter() on the CPU (timings there only
check the plumbing). The hook dispatch is host time on both.
"""
from __future__ import annotations

import datetime
import platform
import socket
import time
from typing import Callable

import torch

from . import spec as specmod

SCHEMA = "gradwire-compute/1"
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
#: world size used for the compress hooks' division; the cost does not depend on it
HOOK_WORLD_SIZE = 8
#: hook calls per timed sample of hook_dispatch (host time is too short for one)
DISPATCH_CALLS = 200


class MeasureError(Exception):
    """A problem the user can fix (one line, exit 2)."""


# --- statistics -------------------------------------------------------------

def _percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def timing(samples: list[float]) -> dict:
    """{median, spread} in seconds; spread = 75th - 25th percentile."""
    return {"median": _percentile(samples, 0.5),
            "spread": _percentile(samples, 0.75) - _percentile(samples, 0.25)}


# --- clocks -----------------------------------------------------------------

class CpuClock:
    name = "perf-counter"

    def mark(self):
        return time.perf_counter()

    def sync(self):
        pass

    def seconds(self, a, b) -> float:
        return b - a


class CudaClock:
    name = "cuda-events"

    def mark(self):
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def sync(self):
        torch.cuda.synchronize()

    def seconds(self, a, b) -> float:
        return a.elapsed_time(b) / 1e3


def clock_for(device: str):
    return CudaClock() if device == "cuda" else CpuClock()


def time_repeats(fn: Callable[[], None], clock, repeats: int, warmup: int) -> dict:
    """Median and spread of fn() over `repeats` runs after `warmup` runs."""
    samples = []
    for r in range(warmup + repeats):
        a = clock.mark()
        fn()
        b = clock.mark()
        clock.sync()
        if r >= warmup:
            samples.append(clock.seconds(a, b))
    return timing(samples)


# --- the training step ------------------------------------------------------

def _floating_tensors(out):
    if isinstance(out, torch.Tensor):
        if out.is_floating_point():
            yield out
    elif isinstance(out, dict):
        for v in out.values():
            yield from _floating_tensors(v)
    elif isinstance(out, (list, tuple)):
        for v in out:
            yield from _floating_tensors(v)


def loss_of(out) -> torch.Tensor:
    """A scalar depending on every floating output (HF ModelOutput is a dict)."""
    parts = [t.float().mean() for t in _floating_tensors(out)]
    if not parts:
        raise MeasureError("the model returned no floating-point tensor to take a loss from")
    return torch.stack(parts).sum()


def make_optimizer(name: str, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if name == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    raise MeasureError(f"--optimizer {name}: expected one of {', '.join(OPTIMIZERS)}")


def _autocast(device: str, amp: str | None):
    if not amp:
        return torch.autocast(device_type=device, enabled=False)
    return torch.autocast(device_type=device, dtype=torch.bfloat16 if amp == "bf16" else torch.float16)


def measure_step(module, args, *, device: str, amp: str | None, optimizer: str, repeats: int,
                 warmup: int, clock) -> dict:
    """Forward, per-parameter ready times, backward and optimizer step.

    Returns {forward, backward, optimizer: timing dicts, tensors: [(name,
    timing)] in ready order (by median), unused: [names whose hook never ran]}.
    """
    named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    if not named:
        raise MeasureError("the model has no trainable parameters")
    marks: list = [None] * len(named)
    handles = [p.register_post_accumulate_grad_hook(lambda _p, i=i: marks.__setitem__(i, clock.mark()))
               for i, (_, p) in enumerate(named)]
    opt = make_optimizer(optimizer, [p for _, p in named])
    fwd, bwd, step = [], [], []
    ready: list[list[float]] = [[] for _ in named]
    try:
        for r in range(warmup + repeats):
            opt.zero_grad(set_to_none=True)
            marks[:] = [None] * len(named)
            f0 = clock.mark()
            try:
                with _autocast(device, amp):
                    loss = loss_of(module(*args))
            except (RuntimeError, ValueError, IndexError, TypeError) as e:
                if r:
                    raise
                raise MeasureError(f"the model fails on its input: {specmod._first_line(e)}") from None
            b0 = clock.mark()
            loss.backward()
            b1 = clock.mark()
            opt.step()
            o1 = clock.mark()
            clock.sync()
            if r < warmup:
                continue
            fwd.append(clock.seconds(f0, b0))
            bwd.append(clock.seconds(b0, b1))
            step.append(clock.seconds(b1, o1))
            for i, m in enumerate(marks):
                if m is not None:
                    ready[i].append(clock.seconds(b0, m))
    finally:
        for h in handles:
            h.remove()
    used = [(named[i][0], timing(ready[i]), i) for i in range(len(named)) if ready[i]]
    used.sort(key=lambda t: (t[1]["median"], t[2]))
    return {"forward": timing(fwd), "backward": timing(bwd), "optimizer": timing(step),
            "tensors": [(n, t) for n, t, _ in used],
            "unused": [named[i][0] for i in range(len(named)) if not ready[i]]}


# --- DDP's own local work ---------------------------------------------------

def _grads(module) -> list[torch.Tensor]:
    return [p.grad for p in module.parameters() if p.requires_grad and p.grad is not None]


def bucket_copy_fn(grads: list[torch.Tensor]) -> Callable[[], None]:
    flat = torch.empty(sum(g.numel() for g in grads), dtype=grads[0].dtype, device=grads[0].device)
    views, off = [], 0
    for g in grads:
        views.append((g, flat[off:off + g.numel()]))
        off += g.numel()

    def run():
        for g, v in views:
            v.copy_(g.reshape(-1))
        for g, v in views:
            g.view(-1).copy_(v)
    return run


def hook_dispatch_fn(buffer: torch.Tensor) -> Callable[[], None]:
    def hook(_state, bucket):
        fut = torch.futures.Future()
        fut.set_result([bucket])
        return fut.then(lambda f: f.value()[0])

    def run():
        for _ in range(DISPATCH_CALLS):
            hook(None, buffer).wait()
    return run


def compress_hook_fn(flat: torch.Tensor, dtype) -> Callable[[], None]:
    def run():
        compressed = flat.to(dtype).div_(HOOK_WORLD_SIZE)
        flat.copy_(compressed)
    return run


def powersgd_fn(grads: list[torch.Tensor], rank: int) -> Callable[[], None]:
    """The steady-state local work of powerSGD_hook (warm start, error
    feedback, min_compression_rate 2, batch_tensors_with_same_shape False) for
    all gradients as one bucket."""
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ps

    total = sum(g.numel() for g in grads)
    buffer = torch.cat([g.reshape(-1) for g in grads])
    error = torch.zeros(total, dtype=buffer.dtype, device=buffer.device)
    mats, unc, off = [], [], 0
    for g in grads:
        t = buffer[off:off + g.numel()].view(g.shape)
        off += g.numel()
        m = t.view(t.shape[0], -1) if t.dim() > 0 else t.view(1, 1)
        r = min(m.shape[0], m.shape[1], rank)
        if t.dim() >= 2 and ps._should_compress(m.shape[0], m.shape[1], r, 2)[0]:
            p = torch.empty(1, m.shape[0], r, dtype=buffer.dtype, device=buffer.device)
            q = torch.randn(1, m.shape[1], r, dtype=buffer.dtype, device=buffer.device)
            ps._orthogonalize(q, 0)
            mats.append((m.unsqueeze(0), p, q))
        else:
            unc.append(t)

    def run():
        buffer.add_(error)
        copy = buffer.detach().clone()
        if unc:
            memory = torch.cat([t.reshape(-1) for t in unc]).div_(HOOK_WORLD_SIZE)
            i = 0
            for t in unc:
                t.copy_(memory[i:i + t.numel()].view_as(t))
                i += t.numel()
        for m, p, q in mats:
            ps._orthogonalize(q, 0)
            torch.bmm(m, q, out=p)
        for m, p, q in mats:
            ps._orthogonalize(p, 0)
            torch.bmm(m.transpose(1, 2), p, out=q)
        for m, p, q in mats:
            q.div_(HOOK_WORLD_SIZE)
            torch.bmm(p, q.transpose(1, 2), out=m)
        torch.sub(copy, buffer, out=error)
    run.buffer, run.error = buffer, error  # for the tests
    return run


def measure_ddp_local(module, *, clock, repeats: int, warmup: int, powersgd_ranks: list[int]) -> dict:
    """Bucket copy, hook dispatch and the comm hooks' local work (needs .grad)."""
    grads = _grads(module)
    flat = torch.cat([g.reshape(-1) for g in grads])
    dispatch = time_repeats(hook_dispatch_fn(flat), CpuClock(), repeats, warmup)
    out = {"bucket_copy": time_repeats(bucket_copy_fn(grads), clock, repeats, warmup),
           "hook_dispatch": {k: v / DISPATCH_CALLS for k, v in dispatch.items()},
           "comm_hooks": [("fp16_compress", time_repeats(compress_hook_fn(flat, torch.float16), clock, repeats, warmup)),
                          ("bf16_compress", time_repeats(compress_hook_fn(flat, torch.bfloat16), clock, repeats, warmup))]}
    for r in powersgd_ranks:
        out["comm_hooks"].append((f"powersgd_rank{r}", time_repeats(powersgd_fn(grads, r), clock, repeats, warmup)))
    return out


# --- the document -----------------------------------------------------------

def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.3f} us"


def _t(t: dict) -> str:
    return f"{{median: {_us(t['median'])}, spread: {_us(t['spread'])}}}"


def _q(s: str) -> str:
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


_DTYPE_NAMES = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}


def to_yaml(doc: dict) -> str:
    """The gradwire-compute/1 text of a measure() result."""
    lines = [f"# Written by gradwire model measure: {doc['spec']} ({doc['source']}), input {doc['input']}."]
    if doc["unused"]:
        lines.append(f"# Parameters without a gradient (left out): {', '.join(doc['unused'])}")
    if doc["timer"] == "perf-counter":
        lines.append("# Measured on the CPU: the plumbing is real, the timings say nothing about a GPU.")
    lines += [f"schema: {SCHEMA}", f"device: {_q(doc['device'])}", f"date: {_q(doc['date'])}",
              f"host: {_q(doc['host'])}", f"tool: {_q(doc['tool'])}"]
    versions = f"versions: {{torch: {_q(torch.__version__)}"
    if doc.get("cuda"):
        versions += f", cuda: {_q(doc['cuda'])}"
    lines += [versions + "}", f"timer: {doc['timer']}", f"model: {_q(doc['model'])}",
              f"parameters: {doc['parameters']}"]
    if doc.get("sequence_length"):
        lines.append(f"sequence_length: {doc['sequence_length']}")
    lines += [f"micro_batch: {doc['micro_batch']}",
              f"compute_precision: {doc['compute_precision']}",
              f"gradient_precision: {doc['gradient_precision']}",
              f"repeats: {doc['repeats']}", f"warmup: {doc['warmup']}",
              f"forward: {_t(doc['forward'])}", f"backward: {_t(doc['backward'])}",
              f"optimizer: {{name: {doc['optimizer_name']}, median: {_us(doc['optimizer']['median'])}, "
              f"spread: {_us(doc['optimizer']['spread'])}}}",
              "ddp_overheads:", f"  bucket_copy: {_t(doc['bucket_copy'])}",
              f"  hook_dispatch: {_t(doc['hook_dispatch'])}", "comm_hooks:"]
    lines += [f"  {name}: {_t(t)}" for name, t in doc["comm_hooks"]]
    lines.append("tensors:")
    lines += [f"  - {{name: {_q(n)}, ready: {_us(t['median'])}, spread: {_us(t['spread'])}}}"
              for n, t in doc["tensors"]]
    return "\n".join(lines) + "\n"


def _compute_precision(device: str, amp: str | None, tf32: bool) -> str:
    if amp:
        return f"amp-{amp}"
    if tf32 and device != "cuda":
        raise MeasureError("--tf32 needs --device cuda")
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    return "tf32" if tf32 else "fp32"


def _device_name(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name()
    return platform.processor() or platform.machine() or "cpu"


def measure(spec: str, *, sets=None, input_shape=None, seq_len=None, batch: int, device: str,
            amp: str | None = None, tf32: bool = False, optimizer: str = "adam", repeats: int = 20,
            warmup: int = 3, powersgd_ranks=(4,), name: str | None = None) -> dict:
    """Resolve SPEC on `device` and time it; returns the document as a dict (to_yaml writes it)."""
    if device == "cuda" and not torch.cuda.is_available():
        raise MeasureError("--device cuda: PyTorch sees no CUDA device here")
    if repeats < 1 or warmup < 0:
        raise MeasureError("--repeats must be at least 1 and --warmup at least 0")
    precision = _compute_precision(device, amp, tf32)
    resolved = specmod.resolve(spec, sets, input_shape=input_shape, seq_len=seq_len, batch=batch, device=device)
    module, clock = resolved.module, clock_for(device)
    step = measure_step(module, resolved.args, device=device, amp=amp, optimizer=optimizer, repeats=repeats,
                        warmup=warmup, clock=clock)
    local = measure_ddp_local(module, clock=clock, repeats=repeats, warmup=warmup,
                              powersgd_ranks=list(powersgd_ranks))
    first = next(p for p in module.parameters() if p.requires_grad)
    return {"spec": spec, "source": resolved.source, "input": resolved.input,
            "device": _device_name(device), "date": datetime.date.today().isoformat(),
            "host": socket.gethostname(), "tool": "gradwire model measure",
            "cuda": torch.version.cuda if device == "cuda" else None, "timer": clock.name,
            "model": name or resolved.name,
            "parameters": sum(p.numel() for p in module.parameters()),
            "sequence_length": resolved.sequence_length, "micro_batch": batch, "compute_precision": precision,
            "gradient_precision": _DTYPE_NAMES.get(first.dtype, "fp32"),
            "repeats": repeats, "warmup": warmup, "optimizer_name": optimizer, **step, **local}


# --- command line (python -m gradwire_torch measure, through cli.py) ---------

def add_parser(sub) -> None:
    """The `measure` subcommand's options, on cli.py's subparsers."""
    p = sub.add_parser("measure", help="time forward, per-tensor gradient-ready times, backward, optimizer and "
                                       "DDP's local work on one device; write a gradwire-compute/1 file",
                       description="Run real forward and backward passes of SPEC on the device (random weights, "
                                   "synthetic inputs) and write a measured-compute document that simulate uses "
                                   "through workload.compute (docs/model.md, 'Measured compute').")
    p.add_argument("spec", help="torchvision:NAME | timm:NAME | transformers:CLASS | path/to/file.py:FUNCTION")
    p.add_argument("--device", choices=("cpu", "cuda"), required=True)
    p.add_argument("--batch", type=int, required=True, help="micro-batch: samples per step")
    p.add_argument("--input", help="one sample's shape for an image or file model, e.g. 3x224x224")
    p.add_argument("--seq-len", type=int, help="tokens per sample for a transformers model")
    p.add_argument("--set", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                   help="constructor keywords (config fields for transformers)")
    p.add_argument("--amp", choices=("bf16", "fp16"), help="autocast the forward pass (fp32 weights and gradients)")
    p.add_argument("--tf32", action="store_true", help="allow TF32 matmuls and convolutions (CUDA only)")
    p.add_argument("--optimizer", choices=OPTIMIZERS, default="adam")
    p.add_argument("--repeats", type=int, default=20, help="timed runs (default 20)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    p.add_argument("--powersgd-rank", type=int, nargs="+", default=[4], metavar="R",
                   help="PowerSGD ranks whose local work is timed (default 4)")
    p.add_argument("--name", help="the model's name (default: from SPEC; must equal the model file's name)")
    p.add_argument("--out", required=True, help="the measured-compute file to write (atomically)")


def cmd_measure(a, check_destination, write_atomic, inputs: list[str]) -> int:
    """Runs `measure` with cli.py's destination check and atomic writer."""
    shape = specmod.parse_shape(a.input) if a.input else None
    check_destination(a.out, inputs)  # fail before the (slow) runs
    doc = measure(a.spec, sets=a.set, input_shape=shape, seq_len=a.seq_len, batch=a.batch, device=a.device,
                  amp=a.amp, tf32=a.tf32, optimizer=a.optimizer, repeats=a.repeats, warmup=a.warmup,
                  powersgd_ranks=a.powersgd_rank, name=a.name)
    write_atomic(a.out, to_yaml(doc), inputs)
    print(f"gradwire model measure: {a.out}: {doc['model']} at micro-batch {a.batch}, {doc['compute_precision']}, "
          f"measured on {doc['device']}: forward {doc['forward']['median'] * 1e3:.3f} ms, "
          f"backward {doc['backward']['median'] * 1e3:.3f} ms")
    return 0
