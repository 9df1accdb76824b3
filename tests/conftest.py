"""Test-wide settings: Hypothesis runs the same examples on every CI run (``HYPOTHESIS_PROFILE=ci``, set by
.ci/run), so a red CI is this change's, never a new random draw's; elsewhere each run draws afresh."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
