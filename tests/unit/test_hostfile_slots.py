"""The one reading of a hostfile (plugins/filter/hvc_hostfile.py): the check's world and groups and
`horovod-cluster run` take hosts and slots from it."""
from __future__ import annotations

import re

import hvc_hostfile
import pytest

from horovod_cluster import job


def test_hosts_and_slots_in_the_files_order():
    text = "# the lab\nnode2 slots=4\n\n  node1   # one slot, as in horovodrun\nnode3 slots = 2\n"
    assert hvc_hostfile.hostfile_slots(text) == [["node2", 4], ["node1", 1], ["node3", 2]]


def test_an_empty_or_missing_file_names_no_host():
    assert hvc_hostfile.hostfile_slots("") == [] and hvc_hostfile.hostfile_slots(None) == []
    assert hvc_hostfile.hostfile_slots("# only a comment\n\n") == []


def test_the_package_reads_hostfiles_with_the_collections_filter():
    text = "a slots=2\nb\n"
    assert job.hostfile_slots(text) == [("a", 2), ("b", 1)]
    assert job.job_world(text) == [("a", 2), ("b", 1)]


def test_the_jobs_refusal_reads_lines_as_the_filter_does():
    """One reading of a line for both: what check_hostfile accepts is read with its slots, what it refuses is not
    slots=N to the filter either."""
    good = "node2 slots = 4  # four\n\nnode1\n"
    job.check_hostfile(good, "good")
    assert hvc_hostfile.hostfile_slots(good) == [["node2", 4], ["node1", 1]]
    assert hvc_hostfile.line_slots("slots=4 extra") is None and hvc_hostfile.line_slots("slots=0") == 0
    with pytest.raises(job.JobRefused, match=re.escape("'slots=4 extra': expected slots=N")):
        job.check_hostfile("node2 slots=4 extra\n", "bad")
