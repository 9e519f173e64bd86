#!/usr/bin/env python3
"""Generates the gradwire model zoo (models/<name>.yaml) from architecture definitions.

Each model is built layer by layer, registering its parameters in the order the
reference implementation registers them (torchvision for the CNNs, Hugging Face
transformers for BERT, GPT-2 and Llama-2). The YAML lists the gradient tensors
in the reverse of that order: the order in which gradients become ready in the
backward pass, which is what PyTorch DDP uses to assign parameters to buckets.

Conventions (see docs/models.md):
  * A multiply-add counts as 2 FLOPs. FLOPs are per sample (per sequence of
    `sequence_length` tokens for transformers), forward pass only in
    `forward_flops`; backward = 2 x forward.
  * Each tensor carries the FLOPs of the operation that owns it: a conv's or a
    linear layer's multiply-adds go to its weight; a bias add (1 FLOP per output
    element) to the bias; a norm's scale (1 FLOP per element) to its weight and
    its shift to its bias. Attention's parameter-free matmuls (Q K^T and
    softmax(.) V, 4 s^2 h per layer, full s x s even when causal) go to the
    attention output projection weight. Parameter-free elementwise work
    (activations, residual adds, softmax, normalization statistics, pooling,
    RoPE) is not counted. The sum over tensors is the model's forward FLOPs.
  * activation_bytes_per_sample: transformers use Korthikanti et al. 2022,
    (34 s h + 5 a s^2) bytes per layer per sequence (16-bit activations, no
    recomputation), times the number of layers; CNNs/MLPs sum the fp32 output
    of every module that keeps its output (conv, batch norm, linear, pooling,
    dropout, non-in-place activations) plus the input.

Usage:
  python3 models/generate.py            # (re)write models/*.yaml
  python3 models/generate.py --check    # exit 1 if a committed file differs
  python3 models/generate.py --out-dir DIR
Standard library only.
"""

import argparse
import os
import sys

SCHEMA = "gradwire-model/1"
BACKWARD_FACTOR = 2  # backward FLOPs = 2 x forward (input grads + weight grads)


class Model:
    """Collects parameters in registration order, FLOPs and activation bytes."""

    def __init__(self, name):
        self.name = name
        self.params = []  # [name, shape, forward_flops]
        self.index = {}
        self.activation_elems = 0  # for the module-output activation estimate

    def param(self, name, shape, flops=0):
        if name in self.index:
            raise ValueError("duplicate parameter " + name)
        self.index[name] = len(self.params)
        self.params.append([name, list(shape), int(flops)])

    def add_flops(self, name, flops):
        self.params[self.index[name]][2] += int(flops)

    def act(self, elems):
        self.activation_elems += int(elems)

    def total(self):
        return sum(numel(p[1]) for p in self.params)

    def forward_flops(self):
        return sum(p[2] for p in self.params)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


# --------------------------------------------------------------------------
# CNN building blocks (torchvision shapes; NCHW, per sample)
# --------------------------------------------------------------------------

def conv(m, name, cin, cout, k, stride, pad, hw, bias=False):
    """Conv2d on a square hw x hw input; returns the output side length."""
    out = (hw + 2 * pad - k) // stride + 1
    positions = out * out
    m.param(name + ".weight", [cout, cin, k, k], 2 * cin * k * k * cout * positions)
    if bias:
        m.param(name + ".bias", [cout], cout * positions)
    m.act(cout * positions)
    return out


def batchnorm(m, name, c, hw):
    elems = c * hw * hw
    m.param(name + ".weight", [c], elems)  # scale
    m.param(name + ".bias", [c], elems)    # shift
    m.act(elems)


def linear(m, name, fin, fout, tokens=1, bias=True, hf_conv1d=False):
    """nn.Linear (weight [out, in]) or HF GPT-2 Conv1D (weight [in, out])."""
    shape = [fin, fout] if hf_conv1d else [fout, fin]
    m.param(name + ".weight", shape, 2 * fin * fout * tokens)
    if bias:
        m.param(name + ".bias", [fout], fout * tokens)


