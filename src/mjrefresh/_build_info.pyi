# Type stub of the module CMake writes at build time (cpp/build_info.py.in).
MUJOCO_VERSIONS: tuple[str, ...]
PREBUILT: bool
MUJOCO_PACKAGE_DIR: str
