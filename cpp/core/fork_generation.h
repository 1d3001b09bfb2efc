// Fork detection for the objects that own threads or locks (Refresher,
// WorkerPool).
//
// Contract
// - fork_generation() returns a process-wide counter that a pthread_atfork
//   child handler increments in every child created by fork(). An object
//   records the value when it creates its threads/locks; a different value
//   later means "this is a forked child: the parent's threads are gone and
//   a lock may have been copied while held".
// - The handler is registered once, on the first call (before any object
//   records a value, so no fork after that is missed). Reading the counter
//   is one relaxed atomic load, cheaper than the getpid() system call it
//   replaces on every refresh.
// - Thread-safe; async-signal-safe in the child handler (a lock-free add).
#pragma once

#include <cstdint>

namespace mjrefresh {

uint64_t fork_generation();

}  // namespace mjrefresh
