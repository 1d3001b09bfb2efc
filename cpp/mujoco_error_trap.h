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

}  // namespace mjrefresh
