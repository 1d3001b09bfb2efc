"""The rows and dirty families: row ids and dirty masks of every kind, valid
and invalid."""

from __future__ import annotations

import random

from support.fuzz.cases.draws import setup
from support.fuzz.cases.suite import family


@family(1.0)
def gen_rows(rng: random.Random) -> str:
    """Row ids of every integer dtype, one id, slices; out of range, negative,
    unsorted, duplicate; bool masks of the wrong length; odd containers."""
    n = rng.choice((1, 3, 6, 9))
    code, info = setup(rng, n=n)
    method = rng.choice(("refresh", "bound", "bound_call"))
    dt = rng.choice(("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"))
    ids = sorted(rng.sample(range(n), k=rng.randint(0, n)))
    kind = rng.choice(
        (
            "valid",
            "valid",
            "out_of_range",
            "negative",
            "unsorted",
            "duplicate",
            "mask_short",
            "mask_long",
            "mask_empty",
            "float",
            "2d",
            "scalar",
            "slice",
            "zero_step",
            "none",
            "object",
            "strided",
            "reversed_view",
            "huge_unsigned",
            "list",
            "range",
            "tuple",
            "empty_float",
            "str",
        )
    )
    v = {
        "valid": f"np.array({ids!r}, dtype=np.{dt})",
        "out_of_range": f"np.array({sorted(set(ids) | {n + rng.randint(0, 3)})!r}, dtype=np.{dt})",
        "negative": f"np.array({[-rng.randint(1, 2**31)] + ids!r})",
        "unsorted": f"np.array({ids[::-1] + [n - 1] if ids else [n - 1, 0]!r}, dtype=np.{dt})",
        "duplicate": f"np.array({sorted(ids + ids[:1]) if ids else [0, 0]!r}, dtype=np.{dt})",
        "mask_short": f"np.ones({n - 1}, bool)",
        "mask_long": f"np.ones({n + 1}, bool)",
        "mask_empty": "np.ones(0, bool)",
        "float": f"np.array({ids!r}, dtype=np.float64)",
        "2d": f"np.array({ids!r}, dtype=np.{dt}).reshape(1, -1)",
        "scalar": f"np.{dt}({ids[0] if ids else 0})",
        "slice": f"slice({rng.randint(-n, n)}, {rng.randint(-n, 2 * n)}, {rng.choice((1, 2, -1, -3))})",
        "zero_step": "slice(0, None, 0)",
        "none": "None",
        "object": f"np.array({ids!r}, dtype=object)",
        "strided": f"np.repeat(np.array({ids!r}, dtype=np.{dt}), 2)[::2]",
        "reversed_view": f"np.array({ids[::-1]!r}, dtype=np.{dt})[::-1]",
        "huge_unsigned": f"np.array({ids + [2**64 - 1]!r}, dtype=np.uint64)",
        "list": f"{ids!r}",
        "range": f"range({n})",
        "tuple": f"tuple({ids!r})",
        "empty_float": "np.array([], dtype=np.float64)",
        "str": "'0'",
    }[kind]
    code += f"args['rows'] = {v}\n"
    if rng.random() < 0.3:
        code += (
            "args['rows'] = c.relayout(np.asarray(args['rows']), 'readonly') "
            "if isinstance(args['rows'], np.ndarray) and args['rows'].ndim else args['rows']\n"
        )
    code += f"c.check(r, {method!r}, args)\n"
    return code


@family(0.6)
def gen_dirty(rng: random.Random) -> str:
    """Dirty masks: dtypes, lengths, read-only, strided, none set."""
    n = rng.choice((1, 4, 7))
    code, info = setup(rng, n=n)
    method = rng.choice(("refresh_dirty_rows", "bound_dirty"))
    ids = sorted(rng.sample(range(n), k=rng.randint(0, n)))
    kind = rng.choice(
        (
            "valid",
            "valid",
            "int8",
            "uint8",
            "short",
            "long",
            "readonly",
            "2d",
            "list",
            "strided",
            "none_set",
            "all_set",
            "float",
        )
    )
    v = {
        "valid": f"np.isin(np.arange(n), {ids!r})",
        "int8": f"np.isin(np.arange(n), {ids!r}).astype(np.int8)",
        "uint8": f"np.isin(np.arange(n), {ids!r}).astype(np.uint8)",
        "short": f"np.ones({n - 1}, bool)",
        "long": f"np.ones({n + 1}, bool)",
        "readonly": f"c.relayout(np.isin(np.arange(n), {ids!r}), 'readonly')",
        "2d": f"np.isin(np.arange(n), {ids!r})[None]",
        "list": f"np.isin(np.arange(n), {ids!r}).tolist()",
        "strided": f"np.repeat(np.isin(np.arange(n), {ids!r}), 3)[::3]",
        "none_set": "np.zeros(n, bool)",
        "all_set": "np.ones(n, bool)",
        "float": f"np.isin(np.arange(n), {ids!r}).astype(float)",
    }[kind]
    code += f"args['dirty'] = {v}\n"
    code += f"c.check(r, {method!r}, args)\n"
    return code
