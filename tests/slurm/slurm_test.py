#!/usr/bin/env python3
"""scripts/slurm-tune.sh on a real Slurm cluster.

Stands up a one-node cluster from Debian's packages (munged, slurmctld, slurmd; a generated
slurm.conf for this host and its cores, a fresh munge key, free ports, all state under a
temporary folder), runs the sharded tuning flow through sbatch, and tears the cluster down
whatever happens. Needs root (the daemons run as root); without it the test says why and
exits 77, which CTest reports as skipped, unless BEAMLAB_REQUIRE_SLURM=1 (CI) makes it a
failure.

  slurm_test.py --beamlab BUILD/bin/beamlab --root SOURCE_DIR

What it checks:
  1. the quick corpus in 3 shards: the merged cache holds exactly the union of the shards' keys,
     every shard's runs and candidates are in it, and `beamlab run` on a corpus workload takes
     every plan from it with zero searches;
  2. one array task cancelled mid-run (scancel): the merge job fails naming that shard; the task
     resubmitted with --resume finishes the same run, and the new merge completes;
  3. a damaged shard and a missing one: the merge job fails naming both files, merges the third,
     and changes none of the shard files;
  4. two one-core tasks (-c 1) share the node at the same time, each on its own CPU, and
     beamlab keeps to it.
"""
import argparse
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

SKIP = 77
DAEMONS = ("munged", "slurmctld", "slurmd")
ENDED = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
         "BOOT_FAIL", "DEADLINE"}


def skip(why):
    if os.environ.get("BEAMLAB_REQUIRE_SLURM") == "1":
        sys.exit(f"slurm test: cannot run: {why} (BEAMLAB_REQUIRE_SLURM=1 makes this a failure)")
    print(f"slurm test: SKIPPED: {why}", flush=True)
    sys.exit(SKIP)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def die_with_parent():
    """In a daemon's child, before exec: SIGKILL when this test's process dies, however."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    os.setpgrp()


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def kill_marked(mark, spare):
    """SIGKILL every process whose environment holds `mark` (but `spare`)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark in f.read().split(b"\0") and int(pid) != spare:
                    os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def start_reaper(mark, work):
    """A process outside this one's tree that, once this test has ended however it ended (even
    by SIGKILL), kills what the cluster left and removes `work` (unless `work`/keep exists)."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(write_end)
            os.setsid()
            if os.fork() == 0:  # the reaper itself, reparented away from the test
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.read(read_end, 1)  # EOF: the test's end of the pipe is closed
                kill_marked(mark, os.getpid())
                if not os.path.exists(os.path.join(work, "keep")):
                    shutil.rmtree(work, ignore_errors=True)
        finally:
            os._exit(0)
    os.close(read_end)
    os.waitpid(child, 0)
    return write_end  # open for as long as this process lives


class Cluster:
    """One controller and one compute node on this host, under `root`."""

    def __init__(self, root):
        self.root = root
        self.node = socket.gethostname().split(".")[0]
        self.cpus = len(os.sched_getaffinity(0))
        self.conf = os.path.join(root, "slurm.conf")
        self.mark = f"SLURM_CONF={self.conf}".encode()  # in the environment of all it starts
        self.procs = {}
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        for var in [v for v in self.env if v.startswith("SLURM_") and v != "SLURM_CONF"]:
            del self.env[var]  # a test run inside a Slurm job must not pass its own job on

    def start(self):
        munge = os.path.join(self.root, "munge")
        os.makedirs(munge, mode=0o700)
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(self.root, d))
        key = os.path.join(munge, "munge.key")
        subprocess.run(["mungekey", "--create", "--keyfile", key], check=True)
        self.socket = os.path.join(munge, "munge.sock")
        self.spawn("munged", ["munged", "--foreground", "--force", f"--key-file={key}",
                              f"--socket={self.socket}", f"--pid-file={munge}/munged.pid",
                              f"--log-file={munge}/munged.log", f"--seed-file={munge}/munged.seed"])
        self.wait_for(lambda: os.path.exists(self.socket), "munged's socket", 20)
        ctld_port, node_port = free_ports(2)
        r = self.root
        with open(self.conf, "w") as f:
            f.write(f"""# A one-node cluster for beamlab's tests (tests/slurm/slurm_test.py)
