"""Site policy (calc/site.py): where a job runs and whether it runs in a workstation.

Each expectation follows from the rule in the module's docstring and the preset names it reads
(presets/servers.yaml: DGX-H100 is bought, aws-p5.48xlarge an AWS instance; presets/storage.yaml:
gcp-filestore-zonal lives in GCP, ram-tmpfs is node RAM, which every site has).
"""

from __future__ import annotations

import pytest

from calc.scenario import Scenario
from calc.site import CONSUMER_GPUS, job_site, workstation


def job(**kw: object) -> Scenario:
    return Scenario(**({"name": "j", "gpu": "H100-SXM", "model": "resnet50"} | kw))  # type: ignore[arg-type]


def test_the_site_given_wins_over_the_servers_and_the_storages() -> None:
    assert job_site(job(site="gcp", server="aws-p5.48xlarge", storage="aws-efs-elastic")) == "gcp"


def test_without_a_site_the_server_says_where() -> None:
    # A DGX is bought (on-prem); a p5 instance runs in AWS, whatever the storage says.
    assert job_site(job(server="DGX-H100", storage="gcp-filestore-zonal")) == "on-prem"
    assert job_site(job(server="aws-p5.48xlarge", storage="gcp-filestore-zonal")) == "aws"


def test_without_site_or_server_the_storage_says_where_unless_every_site_has_it() -> None:
    assert job_site(job(storage="gcp-filestore-zonal")) == "gcp"
    assert job_site(job(storage="nvme-gen4")) == "on-prem"
    assert job_site(job(storage="ram-tmpfs")) is None  # node RAM: any site
    assert job_site(job()) is None


@pytest.mark.parametrize("gpu", ["GTX-1080Ti", "RTX-3090", "RTX-4090"])
def test_a_desktop_gpu_with_no_server_runs_in_a_workstation(gpu: str) -> None:
    assert gpu in CONSUMER_GPUS
    assert workstation(job(gpu=gpu))
    assert workstation(job(gpu=gpu, site="on-prem"))


@pytest.mark.parametrize(
    "changes",
    [
        {"gpu": "H100-SXM"},  # a data-centre GPU
        {"gpu": "RTX-4090", "site": "aws"},  # rented: a cloud, not a workstation
        {"gpu": "RTX-4090", "storage": "aws-efs-elastic"},  # the storage puts it in AWS
        {"gpu": "H100-SXM", "server": "DGX-H100"},
    ],
)
def test_anything_else_is_not_a_workstation(changes: dict[str, object]) -> None:
    assert not workstation(job(**changes))
