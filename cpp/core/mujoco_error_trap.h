// Recover from mju_error raised on the current thread.
//
// Contract
// - MuJoCo's default error handler calls exit(). trapped_call(fn, arg, ...)
//   runs fn(arg) with a thread-local MuJoCo log handler installed (MuJoCo's
//   per-thread handler slot, the same mechanism the mujoco Python bindings
//   use), so that an error raised by MuJoCo inside fn longjmps back here and
//   trapped_call returns false with MuJoCo's message. The previous
//   thread-local handler is restored before returning, so the bindings' own
//   error reporting on that thread is unchanged.
// - fn must be plain C-style work (MuJoCo calls, memcpy): no C++ objects with
//   non-trivial destructors may be alive between trapped_call and the point
//   where MuJoCo raises, because longjmp skips destructors.
// - After a failure the mjData that fn was working on is in an undefined
//   intermediate state (its arena stack may still be marked); the caller must
//   reset it (mj_resetData) before reusing it.
// - Warnings and infos on this thread are forwarded to MuJoCo's global log
//   handler, if one is installed, and otherwise dropped.
// - Thread-safety: everything is thread-local; safe on any number of threads.
#pragma once

#include <cstddef>

namespace mjrefresh {

bool trapped_call(void (*fn)(void*), void* arg, char* message, std::size_t message_size);

// Installs the trap handler on this thread for the scope's lifetime, so that
// trapped_call() inside it only pays for setjmp (swapping the thread-local
// handler costs two TLS lookups in libmujoco per call; per row that was a
// measurable share of a ~2.5 us exact-engine row on the 2-vCPU AMD EPYC
// VM; callgrind: python -m bench.research.instructions). Restores the previous
// handler on exit. Not copyable; nests.
class TrapScope {
 public:
  TrapScope();
  ~TrapScope();
  TrapScope(const TrapScope&) = delete;
  TrapScope& operator=(const TrapScope&) = delete;

 private:
  void* saved_handler_;
  bool saved_active_;
};

}  // namespace mjrefresh