def pool_out(hw, k, stride, pad):
    return (hw + 2 * pad - k) // stride + 1


def resnet(name, layers):
    """torchvision resnet50/resnet101: Bottleneck blocks, expansion 4, 224x224."""
    m = Model(name)
    m.act(3 * 224 * 224)  # the input image is kept for conv1's weight gradient
    hw = conv(m, "conv1", 3, 64, 7, 2, 3, 224)
    batchnorm(m, "bn1", 64, hw)  # relu is in-place
    hw = pool_out(hw, 3, 2, 1)
    m.act(64 * hw * hw)  # maxpool output
    inplanes = 64
    for li, (planes, blocks) in enumerate(zip([64, 128, 256, 512], layers)):
        for b in range(blocks):
            stride = 2 if (b == 0 and li > 0) else 1
            p = "layer%d.%d." % (li + 1, b)
            # torchvision >= 0.6 (ResNet v1.5): the stride sits on conv2.
            h1 = conv(m, p + "conv1", inplanes, planes, 1, 1, 0, hw)
            batchnorm(m, p + "bn1", planes, h1)
            h2 = conv(m, p + "conv2", planes, planes, 3, stride, 1, h1)
            batchnorm(m, p + "bn2", planes, h2)
            h3 = conv(m, p + "conv3", planes, planes * 4, 1, 1, 0, h2)
            batchnorm(m, p + "bn3", planes * 4, h3)
            if b == 0:  # projection shortcut (stride or width change)
                hd = conv(m, p + "downsample.0", inplanes, planes * 4, 1, stride, 0, hw)
                batchnorm(m, p + "downsample.1", planes * 4, hd)
            # out += identity and the relu are in-place: no new tensor
            inplanes = planes * 4
            hw = h3
    m.act(2048)  # global average pool output
    linear(m, "fc", 2048, 1000)
    m.act(1000)
    return m


def vgg16():
    """torchvision vgg16 (configuration D, no batch norm), 224x224."""
    m = Model("vgg16")
    m.act(3 * 224 * 224)
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    idx, cin, hw = 0, 3, 224
    for v in cfg:
        if v == "M":
            hw = pool_out(hw, 2, 2, 0)
            m.act(cin * hw * hw)
            idx += 1
        else:
            hw = conv(m, "features.%d" % idx, cin, v, 3, 1, 1, hw, bias=True)
            cin = v
            idx += 2  # conv, in-place relu
    # AdaptiveAvgPool2d((7, 7)) is the identity at 224x224 input.
    assert hw == 7
    linear(m, "classifier.0", 512 * 7 * 7, 4096)
    m.act(4096 + 4096)  # linear output, dropout output (relu in-place)
    linear(m, "classifier.3", 4096, 4096)
    m.act(4096 + 4096)
    linear(m, "classifier.6", 4096, 1000)
    m.act(1000)
    return m


def mlp_tiny():
    """A small 3-layer perceptron for tests: 784-256-128-10 with ReLU."""
    m = Model("mlp-tiny")
    m.act(784)
    linear(m, "fc1", 784, 256)
    m.act(256 + 256)  # linear output, relu output (not in-place)
    linear(m, "fc2", 256, 128)
    m.act(128 + 128)
    linear(m, "fc3", 128, 10)
    m.act(10)
    return m


# --------------------------------------------------------------------------
# Transformers (per sequence of s tokens)
# --------------------------------------------------------------------------

def layernorm(m, name, h, s, bias=True):
    m.param(name + ".weight", [h], s * h)
    if bias:
        m.param(name + ".bias", [h], s * h)


def attention_core_flops(s, h):
    """Q K^T and softmax(.) V over all heads: 2 matmuls of 2 s^2 h FLOPs each."""
    return 4 * s * s * h


