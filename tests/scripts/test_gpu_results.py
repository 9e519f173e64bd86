"""scripts/gpu_results.py on a synthetic gpu_check.sh output folder: the
versions, commands, test counts and the calibration's notes reach the README;
files are copied, a link is named and not followed, the measured-compute
archive is unpacked; a destination that exists, an archive member outside it
and a profile gradwire refuses all leave nothing behind (exit 2, 2, 1).
Run by ctest (scripts.gpu_results) with GW_BIN set to the gradwire binary."""
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

SOURCE = os.environ.get("GW_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SOURCE, "scripts", "gpu_results.py")
GW_BIN = os.environ.get("GW_BIN", os.path.join(SOURCE, "build", "bin", "gradwire"))

ENV = """date: 2027-01-05T10:00:00Z
host: vm
commit: 0123abc
nccl libs: libnccl.so libnccl.so.2 libnccl.so.2.28.3
== nvidia-smi query
name, driver_version, memory.total [MiB], clocks.max.sm [MHz], clocks.max.memory [MHz]
NVIDIA H200, 580.159.04, 143771 MiB, 1980 MHz, 3201 MHz
== nvcc
Cuda compilation tools, release 13.0, V13.0.88
== python/torch
python 3.12.3
torch 2.11.0+cu130 cuda 13.0
nccl (2, 28, 9)
"""
LOG = """[10:00:01 +1s] step gpu-tests (limit 150s): /x/build-gpu/bin/test_kernels_gpu --gtest_output=json:/o/gpu_tests.json
[10:00:20 +20s] step gpu-tests: exit 1
[10:00:20 +20s] step calibrate (limit 140s): /x/build-gpu/bin/gradwire-calibrate --device cuda --name h200-measured --out /o/profile-h200.yaml
[10:01:30 +90s] step calibrate: exit 0
"""
TESTS = {"tests": 3, "failures": 1, "testsuites": [{"name": "Int8Gpu", "testsuite": [
    {"name": "A", "result": "COMPLETED"}, {"name": "B", "result": "COMPLETED", "failures": [{"failure": "x"}]},
    {"name": "C", "result": "SKIPPED"}]}]}


def profile_text(with_notes=True):
    with open(os.path.join(SOURCE, "tests", "calibrate", "good_base.yaml"), encoding="utf-8") as f:
        text = f.read()
    if with_notes:
        text += ('notes:\n  - "codec fp16: held-out (leave-one-out) prediction error, median / max: encode 3% / 5%"\n'
                 '  - "interference beside int8: GEMM +4%, int8 +20%"\n')
    return text


def tar_bytes(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class GpuResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gw-gpu-results-")
        self.src = os.path.join(self.tmp, "files")
        os.makedirs(self.src)
        for name, text in (("env.txt", ENV), ("log.txt", LOG), ("gpu_tests.json", json.dumps(TESTS)),
                           ("profile-h200.yaml", profile_text()), ("bench.txt", "bench table\n")):
            with open(os.path.join(self.src, name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(self.src, "measured-compute.tar"), "wb") as f:
            f.write(tar_bytes([("./resnet50-b32-fp32.yaml", b"schema: x\n")]))
        os.symlink("/etc/passwd", os.path.join(self.src, "link"))
        self.dest = os.path.join(self.tmp, "h200-2027-01-05")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def run_script(self, *extra):
        return subprocess.run([sys.executable, SCRIPT, self.src, "--dest", self.dest, "--gradwire", GW_BIN] + list(extra),
                              capture_output=True, text=True)

    def leftovers(self):
        return sorted(n for n in os.listdir(self.tmp) if n != "files")

    def test_files_everything_with_its_provenance(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dest, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        for part in ("# NVIDIA H200 measurements, 2027-01-05", "| driver | 580.159.04 |",
                     "| CUDA | 13.0 (nvcc V13.0.88) |", "| NCCL (system library) | 2.28.3 |",
                     "| NCCL (PyTorch's) | 2.28.9 |", "| PyTorch | 2.11.0+cu130 (CUDA 13.0) |",
                     "| commit | 0123abc |", "calibrate: /x/build-gpu/bin/gradwire-calibrate --device cuda",
                     "gpu-tests 1, calibrate 0", "3 tests: 1 passed, 1 failed, 1 skipped.",
                     "- failed: `Int8Gpu.B`", "encode 3% / 5%", "interference beside int8: GEMM +4%, int8 +20%",
                     "- `resnet50-b32-fp32.yaml`", "not copied (not a regular file): `link`"):
            self.assertIn(part, readme)
        self.assertEqual(sorted(os.listdir(self.dest)),
                         ["README.md", "bench.txt", "env.txt", "gpu_tests.json", "log.txt", "measured-compute",
                          "measured-compute.tar", "profile-h200.yaml"])
        with open(os.path.join(self.dest, "measured-compute", "resnet50-b32-fp32.yaml"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "schema: x\n")
        # Filing again: the destination exists, nothing is written over.
        r = self.run_script()
        self.assertEqual(r.returncode, 2)
        self.assertIn("exists: nothing is written over", r.stderr)
        with open(os.path.join(self.dest, "README.md"), encoding="utf-8") as f:
            self.assertEqual(f.read(), readme)
        self.assertEqual(self.leftovers(), ["h200-2027-01-05"])

    def test_an_archive_member_outside_the_folder_leaves_nothing(self):
        with open(os.path.join(self.src, "measured-compute.tar"), "wb") as f:
            f.write(tar_bytes([("../evil.yaml", b"x")]))
        r = self.run_script()
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not a plain file inside the archive", r.stderr)
        self.assertEqual(self.leftovers(), [])

    @unittest.skipUnless(os.access(GW_BIN, os.X_OK), "no gradwire binary")
    def test_a_profile_gradwire_refuses_stops_the_filing(self):
        with open(os.path.join(self.src, "profile-h200.yaml"), "w", encoding="utf-8") as f:
            f.write(profile_text(False).replace("schema: 1", "schema: 1\nbogus: 3"))
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("the profile does not load, nothing filed", r.stderr)
        self.assertIn("bogus", r.stderr)
        self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main()
