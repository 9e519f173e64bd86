#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "gradwire/core/atomic_file.hpp"

namespace fs = std::filesystem;

TEST(AtomicFile, WritesAndReplacesLeavingNoTemporary) {
  fs::path dir = fs::temp_directory_path() / ("gw_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string p = (dir / "out.txt").string();
  gw::write_file_atomic(p, "first");
  gw::write_file_atomic(p, "second");
  EXPECT_EQ(gw::read_file(p), "second");
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
  gw::append_line_durable((dir / "log").string(), "a");
  gw::append_line_durable((dir / "log").string(), "b\n");
  EXPECT_EQ(gw::read_file((dir / "log").string()), "a\nb\n");
  EXPECT_THROW(gw::write_file_atomic((dir / "missing" / "x").string(), "y"), std::runtime_error);
  fs::remove_all(dir);
}
