#include "bench_hooks/stage_seconds.h"

#include <stdexcept>
#include <string>

#include "exact/exact_engine.h"

namespace mjrefresh {

double stage_seconds(Refresher& refresher, const int64_t* rows, int64_t num_rows,
                     const Inputs& in) {
  int64_t ns = 0;
  refresher.with_engine([&](RowEngine& engine) {
    auto* exact = dynamic_cast<ExactEngine*>(&engine);
    if (exact == nullptr) throw std::runtime_error("stage_seconds needs the exact engine");
    char message[1024];
    if (!exact->time_stages(rows, num_rows, in, &ns, message, sizeof(message))) {
      throw std::runtime_error(std::string("MuJoCo error: ") + message);
    }
  });
  return static_cast<double>(ns) * 1e-9;
}

}  // namespace mjrefresh
