"""What every benchmark script shares: timing, results, sides, machine.

Plain standard library only: this module is imported by both sides, in the
Gantt venv and in the reference venv.

A benchmark script runs one *side* when given ``--side gantt`` or
``--side reference`` (it then writes its JSON result to ``--json-out``),
and both sides one after the other, each in its own interpreter, when
given no ``--side``; ``run_all.py`` does the latter for every benchmark.
Progress goes to stderr, one line per step, so that a parent can show it.
"""

import contextlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
REF_VENV = os.environ.get("GANTT_BENCH_REF_VENV",
                          os.path.join(BENCH_DIR, ".venv-ref"))
RABBIT_URL = os.environ.get("GANTT_BENCH_TRANSPORT_URL",
                            "rabbit://guest:guest@127.0.0.1:5672/")
MYSQL_ADMIN_URL = os.environ.get("GANTT_BENCH_MYSQL_URL",
                                 "mysql+pymysql://root@127.0.0.1:3306/")
POSTGRES_ADMIN_URL = os.environ.get(
    "GANTT_BENCH_POSTGRES_URL",
    "postgresql+psycopg2://postgres@127.0.0.1:5432/postgres")
DATABASES = ("mysql", "postgresql", "sqlite")
DB_LABELS = {"mysql": "MariaDB", "postgresql": "PostgreSQL",
             "sqlite": "SQLite"}

_START = time.monotonic()
_CLEANUPS = []


def on_exit(fn, *args):
    """Run ``fn(*args)`` when a side has written its result."""
    _CLEANUPS.append((fn, args))


def ref_python():
    return os.path.join(REF_VENV, "bin", "python")


def gantt_python():
    """The interpreter of the Gantt side: this one, unless told."""
    return os.environ.get("GANTT_BENCH_PYTHON", sys.executable)


# -- progress ---------------------------------------------------------------


def log(fmt, *args):
    """One progress line on stderr (a parent shows the latest)."""
    text = fmt % args if args else fmt
    print("[%6.1fs] %s" % (time.monotonic() - _START, text),
          file=sys.stderr, flush=True)


# -- timing -----------------------------------------------------------------


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, int(round(p / 100.0 * (len(ordered) - 1))))
    return ordered[k]


def summary_ms(seconds):
    """p50/p90/p99/mean/max in milliseconds, and the count."""
    ms = [s * 1e3 for s in seconds]
    if not ms:
        return {"n": 0}
    return {"n": len(ms), "p50": statistics.median(ms),
            "p90": percentile(ms, 90), "p99": percentile(ms, 99),
            "mean": statistics.fmean(ms), "min": min(ms), "max": max(ms)}


def repeat(fn, seconds, min_reps=3, max_reps=100000, into=None):
    """Latencies (s) of calls of ``fn``: at least ``min_reps``, then until
    ``seconds`` have passed or ``max_reps`` were made.

    :param into: a list to append to (it keeps what was measured when a
        :func:`time_limit` interrupts the loop)
    """
    lat = [] if into is None else into
    deadline = time.perf_counter() + seconds
    while len(lat) < max_reps and (len(lat) < min_reps
                                   or time.perf_counter() < deadline):
        started = time.perf_counter()
        fn()
        lat.append(time.perf_counter() - started)
    return lat


def call_loop(fn, seconds, lat=None):
    """Call ``fn`` back to back for ``seconds``; the number of calls."""
    count = 0
    deadline = time.perf_counter() + seconds
    while True:
        started = time.perf_counter()
        if started >= deadline:
            return count
        fn()
        if lat is not None:
            lat.append(time.perf_counter() - started)
        count += 1


def threaded_rate(fn, threads, seconds):
    """Calls per second of ``threads`` threads calling ``fn`` back to back,
    and every call's latency (s)."""
    import threading
    counts = [0] * threads
    lats = [[] for _ in range(threads)]
    errors = []

    def worker(i):
        try:
            counts[i] = call_loop(fn, seconds, lats[i])
        except Exception as exc:  # reported, not swallowed
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(i,))
            for i in range(threads)]
    started = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    elapsed = time.perf_counter() - started
    return sum(counts) / elapsed, [x for lat in lats for x in lat]


class Timeout(Exception):
    """A timed section ran past its limit (see :func:`time_limit`)."""


