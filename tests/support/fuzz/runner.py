"""The parent side of the fork server: start it, send cases, read reports, and
turn failures into a readable message with a reproducer script each."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Report:
    """What happened to one case (see support.fuzz.server)."""

    name: str
    status: str  # pass, fail, crash, timeout
    detail: str
    signal: str | None
    exitcode: int | None
    output: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def signature(self) -> str:
        """The kind of failure, for grouping cases that fail the same way:
        the crash signal, or the last exception line without numbers and quotes."""
        if self.status == "crash":
            head = self.signal or f"exit {self.exitcode}"
            aborted = re.search(
                r"terminate called after throwing an instance of '([^']+)'", self.output
            )
            why = f" ({aborted.group(1)})" if aborted else ""
            if "terminate called without an active exception" in self.output:
                why = " (terminate called without an active exception)"
            sanitizer = re.search(
                r"runtime error: ([^\n]+)|ERROR: AddressSanitizer: ([\w-]+)", self.output
            )
            if sanitizer:
                text = re.sub(r"0x[0-9a-fA-F]+", "0x…", sanitizer.group(1) or sanitizer.group(2))
                text = re.sub(r"-?\d+", "N", text)
                why += f" (sanitizer: {text[:120]})"
            return f"crash {head}{why}"
        if self.status == "timeout":
            return "timeout"
        lines = [ln for ln in self.detail.strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else self.detail
        # the violation's first line names what broke; drop values, keep words
        first_violation = next((ln for ln in lines if "ContractViolation:" in ln), last)
        text = first_violation.split("ContractViolation:", 1)[-1]
        text = re.sub(r" \[.*?\]:", ":", text, count=1)  # the case's note
        text = re.sub(r"0x[0-9a-fA-F]+", "0x…", text)
        text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
        text = re.sub(r"\[[^\]]*\]", "[…]", text)
        text = re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
        return f"{self.status}: {text.strip()[:160]}"


class ForkServer:
    """A running `python -m support.fuzz.server`; `run(name, source, timeout)`."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(TESTS_DIR), *filter(None, [env.get("PYTHONPATH")])]
        )
        # one BLAS thread: the children fork from a process without extra threads
        for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(k, "1")
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "support.fuzz.server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=str(TESTS_DIR),
            env=env,
        )
        ready = self._proc.stdout.readline()  # type: ignore[union-attr]
        if not ready or not json.loads(ready).get("ready"):
            raise RuntimeError("the fuzz fork server did not start")

    def run(self, name: str, source: str, timeout: float) -> Report:
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        assert self._proc and self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(
            json.dumps({"name": name, "source": source, "timeout": timeout}) + "\n"
        )
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:  # the server itself died: report and start a new one next time
            self._proc.wait()
            code = self._proc.returncode
            self._proc.stdin.close()
            self._proc.stdout.close()
            self._proc = None
            return Report(name, "crash", f"the fork server died (exit {code})", None, code, "", 0.0)
        return Report(**json.loads(line))

    def close(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            if self._proc.stdout:
                self._proc.stdout.close()
            self._proc = None


def failure_message(
    family: str,
    failed: Iterable[tuple[Report, str]],
    total: int,
    saved_to: Path | None = None,
    limit: int = 4,
) -> str:
    """One paragraph per distinct failure (signature) with the shortest
    reproducer of each, and the other cases that failed the same way."""
    groups: dict[str, list[tuple[Report, str]]] = {}
    for report, source in failed:
        groups.setdefault(report.signature(), []).append((report, source))
    count = sum(len(g) for g in groups.values())
    lines = [
        f"{count} of {total} {family} cases broke the contract, {len(groups)} distinct failure(s)"
    ]
    if saved_to is not None:
        lines.append(f"every failing case's script is in {saved_to}")
    for k, (sig, members) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))):
        report, source = min(members, key=lambda m: len(m[1]))
        lines.append("")
        lines.append(
            f"=== [{k + 1}] {sig}  ({len(members)} cases: "
            f"{', '.join(m[0].name for m in members[:8])}"
            f"{', ...' if len(members) > 8 else ''})"
        )
        if k >= limit:
            lines.append("(reproducer omitted; see the saved scripts)")
            continue
        lines.append(
            f"--- {report.name}: {report.status}" + (f", {report.signal}" if report.signal else "")
        )
        detail = report.detail.strip()
        if len(detail) > 3000:
            detail = detail[:1200] + "\n[...]\n" + detail[-1600:]
        if detail:
            lines.append(detail)
        if report.output.strip():
            out = report.output.strip()
            lines.append("--- output:")
            lines.append(out if len(out) <= 3000 else out[:1500] + "\n[...]\n" + out[-1500:])
        lines.append("--- reproducer (python case.py):")
        lines.append(source.rstrip())
    return "\n".join(lines)
