"""Feedrate: how much storage, CPU and PCIe a training job needs to keep its GPUs fed.

>>> import calc
>>> p = calc.plan("beast-imagenet-4xv100")
>>> p.read_iops                     # reads/s
>>> print(p.explain())

Public API: ``scenario``, ``scenarios``, ``Scenario``, ``plan``, ``Plan``, ``sweep``,
``recommend``, ``designs``, ``answer``, ``max_gpus``, ``levers``, ``calibration``, the presets (``gpus``, ``models``,
``storage_options``), ``cluster`` (many jobs on one storage; ``answer`` takes its plan too),
units (``parse``, ``fmt``), the formats practitioners use (``from_hf_config``: a Hugging Face
config in; ``fio_job`` and ``dlio_workload``: the checks out, read back by ``calc.measure.fio`` and
``calc.measure.dlio``), the errors, and the modules ``plots`` (Plotly figures, ``plots.sweep``)
and ``report``. Plans, answers, scenarios and clusters display as HTML and Markdown in Jupyter
(``calc.display``, attached here so that the classes below never import their presentation).
"""

from calc import display, plots, report
from calc.calibrate import calibration
from calc.catalog import gpus, models
from calc.cluster import ClusterAnswer, ClusterPlan, answer, cluster, cluster_answer
from calc.cluster_input import Cluster
from calc.design import designs
from calc.dlio import dlio_workload
from calc.errors import DoesNotFitError, InputError, PresetError, UnitError
from calc.fio import fio_job
from calc.hf_config import from_hf_config
from calc.lever import levers, storage_levers
from calc.plan import Plan, plan
from calc.registry import OUTPUTS
from calc.scenario import FIELDS, Scenario, scenario, scenarios
from calc.sizing import fewest_workers, largest_example_bytes, max_gpus, recommend, sweep
from calc.storage import options as storage_options
from calc.units import fmt, parse

__all__ = [
    "FIELDS",
    "OUTPUTS",
    "Cluster",
    "ClusterAnswer",
    "ClusterPlan",
    "DoesNotFitError",
    "InputError",
    "Plan",
    "PresetError",
    "Scenario",
    "UnitError",
    "answer",
    "calibration",
    "cluster",
    "cluster_answer",
    "designs",
    "dlio_workload",
    "fewest_workers",
    "fio_job",
    "fmt",
    "from_hf_config",
    "gpus",
    "largest_example_bytes",
    "levers",
    "max_gpus",
    "models",
    "parse",
    "plan",
    "plots",
    "recommend",
    "report",
    "scenario",
    "scenarios",
    "storage_levers",
    "storage_options",
    "sweep",
]
__version__ = "0.1.0"

display.attach()  # Jupyter's rich displays (calc.display sits above the classes it renders)
