#include "core/mujoco_error_trap.h"

#include <mujoco/mujoco.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>

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
thread_local bool tls_scope_active = false;  // a TrapScope installed the handler

// Appends `text` to tls_message at `*at`, cut at its end (no allocation:
// the handler longjmps, which would skip a destructor).
void append_message(std::size_t* at, const char* text) {
  while (*text != '\0' && *at + 1 < sizeof(tls_message)) tls_message[(*at)++] = *text++;
  tls_message[*at] = '\0';
}

void trap_handler(const mjLogMessage* msg) {
  if (msg->level >= mjLOG_ERROR && tls_jump != nullptr) {
    // mjERROR names its function in `func`, not in the subject: prefix it as
    // MuJoCo's own handlers print it ("mj_ray: vector length is too small");
    // an older mju_error("mj_stackAlloc: ...") already carries it.
    const char* func = msg->func;
    const std::size_t len = func != nullptr ? std::strlen(func) : 0;
    std::size_t at = 0;
    if (len > 0 && !(std::strncmp(msg->subject, func, len) == 0 && msg->subject[len] == ':')) {
      append_message(&at, func);
      append_message(&at, ": ");
    }
    append_message(&at, msg->subject);
    std::longjmp(*tls_jump, 1);
  }
  if (mjfLogHandler global = _mjPRIVATE_getGlobalLogHandler()) global(msg);
}

}  // namespace

TrapScope::TrapScope()
    : saved_handler_(reinterpret_cast<void*>(_mjPRIVATE_setTlsLogHandler(&trap_handler))),
      saved_active_(tls_scope_active) {
  tls_scope_active = true;
}

TrapScope::~TrapScope() {
  _mjPRIVATE_setTlsLogHandler(reinterpret_cast<mjfLogHandler>(saved_handler_));
  tls_scope_active = saved_active_;
}

bool trapped_call(void (*fn)(void*), void* arg, char* message, std::size_t message_size) {
  std::jmp_buf env;
  std::jmp_buf* const saved_jump = tls_jump;
  const bool install = !tls_scope_active;
  const mjfLogHandler saved_handler =
      install ? _mjPRIVATE_setTlsLogHandler(&trap_handler) : nullptr;
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
  if (install) _mjPRIVATE_setTlsLogHandler(saved_handler);
  return ok;
}

}  // namespace mjrefresh
