"""What a case raises when the library breaks the contract, and how it
describes the exception it caught."""

from __future__ import annotations

import traceback


class ContractViolation(AssertionError):
    """The library broke a documented guarantee."""


def violation(message: str) -> ContractViolation:
    return ContractViolation(message)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _tb(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
