"""bridge.* tests: `gradwire model` where PyTorch is missing or the input is bad,
with no PyTorch needed (run by the system python3 whether .venv-torch exists or
not; tests/torch/CMakeLists.txt). Every failure is one line on stderr, exit 2,
nothing written, with a set-up hint that fits where gradwire is."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ["GW_BIN"]
SRC = os.environ["GW_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SRC, "bridge"))
from gradwire_torch import hub  # noqa: E402  (pure Python: no torch)


class Bridge(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gw-bridge-")
        self.dir = self._tmp.name
        self.out = os.path.join(self.dir, "out.yaml")

    def tearDown(self):
        self._tmp.cleanup()

    def script(self, name, body):
        """An executable shell script to stand in for the Python (GRADWIRE_PYTHON)."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return path

    def fails(self, *args, python, data=None, needles=()):
        env = dict(os.environ, GRADWIRE_PYTHON=python)
        env.pop("GRADWIRE_DATA_DIR", None)
        if data is not None:
            env["GRADWIRE_DATA"] = data
        before = set(os.listdir(self.dir))
        r = subprocess.run([BIN, "model", *args], capture_output=True, text=True, cwd=self.dir, env=env)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        for needle in needles:
            self.assertIn(needle, r.stderr)
        self.assertEqual(set(os.listdir(self.dir)), before)  # nothing written
        return r.stderr

    def test_no_python_hint_fits_a_source_checkout_and_an_installed_prefix(self):
        missing = os.path.join(self.dir, "no-venv", "bin", "python")
        self.fails("export", "torchvision:resnet50", "--out", self.out, python=missing, data=SRC,
                   needles=("PyTorch is not set up", f"no Python at {missing}", f"{SRC}/setup.sh --with-torch"))
        prefix = os.path.join(self.dir, "share-gradwire")  # an installed data directory: no setup.sh
        os.makedirs(os.path.join(prefix, "bridge"))
        err = self.fails("export", "torchvision:resnet50", "--out", self.out, python=missing, data=prefix,
                         needles=("python3 -m venv", "pip install torch torchvision transformers timm",
                                  "GRADWIRE_PYTHON="))
        self.assertNotIn("setup.sh", err)
        with open(os.path.join(prefix, "bridge", "requirements-torch.txt"), "w") as f:
            f.write("torch==2.15.0\n")
        self.fails("export", "torchvision:resnet50", "--out", self.out, python=missing, data=prefix,
                   needles=(f"pip install -r {prefix}/bridge/requirements-torch.txt",))

    def test_an_installed_gradwire_names_its_pins_not_setup_sh(self):
        # The installed layout (cmake --install): PREFIX/bin/gradwire finds its
        # data in PREFIX/share/gradwire, which has the bridge and its pins but
        # no setup.sh and, here, no .venv-torch.
        prefix = os.path.join(self.dir, "prefix")
        share = os.path.join(prefix, "share", "gradwire")
        os.makedirs(os.path.join(prefix, "bin"))
        os.makedirs(os.path.join(share, "bridge"))
        shutil.copy2(BIN, os.path.join(prefix, "bin", "gradwire"))
        shutil.copy2(os.path.join(SRC, "bridge", "requirements-torch.txt"), os.path.join(share, "bridge"))
        unset = ("GRADWIRE_PYTHON", "GRADWIRE_DATA", "GRADWIRE_DATA_DIR")
        env = {k: v for k, v in os.environ.items() if k not in unset}
        r = subprocess.run([os.path.join(prefix, "bin", "gradwire"), "model", "export", "torchvision:resnet50",
                            "--out", self.out], capture_output=True, text=True, cwd=self.dir, env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(f"no Python at {os.path.realpath(share)}/.venv-torch/bin/python", r.stderr)
        self.assertIn(f"pip install -r {os.path.realpath(share)}/bridge/requirements-torch.txt", r.stderr)
        self.assertNotIn("setup.sh", r.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_a_python_without_torch(self):
        # -S: no site-packages, so no torch whatever this machine has installed;
        # PYTHONPATH (set by gradwire) still finds the bridge.
        python = self.script("python", f'exec {sys.executable} -S "$@"')
        self.fails("export", "torchvision:resnet50", "--out", self.out, python=python, data=SRC,
                   needles=("PyTorch is not set up", "cannot import torch", "setup.sh --with-torch"))
        self.fails("measure", "torchvision:resnet50", "--device", "cpu", "--batch", "2", "--out", self.out,
                   python=python, data=SRC, needles=("cannot import torch",))

    def test_absurd_counts_are_refused_before_python_runs(self):
        marker = os.path.join(self.dir, "python-ran")
        python = self.script("python", f"touch {marker}")
        cases = [
            (("export", "torchvision:resnet50", "--batch", "99999999999999999999"), "--batch 99999999999999999999"),
            (("export", "torchvision:resnet50", "--batch=0"), "--batch 0"),
            (("export", "torchvision:resnet50", "--batch", "-3"), "--batch '-3'"),
            (("export", "torchvision:resnet50", "--batch", "2x"), "--batch '2x'"),
            (("export", "transformers:gpt2", "--seq-len", "1e9"), "--seq-len '1e9'"),
            (("export", "transformers:gpt2", "--seq-len", "16777217"), "--seq-len 16777217"),
            (("measure", "torchvision:resnet50", "--device", "cpu", "--batch", "2", "--repeats", "0"),
             "--repeats 0"),
            (("measure", "torchvision:resnet50", "--device", "cpu", "--batch", "2", "--warmup",
              "18446744073709551616"), "--warmup 18446744073709551616"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                self.fails(*args, "--out", self.out, python=python, needles=(needle, "expected a whole number"))
                self.assertFalse(os.path.exists(marker))
        # The mechanism works: in-range counts reach the (stand-in) Python.
        r = subprocess.run([BIN, "model", "export", "torchvision:resnet50", "--batch", "1048576", "--out", self.out],
                           capture_output=True, text=True, env=dict(os.environ, GRADWIRE_PYTHON=python))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(marker))


class HubIds(unittest.TestCase):
    """The bundled hub ids and "did you mean" (gradwire_torch/hub.py), without torch."""

    def test_ids_aliases_and_urls(self):
        repo, fields = hub.lookup("meta-llama/Llama-3.1-8B")
        self.assertEqual(repo, "meta-llama/Llama-3.1-8B")
        self.assertEqual(fields["architectures"], ["LlamaForCausalLM"])
        self.assertEqual(hub.lookup("gpt2")[0], "openai-community/gpt2")
        self.assertEqual(hub.lookup("meta-llama/Meta-Llama-3.1-8B")[0], "meta-llama/Llama-3.1-8B")
        self.assertIsNone(hub.lookup("meta-llama/Llama-3.1-8X"))
        self.assertTrue(all(target in hub.CONFIGS for target in hub.ALIASES.values()))
        self.assertEqual(hub.url("google-t5/t5-small"),
                         "https://huggingface.co/google-t5/t5-small/blob/main/config.json")
        fields["hidden_size"] = 1  # a copy: the bundled entry stays as it is
        self.assertEqual(hub.CONFIGS["meta-llama/Llama-3.1-8B"]["hidden_size"], 4096)

    def test_a_typo_gets_the_nearest_ids(self):
        ids = hub.bundled_ids()
        self.assertIn("meta-llama/Llama-3.1-8B", hub.suggest("meta-llama/Llama-3.1-8X", ids))
        self.assertIn("mistralai/Mistral-7B-v0.1", hub.suggest("mistralai/Mistral-7B", ids))
        self.assertIn("Qwen/Qwen2.5-7B", hub.suggest("qwen/qwen2.5-7b", ids))  # case ignored
        self.assertIn("google-bert/bert-base-uncased", hub.suggest("someone/bert-base-uncased", ids))  # other org
        self.assertEqual(hub.suggest("xyzzy/plugh", ids), "")
        self.assertTrue(hub.suggest("gpt-2", ids).startswith(" (did you mean gpt2"))


if __name__ == "__main__":
    unittest.main()
