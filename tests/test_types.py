"""calc._types: the scalar-keeping helpers behave as np.asarray / np.where, with NumPy scalars
for one scenario (a plan) and arrays for many (a sweep)."""

from __future__ import annotations

import numpy as np
import pytest

from calc._types import clip, floats, where


def test_floats_keeps_one_number_a_numpy_scalar() -> None:
    assert type(floats(2.5)) is np.float64 and floats(2.5) == 2.5
    assert type(floats(3)) is np.float64 and floats(3) == 3.0  # an int becomes a float
    assert type(floats(np.array(4.0))) is np.float64  # a 0-d array becomes a scalar


def test_floats_of_many_is_a_float_array() -> None:
    got = floats([1, 2, 3])
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert got.tolist() == [1.0, 2.0, 3.0]


def test_where_picks_like_np_where() -> None:
    assert where(True, 2.0, 3.0) == 2.0 and type(where(True, 2.0, 3.0)) is np.float64
    assert where(np.float64(1.0) > 2.0, 2.0, np.float64(3.0)) == 3.0
    assert np.isnan(where(False, 1.0, float("nan")))
    # An array condition, or an array branch, is np.where's: element by element.
    assert where(np.array([True, False]), 1.0, 0.0).tolist() == [1.0, 0.0]
    assert where(True, np.array([5.0, 6.0]), 0.0).tolist() == [5.0, 6.0]


def test_one_scenario_divides_by_zero_as_numpy_does() -> None:
    # A Python float would raise ZeroDivisionError; the helpers keep NumPy's inf under errstate.
    with np.errstate(divide="ignore"):
        assert 1.0 / floats(0.0) == np.inf
        assert 1.0 / where(True, 0.0, 1.0) == np.inf


def test_clip_is_np_clips_definition() -> None:
    assert clip(1.5, 0.0, 1.0) == 1.0 and clip(-0.5, 0.0, 1.0) == 0.0 and clip(0.25, 0.0, 1.0) == 0.25
    assert clip(5.0, 3.0, 2.0) == 2.0  # low above high: high, as np.clip documents
    assert np.isnan(clip(float("nan"), 0.0, 1.0))
    assert clip(np.array([-1.0, 0.5, 2.0]), 0.0, 1.0).tolist() == [0.0, 0.5, 1.0]


def test_a_float64_or_a_float64_array_passes_through_as_it_is() -> None:
    # The fast path's promise (module docstring): one scenario's NumPy scalar is returned, not a
    # new float64 built from it, and a float64 array is the array itself, as np.asarray returns
    # it (no copy, no view): floats(x) is x and where(...) is the branch it picks.
    x, y = np.float64(2.5), np.float64(4.0)
    assert floats(x) is x
    assert where(True, x, y) is x and where(False, x, y) is y
    a = np.array([1.0, 2.0])
    assert floats(a) is a


def test_minimum_and_maximum_are_np_minimum_and_maximum_with_a_scalar_fast_path() -> None:
    from calc._types import maximum, minimum

    # Two numbers: the smaller / larger as a NumPy scalar, whatever numeric type each arrives as.
    assert minimum(2.0, 3) == 2.0 and type(minimum(2.0, 3)) is np.float64
    assert maximum(np.float64(2.0), 3.0) == 3.0 and type(maximum(2, 3)) is np.float64
    assert minimum(3.0, 2.0) == 2.0 and maximum(3.0, 2.0) == 3.0  # either order
    assert minimum(1.0, float("inf")) == 1.0 and maximum(1.0, float("inf")) == float("inf")
    # NaN propagates from either side, as in np.minimum (Python's min would return the other number).
    for a, b in ((float("nan"), 1.0), (1.0, float("nan"))):
        assert np.isnan(minimum(a, b)) and np.isnan(maximum(a, b))
    # Arrays: np.minimum's, element by element.
    assert minimum(np.array([1.0, 5.0]), 3.0).tolist() == [1.0, 3.0]
    assert maximum(np.array([1.0, 5.0]), np.array([2.0, 4.0])).tolist() == [2.0, 5.0]


