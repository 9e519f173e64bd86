"""Command line behind `gradwire model ...` (python -m gradwire_torch ...).

  python -m gradwire_torch export SPEC [--input CxHxW | --seq-len N] [--batch N]
                                       [--set k=v ...] [--dtype fp32|bf16|fp16] [--name NAME]
                                       [--description TEXT] --out FILE
  python -m gradwire_torch measure SPEC --device cpu|cuda --batch N [--amp bf16|fp16]
                                       [--optimizer adam] [--repeats R] --out FILE   (measure.py)

Exit 0 on success; 2 with one line on stderr for anything the user can fix
(nothing is written then), a Python without PyTorch included; 1 with one line
for a failure of the tool itself (GRADWIRE_TRACEBACK=1 adds the traceback).
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys

PROG = "gradwire model"
SPEC_HELP = "torchvision:NAME | timm:NAME | transformers:CLASS | transformers:ORG/NAME | path/to/file.py:FUNCTION"
# The count options' ranges, as sim/cli/cmd_model.cpp (kCounts) checks them
# before Python starts; here for `python -m gradwire_torch` run directly.
COUNT_LIMITS = {"batch": (1, 1 << 20), "seq_len": (1, 1 << 24), "repeats": (1, 1000000), "warmup": (0, 1000000)}


class UsageError(Exception):
    """A bad option (one line, exit 2)."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *a, **kw):
        super().__init__(*a, allow_abbrev=False, **kw)  # --bat is no --batch: the C++ shell checks full names

    def error(self, message):  # one line, exit 2 (argparse prints usage too)
        raise UsageError(f"{message} (see {self.prog} --help)")


def count(dest: str):
    """An argparse type: a whole number within COUNT_LIMITS[dest]."""
    lo, hi = COUNT_LIMITS[dest]

    def parse(text: str) -> int:
        if not re.fullmatch(r"[0-9]+", text) or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from {lo} to {hi}")
        return int(text)
    parse.__name__ = "count"
    return parse


def _torch_hint() -> str:
    return os.environ.get("GRADWIRE_TORCH_HINT") or "install torch, torchvision, transformers and timm " \
        "(bridge/requirements-torch.txt)"


def _import_bridge():
    """The modules that need PyTorch, or UsageError (one line) when it cannot be imported."""
    global exportmod, measuremod, specmod
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install (OSError for a missing library)
        raise UsageError(f"PyTorch is not set up: {sys.executable} cannot import torch "
                         f"({type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}); "
                         f"{_torch_hint()}") from None
    from . import export as exportmod
    from . import measure as measuremod
    from . import spec as specmod


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Describe a PyTorch model for gradwire (docs/models.md).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    e = sub.add_parser("export", help="write a gradwire-model/1 YAML observed from one forward/backward pass",
                       description="Build SPEC on the meta device (no weights, no network), run one training "
                                   "forward and backward pass, and write the model file: tensors in the observed "
                                   "gradient-ready order, measured forward/backward FLOPs, saved activations.")
    e.add_argument("spec", help=SPEC_HELP)
    e.add_argument("--input", help="one sample's shape for an image or file model, e.g. 3x224x224")
    e.add_argument("--seq-len", type=count("seq_len"), help="tokens per sample for a transformers model")
    e.add_argument("--batch", type=count("batch"), default=1,
                   help="batch size of the observed pass (figures are per sample)")
    e.add_argument("--set", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                   help="constructor keywords (config fields for transformers)")
    e.add_argument("--dtype", choices=sorted(exportmod.DTYPE_BY_NAME), default="fp32",
                   help="run the model in this dtype, so saved activations are measured at its size "
                        "(written as activation_dtype; gradients keep the parameters' own dtype)")
    e.add_argument("--name", help="the model's name (default: from SPEC)")
    e.add_argument("--description", help="free text written as the model's description")
    e.add_argument("--out", required=True, help="the YAML file to write (atomically)")
    measuremod.add_parser(sub)
    return p


def _inputs_of(spec: str) -> list[str]:
    kind = spec.rpartition(":")[0]
    return [kind] if kind.endswith(".py") else []


def cmd_export(a, argv: list[str]) -> int:
    if a.name is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", a.name):
        raise specmod.SpecError(f"--name {a.name!r}: letters, digits, - _ . only")
    shape = specmod.parse_shape(a.input) if a.input else None
    exportmod._check_destination(a.out, _inputs_of(a.spec))  # fail before the (slow) pass
    r = specmod.resolve(a.spec, a.set, input_shape=shape, seq_len=a.seq_len, batch=a.batch, device="meta",
                        dtype=exportmod.DTYPE_BY_NAME[a.dtype])
    obs = exportmod.observe(r, a.spec)
    name = a.name or r.name
    command = "gradwire model " + shlex.join(argv)
    text = exportmod.render(r, obs, name, command, a.description)
    exportmod.write_atomic(a.out, text, _inputs_of(a.spec))
    params = sum(obs.params[n].numel() for n in obs.ready)
    print(f"{PROG} export: {a.out}: {name}, {len(obs.ready)} tensors, {params:,} parameters")
    return 0


def _run(argv: list[str]) -> int:
    _import_bridge()
    try:
        a = _parser().parse_args(argv)
        if a.command == "export":
            return cmd_export(a, argv)
        return measuremod.cmd_measure(a, argv, _inputs_of(a.spec))
    except (specmod.SpecError, exportmod.ExportError, measuremod.MeasureError) as e:
        raise UsageError(str(e)) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _run(argv)
    except UsageError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # the tool's own failure: still one line, unless asked for the traceback
        if os.environ.get("GRADWIRE_TRACEBACK"):
            raise
        text = str(e).strip().splitlines()
        print(f"{PROG}: internal error: {type(e).__name__}: {text[0] if text else ''} "
              "(GRADWIRE_TRACEBACK=1 shows where)", file=sys.stderr)
        return 1
