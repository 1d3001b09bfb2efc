"""One refusal for ``copy.copy``, ``copy.deepcopy`` and pickling of the
objects that own native state (a refresher's worker threads and model copy,
a bound call's checked memory, a cache's dirty flags): a shallow copy
shared that state with the original (closing the copy closed the original;
marks on one were not seen by the other's reads), and pickling failed with
Python's generic message."""

from __future__ import annotations

from typing import Any, NoReturn


class NotCopyable:
    """Mixin: copying or pickling raises a TypeError saying what to do instead."""

    __slots__ = ()
    _instead = "build another one in the process that uses it"

    def _refuse_copy(self) -> NoReturn:
        name = type(self).__name__
        raise TypeError(
            f"{name} cannot be copied or pickled: it owns native state (worker threads, "
            f"bound memory, dirty flags) that a copy would share; {self._instead}"
        )

    def __copy__(self) -> NoReturn:
        self._refuse_copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        self._refuse_copy()

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        self._refuse_copy()