@contextlib.contextmanager
def time_limit(seconds):
    """Interrupt the main thread's work after ``seconds`` (``Timeout``).

    For a side whose single call could outlast the run's time budget: the
    result then says "more than N s" instead of holding up the suite.
    """
    import signal

    def expired(signum, frame):
        raise Timeout("over %.0f s" % seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def rss_mib(pid=None):
    """Resident set size of a process (this one by default), in MiB."""
    with open("/proc/%s/status" % (pid or "self")) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


# -- results and sides ------------------------------------------------------


def write_result(result, path):
    result.setdefault("python", sys.version.split()[0])
    text = json.dumps(result, indent=1, sort_keys=True, default=str)
    if path:
        with open(path, "w") as f:
            f.write(text)
    else:
        print(text)


def run_side(script, side, args=(), python=None, timeout=900,
             on_line=None):
    """Run ``script --side SIDE`` in ``python``; return its JSON result.

    :param on_line: called with every progress line the side prints
    :raises: RuntimeError with the side's last lines when it fails
    """
    python = python or (ref_python() if side == "reference"
                        else gantt_python())
    fd, out = tempfile.mkstemp(prefix="gantt-bench-", suffix=".json")
    os.close(fd)
    cmd = [python, "-W", "ignore", os.path.join(BENCH_DIR, script),
           "--side", side, "--json-out", out] + list(args)
    tail = []
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                env=env, cwd=REPO)
        deadline = time.monotonic() + timeout
        for line in proc.stdout:
            line = line.rstrip("\n")
            tail = (tail + [line])[-40:]
            if on_line:
                on_line(line)
            if time.monotonic() > deadline:
                proc.kill()
                break
        code = proc.wait()
        if code != 0:
            raise RuntimeError("%s --side %s exited with %s:\n%s" % (
                script, side, code, "\n".join(tail)))
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def side_main(parser, sides, show, jobs=None):
    """The ``main`` of a benchmark script.

    :param sides: ``{"gantt": fn(args) -> dict, "reference": fn}``
    :param show: fn(results) printing the script's table, where results
        is ``{key: side's dict}``
    :param jobs: fn(args) -> ``[(key, side, extra argv)]``; by default one
        job per side, keyed by the side's name
    """
    parser.add_argument("--side", choices=sorted(sides),
                        help="run one side here (default: every side, "
                             "each in its own venv)")
    parser.add_argument("--json-out", help="where --side writes its JSON")
    args = parser.parse_args()
    if args.side:
        write_result(sides[args.side](args), args.json_out)
        for fn, fn_args in reversed(_CLEANUPS):
            fn(*fn_args)
        # skip tearing down millions of objects (15 s after Nova's 100k
        # hosts): every service a side started is stopped by now
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    job_list = jobs(args) if jobs else [(s, s, []) for s in sides]
    if any(side == "reference" for _k, side, _a in job_list):
        import refenv
        refenv.ensure()
    script = os.path.basename(sys.argv[0])
    results = {}
    for key, side, extra in job_list:
        log("running %s", key)
        results[key] = run_side(script, side, sys.argv[1:] + list(extra),
                                on_line=lambda line: print(
                                    line, file=sys.stderr, flush=True))
    show(results)
    return 0


# -- services ---------------------------------------------------------------


def port_open(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def require_services(*names):
    """Fail with how to start a service this machine does not run."""
    need = {"rabbit": (5672, "RabbitMQ", "rabbitmq-server -detached"),
            "mysql": (3306, "MariaDB", "start-stop-daemon --start --oknodo "
                      "--background --exec /usr/sbin/mariadbd"),
            "postgresql": (5432, "PostgreSQL", "pg_ctlcluster 15 main start")}
    for name in names:
        if name == "sqlite":
            continue
        port, what, how = need[name]
        if not port_open(port):
            raise SystemExit("%s is not reachable on 127.0.0.1:%d; start "
                             "it with: %s" % (what, port, how))


# -- machine ----------------------------------------------------------------


def machine():
    """What the numbers were measured on."""
    model = "?"
    mhz = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and model == "?":
                    model = line.split(":", 1)[1].strip()
                elif line.startswith("cpu MHz") and mhz is None:
                    mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    mem_gib = None
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/meminfo") as f:
            mem_gib = int(f.readline().split()[1]) / 1024.0 / 1024.0
    return {"cpu": model, "mhz": mhz, "cores": os.cpu_count(),
            "mem_gib": round(mem_gib, 1) if mem_gib else None,
            "kernel": platform.release(), "python": platform.python_version(),
            "os": _os_name()}


def _os_name():
    with contextlib.suppress(OSError):
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    return platform.system()


def versions(*packages):
    from importlib import metadata
    out = {}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
