"""Fixtures for the black-box integration suite.

The suite talks to a real server process over TCP, through redis-py and through
raw sockets. The server under test is chosen by LAVIK_TEST_TARGET:

  lavik (default)  <repo>/build/lavik, one process per thread count
  redis            Debian's redis-server, used to check that every test encodes
                   real Redis 7 behaviour before it is run against lavik

Fixtures:
  server_factory(threads=N)  session-scoped shared server for that thread count
  server                     the shared server with the default thread count
  r                          redis-py client (decode_responses=True), FLUSHALL first
  rb                         the same with bytes replies
  raw                        factory for RawConn (raw RESP socket) to `server`
  spawn_server(...)          a dedicated server owned by one test (stopped after it)
  mr                         redis-py client of a server at 1, 2 and 4 threads (parametrised)
  mserver                    that server itself (for tests that open several connections)

Helpers for the tests: err, wait_until, crc16, key_slot, worker_of, spread_keys, WRONGTYPE;
for blocking commands: waiters_across_workers, waiter_after_a_disconnected_one,
consume_while_producing; for chunked values: storage, settle_written, written_by, wait_swept.

Tests marked @pytest.mark.lavik_only are about lavik's own command line, or behaviour where
lavik deliberately goes past Redis 7.0.15 (say why in the test); they are deselected (not
skipped) when the target is redis.
"""

import fcntl
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis

REPO = Path(__file__).resolve().parents[2]
# LAVIK_BIN overrides the binary (e.g. a sanitizer build elsewhere).
LAVIK_BIN = Path(os.environ.get("LAVIK_BIN") or REPO / "build" / "lavik")
TARGET = os.environ.get("LAVIK_TEST_TARGET", "lavik").strip().lower()
DEFAULT_THREADS = 2
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0

if TARGET not in ("lavik", "redis"):
    raise pytest.UsageError(f"LAVIK_TEST_TARGET must be 'lavik' or 'redis', not {TARGET!r}")


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "lavik_only: lavik's own command line or behaviour past Redis 7.0; deselected for redis")


