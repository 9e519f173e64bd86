// gradwire model export|measure ...: the PyTorch bridge (bridge/gradwire_torch,
// docs/models.md "Bring your own model"). A thin shell: it finds the Python of
// the PyTorch environment and replaces itself with
//   PYTHON -m gradwire_torch SUBCOMMAND ARGS...
// (execv with an argv, no shell), with <data dir>/bridge first on PYTHONPATH
// and PYTHONSAFEPATH=1 (the current directory is not put on sys.path).
// The Python is $GRADWIRE_PYTHON when set, else <data dir>/.venv-torch/bin/python
// (made by ./setup.sh --with-torch). The Python tool parses the options, exits
// 2 with one line for bad input and writes its output atomically. Before it
// starts, this shell refuses a count option that is no whole number in range
// (--batch 99999999999999999999) and a missing Python, each in one line with
// exit 2; the set-up hint (GRADWIRE_TORCH_HINT, which the Python tool also
// prints when it cannot import PyTorch) fits where gradwire is: a source
// checkout has setup.sh in its data directory, an installed prefix does not.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
    "SPEC: torchvision:NAME | timm:NAME | transformers:CLASS | transformers:ORG/NAME (a bundled hub config,\n"
    "      e.g. meta-llama/Llama-3.1-8B; docs/models.md) | path/to/file.py:FUNCTION\n"
    "Python: $GRADWIRE_PYTHON, else .venv-torch/bin/python in the data directory.\n"
    "`gradwire model export --help` and `gradwire model measure --help` list every option.\n"
    "\n"
    "Example: gradwire model export torchvision:resnet50 --out /tmp/resnet50.yaml\n"
    "Example: gradwire model export transformers:BertForPreTraining --seq-len 128 --out /tmp/bert-pt.yaml\n"
    "Example: gradwire model export transformers:Qwen/Qwen2.5-0.5B --seq-len 64 --out /tmp/qwen.yaml\n"
    "Example: gradwire model measure tests/torch/example_models.py:make_mlp --input 784 --batch 8 --device cpu "
    "--out /tmp/mlp-measured.yaml\n";

/// The bridge's count options and their ranges; cli.py and measure.py refuse
/// the same ranges (COUNT_LIMITS in cli.py) for a direct `python -m gradwire_torch`.
struct CountOption {
  const char* name;
  long long min, max;
};
constexpr CountOption kCounts[] = {
    {"--batch", 1, 1 << 20}, {"--seq-len", 1, 1 << 24}, {"--repeats", 1, 1000000}, {"--warmup", 0, 1000000}};

/// "" when `text` is a decimal whole number in [o.min, o.max], else the error.
std::string count_error(const CountOption& o, const std::string& text) {
  const std::string range = "expected a whole number from " + std::to_string(o.min) + " to " + std::to_string(o.max);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::string(o.name) + " '" + text + "': " + range;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < o.min || v > o.max) return std::string(o.name) + " " + text + ": " + range;
  return "";
}

/// The first bad count option in argv ("--batch N" or "--batch=N"), or "".
std::string bad_count(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    for (const auto& o : kCounts) {
      const std::string name = o.name;
      std::string error;
      if (arg == name)
        error = i + 1 < argc ? count_error(o, argv[i + 1]) : "";  // a missing value: argparse says so
      else if (arg.rfind(name + "=", 0) == 0)
        error = count_error(o, arg.substr(name.size() + 1));
      if (!error.empty()) return error;
    }
  }
  return "";
}

/// What to do when PyTorch is not there: from a source checkout (setup.sh in
/// the data directory) run setup.sh; from an installed prefix make a venv.
std::string torch_hint() {
  const std::string dir = data_dir();
  std::error_code ec;
  if (std::filesystem::is_regular_file(dir + "/setup.sh", ec))
    return "run " + dir + "/setup.sh --with-torch, or set GRADWIRE_PYTHON to a Python with PyTorch";
  const std::string pins = dir + "/bridge/requirements-torch.txt";
  const std::string what =
      std::filesystem::is_regular_file(pins, ec) ? "-r " + pins : "torch torchvision transformers timm";
  return "make a Python environment with PyTorch: python3 -m venv DIR && DIR/bin/pip install " + what +
         ", then set GRADWIRE_PYTHON=DIR/bin/python";
}

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
  if (const std::string error = bad_count(argc, argv); !error.empty()) {
    std::cerr << "gradwire model: " << error << "\n";
    return kExitInput;
  }
  const std::string python = python_path(), hint = torch_hint();
  if (::access(python.c_str(), X_OK) != 0) {
    std::cerr << "gradwire model: PyTorch is not set up: no Python at " << python << " (" << hint << ")\n";
    return kExitInput;
  }
  ::setenv("GRADWIRE_TORCH_HINT", hint.c_str(), 1);
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
