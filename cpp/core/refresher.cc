#include "core/refresher.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "core/fork_generation.h"
#include "core/mujoco_error_trap.h"
#include "core/trapped_alloc.h"

namespace mjrefresh {
namespace {

void check_ids(const std::vector<int>& ids, int limit, const char* what) {
  for (int id : ids) {
    if (id < 0 || id >= limit) {
      throw std::invalid_argument(std::string(what) + ": id " + std::to_string(id) +
                                  " out of range [0, " + std::to_string(limit) + ")");
    }
  }
}

// Rows in separate mjData are scattered over memory (each mjData sits next
// to its own arena, megabytes apart), so every row costs TLB and cache misses
// the hardware prefetcher cannot predict. Row i of a chunk starts loading row
// i + kPrefetchRows; the chunk's first rows are started with the chunk.
constexpr int64_t kPrefetchRows = 4;
void prefetch_row(const MjDataMirror* mirror, const int64_t* rows, int64_t k, int64_t end) {
  if (mirror && k < end) mirror->prefetch(rows[k]);
}

struct Failure {
  std::vector<int64_t> rows;  // in the order this participant met them
  int64_t first = -1;         // lowest of rows
  char message[1024] = {0};   // MuJoCo's message for `first`
  bool unrecorded = false;    // a failed row `rows` had no memory left for
};

// Warms up a worker's thread-locals (ours and libmujoco's, allocated by
// glibc on a thread's first use, which ends the process when it cannot):
// run by each worker as the pool starts (worker_pool.h, on_start).
void touch_thread_locals() { const TrapScope trap; }

}  // namespace

void validate_selection(const mjModel* m, const Selection& sel) {
  if (sel.stages & ~static_cast<uint32_t>(kAllStages)) {
    throw std::invalid_argument("stages: unknown stage bits");
  }
  int prev_stop = -1;
  for (const auto& [start, stop] : sel.columns) {
    if (start < 0 || stop > m->nsensordata || start >= stop || start <= prev_stop) {
      throw std::invalid_argument(
          "columns: ranges must be sorted, disjoint, non-adjacent and "
          "within [0, " +
          std::to_string(m->nsensordata) + ")");
    }
    prev_stop = stop;
  }
  check_ids(sel.sensors, m->nsensor, "sensors");
  check_ids(sel.bodies, m->nbody, "bodies");
  check_ids(sel.sites, m->nsite, "sites");
  if (sel.relative_to < -1 || sel.relative_to >= m->nbody) {
    throw std::invalid_argument("relative_to: body id out of range");
  }
  std::vector<char> seen(kNumModelFields, 0);
  for (int f : sel.model_fields) {
    if (f < 0 || f >= kNumModelFields || seen[f]) {
      throw std::invalid_argument("model_fields: unknown or repeated field id " +
                                  std::to_string(f));
    }
    seen[f] = 1;
  }
}

Refresher::Refresher(std::unique_ptr<RowEngine> engine, int num_threads,
                     const std::vector<int>& cpu_ids)
    : num_threads_(std::max(1, num_threads)),
      fork_gen_(fork_generation()),
      engine_(std::move(engine)) {
  pool_ = std::make_unique<WorkerPool>(num_threads_, cpu_ids, &touch_thread_locals);
  memory_bytes_.store(engine_->memory_bytes());
  participant_bytes_.store(engine_->participant_bytes());
}

Refresher::~Refresher() { close(); }

void Refresher::recover_after_fork() {
  if (fork_generation() == fork_gen_) return;
  // Child process: the parent's threads are gone; the lock may have been held
  // by one of them at fork time. Re-create it (nobody in this process can own
  // it), and reset scratch state that may have been copied mid-row.
  new (&mutex_) std::mutex();
  fork_gen_ = fork_generation();
  if (engine_) engine_->after_fork();
}

void Refresher::close() {
  recover_after_fork();
  std::lock_guard<std::mutex> lock(mutex_);
  closed_.store(true);
  memory_bytes_.store(0);
  participant_bytes_.store(0);
  pool_.reset();    // joins the workers first ...
  engine_.reset();  // ... then frees the scratch state they used
}

bool Refresher::closed() const { return closed_.load(); }

// Without the call lock: a call in another thread (or one a forked child
// inherited mid-call) would make these wait for it.
int64_t Refresher::memory_bytes() const { return memory_bytes_.load(); }

int64_t Refresher::participant_bytes() const { return participant_bytes_.load(); }

void Refresher::with_engine(const std::function<void(RowEngine&)>& fn) {
  recover_after_fork();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pool_) throw std::runtime_error(kClosedMessage);
  fn(*engine_);
}

