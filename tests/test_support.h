// Helpers for end-to-end tests: run the nemoc binary, make scratch
// directories, fingerprint whole trees.
#ifndef NEMOC_TESTS_TEST_SUPPORT_H_
#define NEMOC_TESTS_TEST_SUPPORT_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace nemoc::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs $NEMOC_BIN (or the build's nemoc) with `args`, in `cwd` if given.
RunResult RunNemoc(const std::vector<std::string>& args, const std::string& cwd = "",
                   const std::map<std::string, std::string>& env = {});

/// The project's source directory (examples/, libsonnet/, ...).
std::string SourceDir();
/// The kube-schemas bundle, or "" when absent.
std::string KubeSchemasDir();

/// A fresh directory, removed when the object goes away.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::string& path() const { return path_; }
  std::string Write(const std::string& relative, const std::string& contents) const;

 private:
  std::string path_;
};

/// relative path -> contents of every file below `dir` (empty when absent).
std::map<std::string, std::string> ReadAll(const std::string& dir);
/// A single string that changes when any file name or byte below `dir` does.
std::string TreeFingerprint(const std::string& dir);
std::string ReadFile(const std::string& path);

/// "line:column" (1-based) of the first `needle` in `text`; "?:?" when absent.
std::string PositionOf(const std::string& text, const std::string& needle);
/// How many times `needle` occurs in `text` (overlapping occurrences count).
size_t Count(const std::string& text, const std::string& needle);
/// Runs `command` with /bin/sh; its stdout (add 2>&1 for stderr), and its
/// exit status in *exit_code when given.
std::string Shell(const std::string& command, int* exit_code = nullptr);

/// `text` with the first `from` replaced by `to`; a missing `from` fails the
/// running test (a mutation that silently did nothing would prove nothing).
std::string Replace(std::string text, const std::string& from, const std::string& to);

/// Two nemoc runs held at known steps (NEMOC_TEST_PAUSE, tree_writer.h
/// TestPause): `first` starts and is held at its pause point; then `second`
/// starts. Returns true when `second` reached its own pause point (whose
/// PATH is `second_gate`) while `first` was held, false when `second` exited
/// first. Then it releases both and joins them into *a and *b.
bool SecondReachesItsPauseWhileFirstIsHeld(const std::function<RunResult()>& first,
                                           const std::string& first_gate,
                                           const std::function<RunResult()>& second,
                                           const std::string& second_gate, RunResult* a,
                                           RunResult* b);

}  // namespace nemoc::testing

#endif  // NEMOC_TESTS_TEST_SUPPORT_H_
