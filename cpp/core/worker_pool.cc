#include "core/worker_pool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <string>
#include <system_error>

#include "core/fork_generation.h"

namespace mjrefresh {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

int available_cpus() {
#ifdef __linux__
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

bool cpu_in_affinity(int cpu) {
#ifdef __linux__
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return false;
  return CPU_ISSET(cpu, &set);
#else
  (void)cpu;
  return false;
#endif
}

WorkerPool::WorkerPool(int size, std::vector<int> cpu_ids, std::function<void()> on_start)
    : size_(std::max(1, size)),
      cpu_ids_(std::move(cpu_ids)),
      on_start_(std::move(on_start)),
      fork_gen_(fork_generation()) {
  start_workers(/*shrink=*/false);
}

void WorkerPool::start_workers(bool shrink) {
  slots_.reset(new Slot[size_]);
  stop_.store(false);
  open_.store(false);
  in_flight_.store(0);
  started_.store(0);
  threads_.clear();
  threads_.reserve(size_ - 1);
  for (int i = 1; i < size_; ++i) {
    try {
      threads_.emplace_back([this, i] { worker_main(i); });
    } catch (const std::exception& e) {  // system_error, or bad_alloc of its state
      const auto* sys = dynamic_cast<const std::system_error*>(&e);
      const std::string why = sys ? sys->code().message() : std::string(e.what());
      const int wanted = size_;
      if (shrink) {
        size_ = i;  // workers 1..i-1 run; slots_ stays large enough
        break;
      }
      stop_workers();
      throw ThreadStartError(
          "num_threads: could not start worker thread " + std::to_string(i) + " of " +
          std::to_string(wanted - 1) + " (num_threads=" + std::to_string(wanted) +
          ", the calling thread included): " + why +
          "; the process's limits allow fewer threads (address space: ulimit -v; thread stacks: "
          "ulimit -s; threads: "
          "ulimit -u or a container's pids limit): pass a smaller num_threads");
    }
  }
  // Every started worker has run on_start_ (its thread-locals exist).
  const int count = static_cast<int>(threads_.size());
  for (int s = started_.load(); s < count; s = started_.load()) started_.wait(s);
}

void WorkerPool::stop_workers() {
  stop_.store(true);
  const uint64_t last = epoch_.fetch_add(1) + 1;
  for (size_t i = 1; i <= threads_.size(); ++i) {
    slots_[i].go.store(last, std::memory_order_release);
    slots_[i].go.notify_one();
  }
  for (auto& t : threads_) t.join();
  threads_.clear();
}

WorkerPool::~WorkerPool() {
  if (fork_generation() != fork_gen_) {
    // Forked child that never called run(): the workers belong to the parent.
    new std::vector<std::thread>(std::move(threads_));  // leaked on purpose
    return;
  }
  stop_workers();
}

void WorkerPool::pin_self(int index) {
#ifdef __linux__
  if (cpu_ids_.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu_ids_[index % cpu_ids_.size()], &set);
  sched_setaffinity(0, sizeof(set), &set);
#else
  (void)index;
#endif
}

void WorkerPool::keep_error(std::exception_ptr error) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (!error_) error_ = std::move(error);
}

void WorkerPool::worker_main(int index) {
  pin_self(index);
  if (on_start_) {
    try {
      on_start_();
    } catch (...) {  // only warms up: the first call would fail the same way, reported
    }
  }
  started_.fetch_add(1);
  started_.notify_all();
  Slot& slot = slots_[index];
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly before sleeping: back-to-back calls (a partial reset right
    // after a step refresh) then find the worker awake instead of paying a
    // futex wake-up. See kSpinIterations.
    for (int i = 0; i < kSpinIterations && slot.go.load(std::memory_order_relaxed) == seen; ++i) {
      cpu_relax();
    }
    slot.go.wait(seen, std::memory_order_acquire);
    seen = slot.go.load(std::memory_order_acquire);
    if (stop_.load()) return;
    in_flight_.fetch_add(1);
    // Join only the call we were woken for, and only while it is open.
    if (open_.load() && epoch_.load() == seen) {
      try {
        (*task_)(index);
      } catch (...) {  // rethrown by run() on the caller, after the call closes
        keep_error(std::current_exception());
      }
    }
    if (in_flight_.fetch_sub(1) == 1) in_flight_.notify_all();
  }
}

void WorkerPool::run(int active, const std::function<void(int)>& task) {
  if (fork_generation() != fork_gen_) {
    // Child after fork(): the parent's workers do not exist here.
    new std::vector<std::thread>(std::move(threads_));  // leaked on purpose
    new (&error_mutex_) std::mutex();  // a parent's thread may have held it at fork
    error_ = nullptr;
    fork_gen_ = fork_generation();
    start_workers(/*shrink=*/true);
  }
  active = std::clamp(active, 1, size_);
#ifdef __linux__
  cpu_set_t saved;
  bool restore = false;
  if (!cpu_ids_.empty() && sched_getaffinity(0, sizeof(saved), &saved) == 0) {
    pin_self(0);
    restore = true;
  }
#endif
  task_ = &task;
  const uint64_t epoch = epoch_.load() + 1;
  epoch_.store(epoch);
  open_.store(true);
  for (int i = 1; i < active; ++i) {
    slots_[i].go.store(epoch, std::memory_order_release);
    slots_[i].go.notify_one();
  }
  try {
    task(0);
  } catch (...) {  // the workers may still use the task's state: wait first
    keep_error(std::current_exception());
  }
  // task(0) returns once no work is left to claim: close the call, then wait
  // only for the workers that joined it (they finish the rows they claimed).
  open_.store(false);
  for (int p = in_flight_.load(); p != 0; p = in_flight_.load()) in_flight_.wait(p);
  task_ = nullptr;
#ifdef __linux__
  if (restore) sched_setaffinity(0, sizeof(saved), &saved);
#endif
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(error_mutex_);
    std::swap(error, error_);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace mjrefresh
