#include "test_support.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;

namespace nemoc::testing {


std::string SourceDir() { return NEMOC_SOURCE_DIR; }

std::string KubeSchemasDir() {
  std::error_code ec;
  if (fs::is_regular_file(fs::path(NEMOC_KUBE_SCHEMAS) / "index.json", ec)) return NEMOC_KUBE_SCHEMAS;
  return "";
}

RunResult RunNemoc(const std::vector<std::string>& args, const std::string& cwd,
                   const std::map<std::string, std::string>& env) {
  const char* bin_env = std::getenv("NEMOC_BIN");
  std::string bin = bin_env ? bin_env : SourceDir() + "/build/nemoc";
  ScratchDir capture;
  const std::string out_path = capture.path() + "/stdout";
  const std::string err_path = capture.path() + "/stderr";
  pid_t pid = fork();
  if (pid == 0) {
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(127);
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    // Every nemoc the end-to-end tests run checks the written contracts
    // between C++ and the libraries at the boundary (compiler/contracts.h).
    setenv("NEMOC_CHECK_CONTRACTS", "1", 0);
    for (const auto& [key, value] : env) setenv(key.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(bin.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadFile(out_path);
  result.err = ReadFile(err_path);
  return result;
}

ScratchDir::ScratchDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path candidate = fs::temp_directory_path() / ("nemoc-test-" + std::to_string(rd()));
    std::error_code ec;
    if (fs::create_directory(candidate, ec)) {
      path_ = candidate.string();
      return;
    }
  }
  std::abort();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string ScratchDir::Write(const std::string& relative, const std::string& contents) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << contents;
  return p.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::map<std::string, std::string> ReadAll(const std::string& dir) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       ++it) {
    if (it->is_regular_file()) {
      files[fs::relative(it->path(), dir).string()] = ReadFile(it->path().string());
    } else if (!it->is_directory()) {
      files[fs::relative(it->path(), dir).string()] = "<non-regular>";
    }
  }
  return files;
}

std::string TreeFingerprint(const std::string& dir) {
  std::string fingerprint;
  for (const auto& [path, contents] : ReadAll(dir)) {
    fingerprint += path + "\n" + std::to_string(std::hash<std::string>{}(contents)) + "\n";
  }
  return fingerprint;
}

std::string PositionOf(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return "?:?";
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string Shell(const std::string& command, int* exit_code) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    if (exit_code != nullptr) *exit_code = -1;
    return out;
  }
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  if (exit_code != nullptr) *exit_code = WEXITSTATUS(status);
  return out;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  if (at == std::string::npos) {
    ADD_FAILURE() << "mutation anchor not found: " << from;
    return text;
  }
  text.replace(at, from.size(), to);
  return text;
}

bool SecondReachesItsPauseWhileFirstIsHeld(const std::function<RunResult()>& first,
                                           const std::string& first_gate,
                                           const std::function<RunResult()>& second,
                                           const std::string& second_gate, RunResult* a,
                                           RunResult* b) {
  auto release = [](const std::string& gate) { std::ofstream(gate).put('\n'); };
  std::atomic<bool> first_done{false}, second_done{false};
  std::thread t1([&] {
    *a = first();
    first_done = true;
  });
  // Bounded waits only guard against a hung test; the outcome never depends on them.
  auto wait = [](const std::function<bool()>& ready) {
    for (int i = 0; i < 60000 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return ready();
  };
  wait([&] { return fs::exists(first_gate + ".reached") || first_done.load(); });
  std::thread t2([&] {
    *b = second();
    second_done = true;
  });
  wait([&] { return fs::exists(second_gate + ".reached") || second_done.load(); });
  const bool reached = fs::exists(second_gate + ".reached");
  release(first_gate);
  release(second_gate);
  t1.join();
  t2.join();
  return reached && fs::exists(first_gate + ".reached");
}

}  // namespace nemoc::testing
