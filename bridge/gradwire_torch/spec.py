"""Model SPEC resolution: SPEC -> nn.Module + example inputs on a device.

This is the one place that turns what a user names into something to run;
`gradwire model export` and any later tool (e.g. `gradwire model measure`)
call `resolve()` and nothing else to build a model.

SPEC forms (docs/models.md, "Bring your own model"):

  torchvision:NAME        torchvision.models.get_model(NAME, weights=None, **SET)
  timm:NAME               timm.create_model(NAME, pretrained=False, **SET)
  transformers:CLASS      CLASS(CLASS.config_class(**SET)), e.g.
                          transformers:BertForPreTraining,
                          transformers:GPT2LMHeadModel; attention is "eager"
                          unless SET names attn_implementation
  transformers:ORG/NAME   a Hugging Face Hub id bundled in hub.py (e.g.
                          transformers:meta-llama/Llama-3.1-8B): its
                          config.json's class and fields, SET on top; no
                          network, no weights
  path/to/file.py:FUNC    FUNC(**SET) from that file, returning an nn.Module

SET is a list of "key=value" strings; a value is read as a Python literal
(int, float, bool, None, list, ...) and otherwise kept as a string.

Inputs: an image model gets a float tensor [batch, C, H, W] (--input CxHxW;
timm's default input size, else 3x224x224); a transformers model gets token
ids [batch, seq_len] (--seq-len; default: the config's maximum positions);
a file model gets a float tensor of the --input shape, which it requires.

Every problem the user can fix raises SpecError with a one-line message.
Nothing is downloaded: no weights, no configs.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib.util
import inspect
import os
import re
import sys
from typing import Any

import torch
from torch import nn

from . import hub as hubmod


class SpecError(Exception):
    """A problem with the SPEC, a --set, or the input the user gave (one line)."""


@dataclasses.dataclass
class Resolved:
    """A built model and what to feed it.

    module:    the nn.Module, in training mode, on the requested device
    args:      positional inputs for module(*args) (batch dimension first)
    name:      a default model name (letters, digits, - _ .)
    source:    where the architecture comes from (library, version, call)
    input:     what one sample is, in words ("3x224x224 image", ...)
    sequence_length: tokens per sample for a sequence model, else None
    batch:     the batch size of `args`
    dtype:     the floating dtype the module and its float inputs were cast to
    grad_dtypes: each trainable parameter's dtype as built, before that cast
               (the gradient dtype written into the model file)
    """

    module: nn.Module
    args: tuple
    name: str
    source: str
    input: str
    sequence_length: int | None
    batch: int
    dtype: torch.dtype = torch.float32
    grad_dtypes: dict = dataclasses.field(default_factory=dict)


def parse_sets(sets: list[str] | None) -> dict[str, Any]:
    """["k=v", ...] -> {k: literal(v)}; SpecError for an item without '=' or a bad key."""
    out: dict[str, Any] = {}
    for item in sets or []:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise SpecError(f"--set {item!r}: expected key=value with a Python identifier as key")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out


def parse_shape(text: str) -> tuple[int, ...]:
    """'3x224x224' -> (3, 224, 224); SpecError otherwise."""
    parts = text.lower().split("x")
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SpecError(f"--input {text!r}: expected positive sizes separated by 'x', e.g. 3x224x224")
    return tuple(int(p) for p in parts)


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text).strip("-") or "model"


def _construct(what: str, build, *a, **kw) -> nn.Module:
    # The constructor runs with the user's --set values: whatever it raises
    # (a TypeError for an unknown keyword, a ValueError or an assertion for a
    # value the architecture refuses) is the user's to fix, in one line.
    try:
        module = build(*a, **kw)
    except Exception as e:
        raise SpecError(f"{what}: {_first_line(e)}") from None
    if not isinstance(module, nn.Module):
        raise SpecError(f"{what} returned {type(module).__name__}, not a torch.nn.Module")
    return module


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    line = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    cause = e.__cause__
    if cause is not None and str(cause).strip():  # e.g. transformers' field errors carry the reason there
        line += " " + str(cause).strip().splitlines()[0]
    return line


def _torchvision(name: str, kw: dict, device) -> tuple[nn.Module, str]:
    import torchvision

    names = torchvision.models.list_models()
    if name not in names:
        raise SpecError(f"torchvision:{name}: no such model in torchvision {torchvision.__version__} "
                        f"(torchvision.models.list_models()){hubmod.suggest(name, names)}")
    with torch.device(device):
        m = _construct(f"torchvision:{name}", torchvision.models.get_model, name, weights=None, **kw)
    return m, f"torchvision {torchvision.__version__} models.get_model({name!r}, weights=None)"


def _timm(name: str, kw: dict, device) -> tuple[nn.Module, str]:
    import timm

    if not timm.is_model(name):
        raise SpecError(f"timm:{name}: no such model in timm {timm.__version__} (timm.list_models())"
                        f"{hubmod.suggest(name, timm.list_models())}")
    with torch.device(device):
        m = _construct(f"timm:{name}", timm.create_model, name, pretrained=False, **kw)
    return m, f"timm {timm.__version__} create_model({name!r}, pretrained=False)"


def _transformers_class(name: str):
    """transformers.NAME if it is a model class with a config class, else SpecError with suggestions."""
    import transformers

    cls = getattr(transformers, name, None)
    if isinstance(cls, type) and issubclass(cls, nn.Module) and getattr(cls, "config_class", None):
        return cls
    classes = [c for c in dir(transformers) if c[:1].isupper() and re.search(r"(Model|For[A-Z]\w*)$", c)]
    raise SpecError(f"transformers:{name}: no such model class in transformers {transformers.__version__} "
                    f"nor a bundled hub configuration{hubmod.suggest(name, classes + hubmod.bundled_ids())}")


def _hub_fields(name: str) -> tuple[str, str, dict] | None:
    """(class name, config.json URL, its fields) for a bundled hub id; SpecError for
    an ORG/NAME that is not bundled; None for anything else (a class name)."""
    found = hubmod.lookup(name)
    if found is None:
        if hubmod.looks_like_hub_id(name):
            raise SpecError(f"transformers:{name}: no bundled configuration for this hub id (no network: "
                            f"docs/models.md lists the bundled ones; else give transformers:CLASS with --set)"
                            f"{hubmod.suggest(name, hubmod.bundled_ids())}")
        return None
    repo, fields = found
    cls_name = fields.pop("architectures")[0]
    fields.pop("model_type", None)
    return cls_name, hubmod.url(repo), fields


def _transformers(name: str, kw: dict, device) -> tuple[nn.Module, str]:
    import transformers

    hub = _hub_fields(name)
    cls_name, url, fields = hub if hub else (name, None, {})
    cls = _transformers_class(cls_name)
    config = cls.config_class()
    for key, value in kw.items():
        if key != "attn_implementation" and not hasattr(config, key):
            raise SpecError(f"--set {key}: {type(config).__name__} has no such field")
    kw = dict(kw)
    attn = kw.pop("attn_implementation", "eager")
    try:  # transformers validates fields with its own exception types
        config = cls.config_class(**{**fields, **kw})
        config._attn_implementation = attn
    except Exception as e:
        raise SpecError(f"--set for {type(config).__name__}: {_first_line(e)}") from None
    with torch.device(device):
        m = _construct(f"transformers:{name}", cls, config)
    sets = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    source = f"transformers {transformers.__version__} {cls_name}({type(config).__name__}({sets}))"
    if url:
        source = (f"transformers {transformers.__version__} {cls_name} from the fields of {url} (bundled, "
                  f"no weights){' with ' + sets if sets else ''}")
    return m, source


def _file(path: str, func: str, kw: dict, device) -> tuple[nn.Module, str]:
    if not os.path.isfile(path):
        raise SpecError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"gradwire_user_{_safe_name(os.path.basename(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its own imports find its neighbours
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file: any error is theirs to fix
        raise SpecError(f"{path}: cannot import: {_first_line(e)}") from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, func, None)
    if not callable(fn):
        raise SpecError(f"{path}: no function {func!r}")
    with torch.device(device):
        m = _construct(f"{path}:{func}", fn, **kw)
    return m, f"{os.path.basename(path)}:{func}()"


def build_module(spec: str, sets: dict, device) -> tuple[nn.Module, str, str]:
    """SPEC + parsed sets -> (module on device, source text, kind) with kind in
    torchvision | timm | transformers | file."""
    kind, sep, rest = spec.rpartition(":")
    if not sep or not rest or not kind:
        raise SpecError(f"{spec!r}: expected torchvision:NAME, timm:NAME, transformers:CLASS or FILE.py:FUNCTION")
    if kind == "torchvision":
        return (*_torchvision(rest, sets, device), kind)
    if kind == "timm":
        return (*_timm(rest, sets, device), kind)
    if kind == "transformers":
        return (*_transformers(rest, sets, device), kind)
    if kind.endswith(".py"):
        return (*_file(kind, rest, sets, device), "file")
    raise SpecError(f"{spec!r}: unknown kind {kind!r} (torchvision, timm, transformers or a .py file)")


def _max_positions(config) -> int | None:
    for key in ("max_position_embeddings", "n_positions", "n_ctx"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _sequence_inputs(module: nn.Module, seq_len: int | None, batch: int, device) -> tuple[tuple, int]:
    """Token ids [batch, seq] as the model's positional inputs: input_ids, and
    decoder_input_ids of the same length for an encoder-decoder (T5)."""
    config = module.config
    seq = seq_len or _max_positions(config)
    if not seq:
        raise SpecError("this model has no maximum sequence length in its config: give --seq-len")
    limit = _max_positions(config)
    if limit and seq > limit:
        raise SpecError(f"--seq-len {seq}: more than the model's {limit} positions (raise it with --set)")
    vocab = getattr(config, "vocab_size", 2) or 2
    ids = torch.randint(0, vocab, (batch, seq), device=device)
    if not getattr(config, "is_encoder_decoder", False):
        return (ids,), seq
    params = list(inspect.signature(module.forward).parameters)
    if "decoder_input_ids" not in params:
        raise SpecError(f"{type(module).__name__}: an encoder-decoder without decoder_input_ids is not supported")
    args = [None] * params.index("decoder_input_ids") + [torch.randint(0, vocab, (batch, seq), device=device)]
    args[params.index("input_ids")] = ids
    return tuple(args), seq


def _image_shape(module: nn.Module, kind: str, input_shape) -> tuple[int, ...]:
    if input_shape:
        return tuple(input_shape)
    cfg = getattr(module, "pretrained_cfg", None) or {}
    if kind == "timm" and cfg.get("input_size"):
        return tuple(cfg["input_size"])
    config = getattr(module, "config", None)
    if kind == "transformers" and getattr(config, "image_size", None):  # ViT: pixel_values
        size = config.image_size
        return (config.num_channels, *(size if isinstance(size, (list, tuple)) else (size, size)))
    if kind == "file":
        raise SpecError("a file model needs --input (the shape of one sample, e.g. 784 or 3x32x32)")
    return (3, 224, 224)


def resolve(spec: str, sets: list[str] | None = None, *, input_shape: tuple[int, ...] | None = None,
            seq_len: int | None = None, batch: int = 1, device: str | torch.device = "meta",
            dtype: torch.dtype = torch.float32) -> Resolved:
    """Build the model named by SPEC on `device` (default: meta, no memory, no
    weights), in training mode, with example inputs for `batch` samples.

    sets:        ["key=value", ...] overrides (constructor keywords, or config
                 fields for transformers)
    input_shape: one sample's shape for an image/file model (e.g. (3, 224, 224))
    seq_len:     tokens per sample for a transformers model
    dtype:       the floating dtype to run in: the module's floating parameters
                 and buffers and an image/file model's input are cast to it
                 (Resolved.grad_dtypes keeps the parameters' dtypes as built)
    Raises SpecError (one line) for anything the user can fix.
    """
    if batch < 1:
        raise SpecError(f"--batch {batch}: must be at least 1")
    module, source, kind = build_module(spec, parse_sets(sets), device)
    module.train()
    grad_dtypes = {n: p.dtype for n, p in module.named_parameters()}
    if dtype != torch.float32:
        module.to(dtype)
    base = spec.rpartition(":")[2].rpartition("/")[2]  # a hub id's name, without its organisation
    if kind == "transformers" and getattr(module, "main_input_name", "input_ids") == "input_ids":
        if input_shape:
            raise SpecError("--input is for image and file models; a transformers model takes --seq-len")
        args, seq = _sequence_inputs(module, seq_len, batch, device)
        return Resolved(module, args, _safe_name(base), source, f"a sequence of {seq} tokens", seq, batch,
                        dtype, grad_dtypes)
    if seq_len:
        raise SpecError("--seq-len is for transformers models; give --input for this one")
    shape = _image_shape(module, kind, input_shape)
    x = torch.randn((batch, *shape), device=device, dtype=dtype)
    what = "x".join(map(str, shape)) + (" image" if len(shape) == 3 else " features")
    return Resolved(module, (x,), _safe_name(base), source, what, None, batch, dtype, grad_dtypes)
