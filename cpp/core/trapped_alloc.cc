#include "core/trapped_alloc.h"

#include <cstdlib>
#include <cstring>

#include "core/mujoco_error_trap.h"

namespace mjrefresh {
namespace {

struct CopyJob {
  const mjModel* src;
  mjModel* out;
};
struct MakeJob {
  const mjModel* m;
  mjData* out;
};

// Run inside trapped_call: plain C calls only (see mujoco_error_trap.h).
void copy_model(void* p) {
  auto* job = static_cast<CopyJob*>(p);
  job->out = mj_copyModel(nullptr, job->src);
}
void make_data(void* p) {
  auto* job = static_cast<MakeJob*>(p);
  job->out = mj_makeData(job->m);
}

[[noreturn]] void out_of_memory(int64_t bytes, const std::string& what, const std::string& remedy) {
  throw OutOfMemory("could not allocate " + std::to_string(bytes) + " bytes for " + what + "; " +
                    remedy);
}

// One allocation of `bytes`, freed at once: false if the system refuses it.
bool probe(int64_t bytes) {
  if (bytes <= 0) return true;
  void* p = std::malloc(static_cast<std::size_t>(bytes));
  if (p == nullptr) return false;
  std::free(p);
  return true;
}

void raise_trapped(const char* message, int64_t bytes, const std::string& what,
                   const std::string& remedy) {
  if (std::strstr(message, "allocate") != nullptr) out_of_memory(bytes, what, remedy);
  throw std::runtime_error("MuJoCo error while creating " + what + ": " + message);
}

// Probes `bytes`, then runs fn(job) trapped; throws unless job->out was made.
template <class Job>
void run_trapped(void (*fn)(void*), Job* job, int64_t bytes, const std::string& what,
                 const std::string& remedy) {
  if (!probe(bytes)) out_of_memory(bytes, what, remedy);
  char message[512] = {0};
  if (!trapped_call(fn, job, message, sizeof message) || job->out == nullptr) {
    raise_trapped(message, bytes, what, remedy);
  }
}

}  // namespace

mjModel* copy_model_trapped(const mjModel* model, const std::string& what,
                            const std::string& remedy) {
  CopyJob job{model, nullptr};
  run_trapped(&copy_model, &job, static_cast<int64_t>(mj_sizeModel(model)), what, remedy);
  return job.out;
}

mjData* make_data_trapped(const mjModel* model, int64_t expected_bytes, const std::string& what,
                          const std::string& remedy) {
  const int64_t bytes =
      expected_bytes > 0 ? expected_bytes : static_cast<int64_t>(sizeof(mjData) + model->narena);
  MakeJob job{model, nullptr};
  run_trapped(&make_data, &job, bytes, what, remedy);
  return job.out;
}

}  // namespace mjrefresh