def bert(name, layers, h, heads, s):
    """Hugging Face BertModel (with pooler): vocab 30522, 512 positions, 2 token types."""
    m = Model(name)
    vocab, positions, types, ffn = 30522, 512, 2, 4 * h
    e = "embeddings."
    m.param(e + "word_embeddings.weight", [vocab, h], 0)  # lookup
    m.param(e + "position_embeddings.weight", [positions, h], s * h)  # add
    m.param(e + "token_type_embeddings.weight", [types, h], s * h)  # add
    layernorm(m, e + "LayerNorm", h, s)
    for i in range(layers):
        p = "encoder.layer.%d." % i
        for proj in ("query", "key", "value"):
            linear(m, p + "attention.self." + proj, h, h, s)
        linear(m, p + "attention.output.dense", h, h, s)
        m.add_flops(p + "attention.output.dense.weight", attention_core_flops(s, h))
        layernorm(m, p + "attention.output.LayerNorm", h, s)
        linear(m, p + "intermediate.dense", h, ffn, s)
        linear(m, p + "output.dense", ffn, h, s)
        layernorm(m, p + "output.LayerNorm", h, s)
    linear(m, "pooler.dense", h, h, 1)  # first token only
    return m


def gpt2(name, layers, h, heads, s):
    """Hugging Face GPT2LMHeadModel: vocab 50257, 1024 positions, lm_head tied to wte."""
    m = Model(name)
    vocab, positions = 50257, 1024
    t = "transformer."
    # wte is a lookup in the embedding and the output projection of lm_head
    # (2 s h V), one shared parameter, counted once.
    m.param(t + "wte.weight", [vocab, h], 2 * s * h * vocab)
    m.param(t + "wpe.weight", [positions, h], s * h)  # add
    for i in range(layers):
        p = t + "h.%d." % i
        layernorm(m, p + "ln_1", h, s)
        linear(m, p + "attn.c_attn", h, 3 * h, s, hf_conv1d=True)
        linear(m, p + "attn.c_proj", h, h, s, hf_conv1d=True)
        m.add_flops(p + "attn.c_proj.weight", attention_core_flops(s, h))
        layernorm(m, p + "ln_2", h, s)
        linear(m, p + "mlp.c_fc", h, 4 * h, s, hf_conv1d=True)
        linear(m, p + "mlp.c_proj", 4 * h, h, s, hf_conv1d=True)
    layernorm(m, t + "ln_f", h, s)
    return m


def llama2_7b(s):
    """Hugging Face LlamaForCausalLM, Llama-2-7B: RMSNorm, SwiGLU, untied lm_head."""
    m = Model("llama2-7b")
    vocab, h, layers, ffn = 32000, 4096, 32, 11008
    m.param("model.embed_tokens.weight", [vocab, h], 0)  # lookup
    for i in range(layers):
        p = "model.layers.%d." % i
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            linear(m, p + "self_attn." + proj, h, h, s, bias=False)
        m.add_flops(p + "self_attn.o_proj.weight", attention_core_flops(s, h))
        for proj, fin, fout in (("gate_proj", h, ffn), ("up_proj", h, ffn), ("down_proj", ffn, h)):
            linear(m, p + "mlp." + proj, fin, fout, s, bias=False)
        layernorm(m, p + "input_layernorm", h, s, bias=False)
        layernorm(m, p + "post_attention_layernorm", h, s, bias=False)
    layernorm(m, "model.norm", h, s, bias=False)
    m.param("lm_head.weight", [vocab, h], 2 * s * h * vocab)
    return m


def korthikanti_bytes(layers, h, heads, s):
    return layers * (34 * s * h + 5 * heads * s * s)


# --------------------------------------------------------------------------
# The zoo
# --------------------------------------------------------------------------

CNN_ACT = ("sum of the fp32 module outputs kept for backward per sample: the input and every "
           "conv, batch-norm, linear, pooling, dropout and non-in-place activation output "
           "(torchvision's ReLUs and residual adds are in-place and add nothing); an estimate, "
           "see docs/models.md")
