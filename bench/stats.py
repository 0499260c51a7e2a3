"""The statistics every case reports with: the median, a nearest-rank percentile, a ratio of
two figures and the best time of a call. Each is NaN where there is nothing to say (no
values, a zero base), so a table prints ``-`` for it rather than failing the run.

>>> median([3.0, 1.0, 2.0]), percentile([1.0, 2.0, 3.0, 4.0], 50), ratio(3.0, 2.0)
(2.0, 2.0, 1.5)
>>> slope_per_hour([(0, 60.0), (30, 61.0), (60, 62.0)])
2.0
>>> [math.isnan(v) for v in (median([]), percentile([], 99), ratio(1.0, 0), slope_per_hour([]))]
[True, True, True, True]
"""

from __future__ import annotations

import math
import statistics
import timeit
from collections.abc import Callable, Iterable, Sequence


def median(values: Iterable[float]) -> float:
    """The median, NaN for no values."""
    values = list(values)
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (NaN for no values)."""
    return sorted(values)[max(0, math.ceil(q / 100 * len(values)) - 1)] if values else math.nan


def ratio(part: float | None, whole: float | None) -> float:
    """``part / whole``; NaN when either is missing or ``whole`` is 0."""
    return math.nan if part is None or whole is None or whole == 0 else part / whole


def slope_per_hour(points: Sequence[tuple[float, float]]) -> float:
    """The least-squares slope of ``(minutes, MB)`` points, in MB per hour (NaN under two)."""
    if len(points) < 2:
        return math.nan
    xs, ys = [p[0] / 60 for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread


def best_us(call: Callable[[], object], number: int) -> float:
    """Microseconds per call of ``call``: the best of five runs of ``number`` calls."""
    return min(timeit.repeat(call, number=number, repeat=5)) / number * 1e6
