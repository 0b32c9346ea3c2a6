"""The CLI's short reason for an inventory that does not parse (load_inventory): ansible-inventory's first own line
and its origin, not a Python warning printed before them."""
from __future__ import annotations

from horovod_cluster.ansible.runner import _short_inventory_error

# The head of ansible-inventory's stderr (ansible-core 2.19.14, cryptography 51.0.1, 2026-12-06) for a YAML inventory
# naming node1 twice: cryptography's DSA deprecation comes first since that release.
STDERR = """\
/venv/lib/python3.11/site-packages/ansible/_internal/_ssh/_ssh_agent.py:18: CryptographyDeprecationWarning: DSA is \
deprecated and support will be removed in a future release. Use a more modern signature algorithm.
  from cryptography.hazmat.primitives.asymmetric.dsa import (
[WARNING]: Failed to parse inventory with 'auto' plugin: YAML parsing failed: Found duplicate mapping key 'node1'.

Failed to parse inventory with 'auto' plugin.

<<< caused by >>>

YAML parsing failed: Found duplicate mapping key 'node1'.
Origin: /tmp/dup/hosts.yml:7:9

7         node1: {ansible_host: 10.0.0.3}
          ^ column 9

[WARNING]: Failed to parse inventory with 'yaml' plugin: YAML parsing failed: Found duplicate mapping key 'node1'.
[ERROR]: No inventory was parsed, please check your configuration and options.
"""


def test_the_reason_is_ansibles_first_line_not_a_python_warning():
    assert _short_inventory_error(STDERR).splitlines() == [
        "[WARNING]: Failed to parse inventory with 'auto' plugin: YAML parsing failed: Found duplicate mapping key"
        " 'node1'.",
        "Origin: /tmp/dup/hosts.yml:7:9",
        "[ERROR]: No inventory was parsed, please check your configuration and options."]


def test_text_without_ansibles_lines_is_kept_from_its_first_line():
    assert _short_inventory_error("Traceback (most recent call last):\n  boom\n") == "Traceback (most recent call last):"