def pytest_collection_modifyitems(config, items):
    if TARGET != "redis":
        return
    kept, dropped = [], []
    for item in items:
        (dropped if item.get_closest_marker("lavik_only") else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


# --------------------------------------------------------------------------- ports


def free_port():
    """A port that was free a moment ago (bind to 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    # Something may listen on the wildcard address or ::1 without blocking our bind.
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return False
    except OSError:
        return True


_claimed_ports = {}  # port -> the open lock file that claims it for this process
_port_cursor = {}


def cluster_ports(n, base, span=190):
    """n ports of [base, base + span) for cluster nodes: each, and its bus port (+ 10000), free
    now and claimed for this pytest process by a lock file in the temporary directory (released
    when the process exits), so concurrent runs of the suite on one machine never pick the same
    node. Each call moves on through the range (from a random start), so a port whose bus port
    lingers in TIME_WAIT from an earlier test is not reused at once."""
    cursor = _port_cursor.setdefault(base, random.randrange(span))
    out = []
    for _ in range(span):
        port = base + cursor % span
        cursor += 1
        if port not in _claimed_ports:
            lock = open(os.path.join(tempfile.gettempdir(), f"lavik-test-port-{port}.lock"), "w")
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                lock.close()
                continue  # another run holds it
            _claimed_ports[port] = lock
        if port_is_free(port) and port_is_free(port + 10000):
            out.append(port)
            if len(out) == n:
                break
    _port_cursor[base] = cursor
    if len(out) < n:
        raise RuntimeError(f"no {n} free cluster ports in {base}-{base + span - 1}")
    return out


# --------------------------------------------------------------------------- RESP


class RespError:
    """An error reply, kept as a value so tests can compare its text."""

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        return isinstance(other, RespError) and other.text == self.text

    def __repr__(self):
        return f"RespError({self.text!r})"


class RespSet(list):
    """A RESP3 set reply ('~'), kept apart from arrays."""


class RespPush(list):
    """A RESP3 push reply ('>')."""


class _NeedMore(Exception):
    pass


def _line(buf, pos):
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise _NeedMore()
    return bytes(buf[pos:end]), end + 2


def parse_reply(buf, pos=0):
    """Parses one RESP2/RESP3 reply from buf[pos:]; returns (value, next_pos).

    Raises _NeedMore when buf holds only part of a reply. Simple strings become
    str, bulk strings bytes, errors RespError, nulls None, maps dict.
    """
    if pos >= len(buf):
        raise _NeedMore()
    kind = buf[pos:pos + 1]
    body, pos = _line(buf, pos + 1)
    if kind == b"+":
        return body.decode(), pos
    if kind == b"-":
        return RespError(body.decode()), pos
    if kind == b":":
        return int(body), pos
    if kind == b"(":
        return int(body), pos
    if kind == b",":
        return float(body), pos
    if kind == b"#":
        return body == b"t", pos
    if kind == b"_":
        return None, pos
    if kind in (b"$", b"=", b"!"):
        n = int(body)
        if n < 0:
            return None, pos
        if len(buf) < pos + n + 2:
            raise _NeedMore()
        data = bytes(buf[pos:pos + n])
        if kind == b"!":
            return RespError(data.decode()), pos + n + 2
        return data, pos + n + 2
    if kind in (b"*", b"~", b">"):
        n = int(body)
        if n < 0:
            return None, pos
        items = []
        for _ in range(n):
            item, pos = parse_reply(buf, pos)
            items.append(item)
        if kind == b"~":
            return RespSet(items), pos
        if kind == b">":
            return RespPush(items), pos
        return items, pos
    if kind in (b"%", b"|"):
        n = int(body)
        out = {}
        for _ in range(n):
            k, pos = parse_reply(buf, pos)
            v, pos = parse_reply(buf, pos)
            out[k if not isinstance(k, list) else tuple(k)] = v
        if kind == b"|":  # attribute: applies to the reply that follows
            return parse_reply(buf, pos)
        return out, pos
    raise ValueError(f"bad RESP type byte {kind!r} in {bytes(buf[pos - 1:pos + 40])!r}")


def encode_command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, int):
            a = str(a)
        if isinstance(a, str):
            a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawConn:
    """A raw TCP connection that speaks RESP by hand.

    cmd(*args) sends one command and returns its parsed reply; reply_bytes()
    returns the exact bytes of the next reply (for shape checks); closed()
    tells whether the server closed the connection; drain(t) buffers what
    arrives within t seconds.
    """

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def send_command(self, *args):
        self.send(encode_command(*args))

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def reply(self):
        while True:
            try:
                value, end = parse_reply(self.buf, 0)
            except _NeedMore:
                self._fill()
                continue
            del self.buf[:end]
            return value

    def reply_bytes(self):
        while True:
            try:
                _, end = parse_reply(self.buf, 0)
            except _NeedMore:
                self._fill()
                continue
            data = bytes(self.buf[:end])
            del self.buf[:end]
            return data

    def cmd(self, *args):
        self.send_command(*args)
        return self.reply()

    def read_exactly(self, n):
        while len(self.buf) < n:
            self._fill()
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def closed(self, timeout=5.0):
        """True if the server closes the connection within timeout, with no more data."""
        if self.buf:
            return False
        self.sock.settimeout(timeout)
        try:
            chunk = self.sock.recv(1 << 16)
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True
        if chunk:
            self.buf += chunk
            return False
        return True

    def drain(self, t=0.3):
        """Reads into the buffer everything that arrives within t seconds (or until the server
        closes the connection)."""
        end = time.monotonic() + t
        self.sock.settimeout(0.05)
        try:
            while time.monotonic() < end:
                try:
                    data = self.sock.recv(1 << 16)
                except socket.timeout:
                    continue
                if not data:
                    break
                self.buf += data
        finally:
            self.sock.settimeout(10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --------------------------------------------------------------------------- servers


class ServerProcess:
    """One server process on 127.0.0.1:port with its own scratch directory."""

    def __init__(self, threads=DEFAULT_THREADS, extra_args=(), workdir=None, argv=None,
                 cwd=None):
        self.threads = threads
        self.extra_args = list(extra_args)
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="lavik-it-"))
        self.owns_workdir = workdir is None
        # argv replaces the whole command line; "{port}" in it becomes the chosen port.
        self.argv_override = argv
        self.cwd = Path(cwd) if cwd is not None else self.workdir
        self.proc = None
        self.port = None
        self.host = "127.0.0.1"

    # -- command line

    def command(self, port):
        if self.argv_override is not None:
            return [str(a).replace("{port}", str(port)) for a in self.argv_override]
        if TARGET == "redis":
            return ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                    "--bind", "127.0.0.1"] + self.extra_args
        data_dir = self.workdir / "data"
        data_dir.mkdir(exist_ok=True)
        return [str(LAVIK_BIN), "--port", str(port), "--threads", str(self.threads),
                "--data-file", str(data_dir / "lavik.data"),
                "--log-dir", str(self.workdir / "logs")] + self.extra_args

    def stderr_text(self):
        try:
            return (self.workdir / "server.stderr").read_text(errors="replace")
        except OSError:
            return ""

    def stdout_text(self):
        try:
            return (self.workdir / "server.stdout").read_text(errors="replace")
        except OSError:
            return ""

    # -- lifecycle

    def start(self, port=None):
        if TARGET == "lavik" and self.argv_override is None and not LAVIK_BIN.exists():
            raise RuntimeError(f"{LAVIK_BIN} does not exist: build lavik first (make build)")
        attempts = 1 if port is not None else 3
        last_error = None
        for _ in range(attempts):
            p = port if port is not None else free_port()
            try:
                self._start_once(p)
                return self
            except RuntimeError as e:  # e.g. the port was taken between probe and bind
                last_error = e
        raise last_error

    def _start_once(self, port):
        self.port = port
        out = open(self.workdir / "server.stdout", "wb")
        err = open(self.workdir / "server.stderr", "wb")
        try:
            self.proc = subprocess.Popen(self.command(port), cwd=self.cwd, stdout=out,
                                         stderr=err, stdin=subprocess.DEVNULL)
        finally:
            out.close()
            err.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited with code {self.proc.returncode} before answering PING; "
                    f"command: {self.command(port)}\nstderr:\n{self.stderr_text()}")
            if self._answers_ping():
                return
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"server did not answer PING within {START_TIMEOUT_S}s; "
                           f"command: {self.command(port)}\nstderr:\n{self.stderr_text()}")

    def _answers_ping(self):
        try:
            with RawConn(self.port, timeout=1.0) as c:
                c.send(b"*1\r\n$4\r\nPING\r\n")
                reply = c.reply()
        except OSError:
            return False
        # A server started with --requirepass answers -NOAUTH, which still means "up".
        return reply == "PONG" or isinstance(reply, RespError)

    def check_alive(self):
        """Raises with the server's stderr if the process has died (e.g. crashed)."""
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"server on port {self.port} exited with code "
                               f"{self.proc.returncode}; stderr:\n{self.stderr_text()[-4000:]}")

    def wait(self, timeout=STOP_TIMEOUT_S):
        """Waits for the process to exit; returns its exit code."""
        return self.proc.wait(timeout=timeout)

    def terminate(self, timeout=STOP_TIMEOUT_S):
        """SIGTERM, then wait; returns the exit code (SIGKILLs on timeout)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self):
        self.terminate()
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- clients

    def client(self, **kwargs):
        kwargs.setdefault("decode_responses", True)
        kwargs.setdefault("socket_timeout", 30)
        return redis.Redis(host=self.host, port=self.port, **kwargs)

    def raw(self, timeout=10.0):
        return RawConn(self.port, timeout=timeout)


@pytest.fixture(scope="session")
def server_factory():
    servers = {}

    def factory(threads=DEFAULT_THREADS):
        s = servers.get(threads)
        if s is None:
            s = ServerProcess(threads=threads).start()
            servers[threads] = s
        # A shared server that died stays dead: every later test reports its stderr.
        s.check_alive()
        return s

    yield factory
    # Every shared server must shut down cleanly after the whole suite: exit code 0 (under a
    # sanitizer build this also catches leaks and errors reported at exit).
    unclean = []
    for threads, s in servers.items():
        code = s.terminate()
        if code != 0:
            unclean.append(f"threads={threads}: exit code {code}\n{s.stderr_text()[-4000:]}")
        s.cleanup()
    assert not unclean, "shared server(s) did not exit cleanly:\n" + "\n".join(unclean)


@pytest.fixture(scope="session")
def server(server_factory):
    return server_factory(DEFAULT_THREADS)


@pytest.fixture
def r(server):
    server.check_alive()
    client = server.client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def rb(server):
    server.check_alive()
    client = server.client(decode_responses=False)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def raw(server):
    conns = []
    server.check_alive()
    flusher = server.client()
    flusher.flushall()
    flusher.close()

    def factory(timeout=10.0):
        c = server.raw(timeout=timeout)
        conns.append(c)
        return c

    yield factory
    for c in conns:
        c.close()


@pytest.fixture
def spawn_server():
    """Starts a dedicated server for one test; stopped (SIGTERM) when the test ends."""
    started = []

    def factory(threads=DEFAULT_THREADS, extra_args=(), workdir=None, argv=None, port=None,
                cwd=None):
        s = ServerProcess(threads=threads, extra_args=extra_args, workdir=workdir, argv=argv,
                          cwd=cwd)
        started.append(s)
        return s.start(port=port)

    yield factory
    for s in started:
        s.cleanup()


@pytest.fixture(scope="session")
def target():
    return TARGET


# ---- helpers shared by the test modules ----

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def err(excinfo):
    """The error text of a pytest.raises(...) context."""
    return str(excinfo.value)


def wait_until(predicate, timeout=5.0):
    """Polls predicate until it is true or timeout seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def wait_blocked(c, n, timeout=5.0):
    """Waits until the server counts n blocked clients (INFO clients), failing after timeout."""
    def count():
        return c.info("clients")["blocked_clients"]
    assert wait_until(lambda: count() == n, timeout), count()


