"""torch.* tests: `gradwire model measure` (bridge/gradwire_torch/measure.py)
on the CPU, end to end through the gradwire binary: the document it writes is
what `simulate` then uses (forward, per-tensor ready times, buckets,
optimizer). Timings on the CPU are meaningless; the plumbing is real. The CUDA
path is imported and its clock chosen here; it runs in scripts/gpu_check.sh.
Run by ctest (tests/torch/CMakeLists.txt) with GW_BIN, GW_SOURCE_DIR and
PYTHONPATH set."""
import json
import os
import subprocess
import tempfile
import unittest

import torch
import yaml

from gradwire_torch import measure as measuremod

BIN = os.environ["GW_BIN"]
SRC = os.environ["GW_SOURCE_DIR"]
EXAMPLES = os.path.join(SRC, "tests", "torch", "example_models.py")
QUICK = ["--repeats", "3", "--warmup", "1"]


def gradwire(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=SRC)


def seconds(text: str) -> float:
    value, unit = text.split()
    assert unit == "us", text
    return float(value) * 1e-6


class Measure(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="gw-measure-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def run_ok(self, *args):
        r = gradwire(*args)
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        return r

    def scenario(self, micro_batch, optimizer="adam", ddp_overheads=True):
        text = f"""name: measured-mlp
cluster:
  nodes: 1
  gpus_per_node: 4
  gpu: h100
  intra_node: {{bandwidth: 450GB/s, latency: 1us}}
  nics: {{count: 1, bandwidth: 100Gbps, latency: 5us}}
  fabric: {{topology: switch, latency: 1us}}
workload:
  model: model.yaml
  micro_batch: {micro_batch}
  first_bucket_size: 64KiB
  bucket_size: 256KiB
  optimizer: {{kind: {optimizer}}}
  compute: measured.yaml
  ddp_overheads: {str(ddp_overheads).lower()}
"""
        with open(self.path("scenario.yaml"), "w") as f:
            f.write(text)
        return self.path("scenario.yaml")

    def test_cpu_measurement_drives_simulate(self):
        spec = EXAMPLES + ":make_mlp"
        self.run_ok("model", "export", spec, "--input", "784", "--batch", "8", "--name", "mlp",
                    "--out", self.path("model.yaml"))
        self.run_ok("model", "measure", spec, "--input", "784", "--batch", "8", "--device", "cpu",
                    "--name", "mlp", *QUICK, "--out", self.path("measured.yaml"))
        with open(self.path("measured.yaml")) as f:
            doc = yaml.safe_load(f)
        self.assertEqual(doc["schema"], "gradwire-compute/1")
        self.assertEqual(doc["timer"], "perf-counter")
        self.assertEqual(doc["parameters"], sum(p.numel() for p in torch.nn.Sequential(
            torch.nn.Linear(784, 256), torch.nn.Linear(256, 128), torch.nn.Linear(128, 10)).parameters()))
        names = [t["name"] for t in doc["tensors"]]
        ready = [seconds(t["ready"]) for t in doc["tensors"]]
        self.assertEqual(sorted(names), sorted(n for n, _ in measuremod_named_mlp()))
        self.assertEqual(ready, sorted(ready))
        self.assertLessEqual(ready[-1], seconds(doc["backward"]["median"]))
        self.assertEqual(sorted(doc["comm_hooks"]), ["bf16_compress", "fp16_compress", "powersgd_rank4"])

        self.run_ok("check", self.scenario(8))
        out = json.loads(self.run_ok("simulate", self.scenario(8), "--format", "json").stdout)
        self.assertIn("compute_measured", out)
        self.assertTrue(out["compute_measured"].startswith("measured on "))
        self.assertAlmostEqual(out["critical_path"]["forward_s"], seconds(doc["forward"]["median"]), delta=1e-9)
        self.assertAlmostEqual(out["critical_path"]["backward_s"], seconds(doc["backward"]["median"]), delta=1e-8)
        self.assertAlmostEqual(out["critical_path"]["optimizer_s"], seconds(doc["optimizer"]["median"]), delta=1e-9)
        self.assertEqual(out["tensor_names"], names)
        # DDP's copy of each gradient into its bucket (docs/model.md, "DDP
        # overheads") comes after the measured ready time: never before it.
        start = out["timeline"]["backward_start_s"]
        ends = [e - start for e in out["tensor_end_s"]]
        for i, r in enumerate(ready[:-1]):
            self.assertGreaterEqual(ends[i], r - 1e-9)
        # Without DDP's overheads each gradient is ready exactly at its
        # measured time (the bucket at its last tensor's).
        bare = json.loads(self.run_ok("simulate", self.scenario(8, ddp_overheads=False), "--format",
                                      "json").stdout)
        start = bare["timeline"]["backward_start_s"]
        ends = [e - start for e in bare["tensor_end_s"]]
        for i, r in enumerate(ready[:-1]):
            self.assertAlmostEqual(ends[i], r, delta=1e-8)
        table = self.run_ok("simulate", self.scenario(8)).stdout
        self.assertIn("compute: " + out["compute_measured"], table)
        # Another micro-batch: exit 2 at workload.compute, nothing printed.
        r = gradwire("simulate", self.scenario(16))
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertIn("scenario.yaml:15:", r.stderr)
        self.assertIn("micro-batch 8, the scenario's is 16", r.stderr)

    def test_tied_weights_are_measured_once_in_ready_order(self):
        self.run_ok("model", "measure", EXAMPLES + ":make_tied", "--input", "16", "--batch", "4", "--device",
                    "cpu", "--optimizer", "sgd", *QUICK, "--out", self.path("tied.yaml"))
        with open(self.path("tied.yaml")) as f:
            doc = yaml.safe_load(f)
        names = [t["name"] for t in doc["tensors"]]
        self.assertEqual(len(names), len(set(names)))
        self.assertIn("enc.weight", names)
        self.assertNotIn("dec.weight", names)
        # The tied weight's gradient is complete only after both of its uses.
        self.assertGreater(names.index("enc.weight"), names.index("scale"))

    def test_errors_are_one_line_exit_two_nothing_written(self):
        out = self.path("m.yaml")
        cases = [
            ["torchvision:no_such_net", "--device", "cpu", "--batch", "2"],
            [EXAMPLES + ":make_mlp", "--input", "785", "--device", "cpu", "--batch", "2"],
            [EXAMPLES + ":make_mlp", "--input", "784", "--device", "cpu", "--batch", "2", "--tf32"],
        ]
        if not torch.cuda.is_available():
            cases.append([EXAMPLES + ":make_mlp", "--input", "784", "--device", "cuda", "--batch", "2"])
        for args in cases:
            with self.subTest(args=args):
                r = gradwire("model", "measure", *args, *QUICK, "--out", out)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertFalse(os.path.exists(out))

    def test_cuda_path_is_importable(self):
        self.assertIsInstance(measuremod.clock_for("cuda"), measuremod.CudaClock)
        self.assertIsInstance(measuremod.clock_for("cpu"), measuremod.CpuClock)
        self.assertEqual(measuremod.CudaClock.name, "cuda-events")

    def test_statistics_and_powersgd_local_work(self):
        t = measuremod.timing([4.0, 1.0, 3.0, 2.0, 5.0])
        self.assertEqual(t["median"], 3.0)
        self.assertEqual(t["spread"], 2.0)  # 4 - 2
        # One step of PowerSGD's local work replaces M (32 x 64) by P Q^T with
        # Q = M^T P / N: N P Q^T = P P^T M, M projected onto the rank-4 column
        # space of P; the 64-element bias is sent uncompressed (divided by N);
        # the error is what the step removed.
        torch.manual_seed(0)
        g = [torch.randn(32, 64), torch.randn(64)]
        original = torch.cat([x.reshape(-1) for x in g])
        run = measuremod.powersgd_fn(g, 4)
        run()
        n = measuremod.HOOK_WORLD_SIZE
        approx = n * run.buffer[:2048].view(32, 64)
        self.assertEqual(int(torch.linalg.matrix_rank(approx)), 4)
        u = torch.linalg.svd(approx).U[:, :4]
        torch.testing.assert_close(u @ u.T @ g[0], approx, atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(run.buffer[2048:], g[1] / n)
        torch.testing.assert_close(run.error, original - run.buffer)

def measuremod_named_mlp():
    m = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 10))
    return list(m.named_parameters())


if __name__ == "__main__":
    unittest.main()
