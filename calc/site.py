"""Site policy: where a job runs and what may be bought there (one module; docs/model.md section 7).

A job runs at its ``site``, else its server's (DGX/HGX on-prem, a cloud instance in its cloud),
else its storage's; a job on a desktop GPU with no server preset runs in a workstation, where
consumer drives are fair.
"""

from __future__ import annotations

from calc import catalog
from calc import storage as st
from calc.scenario import Scenario

CONSUMER_GPUS = ("GTX-1080Ti", "RTX-3090", "RTX-4090")
"""Desktop GPUs (presets/gpus.yaml): a job on one of them, with no server preset, runs in a
workstation, where consumer drives are fair; every other job gets data-centre parts only."""

SITE_WORDS = {"on-prem": "buy on-prem", "aws": "rent on AWS", "gcp": "rent on GCP", "azure": "rent on Azure"}
"""What one does at each site, for the answer's per-site lines."""

SITE_NAMES = {"on-prem": "on-prem", "aws": "AWS", "gcp": "GCP", "azure": "Azure"}
"""Each site's name in a sentence."""

DEFAULT_SITE = "on-prem"
"""Where a job's answer buys when neither its ``site``, its server nor its storage names one: its own
site, where parts are bought (issue 39). The answer says it assumed it and what each cloud would
cost instead; a meeting gets one answer, never a question alone."""


def job_site(sc: Scenario) -> str | None:
    """Where the job runs: ``site``, else its server's site (DGX/HGX on-prem, a cloud instance its
    cloud), else its storage's site; None when none of them says."""
    if sc.site:
        return sc.site
    if sc.server:
        return catalog.server(sc.server).site
    if sc.storage:
        s = st.option(sc.storage).site
        return None if s == "any" else s
    return None


def workstation(sc: Scenario) -> bool:
    """The job runs in a workstation: a desktop GPU, no server preset, on-prem or unknown site."""
    return sc.server is None and sc.gpu in CONSUMER_GPUS and job_site(sc) in (None, "on-prem")
