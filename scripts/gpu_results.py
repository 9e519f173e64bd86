#!/usr/bin/env python3
"""gpu_results.py FILES_AT [--dest DIR] [--gradwire BIN]

Files a lent GPU machine's scripts/gpu_check.sh outputs (the folder the device
tool copied them into) under docs/measurements/<gpu>-<date>/, with a README.md
that states what was measured, where and how: the date, GPU, driver, CUDA,
NCCL and PyTorch versions from env.txt, every command from log.txt, the GPU
tests' counts, and the calibration's held-out errors and interference figures
from its profile's notes. It writes facts found in the files only; the
conclusions (docs/kernels.md and the issue) are the session's to write.

- The destination must not exist: nothing is ever written over.
- Only regular files are copied (a link or anything else is named and left);
  measured-compute.tar is unpacked into measured-compute/, refusing any member
  that is not a plain file with a relative path inside it.
- The calibration's profile (profile-h200.yaml), when there is one, is first
  checked with `gradwire check --kind profile`; one gradwire would refuse
  stops the filing (exit 1). Installing it as calibrate/profiles/
  h200-measured.yaml is left to the session (a `cp` and a commit): this
  script writes nothing outside the new folder.

Exit 0 done, 1 a check failed, 2 bad arguments or input. Standard library only.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Refused(Exception):
    pass


def env_facts(text):
    """Date, GPU, driver, CUDA, NCCL, PyTorch and commit from env.txt."""
    facts = {}
    m = re.search(r"^date: (\S+)", text, re.M)
    if m:
        facts["date"] = m.group(1)
    m = re.search(r"^commit: (\S+)", text, re.M)
    if m:
        facts["commit"] = m.group(1)
    # nvidia-smi --query-gpu=name,driver_version,memory.total,... (CSV, after its header)
    m = re.search(r"^name, driver_version.*\n([^,\n]+), ([^,\n]+), ([^,\n]+)", text, re.M)
    if m:
        facts["gpu"], facts["driver"], facts["memory"] = (g.strip() for g in m.groups())
    m = re.search(r"release ([\d.]+), (V[\d.]+)", text)
    if m:
        facts["cuda"] = "%s (nvcc %s)" % m.groups()
    m = re.search(r"libnccl\.so\.(\d+\.\d+\.\d+)", text)
    if m:
        facts["nccl_system"] = m.group(1)
    m = re.search(r"^torch (\S+) cuda (\S+)", text, re.M)
    if m:
        facts["torch"] = "%s (CUDA %s)" % m.groups()
    m = re.search(r"^nccl \(?(\d+)[, ]+(\d+)[, ]+(\d+)\)?", text, re.M)
    if m:
        facts["nccl_torch"] = ".".join(m.groups())
    return facts


def commands(log_text):
    """Every step's command line from log.txt, in order."""
    return re.findall(r"\] step (\S+) \(limit \d+s\): (.+)$", log_text, re.M)


def exits(log_text):
    return re.findall(r"\] step (\S+): exit (\d+.*)$", log_text, re.M)


