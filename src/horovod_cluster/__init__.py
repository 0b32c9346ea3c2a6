"""horovod-cluster: provision and check a Horovod cluster with Ansible, driven from Python."""
__version__ = "0.1.0"
__all__ = ["__version__"]