def crc16(data):
    """CRC16/XMODEM, the checksum Redis Cluster uses for hash slots."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key):
    """The hash slot of a str key without a {hash tag}."""
    return crc16(key.encode()) % 16384


def worker_of(name, workers):
    """Lavik's owner worker of a key or channel: its hash slot's contiguous range."""
    return key_slot(name) * workers // 16384


def spread_keys(n, prefix):
    """n keys whose hash slots fall in n different slices of the slot range (so they land on
    different workers whatever the thread count)."""
    chosen = {}
    i = 0
    while len(chosen) < n:
        key = f"{prefix}:{i}"
        chosen.setdefault(worker_of(key, n), key)
        i += 1
    return [chosen[b] for b in sorted(chosen)]


# ---- blocking commands: waiters on every worker, wake-ups, consumers racing producers ----


def waiters_across_workers(mserver, prefix, n_writers=4):
    """(key, writer, waiter) for every pairing of four keys spread over the workers with
    n_writers writing clients; each waiter is a fresh raw connection (so connections land on
    every worker too), closed once the test has used it."""
    keys = spread_keys(4, prefix)
    writers = [mserver.client() for _ in range(n_writers)]
    for key in keys:
        for writer in writers:
            waiter = mserver.raw()
            yield key, writer, waiter
            waiter.close()


def waiter_after_a_disconnected_one(mserver, *block_cmd):
    """A raw connection blocked in block_cmd after another one, blocked the same way first,
    disconnected: the test wakes it and checks that it got what the gone one would have."""
    gone = mserver.raw()
    gone.send_command(*block_cmd)
    time.sleep(0.05)
    gone.close()
    time.sleep(0.3)
    live = mserver.raw()
    live.send_command(*block_cmd)
    time.sleep(0.05)
    return live


def consume_while_producing(mserver, take, produce, consumers=6, producers=3):
    """Runs `consumers` threads calling take(client, i) -> items (a blocking pop with a short
    timeout) while `producers` threads run produce(client, j); a consumer stops at its first
    empty take after every producer is done. Returns every item taken, in no set order."""
    got, lock, done = [], threading.Lock(), threading.Event()

    def consume(i):
        c = mserver.client()
        while True:
            items = take(c, i)
            with lock:
                got.extend(items)
            if not items and done.is_set():
                return

    takers = [threading.Thread(target=consume, args=(i,)) for i in range(consumers)]
    makers = [threading.Thread(target=lambda j=j: produce(mserver.client(), j))
              for j in range(producers)]
    for t in takers + makers:
        t.start()
    for t in makers:
        t.join()
    done.set()
    for t in takers:
        t.join()
    return got


# ---- the data file, for the chunked-value tests (INFO storage; lavik only) ----


def storage(c):
    return c.info("storage")


def settle_written(c):
    """device_bytes_written once the write buffers have reached the file (stable twice)."""
    last = storage(c)["device_bytes_written"]
    for _ in range(50):
        time.sleep(0.15)
        now = storage(c)["device_bytes_written"]
        if now == last:
            return now
        last = now
    return last


def written_by(c, fn):
    """The bytes written to the data file while fn() ran."""
    before = settle_written(c)
    fn()
    return settle_written(c) - before


def wait_swept(c, timeout=60, chunks_left=0):
    """Waits until the background free is done and `chunks_left` chunk records remain."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if (c.info("memory")["lazyfree_pending_objects"] == 0
                and storage(c)["chunk_records"] == chunks_left):
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(params=[1, 2, 4], ids=lambda t: f"threads{t}")
def mr(request, server_factory):
    client = server_factory(request.param).client()
    client.flushall()
    yield client
    client.close()


@pytest.fixture(params=[1, 2, 4], ids=lambda t: f"threads{t}")
def mserver(request, server_factory):
    srv = server_factory(request.param)
    client = srv.client()
    client.flushall()
    yield srv
    client.close()