RunResult Refresher::run(const int64_t* rows, int64_t num_rows, const Inputs& in,
                         const Outputs& out, const MjDataMirror* mirror) {
  recover_after_fork();
  std::lock_guard<std::mutex> lock(mutex_);
  RunResult result;
  if (!pool_) {
    result.closed = true;
    return result;
  }
  if (num_rows <= 0) return result;

  // Waking a sleeping worker costs the caller about 6 us; give each woken
  // participant at least the engine's min_rows_per_thread() rows so a
  // partial-reset call with a handful of rows runs on the caller alone.
  const int64_t per = engine_->min_rows_per_thread();
  const int64_t wanted = (num_rows + per - 1) / per;
  const int active = static_cast<int>(std::min<int64_t>(num_threads_, wanted));
  last_participants_.store(active);
  // Small chunks balance uneven rows over the participants; at most 64 rows
  // per grab keeps the shared counter off the hot path. A caller alone has
  // nothing to balance, so it takes every row in one grab: a small call
  // then still gets the engine's pairs or quads (it got single rows below
  // 16), and the engine's prefetch runs one quad ahead across the whole
  // call instead of starting cold every 64 rows (per-row model fields,
  // quadruped tracking refresh, N=4096, 1 thread, 2-vCPU AMD EPYC VM:
  // 0.86-0.92x the time with 64-row grabs, the refresh without fields
  // 0.97-1.01x, three runs in one process; re-measure: python -m
  // bench.research.model_fields). Whole multiples of 4 keep the quads whole.
  int64_t chunk =
      active == 1 ? num_rows : std::clamp<int64_t>(num_rows / (int64_t{active} * 8), 1, 64);
  if (chunk > 4) chunk &= ~int64_t{3};

  std::atomic<int64_t> next{0};
  std::vector<Failure> failures(active);
  RowEngine& engine = *engine_;
  const bool pairs = engine.pairs();
  const bool quads = engine.quads();
  const bool hints = engine.prefetches();
  pool_->run(active, [&](int t) {
    const TrapScope trap;  // one handler install per participant, not per row
    Failure& failure = failures[t];
    struct Fence {  // the engines may write outputs with streaming stores
      ~Fence() { store_fence(); }
    } fence;
    char message[1024];
    for (;;) {
      const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= num_rows) break;
      const int64_t end = std::min(begin + chunk, num_rows);
      int64_t i = begin;
      // The engine's hints for the chunk's rows from..from+3 (per-row model
      // field blocks; only when hints).
      const auto hint_quad = [&](int64_t from) {
        for (int64_t k = from; k < from + 4 && k < end; ++k) engine.prefetch(in, rows[k]);
      };
      for (int64_t k = begin; k < begin + kPrefetchRows; ++k) prefetch_row(mirror, rows, k, end);
      if (quads) {
        if (hints) hint_quad(begin);  // the chunk's first quad: nothing before it here started it
        for (; i + 3 < end; i += 4) {
          for (int k = 0; k < 4; ++k) prefetch_row(mirror, rows, i + kPrefetchRows + k, end);
          if (hints) hint_quad(i + 4);  // the next quad's rows
          engine.refresh_quad(t, rows + i, in, out);
          if (mirror) {
            for (int k = 0; k < 4; ++k) mirror->copy(rows[i + k]);
          }
        }
      }
      if (pairs) {
        for (; i + 1 < end; i += 2) {
          prefetch_row(mirror, rows, i + kPrefetchRows, end);
          prefetch_row(mirror, rows, i + kPrefetchRows + 1, end);
          engine.refresh_pair(t, rows[i], rows[i + 1], in, out);
          if (mirror) {
            mirror->copy(rows[i]);
            mirror->copy(rows[i + 1]);
          }
        }
      }
      for (; i < end; ++i) {
        const int64_t row = rows[i];
        prefetch_row(mirror, rows, i + kPrefetchRows, end);
        if (!engine.refresh_row(t, row, in, out, message, sizeof(message))) {
          try {
            failure.rows.push_back(row);  // rare path: allocation is fine here ...
          } catch (const std::bad_alloc&) {
            failure.unrecorded = true;  // ... unless memory ran out (reported below)
          }
          if (failure.first < 0 || row < failure.first) {
            failure.first = row;
            std::memcpy(failure.message, message, sizeof(message));
          }
        } else if (mirror) {
          mirror->copy(row);
        }
      }
    }
  });

  bool unrecorded = false;
  const Failure* lowest = nullptr;  // over every participant, not the one that ran out
  for (const Failure& f : failures) {
    unrecorded |= f.unrecorded;
    if (f.first >= 0 && (lowest == nullptr || f.first < lowest->first)) lowest = &f;
  }
  if (unrecorded) {
    throw OutOfMemory(
        "rows: MuJoCo failed in more rows than memory was left to record (the lowest: row " +
        std::to_string(lowest->first) + ": " + lowest->message +
        "); which rows were refreshed is unknown: treat every row of this call as not "
        "refreshed, and free memory or refresh fewer rows per call");
  }
  std::size_t failed = 0;
  for (const Failure& f : failures) failed += f.rows.size();
  try {
    result.failed_rows.reserve(failed);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory("rows: MuJoCo failed in " + std::to_string(failed) +
                      " rows, and no memory was left to list them (" +
                      std::to_string(failed * sizeof(int64_t)) +
                      " bytes); treat every row of this call as not refreshed, and free memory "
                      "or refresh fewer rows per call");
  }
  for (const Failure& f : failures) {
    result.failed_rows.insert(result.failed_rows.end(), f.rows.begin(), f.rows.end());
  }
  if (lowest != nullptr) result.message = lowest->message;
  std::sort(result.failed_rows.begin(), result.failed_rows.end());
  return result;
}

}  // namespace mjrefresh
