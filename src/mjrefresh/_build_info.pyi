# Type stub of the module CMake writes at build time (cpp/build_info.py.in).
MUJOCO_VERSION: str
