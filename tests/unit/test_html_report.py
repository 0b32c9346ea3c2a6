"""The check report as HTML, from a real check of the 3-host sandbox (tests/fixtures/check), read
back with the standard library's HTML parser."""
from __future__ import annotations

import copy
import json
import math
from html.parser import HTMLParser
from pathlib import Path

import pytest

from horovod_cluster.results import CheckReport, from_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "check"
FIXTURE = FIXTURES / "sandbox-check.json"


class Page(HTMLParser):
    """Tables by id (rows of cell texts), the plot's circles and texts, every tag, and the page's text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self.circles: list[dict[str, str]] = []
        self.svg_texts: list[tuple[dict[str, str], str]] = []  # (attributes, text) of each SVG <text>
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self._table: str | None = None
        self._cell: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "table":
            self._table = attrs.get("id", "")
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "circle":
            self.circles.append(attrs)
        elif tag == "text":
            self.svg_texts.append((attrs, ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[self._table][-1].append(" ".join(" ".join(self._cell).split()))
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self.text.append(data)
        if self.svg_texts and self.tags[-1][0] == "text" and not self.svg_texts[-1][1]:
            self.svg_texts[-1] = (self.svg_texts[-1][0], data)
        if self._cell is not None:
            self._cell.append(data)

    def rows(self, table: str) -> list[dict[str, str]]:
        head, *body = self.tables[table]
        return [dict(zip(head, row)) for row in body]


@pytest.fixture
def data() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture
def page(data) -> Page:
    return Page(CheckReport.from_dict(data).to_html())


def test_a_row_per_host_with_its_versions(page, data):
    rows = page.rows("hosts")
    assert [r["host"] for r in rows] == ["hvc-node1", "hvc-node2", "hvc-node3"] == sorted(data["hosts"])
    for row in rows:
        host = data["hosts"][row["host"]]
        assert row["torch"] == host["versions"]["torch"] == "2.13.0+cpu"
        assert row["horovod"] == "0.28.1" and row["os / arch"] == "Debian 12.15 x86_64"
        assert row["health"] == "healthy"


def test_verdict_and_no_finding(page):
    text = "".join(page.text)
    assert "horovod-cluster check: OK" in text
    assert ("p", {"id": "findings"}) in page.tags and "no finding" in text


def test_smoke_ranks_per_controller(page, data):
    for controller in ("gloo", "mpi"):
        rows = page.rows(f"smoke-{controller}")
        ranks = data["smoke"][controller]["ranks"]
        assert [(int(r["rank"]), r["host"], r["result"]) for r in rows] == \
            [(r["rank"], r["host"], "ok") for r in ranks]
        assert rows[0]["checks"] == "allreduce ok, allgather ok, broadcast ok"
    assert "6 ranks in 16.925 s" in "".join(page.text)


def test_plot_has_a_point_per_table_row_that_follows_the_data(page, data):
    table = page.rows("bandwidth")
    rows = data["bandwidth"]["allreduce"]["rows"]
    assert [int(r["size (B)"]) for r in table] == [r["bytes"] for r in rows]
    assert [float(r["busbw (GB/s)"]) for r in table] == [round(r["busbw_GBps"], 4) for r in rows]
    assert len(page.circles) == len(rows) == 4
    xs = [float(c["cx"]) for c in page.circles]
    ys = [float(c["cy"]) for c in page.circles]
    by_size = sorted(rows, key=lambda r: r["bytes"])
    assert xs == sorted(xs) and len(set(xs)) == len(xs), "x grows with the message size"
    # log scale: sizes 4 KiB, 64 KiB, 1 MiB, 16 MiB are equal steps apart
    steps = [b - a for a, b in zip(xs, xs[1:])]
    assert max(steps) - min(steps) < 0.1
    # SVG's y grows downwards: a higher busbw is a smaller y, in the data's order
    for (a, ya), (b, yb) in zip(zip(by_size, ys), list(zip(by_size, ys))[1:]):
        assert (ya > yb) == (b["busbw_GBps"] > a["busbw_GBps"]), (a, b, ya, yb)
    assert "best busbw / link bandwidth: 0.056" in "".join(page.text)


def test_self_contained(page):
    tags = {tag for tag, _ in page.tags}
    assert "script" not in tags and "link" not in tags and "img" not in tags
    assert not [attrs for _, attrs in page.tags if attrs.get("src") or str(attrs.get("href", "")).startswith("http")]
    assert [attrs["id"] for tag, attrs in page.tags if tag == "svg"] == ["busbw-plot"]  # the plot is inline
    assert [tag for tag, _ in page.tags].count("style") == 1


def test_host_strings_are_escaped(data):
    evil = "<script>alert(1)</script>"
    data = copy.deepcopy(data)
    host = data["hosts"].pop("hvc-node3")
    host["versions"]["torch"] = f'2.13.0" onmouseover="x{evil}'
    host["problems"] = [f"horovod not installed {evil}"]
    data["hosts"][f"evil{evil}"] = host
    data["smoke"]["gloo"]["ranks"][0]["host"] = evil
    data["smoke"]["gloo"]["ranks"][1].update(ok=False, error=f"HorovodInternalError {evil}")
    data["smoke"]["mpi"] = {"ok": False, "error": evil, "command": evil, "output": f"</pre>{evil}"}
    data["findings"] = [{"key": "torch", "message": f"hosts disagree on torch {evil}",
                         "values": {evil: evil, "hvc-node1": "2.13.0+cpu"}}]
    data["bandwidth"]["link"]["from"] = evil
    data["job_groups"] = {"groups": [{"controller": "gloo", "hosts": [evil, "hvc-node1"], "tensors": "cpu"}],
                          "reasons": {"mpi": f"Open MPI majors differ ({evil}=5, hvc-node1=4)"}}
    text = from_json(json.dumps(data)).to_html()
    page = Page(text)
    assert "<script" not in text and "script" not in {tag for tag, _ in page.tags}
    assert not [attrs for _, attrs in page.tags if "onmouseover" in attrs]
    assert evil in "".join(page.text), "shown as text"
    assert f"evil{evil}" in [r["host"] for r in page.rows("hosts")]
    assert "horovod-cluster check: FAILED" in "".join(page.text)
    assert page.rows("findings")[0]["key"] == "torch"
    assert page.rows("smoke-gloo")[1]["result"] == f"failed HorovodInternalError {evil}"
    assert page.tables["job-groups"][1] == ["gloo", f"{evil}, hvc-node1", "cpu"]
    assert f"no mpi job spans every host: Open MPI majors differ ({evil}=5, hvc-node1=4)" in "".join(page.text)


def test_failed_run_and_missing_parts():
    """No smoke asked, bandwidth not measured, an unreachable host without a check result."""
    data = json.loads(FIXTURE.read_text())
    data.update(smoke=None, bandwidth={"allreduce": {"error": "horovodrun exited 1", "output": "rank 3 lost"},
                                       "link": {"error": "iperf3 missing"}, "busbw_over_link": None})
    data["run"]["hosts"]["hvc-node4"] = {"name": "hvc-node4", "unreachable": 1, "failure": {
        "task": "Gathering Facts", "play": "Check each host", "message": "ssh: no route", "unreachable": True}}
    report = from_json(json.dumps(data))
    page = Page(report.to_html())
    text = "".join(page.text)
    hosts = {r["host"]: r for r in page.rows("hosts")}
    assert hosts["hvc-node4"]["health"] == "problems no check result (unreachable)"
    assert "not asked for" in text and "not measured: horovodrun exited 1" in text and "rank 3 lost" in text
    assert "iperf3 missing" in text and "ssh: no route" in text and not page.circles


def test_a_real_failed_check():
    """The sandbox before its hostfile existed: healthy hosts, but nothing cross-host could start."""
    report = from_json((FIXTURES / "sandbox-check-no-hostfile.json").read_text())
    page = Page(report.to_html())
    text = " ".join(page.text)
    assert "horovod-cluster check: FAILED" in " ".join(text.split())
    assert [r["health"] for r in page.rows("hosts")] == ["healthy"] * 3
    assert "_preconditions: failed" in " ".join(text.split())
    assert "no hostfile at /etc/horovod/hostfile (hostfile role)" in text
    assert "not measured: no hostfile at /etc/horovod/hostfile" in text and not page.circles


def test_one_row_plots_one_point(data):
    data["bandwidth"]["allreduce"]["rows"] = data["bandwidth"]["allreduce"]["rows"][-1:]
    page = Page(from_json(json.dumps(data)).to_html())
    assert len(page.circles) == 1 and len(page.rows("bandwidth")) == 1


EVIL = ("<script>alert(1)</script>", '"><img src=x onerror=1>')


def hostile(data: dict, evil: str, measured: bool) -> dict:
    """`evil` in every place where a host's (or a saved file's) text reaches the page."""
    data = copy.deepcopy(data)
    host = data["hosts"].pop("hvc-node3")
    host.update(os=evil, arch=evil, problems=[evil], healthy=False)
    host["versions"] = {k: evil for k in ("python", "torch", "horovod", "mpirun", "cmake")}
    data["hosts"][evil] = host
    data["findings"] = [{"key": evil, "severity": evil, "message": evil, "values": {evil: evil}}]
    gloo = data["smoke"].pop("gloo")
    gloo.update(ok=False, command=evil, output=evil)
    gloo["ranks"][0].update(host=evil, device=evil, ok=False, error=evil, checks={evil: True})
    data["smoke"][evil] = gloo
    data["smoke"]["mpi"] = {"ok": False, "status": evil, "error": evil, "command": evil, "output": evil}
    data["bandwidth"]["allreduce"].update(size=evil, algorithm=evil)
    if not measured:
        data["bandwidth"] = {"reason": evil, "allreduce": {"command": evil, "output": evil},
                             "link": {"error": evil}, "busbw_over_link": None}
    else:
        data["bandwidth"]["link"].update({"from": evil, "to": evil})
    data["run"].update(playbook=evil, error=evil, rc=evil)
    data["run"]["hosts"][evil] = {"name": evil, "failed": 1, "failure": {
        "task": evil, "play": evil, "message": evil}}
    return data


@pytest.mark.parametrize("measured", [True, False], ids=["bandwidth", "no-bandwidth"])
@pytest.mark.parametrize("evil", EVIL, ids=["script", "attribute"])
def test_hostile_host_values_are_escaped_everywhere(data, evil, measured):
    text = from_json(json.dumps(hostile(data, evil, measured))).to_html()
    page = Page(text)
    assert "<script" not in text.lower() and "<img" not in text.lower()
    tags = {tag for tag, _ in page.tags}
    assert not tags & {"script", "img"}
    assert not [attrs for _, attrs in page.tags if "onerror" in attrs or "src" in attrs]
    assert page.tables[f"smoke-{evil}"], "the controller's name is a table id, as an escaped attribute"
    assert ("table", {"id": f"smoke-{evil}", "data-controller": evil}) in page.tags
    hosts = {r["host"]: r for r in page.rows("hosts")}
    assert hosts[evil]["os / arch"] == f"{evil} {evil}" and hosts[evil]["torch"] == evil
    assert page.rows("findings")[0] == {"key": evil, "severity": evil, "finding": evil, "values": f"{evil}: {evil}"}
    assert "".join(page.text).count(evil) >= 20, "shown as text"


def bench_rows(sizes: list[int], busbw: list[float]) -> list[dict]:
    return [{"bytes": size, "seconds": size / (gbps * 1e9) if gbps > 0 else 1.0, "algbw_GBps": gbps * 0.6,
             "busbw_GBps": gbps} for size, gbps in zip(sizes, busbw)]


def plot_of(data: dict, rows: list[dict]) -> Page:
    data["bandwidth"]["allreduce"]["rows"] = rows
    return Page(from_json(json.dumps(data)).to_html())


def axis_y(page: Page) -> float:
    """The x axis: the plot's lowest line."""
    return max(float(attrs["y1"]) for tag, attrs in page.tags if tag == "line")


