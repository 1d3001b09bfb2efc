"""Test support: models, random states, the mj_forward oracle, backend
harnesses and the failing MuJoCo callback. Importable without conftest
(pyproject puts tests/ on sys.path)."""