TRANSFORMER_ACT = ("Korthikanti et al. 2022, 'Reducing Activation Recomputation in Large "
                   "Transformer Models', per-layer activation memory without parallelism: (34 s h + 5 a s^2) bytes per layer per sequence, "
                   "16-bit activations, no recomputation, times the layer count; embeddings, final "
                   "norm and logits excluded")


def zoo():
    out = []
    out.append(dict(
        model=mlp_tiny(),
        description="Tiny 3-layer MLP (784-256-128-10, ReLU) for tests and examples",
        source="defined here: nn.Linear(784,256), nn.Linear(256,128), nn.Linear(128,10), with biases",
        parameters_source="computed from the layer sizes given in source: 235,146",
        input="784 features (a flattened 28x28 image)",
        seq=0, activation=None))
    out.append(dict(
        model=resnet("resnet50", [3, 4, 6, 3]),
        description="ResNet-50 (torchvision.models.resnet50, v1.5), ImageNet 224x224, 1000 classes",
        source="He et al. 2016, 'Deep Residual Learning for Image Recognition'; torchvision.models.resnet50",
        parameters_source="torchvision ResNet50_Weights.IMAGENET1K_V1 num_params: 25,557,032",
        input="3x224x224 image",
        seq=0, activation=None))
    out.append(dict(
        model=resnet("resnet101", [3, 4, 23, 3]),
        description="ResNet-101 (torchvision.models.resnet101, v1.5), ImageNet 224x224, 1000 classes",
        source="He et al. 2016, 'Deep Residual Learning for Image Recognition'; torchvision.models.resnet101",
        parameters_source="torchvision ResNet101_Weights.IMAGENET1K_V1 num_params: 44,549,160",
        input="3x224x224 image",
        seq=0, activation=None))
    out.append(dict(
        model=vgg16(),
        description="VGG-16 (torchvision.models.vgg16, configuration D, no batch norm), ImageNet 224x224",
        source="Simonyan and Zisserman 2015, 'Very Deep Convolutional Networks for Large-Scale Image Recognition'; torchvision.models.vgg16",
        parameters_source="torchvision VGG16_Weights.IMAGENET1K_V1 num_params: 138,357,544",
        input="3x224x224 image",
        seq=0, activation=None))
    for name, layers, h, heads, desc, total in (
            ("bert-base", 12, 768, 12, "BERT-base uncased", "109,482,240"),
            ("bert-large", 24, 1024, 16, "BERT-large uncased", "335,141,888")):
        s = 512
        out.append(dict(
            model=bert(name, layers, h, heads, s),
            description="%s (Hugging Face BertModel with pooler, no pre-training heads): %d layers, hidden %d, %d heads, vocab 30522" % (desc, layers, h, heads),
            source="Devlin et al. 2019, 'BERT: Pre-training of Deep Bidirectional Transformers'; Hugging Face transformers BertModel (bert-%s-uncased config)" % name.split("-")[1],
            parameters_source="sum of parameter numels of Hugging Face BertModel (add_pooling_layer=True) with the bert-%s-uncased config: %s" % (name.split("-")[1], total),
            input="a sequence of %d tokens" % s,
            seq=s, activation=(layers, h, heads)))
    for name, layers, h, heads, desc, total in (
            ("gpt2", 12, 768, 12, "GPT-2 small (124M)", "124,439,808"),
            ("gpt2-xl", 48, 1600, 25, "GPT-2 XL (1.5B)", "1,557,611,200")):
        s = 1024
        out.append(dict(
            model=gpt2(name, layers, h, heads, s),
            description="%s (Hugging Face GPT2LMHeadModel, lm_head tied to wte): %d layers, hidden %d, %d heads, vocab 50257" % (desc, layers, h, heads),
            source="Radford et al. 2019, 'Language Models are Unsupervised Multitask Learners'; Hugging Face transformers GPT2LMHeadModel ('%s' config)" % name,
            parameters_source="sum of parameter numels of Hugging Face GPT2LMHeadModel with the '%s' config, tied wte/lm_head counted once: %s" % (name, total),
            input="a sequence of %d tokens" % s,
            seq=s, activation=(layers, h, heads)))
    s = 4096
    out.append(dict(
        model=llama2_7b(s),
        description="Llama-2-7B (Hugging Face LlamaForCausalLM): 32 layers, hidden 4096, 32 heads, SwiGLU 11008, RMSNorm, vocab 32000, untied lm_head",
        source="Touvron et al. 2023, 'Llama 2: Open Foundation and Fine-Tuned Chat Models'; Hugging Face transformers LlamaForCausalLM (meta-llama/Llama-2-7b-hf config)",
        parameters_source="sum of parameter numels of Hugging Face LlamaForCausalLM with the meta-llama/Llama-2-7b-hf config (untied lm_head): 6,738,415,616",
        input="a sequence of %d tokens" % s,
        seq=s, activation=(32, 4096, 32)))
    return out


