// Refresher: one engine + one worker pool + the call lock.
//
// Contract
// - Construction: from an engine (core/row_engine.h; the binding builds the
//   one a Config names, after validate_selection), the thread count and
//   the CPU pinning: starts the pool's persistent threads (ThreadStartError
//   if the system refuses one). Config (what to compute, which engine,
//   threads) is exported to Python as _core.Config; core/ knows engines only
//   through RowEngine.
// - run(): refreshes the given rows. `rows` must be sorted, unique and in
//   range, and inputs/outputs must already be validated (the binding,
//   bindings/register_refresher.cc, does this while holding the GIL). run()
//   must be called WITHOUT the GIL.
//   Calls on one Refresher are serialised by an internal mutex: a second
//   caller waits until the first returns. Rows are handed out in chunks from
//   a shared atomic counter, so uneven row costs stay balanced; calls with
//   few rows wake only as many workers as the rows justify.
//   With a `mirror` (rows kept in separate mjData, core/mjdata_rows.h), each
//   row that refreshed without error is copied into its mjData right after,
//   on the same thread, while its outputs are still in that core's cache.
// - with_engine(fn): runs fn on the engine under the call lock (benchmark
//   hooks, bench_hooks/); throws std::runtime_error if closed.
// - Errors: a MuJoCo error in a row does not stop the other rows; run()
//   returns the failing rows (sorted) and the lowest one's message.
// - fork(): if the process forked while another thread of the parent was
//   inside run(), the child's copy of the call lock is held forever. run()
//   compares fork_generation() (core/fork_generation.h, counted by a
//   pthread_atfork child handler) with the creator's and, in a child,
//   re-creates the lock and resets the scratch state before anything else
//   (the pool restarts its workers itself), so a child never deadlocks.
// - close(): joins the workers and frees the scratch state; later run() calls
//   return RunResult::closed. Idempotent. The destructor closes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/mjdata_rows.h"
#include "core/row_engine.h"
#include "core/selection.h"
#include "core/worker_pool.h"

namespace mjrefresh {

// The error text of any call on a closed refresher (RuntimeError in Python).
inline constexpr const char* kClosedMessage = "Refresher is closed";

struct RunResult {
  bool closed = false;
  std::vector<int64_t> failed_rows;  // sorted rows whose refresh raised a MuJoCo error
  std::string message;               // MuJoCo's message for failed_rows[0]
};

// Exported as _core.EngineKind (members "exact", "fast").
enum class EngineKind { kExact, kFast };

// Everything a Refresher is built from: the selection plus the engine and
// its threads. Exported as _core.Config with the same field names (the
// Python planner fills it).
struct Config : Selection {
  EngineKind engine = EngineKind::kExact;
  int num_threads = 1;       // participants, caller included
  std::vector<int> cpu_ids;  // pinning (Linux), may be empty
};

class Refresher {
 public:
  Refresher(std::unique_ptr<RowEngine> engine, int num_threads, const std::vector<int>& cpu_ids);
  ~Refresher();
  Refresher(const Refresher&) = delete;
  Refresher& operator=(const Refresher&) = delete;

  RunResult run(const int64_t* rows, int64_t num_rows, const Inputs& in, const Outputs& out,
                const MjDataMirror* mirror = nullptr);
  void with_engine(const std::function<void(RowEngine&)>& fn);
  void close();
  bool closed() const;
  int num_threads() const { return num_threads_; }
  // Participants (caller included) the last run() woke up; a worker that
  // wakes after the caller ran out of rows skips the call (worker_pool.h).
  int last_participants() const { return last_participants_.load(); }
  const RowEngine& engine() const { return *engine_; }
  // Bytes held (RowEngine::memory_bytes, taken once built); 0 once closed.
  // Read without the call lock: never waits for a call (or, in a forked
  // child, for a lock its parent held).
  int64_t memory_bytes() const;
  int64_t participant_bytes() const;

 private:
  void recover_after_fork();

  int num_threads_;
  uint64_t fork_gen_;                // fork_generation() the lock and threads belong to
  std::atomic<bool> closed_{false};  // readable without the call lock
  std::atomic<int> last_participants_{0};
  std::atomic<int64_t> memory_bytes_{0};  // the engine's, fixed once built; 0 once closed
  std::atomic<int64_t> participant_bytes_{0};
  mutable std::mutex mutex_;
  std::unique_ptr<RowEngine> engine_;
  std::unique_ptr<WorkerPool> pool_;
};

// Throws std::invalid_argument if the selection does not fit the model
// (the Python planner validates first, with richer messages).
void validate_selection(const mjModel* m, const Selection& sel);

}  // namespace mjrefresh