def test_the_y_axis_is_logarithmic(data):
    busbw = [0.001, 0.02, 0.16, 0.37]
    page = plot_of(data, bench_rows([4096, 65536, 1 << 20, 16 << 20], busbw))
    ys = [float(c["cy"]) for c in page.circles]
    # equal ratios of busbw are equal distances: y is linear in log10(busbw)
    per_decade = [(y - ys[0]) / (math.log10(b) - math.log10(busbw[0])) for y, b in zip(ys[1:], busbw[1:])]
    assert max(per_decade) - min(per_decade) < 0.1 and per_decade[0] < -50, per_decade
    assert all(axis_y(page) - y > 5 for y in ys), "no circle on the x axis"
    assert ys[-1] > 20 + 4, "nor above the top"
    grid = [float(t) for attrs, t in page.svg_texts if attrs.get("text-anchor") == "end"]
    assert {0.001, 0.01, 0.1} <= set(grid), "gridlines at the decades"
    assert all(round(g / 10 ** math.floor(math.log10(g)), 6) in (1, 2, 5) for g in grid), grid


def test_the_x_axis_ends_at_the_largest_size(data):
    sizes = [4096, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20]
    page = plot_of(data, bench_rows(sizes, [0.001, 0.019, 0.157, 0.368, 0.227, 0.288]))
    labels = [(float(attrs["x"]), t) for attrs, t in page.svg_texts if attrs.get("class") == "x-label"]
    assert labels[0][1] == "4 KiB" and labels[-1][1] == "256 MiB"
    assert labels[-1][0] == max(float(c["cx"]) for c in page.circles)
    assert len(page.circles) == 6 and [int(r["size (B)"]) for r in page.rows("bandwidth")] == sizes


