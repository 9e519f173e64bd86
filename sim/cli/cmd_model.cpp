// gradwire model export|measure ...: the PyTorch bridge (bridge/gradwire_torch,
// docs/models.md "Bring your own model"). A thin shell: it finds the Python of
// the PyTorch environment and replaces itself with
//   PYTHON -m gradwire_torch SUBCOMMAND ARGS...
// (execv with an argv, no shell), with <data dir>/bridge first on PYTHONPATH
// and PYTHONSAFEPATH=1 (the current directory is not put on sys.path).
// The Python is $GRADWIRE_PYTHON when set, else <data dir>/.venv-torch/bin/python
// (made by ./setup.sh --with-torch). The Python tool parses the options, exits
// 2 with one line for bad input and writes its output atomically.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "exec_beside.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/data_dir.hpp"

namespace gw::cli {
namespace {

constexpr const char* kUsage =
    "usage: gradwire model export SPEC [--input CxHxW | --seq-len N] [--batch N] [--set KEY=VALUE ...]\n"
    "                             [--name NAME] --out FILE\n"
    "       gradwire model measure SPEC --device cpu|cuda --batch N [--amp bf16|fp16] [--tf32]\n"
    "                              [--optimizer sgd|momentum|adam|adamw] [--repeats R] [--name NAME] --out FILE\n"
    "\n"
    "Describe a PyTorch model for gradwire (needs ./setup.sh --with-torch; docs/models.md).\n"
    "  export   build SPEC on the meta device (no weights, no network), observe one training\n"
    "           forward and backward pass, write a gradwire-model/1 file: tensors in the observed\n"
    "           gradient-ready order, measured forward and backward FLOPs, saved activations.\n"
    "  measure  run SPEC's forward and backward passes on the device (random weights, synthetic\n"
    "           data), write a gradwire-compute/1 file: forward time, per-tensor gradient-ready\n"
    "           times, backward, optimizer step, DDP's local work; a scenario uses it through\n"
    "           workload.compute (docs/model.md, \"Measured compute\").\n"
    "SPEC: torchvision:NAME | timm:NAME | transformers:CLASS | path/to/file.py:FUNCTION\n"
    "Python: $GRADWIRE_PYTHON, else .venv-torch/bin/python in the data directory.\n"
    "`gradwire model export --help` and `gradwire model measure --help` list every option.\n"
    "\n"
    "Example: gradwire model export torchvision:resnet50 --out /tmp/resnet50.yaml\n"
    "Example: gradwire model export transformers:BertForPreTraining --seq-len 128 --out /tmp/bert-pt.yaml\n"
    "Example: gradwire model measure tests/torch/example_models.py:make_mlp --input 784 --batch 8 --device cpu "
    "--out /tmp/mlp-measured.yaml\n";

std::string python_path() {
  const char* env = std::getenv("GRADWIRE_PYTHON");
  if (env != nullptr && *env != '\0') return env;
  return data_dir() + "/.venv-torch/bin/python";
}

}  // namespace

int cmd_model(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    (argc < 2 ? std::cerr : std::cout) << kUsage;
    return argc < 2 ? kExitInput : kExitOk;
  }
  const std::string python = python_path();
  if (::access(python.c_str(), X_OK) != 0) {
    std::cerr << "gradwire model: PyTorch is not set up: no Python at " << python
              << " (run ./setup.sh --with-torch, or set GRADWIRE_PYTHON)\n";
    return kExitInput;
  }
  const std::string bridge = data_dir() + "/bridge";
  const char* old = std::getenv("PYTHONPATH");
  const std::string path = (old != nullptr && *old != '\0') ? bridge + ":" + old : bridge;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  // `-m` would put the current directory first on sys.path, where a user's
  // torch.py could shadow the real one; Python >= 3.11 leaves it out with this.
  ::setenv("PYTHONSAFEPATH", "1", 1);
  std::string m = "-m", pkg = "gradwire_torch";
  std::vector<char*> args{m.data(), pkg.data()};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  throw std::runtime_error("cannot run " + python + ": " + exec_program(python, args));
}

}  // namespace gw::cli
