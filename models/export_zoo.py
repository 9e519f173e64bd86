#!/usr/bin/env python3
"""Writes the bundled model zoo (models/<name>.yaml) with `gradwire model export`.

Every bundled model is exported from its reference implementation (torchvision,
Hugging Face transformers, or models/mlp_tiny.py) on the meta device; each
file's header holds the exact command. The same command on the same pinned
versions (bridge/requirements-torch.txt) writes the same bytes.

Activation dtype (docs/models.md, "The bundled models"): the CNNs and the MLP
are run in fp32, the transformers in bf16 (16-bit activations, as they are
trained); the simulator rescales to the scenario's precision (docs/planning.md,
"Memory model").

Usage (from anywhere; runs in the repository root):
  .venv-torch/bin/python models/export_zoo.py              # (re)write every file
  .venv-torch/bin/python models/export_zoo.py NAME ...     # only these
  .venv-torch/bin/python models/export_zoo.py --check [NAME ...]
                         # export to a temporary folder, exit 1 if a committed file differs
"""
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
sys.path.insert(0, os.path.join(ROOT, "bridge"))

BERT = "Devlin et al. 2019, 'BERT: Pre-training of Deep Bidirectional Transformers'"
GPT2 = "Radford et al. 2019, 'Language Models are Unsupervised Multitask Learners'"
RESNET = "He et al. 2016, 'Deep Residual Learning for Image Recognition'"

