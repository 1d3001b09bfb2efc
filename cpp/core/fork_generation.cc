#include "core/fork_generation.h"

#include <pthread.h>

#include <atomic>

namespace mjrefresh {
namespace {

std::atomic<uint64_t> generation{0};

void in_child() { generation.fetch_add(1, std::memory_order_relaxed); }

bool register_handler() {
  pthread_atfork(nullptr, nullptr, &in_child);
  return true;
}

}  // namespace

uint64_t fork_generation() {
  static const bool registered = register_handler();
  (void)registered;
  return generation.load(std::memory_order_relaxed);
}

}  // namespace mjrefresh
