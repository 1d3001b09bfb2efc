// Persistent worker pool that runs one parallel task at a time.
//
// Contract
// - Threads: a pool of size T owns T-1 worker threads created once in the
//   constructor; the thread that calls run() is participant 0 and works too.
// - run(active, task) calls task(0) on the calling thread and task(i) on
//   each worker i in [1, active) that wakes up in time, then returns when
//   every task that started has returned. Only the first active-1 workers
//   are woken; the others keep sleeping, so a small call does not pay for
//   waking every thread. "In time" means before task(0) returns: the caller
//   then closes the call, and a worker that wakes later (waking an idle
//   thread took 10-80 us on the 2-vCPU VM) skips it instead of making the caller wait
//   for its wake-up. Tasks must therefore share their work dynamically (the
//   refresher hands out rows from an atomic counter), never assume that a
//   given participant runs.
// - Serialisation: run() is not re-entrant and must not be called from two
//   threads at once; the owner (Refresher) holds a mutex around it.
// - Exceptions: a task that throws (on the caller or a worker) does not end
//   the process: run() still closes the call and waits for every task that
//   started, then rethrows the first exception (the refresh kernels catch
//   everything themselves; this guards allocation failures).
// - Thread start (on_start): each worker runs on_start once when it starts,
//   and the constructor (and run(), restarting workers after fork) returns
//   only when every started worker has run it. The refresher touches its
//   thread-local storage there: glibc allocates a module's thread-locals on
//   a thread's first use and ends the process when it cannot, so that use
//   happens while the pool is built, not at the first refresh after memory
//   ran short.
// - Pinning: cpu_ids (Linux only) pins participant i to cpu_ids[i % size];
//   the caller thread is pinned only for the duration of run() and restored.
// - fork(): threads do not survive fork(). run() detects that it is running
//   in a child process (fork_generation() changed) and starts fresh workers
//   there; the parent's thread handles are leaked on purpose (they cannot be
//   joined).
// - Thread start: the constructor throws ThreadStartError (naming the
//   worker that could not start, the pool size and the system's reason)
//   when the system refuses a thread (address-space or thread limits), after
//   stopping and joining the workers it had started: nothing is left
//   running. In a forked child, where run() restarts the workers, a refused
//   thread instead shrinks the pool to the workers that started (tasks share
//   their work dynamically, so fewer participants only cost speed).
// - Destruction joins all workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mjrefresh {

// The system refused to start a worker thread (std::thread's system_error).
class ThreadStartError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WorkerPool {
 public:
  // size >= 1 participants in total (including the caller).
  WorkerPool(int size, std::vector<int> cpu_ids, std::function<void()> on_start = {});
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }
  void run(int active, const std::function<void(int)>& task);

 private:
  // Pause-loop iterations a worker spins after a task before it sleeps.
  // Tuned on a Xeon, where 2000 pauses took 20 us (5000: ~50 us); on this
  // project's 2-vCPU AMD EPYC VM (bench/README.md) 5000 pauses take ~120 us
  // (a loop of __builtin_ia32_pause timed with steady_clock). Calls that
  // follow within that window skip the futex wake-up: a 31-row partial-reset
  // refresh of the humanoid (exact engine, 2 threads) went from 0.156 to
  // 0.126 ms per call there (re-measure: python -m bench.micro --models
  // humanoid --workloads reset --threads 2). Longer spins only burn the
  // second core.
  static constexpr int kSpinIterations = 5000;
  struct alignas(64) Slot {
    std::atomic<uint64_t> go{0};  // epoch of the call this worker is woken for
  };
  // Starts workers 1..size_-1. If the system refuses one: with `shrink`,
  // keeps those that started and lowers size_; otherwise stops and joins
  // them and throws ThreadStartError.
  void start_workers(bool shrink);
  void stop_workers();  // wakes every started worker with stop_ set and joins it
  void worker_main(int index);
  void pin_self(int index);
  void keep_error(std::exception_ptr error);  // the first one of a call

  int size_;
  std::vector<int> cpu_ids_;
  std::function<void()> on_start_;
  std::atomic<int> started_{0};  // workers that ran on_start_
  std::mutex error_mutex_;
  std::exception_ptr error_;  // first exception of the current call
  uint64_t fork_gen_;         // fork_generation() the workers were started in
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  // A worker joins the call of epoch_ only while open_; in_flight_ counts
  // workers between "about to check" and "done", so the caller can close the
  // call and wait for exactly the workers that joined (seq_cst on all three:
  // either the worker sees the call closed or the caller sees it in flight).
  alignas(64) std::atomic<uint64_t> epoch_{0};
  std::atomic<bool> open_{false};
  alignas(64) std::atomic<int> in_flight_{0};
  std::atomic<bool> stop_{false};
};

// Number of logical CPUs this process may run on.
int available_cpus();
// True if `cpu` is in this process's affinity mask (Linux); false elsewhere.
bool cpu_in_affinity(int cpu);

}  // namespace mjrefresh