# name -> (spec and options, description)
ZOO = {
    "mlp-tiny": (["models/mlp_tiny.py:make_model", "--input", "784", "--batch", "4"],
                 "Tiny 3-layer MLP (784-256-128-10, ReLU) for tests and examples; a flattened 28x28 image"),
    "resnet50": (["torchvision:resnet50"],
                 f"ResNet-50 (torchvision resnet50, v1.5), ImageNet 224x224, 1000 classes. {RESNET}"),
    "resnet101": (["torchvision:resnet101"],
                  f"ResNet-101 (torchvision resnet101, v1.5), ImageNet 224x224, 1000 classes. {RESNET}"),
    "vgg16": (["torchvision:vgg16"],
              "VGG-16 (torchvision vgg16, configuration D, no batch norm), ImageNet 224x224. Simonyan and "
              "Zisserman 2015, 'Very Deep Convolutional Networks for Large-Scale Image Recognition'"),
    "bert-base": (["transformers:BertModel", "--dtype", "bf16"],
                  "BERT-base uncased (BertModel with pooler, no pre-training heads): 12 layers, hidden 768, "
                  f"12 heads, vocab 30522. {BERT}"),
    "bert-large": (["transformers:BertModel", "--dtype", "bf16", "--set", "num_hidden_layers=24",
                    "hidden_size=1024", "num_attention_heads=16", "intermediate_size=4096"],
                   "BERT-large uncased (BertModel with pooler, no pre-training heads): 24 layers, hidden 1024, "
                   f"16 heads, vocab 30522. {BERT}"),
    "gpt2": (["transformers:GPT2LMHeadModel", "--dtype", "bf16"],
             f"GPT-2 small (124M) (GPT2LMHeadModel, lm_head tied to wte): 12 layers, hidden 768, 12 heads, "
             f"vocab 50257. {GPT2}"),
    "gpt2-xl": (["transformers:GPT2LMHeadModel", "--dtype", "bf16", "--set", "n_layer=48", "n_embd=1600",
                 "n_head=25"],
                f"GPT-2 XL (1.5B) (GPT2LMHeadModel, lm_head tied to wte): 48 layers, hidden 1600, 25 heads, "
                f"vocab 50257. {GPT2}"),
    "llama2-7b": (["transformers:LlamaForCausalLM", "--dtype", "bf16", "--set", "max_position_embeddings=4096"],
                  "Llama-2-7B (LlamaForCausalLM, the Llama-2-7b-hf config): 32 layers, hidden 4096, 32 heads, "
                  "SwiGLU 11008, RMSNorm, vocab 32000, untied lm_head. Touvron et al. 2023, 'Llama 2: Open "
                  "Foundation and Fine-Tuned Chat Models'"),
    "llama2-13b": (["transformers:meta-llama/Llama-2-13b-hf", "--dtype", "bf16"],
                   "Llama-2-13B (LlamaForCausalLM, the Llama-2-13b-hf config): 40 layers, hidden 5120, 40 heads, "
                   "SwiGLU 13824, RMSNorm, vocab 32000, untied lm_head. Touvron et al. 2023, 'Llama 2: Open "
                   "Foundation and Fine-Tuned Chat Models'"),
    "llama2-34b": (["transformers:LlamaForCausalLM", "--dtype", "bf16", "--set", "hidden_size=8192",
                    "intermediate_size=22016", "num_hidden_layers=48", "num_attention_heads=64",
                    "num_key_value_heads=8", "max_position_embeddings=4096"],
                   "Llama-2-34B shape (LlamaForCausalLM; the 34B of the Llama 2 paper, Table 1, with grouped-query "
                   "attention; unreleased, its architecture as Code Llama 34B's config.json and IBM fms-fsdp's 34b "
                   "variant): 48 layers, hidden 8192, 64 heads, 8 key-value heads (GQA), SwiGLU 22016, RMSNorm, "
                   "vocab 32000, untied lm_head, 4096 tokens. Touvron et al. 2023, 'Llama 2: Open Foundation and "
                   "Fine-Tuned Chat Models'"),
    "llama2-70b": (["transformers:meta-llama/Llama-2-70b-hf", "--dtype", "bf16"],
                   "Llama-2-70B (LlamaForCausalLM, the Llama-2-70b-hf config): 80 layers, hidden 8192, 64 heads, "
                   "8 key-value heads (GQA), SwiGLU 28672, RMSNorm, vocab 32000, untied lm_head, 4096 tokens. "
                   "Touvron et al. 2023, 'Llama 2: Open Foundation and Fine-Tuned Chat Models'"),
    "llama3-8b": (["transformers:meta-llama/Meta-Llama-3-8B", "--dtype", "bf16"],
                  "Llama-3-8B (LlamaForCausalLM, the Meta-Llama-3-8B config): 32 layers, hidden 4096, 32 heads, "
                  "8 key-value heads (GQA), SwiGLU 14336, RMSNorm, vocab 128256, untied lm_head, 8192 tokens. "
                  "Llama Team, AI @ Meta 2024, 'The Llama 3 Herd of Models'"),
    "llama3-70b": (["transformers:meta-llama/Meta-Llama-3-70B", "--dtype", "bf16"],
                   "Llama-3-70B (LlamaForCausalLM, the Meta-Llama-3-70B config): 80 layers, hidden 8192, 64 heads, "
                   "8 key-value heads (GQA), SwiGLU 28672, RMSNorm, vocab 128256, untied lm_head, 8192 tokens. "
                   "Llama Team, AI @ Meta 2024, 'The Llama 3 Herd of Models'"),
}


def argv_for(name: str, out: str) -> list[str]:
    spec, description = ZOO[name]
    return ["export", *spec, "--name", name, "--description", description, "--out", out]


def main(args: list[str]) -> int:
    check = "--check" in args
    names = [a for a in args if a != "--check"] or list(ZOO)
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        print(f"export_zoo.py: unknown model(s) {', '.join(unknown)}; bundled: {', '.join(ZOO)}", file=sys.stderr)
        return 2
    os.chdir(ROOT)
    from gradwire_torch import cli  # after the environment and sys.path are set

    status = 0
    for name in names:
        committed = os.path.join("models", name + ".yaml")
        if not check:
            if cli.main(argv_for(name, committed)) != 0:
                return 1
            continue
        with tempfile.TemporaryDirectory(prefix="gw-zoo-") as tmp:
            out = os.path.join(tmp, name + ".yaml")
            if cli.main(argv_for(name, committed)[:-1] + [out]) != 0:
                return 1
            with open(out, "rb") as a, open(committed, "rb") as b:
                fresh, old = a.read(), b.read()
            fresh = fresh.replace(out.encode(), committed.encode())  # the header names the --out given
            if fresh != old:
                print(f"export_zoo.py --check: {committed} differs from a fresh export", file=sys.stderr)
                status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
