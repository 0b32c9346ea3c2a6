"""horovod_cluster.slurm on Slurm's own syntax: every example below is quoted from Slurm's documentation or
source (SchedMD/slurm, commit 284c3b95f08a, 2026-08-20), with the file it comes from."""
from __future__ import annotations

import pytest

from horovod_cluster.slurm import MAX_HOSTS, allocation_hostfile, expand_nodelist, expand_tasks_per_node

NODELISTS = [
    # doc/man/man1/scontrol.1, EXAMPLES: "scontrol: show hostnames tux[1-3]" prints tux1, tux2, tux3.
    ("tux[1-3]", ["tux1", "tux2", "tux3"]),
    # src/scontrol/usage.txt: "lx[10-20]" corresponds to lx10, lx11, lx12, ...
    ("lx[10-20]", [f"lx{n}" for n in range(10, 21)]),
    # doc/man/man5/slurm.conf.5, NODE CONFIGURATION: comma separated names "alpha,beta,gamma", ranges
    # "linux[0-64,128]", "lx[15,18,32-33]", two brackets "rack[0-63]_blade[0-41]", and leading zeros
    # "to indicate the numeric portion has a fixed number of digits (e.g. linux[0000-1023])".
    ("alpha,beta,gamma", ["alpha", "beta", "gamma"]),
    ("linux[0-64,128]", [f"linux{n}" for n in range(65)] + ["linux128"]),
    ("lx[15,18,32-33]", ["lx15", "lx18", "lx32", "lx33"]),
    ("rack[0-63]_blade[0-41]", [f"rack{r}_blade{b}" for r in range(64) for b in range(42)]),
    ("linux[0000-1023]", [f"linux{n:04d}" for n in range(1024)]),
    # doc/man/man1/scontrol.1, hostlist: the order is kept and names may repeat: tux2,tux1,tux2 = tux[2,1-2].
    ("tux[2,1-2]", ["tux2", "tux1", "tux2"]),
    # testsuite/slurm_unit/common/hostlist/hostlist_nth-test.c: "host[1-3],host5" is host1, host2, host3, host5.
    ("host[1-3],host5", ["host1", "host2", "host3", "host5"]),
    # testsuite/slurm_unit/common/hostlist/hostlist_iterator-test.c: the ranged string "b[1-3],d[1,3-5],e1" of
    # the hosts b1 b2 b3 d1 d3 d4 d5 e1.
    ("b[1-3],d[1,3-5],e1", ["b1", "b2", "b3", "d1", "d3", "d4", "d5", "e1"]),
    # The forms (ZIH-style names): padding kept, two brackets (the leftmost varies slowest, as
    # _push_range_list in src/common/hostlist.c recurses), plain names mixed with ranges, dots and dashes.
    ("node[01-04,07]", ["node01", "node02", "node03", "node04", "node07"]),
    ("rack[1-2]-node[01-02]", ["rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"]),
    ("a1,b[3-4],c", ["a1", "b3", "b4", "c"]),
    ("taurusi[6603-6604].taurus.hrsk.tu-dresden.de,login-1",
     ["taurusi6603.taurus.hrsk.tu-dresden.de", "taurusi6604.taurus.hrsk.tu-dresden.de", "login-1"]),
    # src/common/hostlist.c, _hostlist_create_bracketed: text after the bracket is a suffix (1-D clusters).
    ("gpu[1-2]-ib", ["gpu1-ib", "gpu2-ib"]),
    # the width is the low end's, as hostlist.c's _parse_single_range takes range->width = strlen(lo)
    ("n[08-10]", ["n08", "n09", "n10"]),
    ("n[8-10]", ["n8", "n9", "n10"]),
    ("single", ["single"]),
]


@pytest.mark.parametrize(("text", "names"), NODELISTS, ids=[t for t, _ in NODELISTS])
def test_expand_nodelist(text, names):
    assert expand_nodelist(text) == names


BAD_NODELISTS = {
    # src/common/hostlist.c, _hostlist_create_bracketed: "Found '[' but ']' is missing."
    "node[1-3": "'[' without ']'",
    "node1-3]": "']' without '['",
    "node[[1-2]]": "nested",
    # _parse_single_range: "Invalid range" for lo > hi, a negative number, a box range (x) and a non-number
    "node[3-1]": "runs backwards",
    "node[--1]": "not a number or lo-hi range",
    "node[1x2]": "not a number or lo-hi range",
    "node[a-c]": "not a number or lo-hi range",
    "node[]": "not a number or lo-hi range",
    "node[1,,2]": "not a number or lo-hi range",
    "a,,b": "empty entry",
    ",a": "empty entry",
    "": "empty",
    "   ": "empty",
    "node 1": "not allowed in a host name",
    "node;rm": "not allowed in a host name",
    "nöde[1-2]": "not allowed in a host name",
    "$(touch x)": "not allowed in a host name",
    "-x[1-2]": "starting with '-'",
    # hostlist.c refuses a prefix over MAX_PREFIX_CNT ("a[0-999999999].b[0-9]"); here any expansion over MAX_HOSTS
    "a[0-999999999].b[0-9]": f"more than {MAX_HOSTS} names",
    "a[0-999],b[0-999]": None,  # 2000 names: fine
}


@pytest.mark.parametrize("text", BAD_NODELISTS, ids=repr)
def test_bad_nodelist_is_refused_naming_the_text(text):
    needle = BAD_NODELISTS[text]
    if needle is None:
        assert len(expand_nodelist(text)) == 2000
        return
    with pytest.raises(ValueError) as err:
        expand_nodelist(text)
    assert repr(text) in str(err.value)
    assert needle in str(err.value)


