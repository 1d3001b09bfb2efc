#include "mujoco_error_trap.h"

#include <csetjmp>
#include <cstdio>

#include <mujoco/mujoco.h>

// Exported by libmujoco (>= 3.11) and used by the official Python bindings to
// intercept errors per thread; not declared in the public headers.
extern "C" {
MJAPI mjfLogHandler _mjPRIVATE_setTlsLogHandler(mjfLogHandler handler);
MJAPI mjfLogHandler _mjPRIVATE_getGlobalLogHandler(void);
}

namespace mjrefresh {
namespace {

thread_local std::jmp_buf* tls_jump = nullptr;
thread_local char tls_message[1024];

void trap_handler(const mjLogMessage* msg) {
  if (msg->level >= mjLOG_ERROR && tls_jump != nullptr) {
    std::snprintf(tls_message, sizeof(tls_message), "%s", msg->subject);
    std::longjmp(*tls_jump, 1);
  }
  if (mjfLogHandler global = _mjPRIVATE_getGlobalLogHandler()) global(msg);
}

}  // namespace

bool trapped_call(void (*fn)(void*), void* arg, char* message, std::size_t message_size) {
  std::jmp_buf env;
  std::jmp_buf* const saved_jump = tls_jump;
  const mjfLogHandler saved_handler = _mjPRIVATE_setTlsLogHandler(&trap_handler);
  tls_jump = &env;
  bool ok;
  if (setjmp(env) == 0) {
    fn(arg);
    ok = true;
  } else {
    ok = false;
    std::snprintf(message, message_size, "%s", tls_message);
  }
  tls_jump = saved_jump;
  _mjPRIVATE_setTlsLogHandler(saved_handler);
  return ok;
}

}  // namespace mjrefresh
