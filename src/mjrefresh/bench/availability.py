"""Whether each optional library a benchmark drives can run here, and if not, why.

Every check returns None when the library can be used, else a one-line reason
that the benchmarks print and record next to the skipped contender, backend
or variant.
"""

from __future__ import annotations


def mjbatch_unavailable() -> str | None:
    """None if mjbatch-uni with ``Batch.refresh_sensor_ranges`` imports, else why not."""
    try:
        import mjbatch
    except ImportError as e:
        return f"mjbatch-uni not installed ({e})"
    if not hasattr(mjbatch.Batch, "refresh_sensor_ranges"):
        return "this mjbatch has no Batch.refresh_sensor_ranges"
    return None


def mujoco_batch_unavailable() -> str | None:
    """None if ``mujoco.batch`` (MuJoCo >= 4.0) imports, else why not."""
    import mujoco

    try:
        from mujoco import batch  # noqa: F401
    except ImportError:
        return f"mujoco {mujoco.__version__} has no mujoco.batch (needs >= 4.0)"
    return None


def mujoco_uni_unavailable() -> str | None:
    """None if mujoco-uni-runtime's ``BatchEnvPool`` imports, else why not."""
    try:
        from mujoco_uni import BatchEnvPool  # noqa: F401
    except ImportError as e:
        return f"mujoco-uni-runtime not installed ({e})"
    return None


def mjrefresh_unavailable(engine: str) -> str | None:
    """None if ``mjrefresh.Refresher(engine=engine)`` builds on the embedded
    quadruped's tracking block, else why not (import failure, no ``Refresher``,
    engine rejected, or any other construction failure)."""
    try:
        import mjrefresh
    except Exception as e:  # noqa: BLE001 - report any import failure
        return f"import mjrefresh failed ({type(e).__name__}: {e})"
    if not hasattr(mjrefresh, "Refresher"):
        where = ", ".join(getattr(mjrefresh, "__path__", []))
        return f"mjrefresh (at {where}) has no Refresher yet"
    from mjrefresh import models

    model = models.quadruped()
    try:
        refresher = mjrefresh.Refresher(
            model,
            sensor_ranges=[models.tracking_layout(model).columns],
            num_threads=1,
            engine=engine,
        )
    except ValueError as e:
        return f"Refresher rejects engine={engine!r} ({e})"
    except Exception as e:  # noqa: BLE001 - an unfinished core must not stop the run
        return f"Refresher(engine={engine!r}) failed ({type(e).__name__}: {e})"
    refresher.close()
    return None
