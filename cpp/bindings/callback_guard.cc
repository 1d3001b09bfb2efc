#include "bindings/callback_guard.h"

#include <mujoco/mujoco.h>
#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

#include "core/selection.h"

namespace mjrefresh::bind {
namespace {

namespace nb = nanobind;

// What mujoco.get_mjcb_<name>() returns is not None: a callback was set
// through the bindings.
bool set_in_python(const char* name) {
  const nb::object getter =
      nb::module_::import_("mujoco").attr((std::string("get_") + name).c_str());
  return !getter().is_none();
}

[[noreturn]] void refuse(const char* name) {
  const std::string setter = std::string("mujoco.set_") + name;
  throw std::runtime_error(
      std::string("MuJoCo's global ") + name + " callback is set (" + setter +
      "), and this refresher's plan runs mj_collision (contact sensors or adhesion actuators), "
      "which calls it: a refresh never calls global callbacks (they would run on worker "
      "threads, and a contact filter changes the contacts). Unset it around refreshes (" +
      setter + "(None)) or select no outputs that need contacts");
}

}  // namespace

void check_no_callbacks(uint32_t stages) {
  if (!(stages & kCollision)) return;
  if (mjcb_contactfilter != nullptr) refuse("mjcb_contactfilter");
  if (mjcb_time != nullptr && set_in_python("mjcb_time")) refuse("mjcb_time");
}

}  // namespace mjrefresh::bind
