// Refresher: one engine + one worker pool + the call lock.
//
// Contract
// - Construction: copies the model (inside the engine), creates one scratch
//   state per participant and the pool's persistent threads. Throws
//   std::invalid_argument for an invalid selection (the binding turns it into
//   ValueError); the Python planner validates first with richer messages.
// - run(): refreshes the given rows. `rows` must be sorted, unique and in
//   range, and inputs/outputs must already be validated (module.cc does this
//   while holding the GIL). run() must be called WITHOUT the GIL.
//   Calls on one Refresher are serialised by an internal mutex: a second
//   caller waits until the first returns. Rows are handed out in chunks from
//   a shared atomic counter, so uneven row costs stay balanced; calls with
//   few rows wake only as many workers as the rows justify.
// - Errors: a MuJoCo error in a row does not stop the other rows; run()
//   returns the failing rows (sorted) and the lowest one's message.
// - fork(): if the process forked while another thread of the parent was
//   inside run(), the child's copy of the call lock is held forever. run()
//   compares the pid with the creator's and, in a child, re-creates the lock
//   and resets the scratch state before anything else (the pool restarts its
//   workers itself), so a child never deadlocks.
// - close(): joins the workers and frees the scratch state; later run() calls
//   return RunResult::closed. Idempotent. The destructor closes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include <sys/types.h>
#include <string>
#include <vector>

#include "row_engine.h"
#include "selection.h"
#include "worker_pool.h"

namespace mjrefresh {

struct RunResult {
  bool closed = false;
  std::vector<int64_t> failed_rows;  // sorted rows whose refresh raised a MuJoCo error
  std::string message;               // MuJoCo's message for failed_rows[0]
};

enum class EngineKind { kExact, kFast };

class Refresher {
 public:
  Refresher(const mjModel* model, Selection selection, EngineKind engine, int num_threads,
            std::vector<int> cpu_ids);
  ~Refresher();
  Refresher(const Refresher&) = delete;
  Refresher& operator=(const Refresher&) = delete;

  RunResult run(const int64_t* rows, int64_t num_rows, const Inputs& in, const Outputs& out);
  // Benchmark hook (exact engine only): seconds spent in the planned MuJoCo
  // stage functions for these rows, single thread, no outputs written.
  // Throws std::runtime_error if closed, not exact, or on a MuJoCo error.
  double stage_seconds(const int64_t* rows, int64_t num_rows, const Inputs& in);
  void close();
  bool closed() const;
  int num_threads() const { return num_threads_; }
  // Participants (caller included) the last run() woke up; a worker that
  // wakes after the caller ran out of rows skips the call (worker_pool.h).
  int last_participants() const { return last_participants_.load(); }
  const RowEngine& engine() const { return *engine_; }


 private:
  void recover_after_fork();

  int num_threads_;
  pid_t owner_pid_;
  std::atomic<bool> closed_{false};  // readable without the call lock
  std::atomic<int> last_participants_{0};
  mutable std::mutex mutex_;
  std::unique_ptr<RowEngine> engine_;
  std::unique_ptr<WorkerPool> pool_;
};

// Throws std::invalid_argument if the selection does not fit the model.
void validate_selection(const mjModel* m, const Selection& sel);

}  // namespace mjrefresh
