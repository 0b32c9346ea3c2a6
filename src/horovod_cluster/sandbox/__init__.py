"""The sandbox: a local cluster of real Debian hosts (rootful podman containers) reached over SSH.

Images are built here from Debian's archive (debootstrap, `podman import`, one `podman build`
layer for systemd and sshd), because no container registry is reachable. Everything expensive
is kept in the cache folder and reused; `up` a second time only checks and rewrites the inventory.
"""
from __future__ import annotations

import json
import platform
import shutil
import subprocess
import tarfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from ..content import cache_dir, content_dir, is_checkout

_FILES = Path(__file__).resolve().parent / "files"  # the image's Containerfile, in the wheel too

# Debian release -> suite: 12 is the default host; 13 runs beside it (`up --debian13 N --debian13-arm64 N`).
RELEASES = {"12": "bookworm", "13": "trixie"}
MIRROR = "http://deb.debian.org/debian"
NETWORK = "hvc-sandbox"
LABEL = "io.horovod-cluster.sandbox"
ARCHES = ("amd64", "arm64")
# The settings DESIGN §4 measured as needed here: crun refuses this machine's cgroups,
# and MPI/Gloo open many files and threads.
CONTAINERS_CONF = Path("/etc/containers/containers.conf.d/50-horovod-cluster.conf")
CONTAINERS_CONF_TEXT = """\
# Written by horovod-cluster: crun refuses the hybrid cgroups here; MPI needs many files.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
"""

Progress = Callable[[str], None]


class SandboxError(RuntimeError):
    """A step of the sandbox failed; the message names the command and its output."""


def _quiet(_: str) -> None:
    pass


def base_image(arch: str, release: str = "12") -> str:
    return f"localhost/horovod-cluster/debian-base:{RELEASES[release]}-{arch}"


def node_image(arch: str, release: str = "12") -> str:
    return f"localhost/horovod-cluster/node:{RELEASES[release]}-{arch}"


def native_arch() -> str:
    return {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def _run(cmd: Sequence[str], *, progress: Progress = _quiet, check: bool = True,
         stdin=None) -> subprocess.CompletedProcess:
    """Run a command, streaming its lines to `progress`; raise SandboxError naming it on failure."""
    proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            stdin=stdin)
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        lines.append(line)
        if line:
            progress(line)
    code = proc.wait()
    out = "\n".join(lines)
    if check and code != 0:
        tail = "\n".join(lines[-15:])
        raise SandboxError(f"`{' '.join(cmd)}` exited {code}:\n{tail}")
    return subprocess.CompletedProcess(list(cmd), code, out, "")


def _podman(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check)


def _remove(*names: str) -> None:
    """podman rm -f, twice if need be: the first rm of a container whose conmon is gone fails
    waiting for an exit file nobody will write; by then podman has marked it stopped."""
    if _podman("rm", "-f", "-t", "1", *names, check=False).returncode != 0:
        _podman("rm", "-f", "-t", "1", *names)


@dataclass
class Host:
    name: str
    arch: str
    state: str
    address: str
    release: str = "12"  # Debian's major version

    def to_dict(self) -> dict:
        return asdict(self)


