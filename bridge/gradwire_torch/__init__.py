"""gradwire's PyTorch bridge (docs/models.md, "Bring your own model").

Modules:
  spec    -- resolve a model SPEC (torchvision:NAME, timm:NAME,
             transformers:CLASS, path/to/file.py:function) into an nn.Module
             and example inputs on a given device; shared by every tool here.
  export  -- `gradwire model export`: one observed forward and backward pass on
             the meta device, written as a gradwire-model/1 YAML file.
  cli     -- the command line behind `gradwire model ...`
             (python -m gradwire_torch SUBCOMMAND ...).

No network: models are built from their configurations, never downloaded
(HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are set before anything is imported,
timm and torchvision get no pretrained weights).
"""
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
