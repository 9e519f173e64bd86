#!/usr/bin/env bash
# gradwire set-up: installs every package it needs on Debian 12 (idempotent),
# configures and builds, then runs the main job on the bundled default scenario.
#
#   ./setup.sh            install, build, run `gradwire simulate scenarios/default.yaml`
#   ./setup.sh --no-run   install and build only (used by test.sh and CI)
#   ./setup.sh --with-torch  also make .venv-torch/ (PyTorch, torchvision, transformers,
#                         timm from PyPI, pinned in bridge/requirements-torch.txt) for
#                         `gradwire model` and its tests; ~3 GB with the CUDA wheels,
#                         2-3 min here; a second run does nothing while the pins match
#
# Environment: BUILD_DIR (default: build), GRADWIRE_CUDA (AUTO|ON|OFF, default AUTO),
# JOBS (default: number of cores).
set -euo pipefail
cd "$(dirname "$0")"

run_main=1
with_torch=0
for arg in "$@"; do
  case "$arg" in
    --no-run) run_main=0 ;;
    --with-torch) with_torch=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

# Every Debian package the build, the tests and the reports use.
packages=(
  build-essential cmake ninja-build pkg-config git python3
  libsimgrid-dev libyaml-cpp-dev libboost-program-options-dev
  nlohmann-json3-dev libfmt-dev libgtest-dev googletest
  gnuplot-nox libopenmpi-dev openmpi-bin clang-format
  slurmctld slurmd slurm-client munge chromium
)
if ((with_torch)); then packages+=(python3-venv); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup.sh: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# CUDA is optional: the kernels and the GPU calibration backend are built when
# nvcc is found (/usr/local/cuda on the project's machines).
if [ -d /usr/local/cuda/bin ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi

# The PyTorch environment (docs/models.md, "Bring your own model"): made again
# only when the pins differ from the ones it was made with (the stamp file).
if ((with_torch)); then
  venv=.venv-torch
  stamp="$venv/gradwire-requirements.txt"
  if [ -x "$venv/bin/python" ] && cmp -s bridge/requirements-torch.txt "$stamp"; then
    echo "setup.sh: $venv is up to date (bridge/requirements-torch.txt)"
  else
    echo "setup.sh: installing bridge/requirements-torch.txt into $venv (PyTorch with its CUDA libraries, ~3 GB)"
    start=$(date +%s)
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r bridge/requirements-torch.txt
    cp bridge/requirements-torch.txt "$stamp"
    echo "setup.sh: $venv ready in $(($(date +%s) - start)) s"
  fi
fi

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRADWIRE_CUDA="${GRADWIRE_CUDA:-AUTO}"
cmake --build "$BUILD_DIR" -j "$JOBS"

if ((run_main)); then
  echo
  echo "== gradwire simulate scenarios/default.yaml"
  "$BUILD_DIR/bin/gradwire" simulate scenarios/default.yaml
fi