# --------------------------------------------------------------------------
# YAML output (written by hand: the standard library has no YAML writer)
# --------------------------------------------------------------------------

def q(text):
    """A double-quoted YAML scalar (ASCII text only)."""
    assert all(32 <= ord(c) < 127 for c in text), text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def per_token(flops, s):
    """flops / s, exact when it divides, else the shortest round-tripping decimal."""
    return "%d" % (flops // s) if flops % s == 0 else repr(flops / s)


def render(entry):
    m = entry["model"]
    s = entry["seq"]
    fwd = m.forward_flops()
    bwd = BACKWARD_FACTOR * fwd
    if entry["activation"] is None:
        act = 4 * m.activation_elems
        act_note = CNN_ACT
    else:
        act = korthikanti_bytes(*entry["activation"], s)
        act_note = TRANSFORMER_ACT
    lines = [
        "# Generated by models/generate.py; do not edit by hand (python3 models/generate.py).",
        "# Tensors are in gradient-ready order (reverse of parameter registration).",
        "schema: " + SCHEMA,
        "name: " + m.name,
        "description: " + q(entry["description"]),
        "source: " + q(entry["source"]),
        "parameters: %d" % m.total(),
        "parameters_source: " + q(entry["parameters_source"]),
        "input: " + q(entry["input"]),
    ]
    if s:
        lines.append("sequence_length: %d" % s)
    lines += [
        "flops:",
        "  convention: " + q("multiply-add = 2 FLOPs; per sample%s; backward = 2 x forward; "
                             "see docs/models.md" % (" (one sequence of sequence_length tokens)" if s else "")),
        "  forward_per_sample: %d" % fwd,
        "  backward_per_sample: %d" % bwd,
    ]
    if s:
        lines += [
            "  forward_per_token: " + per_token(fwd, s),
            "  backward_per_token: " + per_token(bwd, s),
        ]
    lines += [
        "activation_bytes_per_sample: %d" % act,
        "activation_source: " + q(act_note),
        "tensors:",
    ]
    for name, shape, flops in reversed(m.params):
        lines.append("  - {name: %s, shape: [%s], numel: %d, dtype: fp32, forward_flops: %d}" %
                     (name, ", ".join(str(d) for d in shape), numel(shape), flops))
    return "\n".join(lines) + "\n"


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="regenerate in memory; exit 1 if any committed file differs or is missing")
    ap.add_argument("--out-dir", default=here, help="where to write (default: the models/ folder)")
    args = ap.parse_args(argv)
    stale = []
    for entry in zoo():
        text = render(entry)
        path = os.path.join(args.out_dir, entry["model"].name + ".yaml")
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path + " differs")
            except OSError:
                stale.append(path + " is missing")
        else:
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, path)
            print("wrote %s (%d parameters, %d tensors)" % (path, entry["model"].total(), len(entry["model"].params)))
    if stale:
        for line in stale:
            print("generate.py --check: " + line, file=sys.stderr)
        print("run: python3 models/generate.py", file=sys.stderr)
        return 1
    if args.check:
        print("generate.py --check: all model files are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
