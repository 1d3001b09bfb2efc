"""Thread creation that fails on demand: a small library, compiled at test
time and preloaded into a child process, whose pthread_create refuses
(EAGAIN, as the system does at a thread or address-space limit) once a
countdown reaches zero. Set the countdown from the child with
``refuse_threads_after(k)``: k more threads start, then every one is refused;
-1 (the default) refuses none."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .child import child_env, run_child

SHIM_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
int refuse_after = -1;
typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int pthread_create(pthread_t* t, const pthread_attr_t* a, void* (*f)(void*), void* arg) {
  static create_fn real = 0;
  if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  if (refuse_after == 0) return EAGAIN;
  if (refuse_after > 0) --refuse_after;
  return real(t, a, f, arg);
}
"""

#: Prepended to the child's code: refuse_threads_after(k).
CHILD_PRELUDE = """
import ctypes, os
def refuse_threads_after(k):
    ctypes.c_int.in_dll(ctypes.CDLL(os.environ["MJREFRESH_THREAD_SHIM"]), "refuse_after").value = k
"""


def build_shim(cc: str, tmp: Path) -> Path:
    """Compile the shim with `cc` in `tmp`; its path."""
    src = tmp / "thread_shim.c"
    src.write_text(SHIM_C)
    so = tmp / "libthread_shim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", str(src), "-o", str(so), "-ldl"], check=True)
    return so


def run_with_thread_faults(shim: Path, code: str) -> subprocess.CompletedProcess[str]:
    """`code` in a child process with the shim preloaded (after any
    LD_PRELOAD already set, e.g. the sanitizer runtime)."""
    preload = " ".join(p for p in (os.environ.get("LD_PRELOAD", ""), str(shim)) if p)
    env = child_env(MJREFRESH_THREAD_SHIM=str(shim), LD_PRELOAD=preload)
    return run_child(CHILD_PRELUDE + code, env=env)