def test_isfinite_gives_a_numpy_bool_for_one_number() -> None:
    from calc._types import isfinite

    # A NumPy bool, so ~ and .any() read as on an array (~True on a Python bool is -2).
    assert isfinite(1.0) is np.True_ and isfinite(float("nan")) is np.False_
    assert isfinite(float("inf")) is np.False_ and isfinite(3) is np.True_
    assert bool(~isfinite(float("nan"))) and isfinite(np.float64(2.0)).any()
    assert isfinite(np.array([1.0, np.inf, np.nan])).tolist() == [True, False, False]


def test_minimum_of_a_number_and_an_array_is_the_arrays() -> None:
    from calc._types import maximum, minimum

    # One side an array: np.minimum's broadcast, never the two-number path.
    assert minimum(2.0, np.array([1.0, 3.0])).tolist() == [1.0, 2.0]
    assert maximum(np.array([1.0, 3.0]), 2.0).tolist() == [2.0, 3.0]


def test_python_scalars_inside_the_block_numpy_scalars_outside() -> None:
    # Issue 41: inside calc.stages.evaluate one scenario's numbers are Python floats (their arithmetic
    # costs a quarter of a NumPy scalar's); everywhere else NumPy's, whose division by zero gives inf.
    from calc._types import SCALARS, maximum, minimum, numpy_scalars, python_scalars

    assert type(floats(2.5)) is np.float64 and not SCALARS.python
    with python_scalars():
        assert SCALARS.python
        assert type(floats(2.5)) is float and type(floats(np.float64(2.5))) is float and floats(3) == 3.0
        assert type(floats(3)) is float and type(floats(np.array(4.0))) is float
        assert type(where(True, np.float64(2.0), 3.0)) is float and where(False, 2.0, 3.0) == 3.0
        assert type(minimum(2.0, 3)) is float and minimum(2.0, 3) == 2.0 and maximum(2, 3.0) == 3.0
        assert np.isnan(minimum(float("nan"), 1.0)) and np.isnan(maximum(1.0, float("nan")))
        assert floats([1.0, 2.0]).tolist() == [1.0, 2.0]  # arrays stay arrays
        with numpy_scalars():  # a step run again on NumPy scalars
            assert type(floats(2.5)) is np.float64 and type(minimum(2.0, 3.0)) is np.float64
        assert SCALARS.python
    assert not SCALARS.python  # restored, also after an error in the block
    try:
        with python_scalars():
            raise ZeroDivisionError
    except ZeroDivisionError:
        pass
    assert not SCALARS.python


def test_python_scalars_are_per_thread() -> None:
    # The switch is a ContextVar (cheaper to read than a threading.local): a thread started inside the
    # block, like a dashboard's other sessions, still gets NumPy scalars, and its own block is its own.
    import threading

    from calc._types import SCALARS, python_scalars

    seen: list[object] = []

    def other() -> None:
        seen.append(type(floats(2.5)))
        with python_scalars():
            seen.append(type(floats(2.5)))
        seen.append(SCALARS.python)

    with python_scalars():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert SCALARS.python and type(floats(2.5)) is float  # untouched by the other thread's block
    assert seen == [np.float64, float, False]


def test_helpers_for_a_comparisons_result_of_either_kind() -> None:
    from calc._types import all_, any_, flag, not_

    # A Python float's comparison is a Python bool: no .any(), and ~True is -2.
    assert any_(True) is True and any_(False) is False and all_(True) is True and all_(False) is False
    assert not_(True) is False and not_(False) is True
    assert any_(np.array([False, True])) and not all_(np.array([False, True]))
    assert any_(np.True_) and not any_(np.False_)
    assert not_(np.array([True, False])).tolist() == [False, True]
    assert flag(True) == 1.0 and flag(False) == 0.0 and flag(np.array([True, False])).tolist() == [1.0, 0.0]


def test_quiet_is_errstate_outside_and_nothing_inside_the_block() -> None:
    from calc._types import python_scalars, quiet

    with quiet(divide="ignore"):
        assert np.geterr()["divide"] == "ignore"
    with python_scalars():
        assert np.geterr()["divide"] == "ignore" and np.geterr()["invalid"] == "ignore"  # the block's own
        with quiet(divide="raise"):  # nothing more: the block already covers every formula
            assert np.geterr()["divide"] == "ignore"


