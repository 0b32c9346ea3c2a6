"""`python -m horovod_cluster ...`: the horovod-cluster command, with this interpreter's ansible-* programs."""
from .cli import main

if __name__ == "__main__":
    main()
