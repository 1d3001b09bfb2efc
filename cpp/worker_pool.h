// Persistent worker pool that runs one parallel task at a time.
//
// Contract
// - Threads: a pool of size T owns T-1 worker threads created once in the
//   constructor; the thread that calls run() is participant 0 and works too.
// - run(active, task) calls task(i) exactly once for each participant
//   i in [0, active) and returns when all of them have returned. Only the
//   first active-1 workers are woken; the others keep sleeping, so a small
//   call does not pay for waking every thread.
// - Serialisation: run() is not re-entrant and must not be called from two
//   threads at once; the owner (Refresher) holds a mutex around it.
// - Exceptions: task must not throw (the refresh kernels catch everything and
//   report per participant); if it does, std::terminate is called.
// - Pinning: cpu_ids (Linux only) pins participant i to cpu_ids[i % size];
//   the caller thread is pinned only for the duration of run() and restored.
// - fork(): threads do not survive fork(). run() detects that it is running
//   in a child process (pid changed) and starts fresh workers there; the
//   parent's thread handles are leaked on purpose (they cannot be joined).
// - Destruction joins all workers.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace mjrefresh {

class WorkerPool {
 public:
  // size >= 1 participants in total (including the caller).
  WorkerPool(int size, std::vector<int> cpu_ids);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return size_; }
  void run(int active, const std::function<void(int)>& task);

 private:
  struct alignas(64) Slot {
    std::atomic<uint32_t> go{0};  // bumped by run() to wake this worker
  };
  void start_workers();
  void worker_main(int index);
  void pin_self(int index);

  int size_;
  std::vector<int> cpu_ids_;
  pid_t owner_pid_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* task_ = nullptr;
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

// Number of logical CPUs this process may run on.
int available_cpus();
// True if `cpu` is in this process's affinity mask (Linux); false elsewhere.
bool cpu_in_affinity(int cpu);

}  // namespace mjrefresh