def test_evaluate_on_python_floats_equals_numpy_scalars_for_every_preset() -> None:
    # Every output of every preset scenario is the same number on Python floats as on NumPy scalars, the
    # steps that divide by zero (no storage named: its IOPS 1 / (0 + 0)) run again on NumPy scalars.
    import calc
    from calc import stages
    from calc._types import numpy_scalars
    from calc.plan import as_scenario
    from calc.resolve import resolve

    for name in calc.scenarios():
        x = resolve(as_scenario(name)).values
        fast = stages.evaluate(x)
        original = stages.python_scalars
        stages.python_scalars = numpy_scalars  # type: ignore[assignment]
        try:
            slow = stages.evaluate(x)
        finally:
            stages.python_scalars = original  # type: ignore[assignment]
        assert fast.keys() == slow.keys()
        for k in slow:
            a, b = np.asarray(fast[k], dtype=float), np.asarray(slow[k], dtype=float)
            assert np.array_equal(a, b, equal_nan=True), (name, k, fast[k], slow[k])


def test_a_scenario_that_divides_by_zero_runs_again_on_numpy_scalars(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 / 0 raises on Python floats; evaluate then runs the scenario again on NumPy scalars: inf, as before.
    from calc import stages

    calls: list[type] = []

    def divide(x: dict[str, float]) -> dict[str, object]:
        calls.append(type(floats(1.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            return {"y": floats(x["a"]) / x["b"], "z": floats(x["b"]) / x["b"]}

    monkeypatch.setattr(stages, "_evaluate", divide)
    out = stages.evaluate({"a": 1.0, "b": 0.0})
    assert calls == [float, np.float64] and out["y"] == np.inf and np.isnan(out["z"])
    assert type(floats(1.0)) is np.float64  # NumPy scalars again outside evaluate


def test_divide_by_zero_gives_numpys_inf_and_nan_on_either_scalar() -> None:
    # 1 / 0 raises on Python floats; divide gives NumPy's answer (inf, -inf, NaN) without a warning.
    import warnings

    from calc._types import divide, python_scalars

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning either way
        with python_scalars():
            assert divide(6.0, 3.0) == 2.0 and type(divide(6.0, 3.0)) is float
            assert divide(1.0, 0.0) == np.inf and divide(-1.0, 0.0) == -np.inf and divide(1.0, -0.0) == -np.inf
            assert np.isnan(divide(0.0, 0.0)) and type(divide(1.0, 0.0)) is float
            assert divide(np.inf, 0.0) == np.inf and divide(3.0, np.inf) == 0.0
        assert type(divide(6.0, 3.0)) is float  # two Python floats stay one (no NumPy on the way)
        assert type(divide(np.float64(1.0), 0.0)) is np.float64 and divide(np.float64(1.0), 0.0) == np.inf
        assert divide(np.array([1.0, 0.0, 6.0]), np.array([0.0, 0.0, 3.0])).tolist()[::2] == [np.inf, 2.0]
        assert np.isnan(divide(np.array([0.0]), 0.0)[0])


def test_minimum_and_maximum_propagate_nan_from_either_side() -> None:
    # Hand-worked: the smaller or larger, NaN where either is NaN, as np.minimum / np.maximum.
    from calc._types import maximum, minimum, python_scalars

    nan = float("nan")
    with python_scalars():
        assert minimum(1.0, 2.0) == 1.0 and minimum(2.0, 1.0) == 1.0 and maximum(1.0, 2.0) == 2.0
        assert np.isnan(minimum(nan, 1.0)) and np.isnan(minimum(1.0, nan)) and np.isnan(maximum(1.0, nan))
        assert minimum(-np.inf, 0.0) == -np.inf and maximum(np.inf, 0.0) == np.inf
    assert type(minimum(1.0, 2.0)) is np.float64 and np.isnan(maximum(nan, 2.0))


def test_floor_ceil_sqrt_isnan_as_numpy_on_either_scalar() -> None:
    # Hand-worked: floor(-0.5) = -1, ceil(-0.5) = -0.0 (NumPy keeps the sign), sqrt(2.25) = 1.5,
    # sqrt(-1) = NaN; each a Python float inside evaluate, a NumPy scalar outside it.
    import math

    from calc._types import ceil, floor, isnan, python_scalars, sqrt

    with python_scalars():
        assert floor(2.5) == 2.0 and floor(-0.5) == -1.0 and type(floor(2.5)) is float
        assert ceil(2.5) == 3.0 and ceil(-0.5) == 0.0 and math.copysign(1.0, ceil(-0.5)) == -1.0
        assert math.copysign(1.0, floor(-0.0)) == -1.0 and floor(math.inf) == math.inf and math.isnan(ceil(math.nan))
        assert sqrt(2.25) == 1.5 and type(sqrt(2.25)) is float
        with np.errstate(invalid="ignore"):
            assert math.isnan(sqrt(-1.0))
        assert isnan(math.nan) and not isnan(1.0)
    assert type(floor(2.5)) is np.float64 and type(sqrt(2.25)) is np.float64 and type(ceil(0.5)) is np.float64
    assert floor(np.array([1.5, -1.5])).tolist() == [1.0, -2.0] and isnan(np.array([math.nan, 0.0])).tolist() == [
        True,
        False,
    ]


def test_scalar_is_ndim_zero() -> None:
    # np.ndim(x) == 0: a Python or NumPy number, a 0-d array; not a 1-element array.
    from calc._types import scalar

    assert scalar(2.0) and scalar(np.float64(2.0)) and scalar(3) and scalar(np.array(2.0))
    assert not scalar(np.array([2.0])) and not scalar(np.zeros((2, 2)))


def test_check_range_inside_evaluate_keeps_its_bounds_and_errors() -> None:
    # The inline check of a Python float (inside evaluate) accepts and refuses what the full one does.
    import math

    from calc._types import python_scalars
    from calc.errors import InputError
    from calc.units import check_range

    with python_scalars():
        assert check_range("x", 2.0, 0.0) == 2.0 and type(check_range("x", 2.0, 0.0)) is float
        assert check_range("x", 0.0, 0.0) == 0.0 and check_range("x", math.inf, 0.0, infinite=True) == math.inf
        for bad, above, high in ((-1.0, False, 9.0), (math.nan, False, 9.0), (math.inf, False, math.inf)):
            with pytest.raises(InputError):
                check_range("x", bad, 0.0, high, above=above)
        with pytest.raises(InputError):
            check_range("x", 0.0, 0.0, above=True)  # more than 0
        with pytest.raises(InputError):
            check_range("x", 5.0, 0.0, 4.0)


def test_python_call_gives_the_numpy_scalars_double_and_falls_back_where_a_float_raises() -> None:
    # calc._types.python_call runs one formula on Python floats (resolve's parameter count, issue 41 item 6):
    # the same double as on NumPy scalars, and NumPy's answer where a Python float raises.
    import math
    import random

    from calc import transformer
    from calc._types import python_call, python_on

    rng = random.Random(41)
    for _ in range(300):
        heads = float(rng.choice([1, 8, 12, 32, 40, 64, 96, 128]))
        args = (
            float(rng.randint(1, 200)),
            heads * rng.choice([64, 80, 96, 128, 7.5]),
            heads,
            float(rng.choice([1, 2, 4, 8, int(heads)])),
            float(rng.randint(1, 60000)) * rng.choice([1.0, 0.37]),
            float(rng.randint(1, 260000)),
            float(rng.randint(0, 1)),
        )
        want = transformer.params_count(*args)
        got = python_call(transformer.params_count, *args)
        assert type(want) is np.float64 and type(got) is float
        assert float(want).hex() == got.hex(), args
    assert not python_on()  # the switch is put back

    def divide(a: float, b: float) -> object:
        return floats(a) / floats(b)

    assert type(python_call(divide, 1.0, 2.0)) is float
    with np.errstate(divide="ignore"):
        got = python_call(divide, 1.0, 0.0)  # a Python float raises; run again on NumPy scalars: inf
    assert type(got) is np.float64 and got == math.inf
    assert not python_on()
