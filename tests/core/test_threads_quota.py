"""core.threads under a container's CPU quota (issue 33, "Also found"): the cores are at most the quota
(cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``) and the load is the container's own, not the host's.
Each test builds a fake cgroup file system and a fake usage counter: nothing depends on this machine."""
from __future__ import annotations

import os

import pytest

from core import threads


@pytest.fixture
def host(monkeypatch, tmp_path):
    """An 8-core host with a load of 20 from other containers; ``host["usage"]``: the cores this
    container's other processes keep busy, played into the cgroup's usage counter while the chooser waits."""
    monkeypatch.delenv(threads.TORCH_THREADS_ENV, raising=False)
    monkeypatch.delenv(threads.WORKERS_ENV, raising=False)
    monkeypatch.setattr(threads, "usable_cores", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (20.0, 20.0, 20.0))
    monkeypatch.setattr(threads, "runnable_others", lambda: 20.0)
    state = {"usage": 0.0, "now": 100.0, "counter": None, "unit": 1e-6, "root": tmp_path / "cgroup",
             "self": tmp_path / "self-cgroup"}

    def pause(seconds):  # the container's other processes run meanwhile
        state["now"] += seconds
        path = state["counter"]
        if path is not None:
            lines = path.read_text().splitlines()  # the counter is the first line's last field
            old = int(lines[0].split()[-1])
            lines[0] = lines[0].replace(str(old), str(old + round(state["usage"] * seconds / state["unit"])))
            path.write_text("\n".join(lines) + "\n")

    monkeypatch.setattr(threads, "_pause", pause)
    monkeypatch.setattr(threads, "_clock", lambda: state["now"])
    monkeypatch.setattr(threads, "CGROUP_ROOT", state["root"])
    monkeypatch.setattr(threads, "PROC_SELF_CGROUP", state["self"])
    threads.forget_torch_choice()
    yield state
    threads.forget_torch_choice()


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _v2(state, own: str, parent: str = "max"):
    root = state["root"]
    _write(root / "cgroup.controllers", "cpu memory\n")
    _write(root / "cpu.max", "max 100000\n")
    _write(root / "kubepods" / "cpu.max", f"{parent}\n")
    _write(root / "kubepods" / "pod1" / "cpu.max", f"{own}\n")
    state["counter"] = _write(root / "kubepods" / "pod1" / "cpu.stat", "usage_usec 5000000\nuser_usec 1\n")
    _write(state["self"], "0::/kubepods/pod1\n")


def test_a_v2_quota_caps_the_cores_and_the_load_is_the_containers_own(host):
    _v2(host, "200000 100000")
    choice = threads.choose_threads()
    assert (choice.cores, choice.threads, choice.quota) == (2, 2, 2.0)  # the host's load of 20 not counted
    assert choice.load == pytest.approx(0.0, abs=0.2)  # the test process's own CPU time aside
    assert choice.as_dict()["quota"] == 2.0 and "CPU quota 2" in choice.describe()
    host["usage"] = 1.0  # another process of the container keeps one core busy
    assert threads.choose_threads().threads == 1
    assert threads.choose_threads().load == pytest.approx(1.0, abs=0.2)
    assert threads.encoder_choice().threads == 2  # batched encoding: the share of the quota, whatever the load
    assert threads.choose_threads(workers=2).threads == 1


def test_the_smallest_quota_along_the_cgroups_ancestry_counts_with_the_usage_under_it(host):
    _v2(host, "max 100000", parent="350000 100000")
    host["counter"] = _write(host["root"] / "kubepods" / "cpu.stat", "usage_usec 9000000\n")  # the pod's
    quota = threads.cgroup_cpu_quota()
    assert (quota.cores, quota.limit_file.parent.name) == (3.5, "kubepods")
    host["usage"] = 2.0  # another container of the pod keeps two of its cores busy
    choice = threads.choose_threads()
    assert (choice.cores, choice.threads) == (3, 1)  # 3.5 cores of time, rounded down; two of them taken
    _write(host["root"] / "kubepods" / "pod1" / "cpu.max", "150000 100000\n")
    assert threads.cgroup_cpu_quota().cores == 1.5  # the container's own, smaller


def test_a_v1_quota_and_its_cpuacct_counter(host):
    root = host["root"]
    _write(root / "cpu,cpuacct" / "cpu.cfs_quota_us", "300000\n")
    _write(root / "cpu,cpuacct" / "cpu.cfs_period_us", "100000\n")
    host["counter"] = _write(root / "cpu,cpuacct" / "cpuacct.usage", "792885966305\n")
    host["unit"] = 1e-9
    _write(host["self"], "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/\n")  # not visible: the mount
    host["usage"] = 1.0
    choice = threads.choose_threads()
    assert (choice.cores, choice.quota, choice.threads) == (3, 3.0, 2)
    assert choice.load == pytest.approx(1.0, abs=0.2)


def test_no_quota_keeps_the_hosts_cores_and_load_and_the_record_unchanged(host):
    _v2(host, "max 100000")
    assert threads.cgroup_cpu_quota() is None
    choice = threads.choose_threads()
    assert (choice.cores, choice.load, choice.threads) == (8, 20.0, 1)  # a busy host, as before
    assert "quota" not in choice.as_dict()  # records made without a quota read as they did
    _write(host["root"] / "cpu" / "cpu.cfs_quota_us", "-1\n")
    _write(host["root"] / "cpu" / "cpu.cfs_period_us", "100000\n")
    _write(host["self"], "2:cpu:/\n")
    (host["root"] / "cgroup.controllers").unlink()
    assert threads.cgroup_cpu_quota() is None
    host["self"].unlink()  # not Linux, or no /proc
    assert threads.cgroup_cpu_quota() is None and threads.choose_threads().cores == 8


def test_an_unreadable_quota_is_named(host):
    _v2(host, "lots 100000")
    with pytest.raises(ValueError, match=r"pod1/cpu\.max: 'lots 100000' is not 'QUOTA PERIOD' or 'max'"):
        threads.choose_threads()
