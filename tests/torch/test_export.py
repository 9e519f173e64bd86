"""torch.* tests: `gradwire model export` (bridge/gradwire_torch) end to end,
through the gradwire binary, on the CPU (meta device). Run by ctest
(tests/torch/CMakeLists.txt) with GW_BIN, GW_SOURCE_DIR and PYTHONPATH set."""
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

import torch
import yaml
from torch import nn

BIN = os.environ["GW_BIN"]
SRC = os.environ["GW_SOURCE_DIR"]
EXAMPLES = os.path.join(SRC, "tests", "torch", "example_models.py")

sys.path.insert(0, os.path.join(SRC, "tests", "torch"))
import example_models  # noqa: E402
from gradwire_torch import export  # noqa: E402
from gradwire_torch import hub  # noqa: E402
from gradwire_torch import spec as specmod  # noqa: E402

BERT_LARGE = ["num_hidden_layers=24", "hidden_size=1024", "num_attention_heads=16", "intermediate_size=4096"]


def gradwire(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=SRC)


class Scratch(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gw-torch-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def export(self, *args, out="model.yaml"):
        path = os.path.join(self.dir, out)
        r = gradwire("model", "export", *args, "--out", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            return path, yaml.safe_load(f)


def names(doc):
    return [t["name"] for t in doc["tensors"]]


def documented_order(bundled, resolved):
    """The bundled order (the reverse of registration) turned into the observed
    ready order by the two documented rules (docs/models.md, "Exports against
    the bundled models"), computed without the exporter:
    1. modules in the reverse order of their first forward call (a stable sort:
       it moves only modules registered in another order than the forward uses
       them: Llama's RMSNorms, BERT's position and token-type embeddings);
    2. within a convolution, BatchNorm or LayerNorm, the weight before the bias
       (one autograd node produces both and accumulates them in that order)."""
    module = resolved.module
    calls = {}

    def first_call(name):
        def hook(_m, _a):
            calls.setdefault(name, len(calls))  # returns None: the inputs stay as they are
        return hook

    handles = [m.register_forward_pre_hook(first_call(n)) for n, m in module.named_modules()]
    with torch.no_grad():
        module(*resolved.args)
    for h in handles:
        h.remove()
    order = sorted(bundled, key=lambda name: -calls[name.rpartition(".")[0]])
    mods = dict(module.named_modules())
    fused = (nn.modules.conv._ConvNd, nn.modules.batchnorm._BatchNorm, nn.LayerNorm)
    for i in range(len(order) - 1):
        a, b = order[i], order[i + 1]
        if a.endswith(".bias") and b == a[:-5] + ".weight" and isinstance(mods.get(a[:-5]), fused):
            order[i], order[i + 1] = b, a
    return order


# Forward FLOPs per sample of the hand-derived zoo that the exporter replaced
# (models/generate.py, retired; docs/models.md, "How the zoo was made"): an
# independent reference for the exporter's counts.
HAND_DERIVED_FORWARD = {
    "resnet50": 8200597480, "resnet101": 15635275752, "vgg16": 30954085352,
    "bert-base": 96700859136, "bert-large": 335175222272, "gpt2": 291773349888,
    "gpt2-xl": 3507730841600, "llama2-7b": 62922361405440,
}


class ZooMatch(Scratch):
    """Exports reproduce the bundled models: parameter count exactly, the same
    tensors with the same shapes in the same order, that order the reverse of
    registration turned by the documented rules, forward FLOPs within 2% of
    the hand-derived figures."""

    def match(self, bundled_name, spec, *sets):
        args = [spec] + (["--set", *sets] if sets else [])
        _, doc = self.export(*args)
        with open(os.path.join(SRC, "models", bundled_name + ".yaml")) as f:
            ref = yaml.safe_load(f)
        self.assertEqual(doc["parameters"], ref["parameters"])
        self.assertEqual([(t["name"], t["shape"]) for t in doc["tensors"]],
                         [(t["name"], t["shape"]) for t in ref["tensors"]])
        resolved = specmod.resolve(spec, list(sets))
        registration = [n for n, _ in resolved.module.named_parameters()][::-1]
        expected = documented_order(registration, resolved)
        self.assertNotEqual(expected, registration)  # the differences exist
        self.assertEqual(names(doc), expected)
        ratio = doc["flops"]["forward_per_sample"] / HAND_DERIVED_FORWARD[bundled_name]
        self.assertLess(abs(ratio - 1), 0.02, ratio)
        # measured backward: about 2x forward, less the input gradient nobody needs
        back = doc["flops"]["backward_per_sample"] / doc["flops"]["forward_per_sample"]
        self.assertTrue(1.9 < back <= 2.0, back)

    def test_resnet50(self):
        self.match("resnet50", "torchvision:resnet50")

    def test_bert_base(self):
        self.match("bert-base", "transformers:BertModel")

    def test_bert_large(self):
        self.match("bert-large", "transformers:BertModel", *BERT_LARGE)

    def test_gpt2(self):
        self.match("gpt2", "transformers:GPT2LMHeadModel")

    def test_resnet101(self):
        self.match("resnet101", "torchvision:resnet101")

    def test_vgg16(self):
        self.match("vgg16", "torchvision:vgg16")

    def test_gpt2_xl(self):
        self.match("gpt2-xl", "transformers:GPT2LMHeadModel", "n_layer=48", "n_embd=1600", "n_head=25")

    def test_llama2_7b(self):
        self.match("llama2-7b", "transformers:LlamaForCausalLM", "max_position_embeddings=4096")


def cpu_ready_order(module, x):
    """The order post-accumulate-grad hooks fire in a real backward pass."""
    order, handles = [], []
    for n, p in module.named_parameters():
        handles.append(p.register_post_accumulate_grad_hook(lambda _p, n=n: order.append(n)))
    out = module(x)
    sum(o.float().sum() for o in export._output_tensors(out)).backward()
    for h in handles:
        h.remove()
    return order


class ReadyOrder(Scratch):
    def test_tied_and_shared_weights_follow_a_real_cpu_backward(self):
        _, doc = self.export(f"{EXAMPLES}:make_tied", "--input", "16")
        torch.manual_seed(0)
        model = example_models.make_tied()
        real = cpu_ready_order(model, torch.randn(2, 16))
        self.assertEqual(names(doc), real)
        self.assertEqual(sorted(real), sorted(n for n, _ in model.named_parameters()))
        self.assertNotIn("dec.weight", real)  # tied: once, as enc.weight
        self.assertNotEqual(real, [n for n, _ in reversed(list(model.named_parameters()))])
        self.assertEqual(doc["parameters"], sum(p.numel() for p in model.parameters()))
        # enc.weight runs twice (enc and the tied dec): 2 x 16 x 16 FLOPs each, per sample
        fwd = {t["name"]: t["forward_flops"] for t in doc["tensors"]}
        self.assertEqual(fwd["enc.weight"], 2 * 2 * 16 * 16)
        self.assertEqual(fwd["shared.weight"], 2 * 2 * 16 * 16)

    def test_small_bert_meta_order_equals_cpu_order(self):
        sets = ["num_hidden_layers=2", "hidden_size=64", "num_attention_heads=2", "intermediate_size=128",
                "vocab_size=100", "max_position_embeddings=32"]
        _, doc = self.export("transformers:BertModel", "--set", *sets)
        r = specmod.resolve("transformers:BertModel", sets, device="cpu")
        self.assertEqual(names(doc), cpu_ready_order(r.module, *r.args))


class ClosedForm(Scratch):
    """mlp-tiny (784-256-128-10): FlopCounterMode's FLOPs and the saved tensors
    against their closed forms, per sample from a batch of 4."""

    def test_mlp(self):
        _, doc = self.export(f"{EXAMPLES}:make_mlp", "--input", "784", "--batch", "4", "--name", "mlp-tiny")
        layers = [(784, 256), (256, 128), (128, 10)]
        self.assertEqual(doc["flops"]["forward_per_sample"], sum(2 * i * o for i, o in layers))
        # backward: input and weight gradients (2 matmuls) per layer, except the
        # first layer's input gradient (the input needs none)
        self.assertEqual(doc["flops"]["backward_per_sample"], sum(4 * i * o for i, o in layers) - 2 * 784 * 256)
        # cumulative backward FLOPs when each weight is ready: the layers after it, done
        cum, seen = {}, 0
        for t in doc["tensors"]:
            seen += t["backward_flops"]
            cum[t["name"]] = seen
        self.assertEqual(cum["4.weight"], 4 * 128 * 10)
        self.assertEqual(cum["2.weight"], 4 * 128 * 10 + 4 * 256 * 128)
        # saved for backward: the input and the two ReLU outputs (each linear's
        # input), fp32; the weights are parameters and not counted
        self.assertEqual(doc["activation_bytes_per_sample"], 4 * (784 + 256 + 128))
        self.assertEqual(doc["parameters"], 235146)
        self.assertEqual(gradwire("check", os.path.join(self.dir, "model.yaml")).returncode, 0)


    def test_mlp_in_bf16(self):
        """--dtype bf16: the same model run in bf16 saves the same tensors at
        half the size; the gradients keep the parameters' fp32."""
        _, doc = self.export(f"{EXAMPLES}:make_mlp", "--input", "784", "--batch", "4", "--dtype", "bf16")
        self.assertEqual(doc["activation_dtype"], "bf16")
        self.assertEqual(doc["activation_bytes_per_sample"], 2 * (784 + 256 + 128))
        self.assertEqual({t["dtype"] for t in doc["tensors"]}, {"fp32"})
        self.assertEqual(doc["flops"]["forward_per_sample"], 2 * (784 * 256 + 256 * 128 + 128 * 10))


def analytic_flops(resolved) -> tuple[int, int]:
    """Forward and backward FLOPs of one pass counted from the layers' shapes,
    independently of the exporter: a convolution 2*N*Cout*Hout*Wout*(Cin/groups)*Kh*Kw
    (transposed: 2*N*Hin*Win*Cin*(Cout/groups)*Kh*Kw), a linear layer
    2*rows*in*out, timm's MaxViT attention (AttentionCl) Q K^T and P V
    4*windows*heads*tokens^2*dim_head and its relative-position bias table's
    (RelPosBiasTf) two einsums with constant lookups, once per call; backward: the weight gradient costs the
    forward's FLOPs, the input gradient as much again when the input needs one."""
    total = {"forward": 0, "backward": 0}

    def add(forward, grads):
        total["forward"] += forward
        total["backward"] += forward * grads

    def hook(m, inputs, out):
        x = inputs[0]
        kind = type(m).__name__
        if isinstance(m, nn.modules.conv._ConvNd):
            spatial = x.shape[2:] if m.transposed else out.shape[2:]
            cin, cout = (m.in_channels, m.out_channels // m.groups) if m.transposed else \
                (m.in_channels // m.groups, m.out_channels)
            f = 2 * x.shape[0] * math.prod(spatial) * cin * cout * math.prod(m.kernel_size)
        elif isinstance(m, nn.Linear):
            f = 2 * (x.numel() // m.in_features) * m.in_features * m.out_features
        elif kind == "AttentionCl":
            tokens = math.prod(x.shape[1:-1])
            add(4 * x.shape[0] * m.num_heads * tokens * tokens * m.dim_head, 2)  # q, k and v need gradients
            rel = getattr(m, "rel_pos", None)
            if type(rel).__name__ == "RelPosBiasTf":  # its get_bias(), called by the attention, not a forward
                (wh, ww), heads = rel.window_size, rel.num_heads
                vh, vw = 2 * wh - 1, 2 * ww - 1
                add(2 * heads * wh * wh * vh * vw + 2 * heads * wh * wh * ww * ww * vw, 1)  # the table's gradient
            return
        else:
            return
        add(f, int(m.weight.requires_grad) + int(x.requires_grad))

    handles = [m.register_forward_hook(hook) for m in resolved.module.modules()]
    try:
        resolved.module(*resolved.args)
    finally:
        for h in handles:
            h.remove()
    return total["forward"], total["backward"]


class ConvFlops(unittest.TestCase):
    """Grouped and depthwise convolutions: backward about 2 x forward (issue 29, item 10)."""

    def test_closed_form_of_one_depthwise_and_one_grouped_conv(self):
        # depthwise: N=2, C=8, 10x10, 3x3, padding 1: forward 2*2*8*100*1*9
        x, w, y = [2, 8, 10, 10], [8, 1, 3, 3], [2, 8, 10, 10]
        conv = (None, [1, 1], [1, 1], [1, 1], False, [0, 0], 8)
        self.assertEqual(export.conv_backward_flops(y, x, w, *conv, [True, True, False]), 2 * 28800)
        self.assertEqual(export.conv_backward_flops(y, x, w, *conv, [False, True, True]), 28800)
        # grouped: 8 -> 16 channels, groups 4 (Cin/groups = 2): forward 2*2*16*100*2*9
        w = [16, 2, 3, 3]
        y = [2, 16, 10, 10]
        conv = (None, [1, 1], [1, 1], [1, 1], False, [0, 0], 4)
        self.assertEqual(export.conv_backward_flops(y, x, w, *conv, [True, True, False]), 2 * 115200)
        # transposed, groups 2: 8 -> 4 channels, 10x10 -> 20x20, 2x2 kernel: 2*2*100*8*(4/2)*4
        w, y = [8, 2, 2, 2], [2, 4, 20, 20]
        conv = (None, [2, 2], [0, 0], [1, 1], True, [0, 0], 2)
        self.assertEqual(export.conv_backward_flops(y, x, w, *conv, [True, True, False]), 2 * 25600)

    def test_observed_pass_of_grouped_convs(self):
        r = specmod.resolve(f"{EXAMPLES}:make_grouped_convs", input_shape=(4, 6, 6), batch=2)
        obs = export.observe(r)
        n, hw = 2, 36
        first = 2 * n * hw * 4 * 8                # 1x1, 4 -> 8
        depthwise = 2 * n * hw * 8 * 1 * 9        # groups 8
        grouped = 2 * n * hw * 16 * 2 * 9         # 8 -> 16, groups 4
        transposed = 2 * n * hw * 16 * 4 * 4      # 16 -> 8, groups 2, 2x2 stride 2 (input positions)
        self.assertEqual(sum(obs.forward.values()), first + depthwise + grouped + transposed)
        # the first conv's input needs no gradient: its weight gradient only
        self.assertEqual(sum(obs.backward.values()), first + 2 * (depthwise + grouped + transposed))
        self.assertEqual(analytic_flops(specmod.resolve(f"{EXAMPLES}:make_grouped_convs", input_shape=(4, 6, 6),
                                                        batch=2)), (sum(obs.forward.values()),
                                                                     sum(obs.backward.values())))

    def check_model(self, spec, shape, batch=2):
        """The export through gradwire against analytic_flops of the same model."""
        with tempfile.TemporaryDirectory(prefix="gw-torch-") as d:
            out = os.path.join(d, "m.yaml")
            r = gradwire("model", "export", spec, "--input", "x".join(map(str, shape)), "--batch", str(batch),
                         "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                flops = yaml.safe_load(f)["flops"]
        forward, backward = analytic_flops(specmod.resolve(spec, input_shape=shape, batch=batch))
        self.assertEqual(flops["forward_per_sample"], forward / batch)
        self.assertEqual(flops["backward_per_sample"], backward / batch)
        ratio = backward / forward
        self.assertTrue(1.9 < ratio <= 2.0, ratio)  # 2, less the stem's input gradient
        return ratio

    def test_convnext(self):
        self.check_model("timm:convnext_tiny", (3, 64, 64))

    def test_efficientnet(self):
        self.check_model("timm:efficientnet_b0", (3, 64, 64))

    def test_mobilenet(self):
        self.check_model("torchvision:mobilenet_v3_small", (3, 64, 64))

    def test_resnext(self):
        self.check_model("torchvision:resnext50_32x4d", (3, 64, 64))

    def test_maxvit(self):
        self.check_model("timm:maxvit_tiny_tf_224", (3, 224, 224), batch=1)


def documented_hub_counts() -> dict[str, int]:
    """id -> parameters from docs/models.md's table of bundled hub configurations."""
    rows, inside = {}, False
    with open(os.path.join(SRC, "docs", "models.md")) as f:
        for line in f:
            if line.startswith("#"):
                inside = line.strip() == "### Models from the Hugging Face Hub"
            m = re.match(r"\| `transformers:([^`]+)` \| `(\w+)` \| ([\d,]+) \|", line) if inside else None
            if m:
                rows[m.group(1)] = int(m.group(3).replace(",", ""))
    return rows


class Hub(Scratch):
    """transformers:ORG/NAME from the bundled configs (gradwire_torch/hub.py), offline."""

    def test_every_bundled_config_resolves_offline_with_its_documented_count(self):
        documented = documented_hub_counts()
        self.assertEqual(set(documented), set(hub.CONFIGS))
        # Published totals (model cards, papers), independent of the docs table.
        published = {"meta-llama/Llama-2-7b-hf": 6_738_415_616, "meta-llama/Meta-Llama-3-8B": 8_030_261_248,
                     "mistralai/Mistral-7B-v0.1": 7_241_732_096, "openai-community/gpt2": 124_439_808,
                     "openai-community/gpt2-xl": 1_557_611_200, "google-t5/t5-small": 60_506_624}
        for repo, count in published.items():
            self.assertEqual(documented[repo], count, repo)
        for repo, count in documented.items():
            with self.subTest(repo=repo):
                module, source, _ = specmod.build_module(f"transformers:{repo}", {}, "meta")
                self.assertEqual(sum(p.numel() for p in module.parameters()), count)
                self.assertEqual(type(module).__name__, hub.CONFIGS[repo]["architectures"][0])
                self.assertIn(hub.url(repo), source)

    def test_llama31_8b_through_gradwire(self):
        _, doc = self.export("transformers:meta-llama/Llama-3.1-8B", "--seq-len", "32", "--dtype", "bf16")
        self.assertEqual(doc["name"], "Llama-3.1-8B")
        self.assertEqual(doc["parameters"], 8_030_261_248)
        self.assertIn("https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json", doc["source"])
        # 2 FLOPs per weight and token outside the embedding (6ND's forward third), plus attention's 4*s*h per layer
        dense = 2 * (8_030_261_248 - 128256 * 4096) + 4 * 32 * 4096 * 32
        self.assertAlmostEqual(doc["flops"]["forward_per_token"] / dense, 1.0, delta=0.01)

    def test_encoder_decoder_and_image_models(self):
        t5 = specmod.resolve("transformers:t5-small", seq_len=16)
        self.assertEqual(t5.name, "t5-small")
        obs = export.observe(t5)
        self.assertEqual(sum(p.numel() for p in t5.module.parameters()), 60_506_624)
        self.assertAlmostEqual(sum(obs.backward.values()) / sum(obs.forward.values()), 2.0, delta=0.05)
        vit = specmod.resolve("transformers:google/vit-base-patch16-224")
        self.assertEqual(vit.input, "3x224x224 image")
        self.assertEqual(tuple(vit.args[0].shape), (1, 3, 224, 224))
        with self.assertRaisesRegex(specmod.SpecError, "--seq-len is for"):
            specmod.resolve("transformers:google/vit-base-patch16-224", seq_len=16)


class Reproducible(unittest.TestCase):
    """The bundled zoo is what models/export_zoo.py writes, byte for byte."""

    def test_zoo(self):
        r = subprocess.run([sys.executable, os.path.join(SRC, "models", "export_zoo.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


SCENARIO = """name: torch-export-e2e
cluster:
  nodes: 2
  gpus_per_node: 8
  gpu: a100-80gb
  intra_node: {{bandwidth: 300GB/s, latency: 1us}}
  nics: {{count: 4, bandwidth: 100Gbps, latency: 5us}}
  fabric: {{topology: switch, latency: 1us}}
workload:
  model: {model}
  micro_batch: {batch}
  accumulation: 1
  precision: fp32
  bucket_size: 25MiB
  overlap: true
  optimizer: {{kind: adam}}
  compression: {{kind: none}}
"""


class EndToEnd(Scratch):
    """Export, check and simulate models that are not bundled; parameter
    counts against the library's own count."""

    def run_e2e(self, spec, library_count, *args, batch=8):
        path, doc = self.export(spec, *args)
        self.assertEqual(doc["parameters"], library_count)
        r = gradwire("check", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        scenario = os.path.join(self.dir, "scenario.yaml")
        with open(scenario, "w") as f:
            f.write(SCENARIO.format(model=path, batch=batch))
        r = gradwire("simulate", scenario)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(doc["name"], r.stdout)
        return doc

    def test_bert_for_pretraining_seq128(self):
        r = specmod.resolve("transformers:BertForPreTraining", seq_len=128)
        count = r.module.num_parameters()  # transformers' own count (tied decoder once)
        doc = self.run_e2e("transformers:BertForPreTraining", count, "--seq-len", "128")
        self.assertEqual(doc["sequence_length"], 128)
        self.assertEqual(count, 110106428)  # bert-base + MLM transform and bias + NSP head

    def test_maxvit_large_384(self):
        import timm
        m = specmod.resolve("timm:maxvit_large_tf_384").module
        count = sum(p.numel() for p in m.parameters())
        doc = self.run_e2e("timm:maxvit_large_tf_384", count, batch=2)
        self.assertEqual(doc["input"], "3x384x384 image")
        self.assertTrue(timm.is_model("maxvit_large_tf_384"))
        self.assertGreater(count, 200_000_000)


class Errors(Scratch):
    """One line on stderr, exit 2, nothing written."""

    def fails(self, *args, out="out.yaml", env=None, needle=""):
        path = os.path.join(self.dir, out)
        before = set(os.listdir(self.dir))
        r = subprocess.run([BIN, "model", "export", *args, "--out", path], capture_output=True, text=True,
                           cwd=SRC, env=env)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(needle, r.stderr)
        self.assertEqual(set(os.listdir(self.dir)), before)  # no output, no temporary file
        return r.stderr

    def test_unknown_model(self):
        self.fails("torchvision:resnet5000", needle="no such model in torchvision")
        self.fails("timm:no_such_net", needle="no such model in timm")
        self.fails("transformers:NoSuchModel", needle="no such model class in transformers")
        self.fails("keras:resnet50", needle="unknown kind")
        # "did you mean": the nearest zoo names and bundled hub ids
        self.fails("torchvision:resnet5O", needle="(did you mean resnet50")
        self.fails("transformers:meta-llama/Llama-3.1-8X", needle="(did you mean meta-llama/Llama-3.1-8B")
        self.fails("transformers:BertForPretraining", needle="(did you mean BertForPreTraining")

    def test_bad_counts_from_python_directly(self):
        # The C++ shell refuses them first (bridge.absurd_counts); python -m gradwire_torch checks too.
        env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "bridge"))
        for args in (["--batch", "99999999999999999999"], ["--seq-len", "0"], ["--bat", "2"]):
            r = subprocess.run([sys.executable, "-m", "gradwire_torch", "export", "transformers:gpt2", *args,
                                "--out", os.path.join(self.dir, "x.yaml")], capture_output=True, text=True, env=env)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertEqual(os.listdir(self.dir), [])

    def test_bad_set(self):
        self.fails("transformers:BertModel", "--set", "no_such_field=3", needle="BertConfig has no such field")
        self.fails("transformers:BertModel", "--set", "hidden_size", needle="expected key=value")
        self.fails("torchvision:resnet50", "--set", "no_such_kwarg=1", needle="torchvision:resnet50")
        # A value of the wrong type (transformers' strict config fields) and
        # one the architecture refuses (hidden size not a multiple of the heads).
        self.fails("transformers:BertModel", "--set", "hidden_size=abc", needle="hidden_size")
        self.fails("transformers:BertModel", "--set", "hidden_size=100", "num_attention_heads=12",
                   needle="transformers:BertModel")

    def test_file_without_the_function(self):
        self.fails(f"{EXAMPLES}:no_such_function", "--input", "16", needle="no function 'no_such_function'")
        self.fails(f"{EXAMPLES}:not_a_model", "--input", "16", needle="not a torch.nn.Module")
        self.fails(os.path.join(self.dir, "missing.py") + ":f", "--input", "16", needle="no such file")

    def test_model_failing_on_the_input_shape(self):
        self.fails(f"{EXAMPLES}:make_mlp", "--input", "100", needle="fails on input 100 features")
        self.fails("torchvision:resnet50", "--input", "3x224", needle="fails on input")
        self.fails("transformers:GPT2LMHeadModel", "--seq-len", "2048", needle="more than the model's 1024")

    def test_destination(self):
        os.mkdir(os.path.join(self.dir, "folder"))
        self.fails(f"{EXAMPLES}:make_tied", "--input", "16", out="folder", needle="not a regular file")
        os.symlink("elsewhere.yaml", os.path.join(self.dir, "link.yaml"))
        self.fails(f"{EXAMPLES}:make_tied", "--input", "16", out="link.yaml", needle="not a regular file")
        with open(os.path.join(self.dir, "mine.yaml"), "w") as f:
            f.write("a user's file\n")
        self.fails(f"{EXAMPLES}:make_tied", "--input", "16", out="mine.yaml", needle="not written by gradwire")
        # the input itself (a copy of the examples, so that nothing in the tree is at risk)
        copy = os.path.join(self.dir, "models.py")
        with open(EXAMPLES) as src, open(copy, "w") as dst:
            dst.write(src.read())
        r = gradwire("model", "export", f"{copy}:make_tied", "--input", "16", "--out", copy)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("is an input", r.stderr)
        with open(EXAMPLES) as src, open(copy) as now:
            self.assertEqual(src.read(), now.read())

    def test_a_second_export_replaces_its_own_file(self):
        path, first = self.export(f"{EXAMPLES}:make_tied", "--input", "16")
        _, second = self.export(f"{EXAMPLES}:make_tied", "--input", "8", "--set", "width=8")
        self.assertLess(second["parameters"], first["parameters"])
        self.assertEqual(os.listdir(self.dir), ["model.yaml"])

    def test_no_pytorch_environment(self):
        env = dict(os.environ, GRADWIRE_PYTHON=os.path.join(self.dir, "no-python"))
        self.fails("torchvision:resnet50", env=env, needle="PyTorch is not set up")

    def test_a_failure_of_the_tool_itself_is_one_line_exit_one(self):
        # A model whose forward raises something the exporter does not expect
        # from a user's model: still one line, exit 1, nothing written.
        path = os.path.join(self.dir, "broken.py")
        with open(path, "w") as f:
            f.write("import torch\nclass M(torch.nn.Linear):\n"
                    "    def named_parameters(self, *a, **k):\n        raise RuntimeError('boom')\n"
                    "def make():\n    return M(2, 2)\n")
        out = os.path.join(self.dir, "out.yaml")
        r = gradwire("model", "export", f"{path}:make", "--input", "2", "--out", out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stderr.strip().splitlines(), [r.stderr.strip()])
        self.assertIn("internal error: RuntimeError: boom", r.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
