#include "gradwire/model/key_path.hpp"

namespace gw {

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : key) {
    if (ch == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

bool key_under(const std::string& key, const std::string& prefix) {
  if (key == prefix) return true;
  return key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
         (key[prefix.size()] == '.' || key[prefix.size()] == '[');
}

bool keys_overlap(const std::string& a, const std::string& b) { return key_under(a, b) || key_under(b, a); }

YAML::Mark mark_at(const YAML::Node& root, const std::string& path) {
  YAML::Node node = root;
  YAML::Mark best = root.Mark();
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t end = path.find_first_of(".[", pos);
    if (end == pos && path[pos] == '[') {
      const std::size_t close = path.find(']', pos);
      if (close == std::string::npos || !node.IsSequence()) break;
      const std::size_t i = std::stoul(path.substr(pos + 1, close - pos - 1));
      if (i >= node.size()) break;
      const YAML::Node& cnode = node;
      node.reset(cnode[i]);
      pos = close + 1;
    } else {
      if (end == std::string::npos) end = path.size();
      const std::string seg = path.substr(pos, end - pos);
      if (!node.IsMap()) break;
      const YAML::Node& cnode = node;  // const: a missing key is not inserted
      YAML::Node child = cnode[seg];
      if (!child) break;
      node.reset(child);
      pos = end;
    }
    if (!node.Mark().is_null()) best = node.Mark();
    if (pos < path.size() && path[pos] == '.') ++pos;
  }
  return best;
}

std::vector<std::size_t> mixed_radix_digits(const std::vector<std::size_t>& radices, std::size_t index) {
  std::vector<std::size_t> d(radices.size());
  for (std::size_t a = radices.size(); a-- > 0;) {
    d[a] = index % radices[a];
    index /= radices[a];
  }
  return d;
}

}  // namespace gw