class Sandbox:
    """`up`, `down`, `status` of the local cluster, and the image builds behind it."""

    def __init__(self, *, prefix: str = "hvc-node", network: str = NETWORK,
                 inventory_dir: Path | None = None, state_dir: Path | None = None,
                 progress: Progress = _quiet, output: Progress = _quiet):
        """`progress` gets one line per step; `output` every line the build commands print."""
        self.prefix = prefix
        self.output = output
        # Hosts carry the network's name as label value: status/down touch only this sandbox.
        self.network = network
        self.label = f"{LABEL}={network}"
        self.progress = progress
        self.state_dir = state_dir or cache_dir() / "sandbox"
        self.image_dir = cache_dir() / "images"
        if inventory_dir is None:
            root = content_dir() if is_checkout() else Path.cwd()
            inventory_dir = root / "inventories" / "sandbox"
        self.inventory_dir = inventory_dir

    # ---- machine setup -------------------------------------------------------------------
    def check_tools(self) -> None:
        missing = [tool for tool in ("podman", "debootstrap", "ssh-keygen", "ssh-keyscan")
                   if shutil.which(tool) is None]
        if missing:
            raise SandboxError(
                f"missing tools: {', '.join(missing)}; install them with "
                "`apt-get install podman debootstrap openssh-client` (and qemu-user-static for arm64)")

    def configure_podman(self) -> bool:
        """Install the podman settings the sandbox needs; True when the file changed."""
        if CONTAINERS_CONF.is_file() and CONTAINERS_CONF.read_text() == CONTAINERS_CONF_TEXT:
            return False
        CONTAINERS_CONF.parent.mkdir(parents=True, exist_ok=True)
        CONTAINERS_CONF.write_text(CONTAINERS_CONF_TEXT)
        self.progress(f"wrote {CONTAINERS_CONF}")
        return True

    def _enable_foreign_arch(self, arch: str, release: str = "12") -> None:
        if arch == native_arch():
            return
        binfmt = Path("/proc/sys/fs/binfmt_misc")
        if not (binfmt / "status").exists():
            _run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(binfmt)])
        qemu = {"arm64": "qemu-aarch64", "amd64": "qemu-x86_64"}[arch]
        if not (binfmt / qemu).exists():
            if shutil.which("update-binfmts") is None:
                raise SandboxError(f"{arch} images need qemu-user-static and binfmt-support installed")
            _run(["update-binfmts", "--enable", qemu])
        if arch == "arm64" and release != "12":  # systemd >= 255 needs a newer qemu (emulator.py)
            from . import emulator
            self.build_images(["amd64"], release="13")
            emulator.ensure(self.image_dir, node_image("amd64", "13"), self.progress)

    # ---- images --------------------------------------------------------------------------
    def build_images(self, arches: Sequence[str] = ("amd64",), release: str = "12") -> list[str]:
        """Build what is missing of the base and node images of one Debian release; returns the images built."""
        if release not in RELEASES:
            raise SandboxError(f"unknown Debian release {release!r}; allowed: {', '.join(RELEASES)}")
        built = []
        for arch in arches:
            if arch not in ARCHES:
                raise SandboxError(f"unknown sandbox arch {arch!r}; allowed: {', '.join(ARCHES)}")
            self._enable_foreign_arch(arch, release)
            node, base = node_image(arch, release), base_image(arch, release)
            if _podman("image", "exists", node, check=False).returncode == 0:
                continue
            if _podman("image", "exists", base, check=False).returncode != 0:
                self._build_base(arch, release)
                built.append(base)
            self.progress(f"building {node} (systemd, sshd, python3)")
            emulated = ["--build-arg", "EMULATED=1"] if arch != native_arch() else []
            _run(["podman", "build", "--arch", arch, "--build-arg", f"BASE={base}", *emulated,
                  "-t", node, "-f", str(_FILES / "Containerfile"), str(_FILES)], progress=self.output)
            built.append(node)
        return built

    def _build_base(self, arch: str, release: str) -> None:
        suite = RELEASES[release]
        rootfs = self.image_dir / f"rootfs-{suite}-{arch}"
        tarball = self.image_dir / f"rootfs-{suite}-{arch}.tar"
        if not tarball.is_file():
            if rootfs.exists():  # a debootstrap that was interrupted: start it again
                shutil.rmtree(rootfs)
            rootfs.mkdir(parents=True)
            self.progress(f"debootstrap {suite} {arch} (minutes; {'slower under qemu' if arch != native_arch() else 'about 1 min'})")
            _run(["debootstrap", "--variant=minbase", f"--arch={arch}", suite, str(rootfs), MIRROR],
                 progress=self.output)
            partial = tarball.with_suffix(".tar.partial")
            with tarfile.open(partial, "w") as tar:
                tar.add(str(rootfs), arcname=".")
            partial.rename(tarball)  # only a finished tarball counts
            shutil.rmtree(rootfs)
        self.progress(f"podman import {base_image(arch, release)}")
        with tarball.open("rb") as stream:
            _run(["podman", "import", "--arch", arch, "--change", "CMD=/bin/bash", "-", base_image(arch, release)],
                 progress=self.output, stdin=stream)

    # ---- hosts ---------------------------------------------------------------------------
    @property
    def key_file(self) -> Path:
        return self.state_dir / "id_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.state_dir / "known_hosts"

    def _ensure_key(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if not self.key_file.is_file():
            _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "horovod-cluster-sandbox",
                  "-f", str(self.key_file)])

    def _ensure_network(self) -> None:
        if _podman("network", "exists", self.network, check=False).returncode != 0:
            self.progress(f"creating podman network {self.network}")
            _podman("network", "create", "--label", self.label, self.network)

    def host_names(self, count: int, arm64: int, debian13: int = 0,
                   debian13_arm64: int = 0) -> list[tuple[str, str, str]]:
        """(name, arch, Debian release) of each host; the release is in the name of any but Debian 12's."""
        names = [(f"{self.prefix}{i}", "amd64", "12") for i in range(1, count + 1)]
        names += [(f"{self.prefix}-arm64-{i}", "arm64", "12") for i in range(1, arm64 + 1)]
        names += [(f"{self.prefix}-debian13-{i}", "amd64", "13") for i in range(1, debian13 + 1)]
        names += [(f"{self.prefix}-debian13-arm64-{i}", "arm64", "13") for i in range(1, debian13_arm64 + 1)]
        return names

    def _ensure_host(self, name: str, arch: str, release: str = "12") -> bool:
        """Create or start one host; True when something changed."""
        inspect = _podman("container", "inspect", name, check=False)
        if inspect.returncode == 0:
            if json.loads(inspect.stdout)[0]["State"]["Running"]:
                if self._responds(name):
                    return False
            else:
                self.progress(f"starting {name}")
                if _podman("start", name, check=False).returncode == 0 and self._responds(name):
                    return True
            # Podman's record says running (or it will not start) but nothing answers: state
            # carried over from another boot or machine image. Replace the host.
            self.progress(f"replacing {name}: the container does not respond")
            _remove(name)
        self.progress(f"creating {name} ({arch}, Debian {release})")
        _podman("run", "-d", "--name", name, "--hostname", name, "--network", self.network,
                "--arch", arch, "--label", self.label, "--shm-size=1g", "--stop-timeout=1",
                "--systemd=always", node_image(arch, release))
        key = self.key_file.with_suffix(".pub").read_text()
        subprocess.run(["podman", "exec", "-i", name, "sh", "-c",
                        "umask 077 && mkdir -p /root/.ssh && cat > /root/.ssh/authorized_keys"],
                       input=key, text=True, check=True, capture_output=True)
        return True

    @staticmethod
    def _responds(name: str) -> bool:
        try:
            return subprocess.run(["podman", "exec", name, "true"], capture_output=True,
                                  timeout=30).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def _diagnose(self, name: str) -> str:
        """What the host itself says about sshd, for the error message."""
        probe = _podman("exec", name, "sh", "-c",
                        "systemctl is-system-running; systemctl status --no-pager -n 5 ssh", check=False)
        return (probe.stdout + probe.stderr).strip() or f"podman exec {name} gave no output"

    def _address(self, name: str) -> str:
        data = json.loads(_podman("container", "inspect", name).stdout)[0]
        networks = data["NetworkSettings"].get("Networks") or {}
        return (networks.get(self.network) or {}).get("IPAddress", "")

    def _scan_host_keys(self, hosts: list[Host], timeout: float = 180) -> None:
        """Record each host's real ed25519 key (sshd may still be starting: wait for it)."""
        lines: list[str] = []
        for host in hosts:
            deadline = time.monotonic() + timeout
            while True:
                scan = subprocess.run(["ssh-keyscan", "-T", "3", "-t", "ed25519", host.address],
                                      capture_output=True, text=True)
                keys = [line for line in scan.stdout.splitlines() if line and not line.startswith("#")]
                if keys:
                    # Known by its name and its address, as in a lab with DNS.
                    lines += [f"{host.name},{line}" for line in keys]
                    break
                if time.monotonic() > deadline:
                    raise SandboxError(f"sshd on {host.name} ({host.address}) did not answer in {timeout:.0f} s;"
                                       f" the host says:\n{self._diagnose(host.name)}")
                time.sleep(1)
        self.known_hosts.write_text("\n".join(lines) + "\n")

    def up(self, count: int = 3, arm64: int = 0, debian13: int = 0, debian13_arm64: int = 0) -> list[Host]:
        if min(count, arm64, debian13, debian13_arm64) < 0 or count + arm64 + debian13 + debian13_arm64 == 0:
            raise SandboxError("the sandbox needs at least one host"
                               " (--hosts N, --arm64 N, --debian13 N, --debian13-arm64 N)")
        self.check_tools()
        self.configure_podman()
        self.build_images(["amd64"] * bool(count) + ["arm64"] * bool(arm64))
        if debian13 or debian13_arm64:
            self.build_images(["amd64"] * bool(debian13) + ["arm64"] * bool(debian13_arm64), release="13")
        self._ensure_key()
        self._ensure_network()
        wanted = self.host_names(count, arm64, debian13, debian13_arm64)
        for name, arch, release in wanted:
            self._ensure_host(name, arch, release)
        hosts = [Host(name, arch, "running", self._address(name), release) for name, arch, release in wanted]
        self._scan_host_keys(hosts)
        self.write_inventory(hosts)
        return hosts

    def status(self) -> list[Host]:
        if shutil.which("podman") is None:
            return []
        listing = _podman("ps", "-a", "--filter", f"label={self.label}", "--format", "json")
        hosts = []
        for entry in json.loads(listing.stdout or "[]"):
            name = entry["Names"][0]
            arch = "arm64" if "-arm64-" in name else "amd64"
            release = next((r for r, suite in RELEASES.items() if f":{suite}-" in entry.get("Image", "")), "12")
            address = self._address(name) if entry["State"] == "running" else ""
            hosts.append(Host(name, arch, entry["State"], address, release))
        return sorted(hosts, key=lambda h: h.name)

    def down(self, images: bool = False) -> list[str]:
        removed = [host.name for host in self.status()]
        if removed:
            _remove(*removed)
        if _podman("network", "exists", self.network, check=False).returncode == 0:
            _podman("network", "rm", "-f", self.network)
        if images:
            for release in RELEASES:
                for arch in ARCHES:
                    for image in (node_image(arch, release), base_image(arch, release)):
                        _podman("rmi", "-f", image, check=False)
        inventory = self.inventory_dir / "hosts.yml"
        if inventory.is_file():
            inventory.unlink()
        return removed

    # ---- inventory -----------------------------------------------------------------------
    def write_inventory(self, hosts: list[Host]) -> Path:
        """inventories/sandbox/hosts.yml: plain SSH, host keys checked against known_hosts."""
        def host_vars(host: Host) -> dict:
            return {"ansible_host": host.address}

        groups = {
            "cpu_nodes": {"hosts": {h.name: host_vars(h) for h in hosts if h.arch == "amd64"}},
            "pis": {"hosts": {h.name: host_vars(h) for h in hosts if h.arch == "arm64"}},
        }
        # Debian 13 hosts are also in the group debian13, for the settings of that release (Debian's own torch):
        # as deep as the platform groups and of a higher priority, so that its settings win over those of pis.
        groups["debian13"] = {"hosts": {h.name: None for h in hosts if h.release == "13"},
                              "vars": {"ansible_group_priority": 10}}
        inventory = {
            "all": {
                "vars": {
                    "ansible_user": "root",
                    "ansible_ssh_private_key_file": str(self.key_file),
                    "ansible_ssh_common_args": f"-o UserKnownHostsFile={self.known_hosts} "
                                               "-o StrictHostKeyChecking=yes",
                    # The mesh key beside the sandbox's own access key, one folder per sandbox: a test's own
                    # sandbox rolled out beside the shared one must not rewrite the shared one's key.
                    "ssh_mesh_key_dir": str(self.state_dir / "ssh_mesh"),
                },
                "children": {"cluster": {"children": {k: v for k, v in groups.items() if v["hosts"]}}},
            }
        }
        self.inventory_dir.mkdir(parents=True, exist_ok=True)
        target = self.inventory_dir / "hosts.yml"
        text = "---\n# Written by `horovod-cluster sandbox up`; do not edit.\n" + yaml.safe_dump(
            inventory, sort_keys=False)
        if not target.is_file() or target.read_text() != text:
            target.write_text(text)
        group_vars = self.inventory_dir / "group_vars"
        packaged = content_dir() / "inventories" / "sandbox" / "group_vars"
        if not group_vars.exists() and packaged.is_dir() and packaged != group_vars:
            shutil.copytree(packaged, group_vars)
        return target
