// A temporary directory that a stop signal does not leave behind
// (docs/hardening.md, "Nothing lost: outputs and signals"). `gradwire report`
// builds its page in a directory beside the target and swaps it in; killed
// with SIGINT, SIGTERM or SIGHUP on the way, it used to leave that directory
// (5 of 5 tries, issue 29 item 8).
//
//   const std::string tmp = make_the_directory();
//   const gw::RemoveDirOnSignal cleanup(tmp);     // a signal now removes tmp, then ends the process
//   ... write files into tmp ...
//   { const gw::StopSignalsHeld held; rename tmp into place; }   // never half swapped
//
// POSIX, one directory per process at a time.
#pragma once

#include <signal.h>

#include <string>

namespace gw {

/// While it lives, SIGINT, SIGTERM and SIGHUP first remove the directory
/// `dir` (its regular files, then the directory itself, never a recursive
/// delete; with async-signal-safe calls only) and then end the process as
/// the signal would have (its default action). The handlers in place before
/// are restored by the destructor. `dir` that no longer exists is fine.
class RemoveDirOnSignal {
 public:
  explicit RemoveDirOnSignal(const std::string& dir);
  ~RemoveDirOnSignal();
  RemoveDirOnSignal(const RemoveDirOnSignal&) = delete;
  RemoveDirOnSignal& operator=(const RemoveDirOnSignal&) = delete;

 private:
  struct sigaction old_[3]{};
};

/// Holds SIGINT, SIGTERM and SIGHUP back while it lives (blocked in this
/// thread); one that arrived meanwhile is delivered when it ends.
class StopSignalsHeld {
 public:
  StopSignalsHeld();
  ~StopSignalsHeld();
  StopSignalsHeld(const StopSignalsHeld&) = delete;
  StopSignalsHeld& operator=(const StopSignalsHeld&) = delete;

 private:
  sigset_t old_{};
};

}  // namespace gw