def gtest_summary(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    failed = [s["name"] + "." + t["name"] for s in d.get("testsuites", []) for t in s.get("testsuite", [])
              if t.get("failures")]
    skipped = sum(1 for s in d.get("testsuites", []) for t in s.get("testsuite", []) if t.get("result") == "SKIPPED")
    return d["tests"], len(failed), skipped, failed


def profile_notes(path):
    """The profile's notes (the writer puts each on one line as a quoted string)."""
    notes, inside = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("notes:"):
                inside = True
                continue
            if inside:
                if not line.startswith("  - "):
                    break
                try:
                    notes.append(json.loads(line[4:].strip()))
                except ValueError:
                    notes.append(line[4:].strip())
    return notes


def slug(gpu):
    words = re.sub(r"^NVIDIA\s+", "", gpu).lower()
    return re.sub(r"[^a-z0-9]+", "-", words).strip("-") or "gpu"


def unpack(tar_path, into):
    with tarfile.open(tar_path) as t:
        members = t.getmembers()
        for m in members:
            name = os.path.normpath(m.name)
            if m.isdir() and name == ".":
                continue
            if not m.isfile() or os.path.isabs(m.name) or name.startswith(".."):
                raise Refused("%s: member %r is not a plain file inside the archive" % (tar_path, m.name))
        os.makedirs(into)
        for m in members:
            if m.isfile():
                target = os.path.join(into, os.path.normpath(m.name))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with t.extractfile(m) as src, open(target, "xb") as dst:
                    shutil.copyfileobj(src, dst)
    return sorted(os.path.relpath(os.path.join(d, f), into) for d, _, fs in os.walk(into) for f in fs)


def readme(facts, src, files, left, cmds, steps, tests, notes, measured):
    date = facts.get("date", "unknown date")
    out = ["# %s measurements, %s" % (facts.get("gpu", "GPU"), date[:10]), ""]
    out.append("Filed by `scripts/gpu_results.py` from the outputs of `scripts/gpu_check.sh` on a lent "
               "machine (`%s`). Every figure in these files was measured there; nothing is estimated." % src)
    out += ["", "| what | value |", "|---|---|"]
    for key, label in (("date", "date (UTC)"), ("gpu", "GPU"), ("memory", "memory"), ("driver", "driver"),
                       ("cuda", "CUDA"), ("nccl_system", "NCCL (system library)"),
                       ("nccl_torch", "NCCL (PyTorch's)"), ("torch", "PyTorch"), ("commit", "commit")):
        out.append("| %s | %s |" % (label, facts.get(key, "not recorded in env.txt")))
    out += ["", "## Commands (from log.txt)", "", "```"]
    out += ["%s: %s" % c for c in cmds] or ["(none recorded)"]
    out += ["```", "", "Exit status per step: " + (", ".join("%s %s" % s for s in steps) or "none recorded") + "."]
    if tests:
        total, failed, skipped, names = tests
        out += ["", "## GPU tests (`gpu_tests.json`)", "",
                "%d tests: %d passed, %d failed, %d skipped." % (total, total - failed - skipped, failed, skipped)]
        out += ["- failed: `%s`" % n for n in names]
    if notes is not None:
        held = [n for n in notes if "held-out" in n]
        inter = [n for n in notes if n.startswith("interference")]
        out += ["", "## Calibration (`profile-h200.yaml`; `gradwire check --kind profile` accepts it)", ""]
        out += ["Held-out (leave-one-out) errors, from the profile's notes:", ""] + ["- " + n for n in held]
        out += ["", "Interference, from the profile's notes:", ""] + (["- " + n for n in inter] or ["- none"])
    if measured:
        out += ["", "## Measured compute (`measured-compute/`)", ""] + ["- `%s`" % m for m in measured]
    out += ["", "## Files", ""] + ["- `%s`" % f for f in files]
    out += ["- not copied (not a regular file): `%s`" % f for f in left]
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files_at")
    ap.add_argument("--dest", help="destination folder (default docs/measurements/<gpu>-<date>)")
    ap.add_argument("--gradwire", default=os.path.join(ROOT, "build", "bin", "gradwire"))
    a = ap.parse_args(argv)
    src = a.files_at
    env_path = os.path.join(src, "env.txt")
    if not os.path.isfile(env_path):
        raise Refused("%s: no env.txt (is this a gpu_check.sh output folder?)" % src)
    with open(env_path, encoding="utf-8", errors="replace") as f:
        facts = env_facts(f.read())
    date = facts.get("date", datetime.date.today().isoformat())[:10]
    dest = a.dest or os.path.join(ROOT, "docs", "measurements", "%s-%s" % (slug(facts.get("gpu", "gpu")), date))
    if os.path.lexists(dest):
        raise Refused("%s exists: nothing is written over (give --dest)" % dest)
    profile = os.path.join(src, "profile-h200.yaml")
    if os.path.isfile(profile):
        r = subprocess.run([a.gradwire, "check", "--kind", "profile", profile], capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write("gpu_results: the profile does not load, nothing filed:\n" + r.stdout + r.stderr)
            return 1
    names = sorted(os.listdir(src))
    files = [n for n in names if os.path.isfile(os.path.join(src, n)) and not os.path.islink(os.path.join(src, n))]
    left = [n for n in names if n not in files]
    log = ""
    if "log.txt" in files:
        with open(os.path.join(src, "log.txt"), encoding="utf-8", errors="replace") as f:
            log = f.read()
    tests = gtest_summary(os.path.join(src, "gpu_tests.json")) if "gpu_tests.json" in files else None
    notes = profile_notes(profile) if "profile-h200.yaml" in files else None
    # Built in a folder of its own beside the destination and renamed into
    # place at the end: an error leaves nothing behind.
    work = "%s.partial-%d" % (dest, os.getpid())
    os.makedirs(work)
    try:
        for n in files:   # README.md is this script's: a source file of that name keeps its text beside it
            shutil.copyfile(os.path.join(src, n), os.path.join(work, "README.source.md" if n == "README.md" else n))
        measured = []
        if "measured-compute.tar" in files:
            measured = unpack(os.path.join(src, "measured-compute.tar"), os.path.join(work, "measured-compute"))
        text = readme(facts, src, files, left, commands(log), exits(log), tests, notes, measured)
        with open(os.path.join(work, "README.md"), "x", encoding="utf-8") as f:
            f.write(text)
        if os.path.lexists(dest):
            raise Refused("%s appeared meanwhile: nothing is written over" % dest)
        os.rename(work, dest)
    except BaseException:
        shutil.rmtree(work)
        raise
    print("filed %d files under %s" % (len(files), dest))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (Refused, OSError, ValueError, KeyError, tarfile.TarError) as e:
        sys.stderr.write("gpu_results: %s\n" % e)
        sys.exit(2)
