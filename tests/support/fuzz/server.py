"""The fork server: imports numpy, mujoco and mjrefresh once, then runs each
case in a forked child.

Protocol (one JSON object per line): the parent writes
``{"name", "source", "timeout"}`` to stdin; the server answers on its original
stdout with ``{"name", "status", "detail", "signal", "exitcode", "output",
"seconds"}``, where status is

* ``pass``: the case script ran to its end;
* ``fail``: it raised (``detail`` is the traceback);
* ``crash``: the child died of a signal, or exited without a verdict;
* ``timeout``: it did not finish in time and was killed (SIGKILL, with every
  process it started).

Each child runs in its own process group, with stdout/stderr sent to a file
whose start and end come back as ``output`` (what an abort or a sanitizer
prints lands there).
Run as ``python -m support.fuzz.server`` with tests/ on the path.
"""

from __future__ import annotations

import gc
import json
import linecache
import os
import select
import signal
import sys
import tempfile
import time
import traceback

OUTPUT_KEEP = 4000  # bytes of a case's output kept from its start and from its end
_PROTO_FD = -1  # the server's protocol stream; closed in every child


def _child(source: str, name: str, result_fd: int, log_fd: int) -> None:
    """In the forked child: run the case and write its verdict (never returns)."""
    me = os.getpid()
    os.setpgid(0, 0)
    if _PROTO_FD >= 0:
        os.close(_PROTO_FD)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    filename = f"<fuzz case {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    verdict = {"status": "pass", "detail": ""}
    namespace = {"__name__": "__main__", "__file__": filename}
    try:
        exec(compile(source, filename, "exec"), namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            verdict = {"status": "fail", "detail": f"SystemExit({exc.code!r})"}
    except BaseException:  # noqa: BLE001 - the case's own failure, reported
        verdict = {"status": "fail", "detail": traceback.format_exc()}
    if os.getpid() != me:  # a process the case forked fell through: stay silent
        os._exit(97)
    try:  # what a standalone run does next: free the objects, run atexit
        namespace.clear()
        gc.collect()
        import atexit

        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        if verdict["status"] == "pass":
            verdict = {"status": "fail", "detail": "at exit:\n" + traceback.format_exc()}
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    data = json.dumps(verdict).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view) :]
    os._exit(0)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_case(name: str, source: str, timeout: float) -> dict:
    """Fork, run `source` in the child, and collect its fate."""
    start = time.monotonic()
    read_fd, write_fd = os.pipe()
    log = tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _child(source, name, write_fd, log.fileno())
        finally:
            os._exit(98)
    os.close(write_fd)
    try:  # the child sets it too; whoever runs first wins the race harmlessly
        os.setpgid(pid, pid)
    except (PermissionError, ProcessLookupError):
        pass
    deadline = start + timeout
    chunks: list[bytes] = []
    timed_out = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([read_fd], [], [], remaining)
        if ready:
            data = os.read(read_fd, 1 << 16)
            if not data:
                break
            chunks.append(data)
    status_word = None
    while not timed_out:
        done, status_word = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            timed_out = True
            break
        time.sleep(0.002)
    if timed_out:
        _kill_group(pid)
        _, status_word = os.waitpid(pid, 0)
    _kill_group(pid)  # anything the case forked and left behind
    os.close(read_fd)
    log.seek(0)
    output = log.read()
    log.close()
    if len(output) > 2 * OUTPUT_KEEP:  # a sanitizer report starts early, a traceback ends late
        output = output[:OUTPUT_KEEP] + b"\n[...]\n" + output[-OUTPUT_KEEP:]
    output_text = output.decode(errors="replace")
    report = {
        "name": name,
        "status": "pass",
        "detail": "",
        "signal": None,
        "exitcode": None,
        "output": output_text,
        "seconds": round(time.monotonic() - start, 3),
    }
    if os.WIFSIGNALED(status_word):
        report["signal"] = signal.Signals(os.WTERMSIG(status_word)).name
    elif os.WIFEXITED(status_word):
        report["exitcode"] = os.WEXITSTATUS(status_word)
    if timed_out:
        report.update(status="timeout", detail=f"no verdict after {timeout:.0f} s; killed")
        return report
    verdict = None
    if chunks:
        try:
            verdict = json.loads(b"".join(chunks))
        except ValueError:
            verdict = None
    if report["signal"] is not None or verdict is None:
        how = (
            f"killed by {report['signal']}"
            if report["signal"]
            else f"exited with code {report['exitcode']} without a verdict"
        )
        report.update(status="crash", detail=how)
        return report
    report.update(status=verdict["status"], detail=verdict["detail"])
    return report


def main() -> None:
    # The protocol keeps the original stdout; anything else printed goes to stderr.
    global _PROTO_FD
    _PROTO_FD = os.dup(1)
    proto = os.fdopen(_PROTO_FD, "w", buffering=1)
    os.dup2(2, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent ends us by closing stdin
    import mujoco  # noqa: F401
    import numpy  # noqa: F401 - imported once, shared by every child

    import mjrefresh  # noqa: F401
    from support.fuzz import contract

    for name in contract.MODEL_NAMES:  # compiled once; each child gets its own copy
        try:
            contract.load_model(name)
        except Exception:  # noqa: BLE001 - the case that loads it reports it
            pass

    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        report = run_case(req["name"], req["source"], float(req["timeout"]))
        proto.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
