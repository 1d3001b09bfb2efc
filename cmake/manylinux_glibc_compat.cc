// Contract: linked into the prebuilt wheel's cores only (cmake/MuJoCoCores.cmake,
// with -static-libstdc++ and -Wl,--wrap=<each symbol below>). It lets cores
// built on a new glibc load on glibc >= 2.28 (manylinux_2_28).
//
// Why: the wheel links libstdc++ statically (the system libstdc++ of a
// manylinux_2_28 machine is older than the GCC here), and the static
// libstdc++ objects reference glibc symbols at the versions of this build
// machine: pthread_{create,join,detach,once}@GLIBC_2.34 (moved from
// libpthread into libc in 2.34), arc4random@GLIBC_2.36 and
// __libc_single_threaded@GLIBC_2.32. --wrap redirects every reference to
// the __wrap_ definitions here, which bind the old versions (same
// functions; on glibc < 2.34 they live in libpthread.so.0, which the cores
// list as NEEDED) or replace what has no old version.
#include <pthread.h>
#include <stdint.h>
#include <sys/random.h>

// The wrappers are for this library's own references only.
#define MJR_LOCAL __attribute__((visibility("hidden")))

extern "C" {

// .symver binds these local names to the oldest x86_64 versions.
__asm__(".symver mjr_pthread_create, pthread_create@GLIBC_2.2.5");
__asm__(".symver mjr_pthread_join, pthread_join@GLIBC_2.2.5");
__asm__(".symver mjr_pthread_detach, pthread_detach@GLIBC_2.2.5");
__asm__(".symver mjr_pthread_once, pthread_once@GLIBC_2.2.5");
int mjr_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int mjr_pthread_join(pthread_t, void**);
int mjr_pthread_detach(pthread_t);
int mjr_pthread_once(pthread_once_t*, void (*)(void));

MJR_LOCAL int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                    void* (*start)(void*), void* arg) {
  return mjr_pthread_create(thread, attr, start, arg);
}
MJR_LOCAL int __wrap_pthread_join(pthread_t thread, void** result) {
  return mjr_pthread_join(thread, result);
}
MJR_LOCAL int __wrap_pthread_detach(pthread_t thread) { return mjr_pthread_detach(thread); }
MJR_LOCAL int __wrap_pthread_once(pthread_once_t* once, void (*init)(void)) {
  return mjr_pthread_once(once, init);
}

// dlsym moved from libdl into libc in glibc 2.34 (dlsym@GLIBC_2.34).
__asm__(".symver mjr_dlsym, dlsym@GLIBC_2.2.5");
void* mjr_dlsym(void*, const char*);
MJR_LOCAL void* __wrap_dlsym(void* handle, const char* name) { return mjr_dlsym(handle, name); }

// glibc >= 2.38 headers name strtoul __isoc23_strtoul under _GNU_SOURCE
// (accepts 0b...); libstdc++.a built on such a glibc references it.
__asm__(".symver mjr_strtoul, strtoul@GLIBC_2.2.5");
unsigned long mjr_strtoul(const char*, char**, int);
MJR_LOCAL unsigned long __wrap___isoc23_strtoul(const char* s, char** end, int base) {
  return mjr_strtoul(s, end, base);
}

// std::random_device's "default" token; getrandom (glibc 2.25) blocks only
// until the kernel's pool is first seeded, like arc4random.
MJR_LOCAL uint32_t __wrap_arc4random(void) {
  uint32_t value = 0;
  for (ssize_t got = 0; got != (ssize_t)sizeof value;) {
    got = getrandom(&value, sizeof value, 0);
  }
  return value;
}

// libstdc++ skips atomic reference counting while this is nonzero. Zero is
// always correct (atomics are merely not skipped) and needs no glibc 2.32.
MJR_LOCAL char __wrap___libc_single_threaded = 0;

}  // extern "C"
