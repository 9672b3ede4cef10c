"""Comparing a freshly computed JSON record with one stored on another machine: floats within a stated
tolerance, everything else exactly.

float32 results differ in their last bits between machines (the SIMD width and the summation order
of the BLAS kernels differ): a BERTScore F1 read 1.0 here against 0.99999994 in a fixture written
elsewhere, 0.42137268 against 0.42137265. Those are 1-2 units in the last place of a float32 (2^-24
relative, about 6e-8); a MiniLM forward pass and a 384-dimensional cosine add up such rounding over a
few hundred operations, so a different machine can move a score by up to ~1e-6. ``FLOAT32_ENCODER_TOL``
is ten times that, and still three orders of magnitude below the third decimal any table reports, so
a real change of a score still fails the comparison.
"""
from __future__ import annotations

import math

FLOAT32_ENCODER_TOL = 1e-5  # absolute and relative; see the module docstring
# float64 statistics of integer labels (agreement rates, kappa): summation order and SIMD width move them by
# a few units in the last place (~1e-16 relative); 1e-9 allows that and no change a table could show.
FLOAT64_STATISTIC_TOL = 1e-9


def json_differences(new, old, *, tol: float = FLOAT32_ENCODER_TOL, path: str = "$") -> list[str]:
    """Where ``new`` and ``old`` (parsed JSON) differ: each a line ``path: new != old``; floats count as
    equal within ``tol`` (absolute or relative), ints, strings, booleans and the structure exactly."""
    if isinstance(new, dict) and isinstance(old, dict):
        out = [f"{path}: keys {sorted(new.keys() ^ old.keys())} in one only"] if new.keys() != old.keys() else []
        for key in new.keys() & old.keys():
            out += json_differences(new[key], old[key], tol=tol, path=f"{path}.{key}")
        return out
    if isinstance(new, list) and isinstance(old, list):
        if len(new) != len(old):
            return [f"{path}: {len(new)} items != {len(old)}"]
        return [d for i, (a, b) in enumerate(zip(new, old)) for d in json_differences(a, b, tol=tol, path=f"{path}[{i}]")]
    if isinstance(new, float) or isinstance(old, float):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (new, old))
        if numbers and (new == old or math.isclose(new, old, rel_tol=tol, abs_tol=tol)):
            return []
        return [f"{path}: {new!r} != {old!r} (tolerance {tol:g})"]
    return [] if (type(new) is type(old) and new == old) else [f"{path}: {new!r} != {old!r}"]
