"""`horovod_cluster.events.TaskLog`, the name the changelog gave it; it lives in `ansible.events`."""
from .ansible.events import TaskLog

__all__ = ["TaskLog"]
