#include "eval_watchdog.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

namespace nemoc {
namespace {

// CPU time of the evaluating thread, not wall time: a runaway library burns
// CPU, while a build on a busy machine (CI under ASan beside two compilers)
// only waits; wall time stopped such builds at 120 s with 30 s of CPU used.
double CpuSeconds(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Running {
  std::string what;
  clockid_t clock;  // the evaluating thread's CPU clock
  double start;     // its CPU seconds when the evaluation began
};

struct Registry {
  std::mutex mu;
  std::map<uint64_t, Running> running;
  uint64_t next = 1;
  std::once_flag started;
};

Registry& Get() {
  static Registry* r = new Registry;  // never destroyed: the thread outlives main's statics
  return *r;
}

long EnvLimit(const char* name, long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return (end != nullptr && *end == '\0' && n > 0) ? n : fallback;
}

long ResidentMib() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

[[noreturn]] void Stop(const std::string& what, const std::string& why) {
  // The same form as every diagnostic: "file: error: message", then the count.
  const std::string text = what + ": error: " + why +
                           "\n  hint: a --jpath library that loops or allocates without bound? "
                           "Raise NEMOC_MAX_EVAL_SECONDS / NEMOC_MAX_RSS_MIB if the spec really "
                           "needs more\n1 error\n";
  (void)!write(STDERR_FILENO, text.data(), text.size());
  _exit(1);
}

void Watch() {
  const long max_seconds = EnvLimit("NEMOC_MAX_EVAL_SECONDS", 120);
  const long max_mib = EnvLimit("NEMOC_MAX_RSS_MIB", 4096);
  Registry& r = Get();
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::string over_time, oldest;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.running.empty()) continue;
      for (const auto& [id, run] : r.running) {
        if (oldest.empty()) oldest = run.what;
        if (CpuSeconds(run.clock) - run.start > static_cast<double>(max_seconds)) over_time = run.what;
      }
    }
    if (!over_time.empty()) {
      Stop(over_time, "evaluating the Jsonnet libraries took more than " + std::to_string(max_seconds) +
                          " s of CPU time (NEMOC_MAX_EVAL_SECONDS)");
    }
    const long mib = ResidentMib();
    if (mib > max_mib) {
      Stop(oldest, "evaluating the Jsonnet libraries used " + std::to_string(mib) + " MiB, more than " +
                       std::to_string(max_mib) + " MiB (NEMOC_MAX_RSS_MIB)");
    }
  }
}

thread_local int active_on_thread = 0;

}  // namespace

bool EvalWatch::ActiveOnThisThread() { return active_on_thread > 0; }

EvalWatch::EvalWatch(const std::string& what) {
  ++active_on_thread;
  Registry& r = Get();
  std::call_once(r.started, [] { std::thread(Watch).detach(); });
  std::lock_guard<std::mutex> lock(r.mu);
  id_ = r.next++;
  clockid_t clock = CLOCK_THREAD_CPUTIME_ID;
  if (pthread_getcpuclockid(pthread_self(), &clock) != 0) clock = CLOCK_PROCESS_CPUTIME_ID;
  r.running[id_] = {what, clock, CpuSeconds(clock)};
}

EvalWatch::~EvalWatch() {
  --active_on_thread;
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);
  r.running.erase(id_);
}

}  // namespace nemoc