def test_many_names_over_several_entries_are_refused():
    with pytest.raises(ValueError, match="more than"):
        expand_nodelist(",".join(f"g{g}n[0-9999]" for g in range(11)))


TASKS = [
    # doc/man/man1/sbatch.1 (also salloc.1, srun.1), SLURM_TASKS_PER_NODE: "SLURM_TASKS_PER_NODE=2(x3),1"
    # indicates that the first three nodes will each execute two tasks and the fourth node will execute one.
    ("2(x3),1", 4, [2, 2, 2, 1]),
    # doc/man/man1/sbatch.1, SLURM_JOB_CPUS_PER_NODE, the same CPU_count[(xnumber_of_nodes)] form: '72(x2),36'.
    ("72(x2),36", 3, [72, 72, 36]),
    ("1", 1, [1]),
    ("4(x2)", 2, [4, 4]),
    ("1,2,3", 3, [1, 2, 3]),
]


@pytest.mark.parametrize(("text", "count", "tasks"), TASKS, ids=[t for t, _, _ in TASKS])
def test_expand_tasks_per_node(text, count, tasks):
    assert expand_tasks_per_node(text, count) == tasks


BAD_TASKS = [
    ("2(x3),1", 3, "more nodes than the 3"),
    ("2(x3),1", 5, "4 nodes, the node list has 5"),
    ("2(x3)", 4, "3 nodes, the node list has 4"),
    ("2(3)", 3, "is not N or N(xM)"),
    ("2x3", 3, "is not N or N(xM)"),
    ("2(x3", 3, "is not N or N(xM)"),
    ("-1", 1, "is not N or N(xM)"),
    ("two", 1, "is not N or N(xM)"),
    ("2,,1", 3, "is not N or N(xM)"),
    ("0", 1, "counts zero"),
    ("2(x0)", 1, "counts zero"),
    ("", 0, "empty"),
]


@pytest.mark.parametrize(("text", "count", "needle"), BAD_TASKS, ids=[f"{t}/{c}" for t, c, _ in BAD_TASKS])
def test_bad_tasks_per_node_is_refused(text, count, needle):
    with pytest.raises(ValueError) as err:
        expand_tasks_per_node(text, count)
    assert repr(text) in str(err.value) and needle in str(err.value)


def test_allocation_hostfile_from_an_sbatch_environment():
    # The sbatch.1 example allocation: four nodes, two tasks on each of the first three, one on the fourth.
    environ = {"SLURM_JOB_ID": "827", "SLURM_JOB_NODELIST": "node[01-04]", "SLURM_TASKS_PER_NODE": "2(x3),1",
               "SLURM_NNODES": "4"}
    assert allocation_hostfile(environ) == "node01 slots=2\nnode02 slots=2\nnode03 slots=2\nnode04 slots=1\n"


def test_the_older_nodelist_name_is_read_too():
    # doc/man/man1/sbatch.1: SLURM_NODELIST, "See SLURM_JOB_NODELIST. Included for backwards compatibility."
    environ = {"SLURM_NODELIST": "a1,b[3-4],c", "SLURM_TASKS_PER_NODE": "1(x4)"}
    assert allocation_hostfile(environ) == "a1 slots=1\nb3 slots=1\nb4 slots=1\nc slots=1\n"
    # SLURM_JOB_NODELIST wins when both are set
    assert allocation_hostfile({**environ, "SLURM_JOB_NODELIST": "z[1-2]", "SLURM_TASKS_PER_NODE": "3(x2)"}) \
        == "z1 slots=3\nz2 slots=3\n"


def test_the_hostfile_is_what_horovodrun_reads():
    """Each line is `host slots=N`, as horovod.runner.common.util.hosts parses a hostfile line."""
    text = allocation_hostfile({"SLURM_JOB_NODELIST": "rack[1-2]-node[01-02]", "SLURM_TASKS_PER_NODE": "4(x4)"})
    lines = text.splitlines()
    assert len(lines) == 4 and text.endswith("\n")
    for line in lines:
        host, slots = line.split()
        assert slots == "slots=4" and host.startswith("rack")


@pytest.mark.parametrize("environ", [{}, {"PATH": "/usr/bin"}, {"SLURM_JOB_NODELIST": ""},
                                     {"SLURM_TASKS_PER_NODE": "2"}])
def test_outside_an_allocation_there_is_no_hostfile(environ):
    assert allocation_hostfile(environ) is None


def test_a_broken_allocation_is_refused_naming_the_variable():
    with pytest.raises(ValueError, match=r"^SLURM_JOB_NODELIST: bad Slurm hostlist 'node\[1-3'"):
        allocation_hostfile({"SLURM_JOB_NODELIST": "node[1-3", "SLURM_TASKS_PER_NODE": "1(x3)"})
    with pytest.raises(ValueError, match=r"^SLURM_NODELIST: bad Slurm hostlist"):
        allocation_hostfile({"SLURM_NODELIST": "node[3-1]", "SLURM_TASKS_PER_NODE": "1(x3)"})
    with pytest.raises(ValueError, match="SLURM_JOB_NODELIST is set but SLURM_TASKS_PER_NODE is not"):
        allocation_hostfile({"SLURM_JOB_NODELIST": "node[1-3]"})
    with pytest.raises(ValueError, match=r"bad SLURM_TASKS_PER_NODE '2\(x3\)': 3 nodes, the node list has 4"):
        allocation_hostfile({"SLURM_JOB_NODELIST": "node[1-4]", "SLURM_TASKS_PER_NODE": "2(x3)"})
