"""horovod-cluster: provision and check a Horovod cluster with Ansible, driven from Python."""
from .cluster import Cluster, UsageError
from .job import JobRefused, JobResult
from .results import CheckReport, Finding, HostResult, PlanResult, RolloutResult, TaskFailure
from .ansible.runner import InventoryBusy, InventoryError

__version__ = "0.1.0"
__all__ = [
    "CheckReport", "Cluster", "Finding", "HostResult", "InventoryBusy", "InventoryError", "JobRefused", "JobResult",
    "PlanResult", "RolloutResult", "TaskFailure", "UsageError", "__version__",
]