def test_rows_without_bandwidth_stay_in_the_table_off_the_plot(data):
    page = plot_of(data, bench_rows([4096, 65536, 1 << 20, 16 << 20], [0.0, 0.02, 0.16, 0.37]))
    assert len(page.rows("bandwidth")) == 4 and page.rows("bandwidth")[0]["busbw (GB/s)"] == "0.0000"
    assert len(page.circles) == 3
    assert "not plotted" in "".join(page.text) and "4 KiB (busbw 0 GB/s)" in "".join(page.text)
    labels = [t for attrs, t in page.svg_texts if attrs.get("class") == "x-label"]
    assert labels[0] == "4 KiB", "the x axis still spans every size measured"
    only_zero = plot_of(data, bench_rows([4096], [0.0]))
    assert not only_zero.circles and "busbw-plot" not in [a.get("id") for _, a in only_zero.tags]
    assert len(only_zero.rows("bandwidth")) == 1 and "not plotted" in "".join(only_zero.text)


def test_torch_distributed_beside_horovod_in_the_table_and_the_plot(data):
    sizes = [4096, 1 << 20, 16 << 20, 256 << 20]
    data["bandwidth"]["torch_allreduce"] = {"size": 3, "algorithm": "torch.distributed/gloo",
                                            "rows": bench_rows(sizes, [0.002, 0.4, 0.8, 0.9])}
    page = plot_of(data, bench_rows(sizes, [0.001, 0.3, 0.8, 0.95]))
    rows = page.rows("bandwidth")
    assert [(r["busbw (GB/s)"], r["torch busbw (GB/s)"], r["Horovod / torch"]) for r in rows] == [
        ("0.0010", "0.0020", "0.50"), ("0.3000", "0.4000", "0.75"), ("0.8000", "0.8000", "1.00"),
        ("0.9500", "0.9000", "1.06")]
    torch = [attrs for tag, attrs in page.tags if tag == "rect" and attrs.get("class") == "torch-point"]
    assert len(torch) == 4 and len(page.circles) == 4
    # the same axes: at 16 MiB torch's busbw equals Horovod's, so its square sits on Horovod's circle
    circle = page.circles[2]
    assert (float(torch[2]["x"]) + 3.5, float(torch[2]["y"]) + 3.5) == (float(circle["cx"]), float(circle["cy"]))
    legend = [t for attrs, t in page.svg_texts if attrs.get("class") == "legend"]
    assert legend == ["\u25cf Horovod (gloo)", "\u25a0 torch.distributed/gloo"]
    assert "beside torch.distributed/gloo on the same ranks" in " ".join("".join(page.text).split())


def test_without_torchs_figure_the_table_says_why(data):
    data["bandwidth"]["torch_allreduce"] = {"error": "not measured: horovod_check_bench_torch is false"}
    page = Page(from_json(json.dumps(data)).to_html())
    assert "torch busbw (GB/s)" not in page.tables["bandwidth"][0]
    assert not [attrs for tag, attrs in page.tags if tag == "rect"]
    assert ("p", {"id": "torch-not-measured"}) in page.tags
    assert "not measured: horovod_check_bench_torch is false" in "".join(page.text)