ClusterName=beamlabtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={node_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.socket}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
KillWait=10
SchedulerParameters=sched_interval=2
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", self.node])
        self.wait_for(lambda: "idle" in self.sinfo(), f"node {self.node} to be idle", 60)
        log(f"cluster up: node {self.node}, {self.cpus} CPU(s), controller on port {ctld_port}")

    def spawn(self, name, argv):
        out = open(os.path.join(self.root, f"{name}.out"), "w")
        self.procs[name] = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                            env=self.env, preexec_fn=die_with_parent)

    def sinfo(self):
        r = subprocess.run(["sinfo", "--noheader", "--format=%t"], env=self.env,
                           capture_output=True, text=True)
        return r.stdout

    def wait_for(self, ready, what, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited ({p.returncode}); its output: " +
                                       self.tail(os.path.join(self.root, f"{name}.out")))
            if ready():
                return
            time.sleep(0.3)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}; slurmctld: " +
                           self.tail(os.path.join(self.root, "slurmctld.out")))

    @staticmethod
    def tail(path, lines=15):
        try:
            with open(path) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(none)"

    def stop(self):
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            subprocess.run(["scancel", "--quiet", "--user=root"], env=self.env,
                           capture_output=True, timeout=30)
            deadline = time.time() + 30
            while time.time() < deadline and self.squeue():
                time.sleep(0.5)
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # Whatever a job left behind (a step daemon, a worker) still carries our SLURM_CONF.
        kill_marked(self.mark, os.getpid())

    def squeue(self):
        r = subprocess.run(["squeue", "--noheader", "--format=%i %T"], env=self.env,
                           capture_output=True, text=True, timeout=30)
        return r.stdout.strip()

    def jobs(self, job):
        """Each record of `job` (an array's tasks are one record each): {field: value}."""
        r = subprocess.run(["scontrol", "--oneliner", "show", "job", str(job)], env=self.env,
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"scontrol show job {job}: {r.stderr}"
        return [dict(re.findall(r"(\w+)=(\S*)", line)) for line in r.stdout.splitlines() if line]

    def wait_job(self, job, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            records = self.jobs(job)
            if records and all(rec["JobState"] in ENDED for rec in records):
                return records
            time.sleep(1)
        raise AssertionError(f"job {job} did not end within {timeout} s: {self.squeue()}")


class Flow:
    """scripts/slurm-tune.sh and beamlab, run against the cluster."""

    def __init__(self, cluster, beamlab, root):
        self.cluster = cluster
        self.beamlab = beamlab
        self.script = os.path.join(root, "scripts", "slurm-tune.sh")
        self.corpus = os.path.join(root, "corpora", "quick.json")
        self.env = dict(cluster.env, BEAMLAB=beamlab)

    def submit(self, *args):
        r = subprocess.run(["bash", self.script, *args], env=self.env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, f"slurm-tune.sh {' '.join(args)}: {r.stdout}{r.stderr}"
        array = re.search(r"tuning array: job (\d+)", r.stdout)
        merge = re.search(r"the merge: job (\d+)", r.stdout)
        assert merge, r.stdout
        return (array.group(1) if array else None), merge.group(1)

    def beamlab_json(self, *args):
        r = subprocess.run([self.beamlab, *args, "--format", "json"], env=self.env,
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"beamlab {' '.join(args)}: {r.stderr}"
        return json.loads(r.stdout)


def query(db, sql, *params):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute(sql, params).fetchall()


def cache_keys(db):
    return set(query(db, "SELECT kernel_hash, device, compiler, settings_key, threads FROM cache"))


def runs(db):
    """uid -> (status, candidates) of each run."""
    return {uid: (status, n) for uid, status, n in query(
        db, "SELECT r.uid, r.status, (SELECT count(*) FROM candidates c JOIN tunings t ON "
            "t.id = c.tuning_id WHERE t.run_id = r.id) FROM runs r")}


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def check_merged(out, shards):
    merged_keys = cache_keys(out)
    each = [cache_keys(s) for s in shards]
    union = set().union(*each)
    # A shard tunes its own kernels only (a resumed task too, though Slurm numbers it 1 of 1).
    assert sum(map(len, each)) == len(union), f"shards overlap: {[len(k) for k in each]}"
    assert union and merged_keys == union, (
        f"merged keys {len(merged_keys)} != union of the shards' {len(union)}: "
        f"missing {union - merged_keys}, extra {merged_keys - union}")
    merged_runs = runs(out)
    for s in shards:
        for uid, (status, n) in runs(s).items():
            assert merged_runs.get(uid) == (status, n), (
                f"{s}: run {uid} ({status}, {n} candidates) is {merged_runs.get(uid)} in {out}")
    return merged_keys, union, merged_runs


def test_three_shards(flow, work):
    """1: the quick corpus in 3 shards, merged; `beamlab run` then searches nothing."""
    out = os.path.join(work, "a", "tuned.db")
    os.makedirs(os.path.dirname(out))
    start = time.time()
    array, merge = flow.submit(flow.corpus, "3", out, *TUNE_OPTIONS)
    tasks = flow.cluster.wait_job(array, 1200)
    records = flow.cluster.wait_job(merge, 300)
    took = time.time() - start
    assert all(t["JobState"] == "COMPLETED" for t in tasks), tasks
    assert records[0]["JobState"] == "COMPLETED", read(merge_log(out, merge))
    shards = [f"{out}.shard-{i}.db" for i in range(3)]
    keys, union, merged_runs = check_merged(out, shards)
    per_shard = [len(cache_keys(s)) for s in shards]
    assert all(per_shard), f"a shard tuned nothing: {per_shard}"
    assert all(status == "done" for status, _ in merged_runs.values()), merged_runs
    candidates = sum(n for _, n in merged_runs.values())
    log(f"3 shards tuned and merged in {took:.1f} s: shard keys {per_shard} (sum "
        f"{sum(per_shard)}, union {len(union)}), merged {len(keys)}; {len(merged_runs)} runs, "
        f"{candidates} candidates")
    verify = flow.beamlab_json("cache", "verify", "--db", out)
    assert verify["ok"] and not verify["unfinished_runs"], verify
    run = flow.beamlab_json("run", "matmul", "--M", "256", "--N", "256", "--K", "256",
                            "--beam", "1", "--db", out)
    assert run["searches"] == 0 and run["cache_hits"] == len(run["kernels"]) > 0, run
    log(f"beamlab run matmul 256^3 --beam 1: {run['cache_hits']} of {len(run['kernels'])} "
        f"kernel(s) from the merged cache, {run['searches']} searches")
    return out


def merge_log(out, job):
    return os.path.join(os.path.dirname(out), "slurm-logs", f"merge-{job}.out")


def test_cancel_and_resume(flow, work):
    """2: scancel of one array task mid-run; its resubmission resumes the run; the merge ends."""
    out = os.path.join(work, "b", "tuned.db")
    os.makedirs(os.path.dirname(out))
    array, merge = flow.submit(flow.corpus, "3", out, *TUNE_OPTIONS)
    victim = f"{out}.shard-1.db"

    def candidates():
        try:
            return query(victim, "SELECT count(*) FROM candidates")[0][0]
        except sqlite3.Error:
            return 0  # not created yet, or being created

    deadline = time.time() + 900
    while candidates() < 3:
        assert time.time() < deadline, "shard 1 never started tuning"
        time.sleep(0.2)
    subprocess.run(["scancel", f"{array}_1"], env=flow.env, check=True)
    log(f"cancelled task {array}_1 with {candidates()} candidate(s) journaled")
    tasks = flow.cluster.wait_job(array, 1200)
    states = {t["ArrayTaskId"]: t["JobState"] for t in tasks}
    assert states == {"0": "COMPLETED", "1": "CANCELLED", "2": "COMPLETED"}, states
    (cut_status, cut_n), = runs(victim).values()
    assert cut_status in ("interrupted", "running"), cut_status
    first = flow.cluster.wait_job(merge, 300)[0]
    text = read(merge_log(out, merge))
    assert first["JobState"] == "FAILED", (first, text)
    assert victim in text and "unfinished" in text, text
    log(f"the merge after the cancel failed as it should: run left {cut_status} with {cut_n} "
        f"candidates; the merge log says: {text.strip().splitlines()[-1]}")

    array2, merge2 = flow.submit("--resume", "1", flow.corpus, "3", out, *TUNE_OPTIONS)
    resumed = flow.cluster.wait_job(array2, 1200)
    assert [t["JobState"] for t in resumed] == ["COMPLETED"], resumed
    task_log = os.path.join(os.path.dirname(out), "slurm-logs", f"tune-{array2}_1.out")
    assert "resuming run" in read(task_log), read(task_log)
    second = flow.cluster.wait_job(merge2, 300)[0]
    assert second["JobState"] == "COMPLETED", read(merge_log(out, merge2))
    (status, n), = runs(victim).values()
    assert status == "done" and n >= cut_n, (status, n, cut_n)
    shards = [f"{out}.shard-{i}.db" for i in range(3)]
    keys, union, _ = check_merged(out, shards)
    log(f"resumed shard 1 ({cut_n} -> {n} candidates, one run) and merged: {len(keys)} keys "
        f"= the union of the shards' {len(union)}")


def test_damaged_and_missing(flow, work, tuned):
    """3: a damaged shard and a missing one fail the merge by name; the third is merged."""
    out = os.path.join(work, "c", "tuned.db")
    os.makedirs(os.path.dirname(out))
    for i in range(3):
        shutil.copy(f"{tuned}.shard-{i}.db", f"{out}.shard-{i}.db")
    damaged, missing = f"{out}.shard-1.db", f"{out}.shard-2.db"
    size = os.path.getsize(damaged)
    with open(damaged, "r+b") as f:  # an interior page overwritten: it opens, it doesn't hold
        f.seek(size // 2 // 4096 * 4096)
        f.write(b"\x55" * 4096)
    os.remove(missing)
    before = {p: digest(p) for p in (f"{out}.shard-0.db", damaged)}
    _, merge = flow.submit("--merge-only", flow.corpus, "3", out)
    record = flow.cluster.wait_job(merge, 300)[0]
    text = read(merge_log(out, merge))
    assert record["JobState"] == "FAILED", (record, text)
    assert damaged in text and "damaged" in text, text
    assert missing in text, text
    assert {p: digest(p) for p in before} == before, "the merge changed a shard file"
    assert not os.path.exists(missing)
    assert cache_keys(out) == cache_keys(f"{out}.shard-0.db"), "shard 0 was not merged whole"
    log("a damaged and a missing shard: the merge failed naming both, merged shard 0 "
        f"({len(cache_keys(out))} keys), left the files as they were; its last line: "
        f"{text.strip().splitlines()[-1]}")


def test_one_core_tasks(flow, work):
    """4: two -c 1 tasks at once, each on its own CPU, beamlab keeping to it."""
    if flow.cluster.cpus < 2:
        log("one-core tasks: SKIPPED (this node has 1 CPU)")
        return
    corpus = os.path.join(work, "small.json")
    with open(corpus, "w") as f:
        json.dump({"name": "small", "workloads": [
            {"workload": "reduce_sum", "params": {"N": 1 << 20}},
            {"workload": "reduce_sum", "params": {"N": 1 << 21}}]}, f)
    out = os.path.join(work, "d", "tuned.db")
    os.makedirs(os.path.dirname(out))
    array, merge = flow.submit("-c", "1", corpus, "2", out, "--beam", "2")
    tasks = flow.cluster.wait_job(array, 600)
    assert flow.cluster.wait_job(merge, 300)[0]["JobState"] == "COMPLETED"
    assert all(t["JobState"] == "COMPLETED" for t in tasks), tasks
    cpus = []
    for t in tasks:
        text = read(os.path.join(os.path.dirname(out), "slurm-logs",
                                 f"tune-{array}_{t['ArrayTaskId']}.out"))
        m = re.search(r"on 1 core\(s\) \(this process may use 1 of the machine's \d+ CPUs: (\d+)\)",
                      text)
        assert m, text
        cpus.append(m.group(1))
    assert len(set(cpus)) == 2, f"both tasks ran on CPU {cpus[0]}"
    starts = [t["StartTime"] for t in tasks]
    ends = [t["EndTime"] for t in tasks]
    assert max(starts) <= min(ends), f"the tasks did not share the node: {starts} {ends}"
    log(f"two -c 1 tasks ran at once on CPUs {cpus[0]} and {cpus[1]}, each tuning on 1 core")


TUNE_OPTIONS = ("--beam", "1", "--max-candidates", "12")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--beamlab", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    if os.geteuid() != 0:
        skip("the Slurm daemons need root (run the tests as root, as CI does)")
    missing = [d for d in (*DAEMONS, "sbatch", "mungekey") if not shutil.which(d)]
    if missing:
        skip(f"{', '.join(missing)} not installed: BEAMLAB_EXTRA_PACKAGES='slurmctld slurmd "
             f"slurm-client munge' bash scripts/setup")
    # A kill from CTest (a timeout) ends the test through `finally`, and with it the cluster.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("slurm test: terminated"))
    work = tempfile.mkdtemp(prefix="beamlab-slurm-")
    cluster = Cluster(os.path.join(work, "cluster"))
    os.makedirs(cluster.root)
    start_reaper(cluster.mark, work)
    ok = False
    try:
        cluster.start()
        flow = Flow(cluster, os.path.realpath(args.beamlab), os.path.realpath(args.root))
        tuned = test_three_shards(flow, work)
        test_cancel_and_resume(flow, work)
        test_damaged_and_missing(flow, work, tuned)
        test_one_core_tasks(flow, work)
        ok = True
    finally:
        cluster.stop()
        if ok or os.environ.get("BEAMLAB_KEEP_SLURM") != "1":
            shutil.rmtree(work, ignore_errors=True)
        else:
            open(os.path.join(work, "keep"), "w").close()
            print(f"slurm test: kept {work} (BEAMLAB_KEEP_SLURM=1)")
    log("slurm test: all passed")


if __name__ == "__main__":
    main()
