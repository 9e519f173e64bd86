// gradwire list models|profiles|instances|compressors: what a scenario can
// name, found where the loaders look (data_dir(), GRADWIRE_MODELS,
// GRADWIRE_PROFILES, GRADWIRE_CATALOG) and in the compressor table.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/model/catalog.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

void list_models() {
  const std::string dir = default_models_dir();
  std::cout << fmt::format("# models in {}\n{:<14} {:>12} {:>8} {:>9}  {}\n", dir, "name", "parameters", "tensors",
                           "sequence", "source");
  for (const auto& name : gw::list_models(dir)) {
    const ModelDesc m = load_model(name);
    std::cout << fmt::format("{:<14} {:>12} {:>8} {:>9}  {}\n", m.name, m.parameters, m.tensors.size(),
                             m.sequence_length > 0 ? std::to_string(m.sequence_length) : "-", m.source);
  }
}

void list_profiles() {
  std::cout << "# profiles (a scenario's `profile`, default: its cluster.gpu)\n"
            << fmt::format("{:<16} {:<10} {}\n", "name", "source", "device");
  for (const auto& name : gw::list_profiles()) {
    const Profile p = load_profile(name);
    std::cout << fmt::format("{:<16} {:<10} {}\n", name, p.source, p.device.empty() ? "-" : p.device);
  }
}

void list_instances() {
  const Catalog& c = default_catalog();
  std::cout << fmt::format(
                   "# instances in {}{} ({} per instance hour; each price with the date it was read and its "
                   "source; they change: re-check before buying)\n",
                   c.path, c.added_path.empty() ? "" : " and " + c.added_path, c.currency)
            << fmt::format("{:<22} {:<9} {:>4} {:<10} {:>10} {:>10}  {:<16} {:<11} {}\n", "name", "cloud", "GPUs",
                           "gpu", "on-demand", "spot", "network per node", "as of", "source");
  // Comment lines after the table: why the prices marked * are older readings
  // (one line per note, naming its instances).
  std::vector<std::pair<std::string, std::string>> stale;  // note, names
  for (const auto& t : c.instances) {
    if (!t.refreshed) {
      auto same = std::find_if(stale.begin(), stale.end(), [&](const auto& s) { return s.first == t.note; });
      if (same == stale.end()) same = stale.insert(stale.end(), {t.note, ""});
      same->second += (same->second.empty() ? "" : ", ") + t.name;
    }
    std::cout << fmt::format("{:<22} {:<9} {:>4} {:<10} {:>10.2f} {:>10}  {:<16} {:<11} {}\n", t.name, t.cloud, t.gpus,
                             t.gpu, t.on_demand, t.spot ? fmt::format("{:.2f}", *t.spot) : "-",
                             fmt::format("{} x {}", t.nic_count, units::format_bandwidth(t.nic.bandwidth)),
                             t.as_of + (t.refreshed ? "" : "*"), t.source);
  }
  for (const auto& [note, names] : stale) std::cout << fmt::format("# * not refreshed ({}): {}\n", names, note);
}

void list_compressors() {
  std::cout << "# compressors (a scenario's workload.compression.kind)\n"
            << fmt::format("{:<14} {:<11} {:<14} {}\n", "kind", "collective", "error feedback", "parameters");
  for (const auto& name : compressor_names()) {
    const Compressor& c = compressor(name);
    std::string params;
    for (const auto& info : compressor_params()) {
      const bool takes = info.every_kind || std::find(c.params.begin(), c.params.end(), info.id) != c.params.end();
      if (takes) params += (params.empty() ? "" : ", ") + info.key;
    }
    std::cout << fmt::format("{:<14} {:<11} {:<14} {}\n", name,
                             c.pattern == CommOp::AllGather ? "all-gather" : "all-reduce",
                             c.error_feedback ? "yes" : "no", params.empty() ? "-" : params);
  }
}

}  // namespace

int cmd_list(int argc, char** argv) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("what", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("what", 1);
  const char* usage = "usage: gradwire list models|profiles|instances|compressors\n";
  const CommandLine parsed = parse_command(argc, argv, bad_option_usage("gradwire list", usage), opts, hidden, pos,
                                           "usage: gradwire list models|profiles|instances|compressors\n"
                                           "Lists what a scenario can name.\n\n",
                                           "\nExample: gradwire list profiles\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  const std::string what = vm.count("what") ? vm["what"].as<std::string>() : "";
  if (what == "models")
    list_models();
  else if (what == "profiles")
    list_profiles();
  else if (what == "instances")
    list_instances();
  else if (what == "compressors")
    list_compressors();
  else {
    std::cerr << "gradwire list: say what to list\n" << usage;
    return kExitInput;
  }
  return kExitOk;
}

}  // namespace gw::cli
