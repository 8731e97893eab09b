// Bounds every Jsonnet evaluation in time and the process in memory
// (field-review.md E10: a --jpath library calling std.makeArray(2e8, ...)
// took all RAM and was OOM-killed after 130 s; one that loops never ends).
// libjsonnet cannot be interrupted, so a watchdog thread ends the process
// with a located error naming the spec being evaluated: nothing is written
// before every spec has been evaluated, so nothing on disk changes.
//
// Limits (environment, for CI containers that have less):
//   NEMOC_MAX_EVAL_SECONDS  CPU seconds of one evaluation's thread, default 120
//   NEMOC_MAX_RSS_MIB       resident memory of the process, default 4096
#ifndef NEMOC_EVAL_WATCHDOG_H_
#define NEMOC_EVAL_WATCHDOG_H_

#include <cstdint>
#include <string>

namespace nemoc {

/// Registers "an evaluation of `what` (a spec path) runs now, on this thread"
/// for its lifetime (the thread's CPU time is what the limit bounds).
class EvalWatch {
 public:
  explicit EvalWatch(const std::string& what);
  ~EvalWatch();
  /// Whether an EvalWatch is alive on the calling thread.
  static bool ActiveOnThisThread();
  EvalWatch(const EvalWatch&) = delete;
  EvalWatch& operator=(const EvalWatch&) = delete;

 private:
  uint64_t id_;
};

}  // namespace nemoc

#endif  // NEMOC_EVAL_WATCHDOG_H_
