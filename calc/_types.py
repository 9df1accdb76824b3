"""Numeric type shared by the formula modules: a float or a NumPy array of them.

Every formula is written once with NumPy operations, so the same function evaluates one
scenario (a Plan) or a million (a sweep).
"""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt

Numeric: TypeAlias = float | npt.NDArray[np.float64]
