"""Operations: log levels and SIGHUP log reopening, CONFIG REWRITE, and the packaging files
(sample config, systemd unit).

CONFIG REWRITE without a config file is Redis behaviour and runs against redis-server too;
the rest is about lavik's own log, config file and packaging (lavik_only)."""

import configparser
import os
import re
import shutil
import signal
import subprocess
import time

import pytest
import redis

from conftest import LAVIK_BIN, REPO, TARGET, RespError, free_port

PACKAGING = REPO / "packaging"


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def log_text(path):
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


# --------------------------------------------------------------------------- logging


@pytest.mark.lavik_only
def test_sighup_reopens_the_log_file(spawn_server, tmp_path):
    s = spawn_server(workdir=tmp_path)
    log = tmp_path / "logs" / "lavik.log"
    # The listener may answer before the main thread logs that it is ready.
    assert wait_for(lambda: "Ready to accept connections" in log_text(log))
    rotated = tmp_path / "logs" / "lavik.log.1"
    log.rename(rotated)  # what logrotate does before it signals the server
    s.proc.send_signal(signal.SIGHUP)
    assert wait_for(lambda: "log file reopened" in log_text(log)), log_text(rotated)
    assert s.client().ping() is True  # SIGHUP does not stop the server
    # New lines go to the fresh file, none to the renamed one.
    before = log_text(rotated)
    assert s.terminate() == 0
    assert "ready to exit" in log_text(log)
    assert log_text(rotated) == before


@pytest.mark.lavik_only
def test_loglevel_warning_suppresses_notices(spawn_server, tmp_path):
    s = spawn_server(workdir=tmp_path, extra_args=["--loglevel", "warning"])
    log = tmp_path / "logs" / "lavik.log"
    assert s.terminate() == 0
    text = log_text(log)
    assert " * " not in text, text  # '*' marks notice lines
    assert "Ready to accept connections" not in text


@pytest.mark.lavik_only
def test_loglevel_verbose_logs_clients(spawn_server, tmp_path):
    s = spawn_server(workdir=tmp_path)
    log = tmp_path / "logs" / "lavik.log"
    c = s.client()
    assert c.config_get("loglevel") == {"loglevel": "notice"}
    with s.raw() as conn:
        assert conn.cmd("PING") == "PONG"
    time.sleep(0.2)
    assert "Accepted" not in log_text(log)  # verbose lines are off at notice
    assert c.config_set("loglevel", "verbose") is True
    with s.raw() as conn:
        assert conn.cmd("PING") == "PONG"
        port = conn.sock.getsockname()[1]
    assert wait_for(lambda: f"Accepted 127.0.0.1:{port}" in log_text(log)), log_text(log)
    assert wait_for(lambda: re.search(r" - Client closed connection id=\d+ addr=127\.0\.0\.1:%d"
                                      % port, log_text(log))), log_text(log)
    assert c.config_set("loglevel", "warning") is True
    lines = len(log_text(log).splitlines())
    with s.raw() as conn:
        assert conn.cmd("PING") == "PONG"
    time.sleep(0.2)
    assert len(log_text(log).splitlines()) == lines


# --------------------------------------------------------------------------- CONFIG REWRITE


def test_config_rewrite_without_config_file(raw):
    assert raw().cmd("CONFIG", "REWRITE") == RespError(
        "ERR The server is running without a config file")


def start_with_config(spawn_server, tmp_path, conf, extra=()):
    argv = [LAVIK_BIN, conf, "--port", "{port}", "--data-file", tmp_path / "data.lavik",
            "--log-dir", tmp_path / "logs"] + list(extra)
    return spawn_server(argv=argv, workdir=tmp_path)


@pytest.mark.lavik_only
def test_config_rewrite_keeps_comments_and_updates_in_place(spawn_server, tmp_path):
    conf = tmp_path / "lavik.conf"
    conf.write_text("# my settings\n"
                    "maxclients 500\n"
                    "\n"
                    "# two save lines: the second is dropped on rewrite\n"
                    "save 900 1\n"
                    "save 300 10\n"
                    "slave-priority 5\n"
                    "no-pin-workers\n")
    s = start_with_config(spawn_server, tmp_path, conf)
    c = s.client()
    assert c.config_set("maxclients", "600") is True
    assert c.config_set("hz", "20") is True
    assert c.config_set("requirepass", "a b\"c") is True
    c.auth("a b\"c")
    assert c.config_set("proc-title-template", "{title} {port}") is True
    assert c.execute_command("CONFIG", "REWRITE") == "OK"
    text = conf.read_text()
    lines = text.splitlines()
    # Comments kept, changed lines rewritten in place, aliases under their canonical names.
    assert lines[0] == "# my settings"
    assert lines[1] == "maxclients 600"
    assert "# two save lines: the second is dropped on rewrite" in lines
    assert lines[lines.index("# two save lines: the second is dropped on rewrite") + 1] == \
        "save 900 1 300 10"
    assert "save 300 10" not in lines
    assert "replica-priority 5" in lines
    assert "pin-workers no" in lines
    # The rest comes after the marker; defaults are not written.
    tail = lines[lines.index("# Generated by CONFIG REWRITE") + 1:]
    assert "hz 20" in tail
    assert 'requirepass "a b\\"c"' in tail
    assert 'proc-title-template "{title} {port}"' in tail
    assert not any(l.startswith(("threads ", "cache-mb ", "max-memory ", "timeout ", "dir "))
                   for l in tail), tail
    # The port, data file and log dir came from the command line: they are written too.
    assert f"port {s.port}" in tail
    assert text.count("# Generated by CONFIG REWRITE") == 1
    # A second rewrite with nothing changed gives the same file.
    assert c.execute_command("CONFIG", "REWRITE") == "OK"
    assert conf.read_text() == text
    before = c.config_get("*")
    s.terminate()
    # Restarted with only the rewritten file, the server shows the same values.
    again = spawn_server(argv=[LAVIK_BIN, conf], workdir=tmp_path, port=s.port)
    c2 = again.client(password="a b\"c")
    assert c2.config_get("*") == before


@pytest.mark.lavik_only
def test_config_rewrite_failure(spawn_server, tmp_path):
    confdir = tmp_path / "conf"
    confdir.mkdir()
    conf = confdir / "lavik.conf"
    conf.write_text("maxclients 500\n")
    s = start_with_config(spawn_server, tmp_path, conf)
    c = s.client()
    c.config_set("maxclients", "700")
    # The directory is gone (works for root too, unlike permissions): no temp file can be made.
    shutil.rmtree(confdir)
    assert s.raw().cmd("CONFIG", "REWRITE") == RespError(
        "ERR Rewriting config file: No such file or directory")
    assert not confdir.exists()
    assert c.ping() is True


# --------------------------------------------------------------------------- packaging


def flag_names():
    """Every flag `lavik --help` lists (the flag table), without --version and --help."""
    res = subprocess.run([str(LAVIK_BIN), "--help"], capture_output=True, text=True, timeout=10)
    assert res.returncode == 0, res.stderr
    names = re.findall(r"^  --([a-z0-9-]+)", res.stdout, re.M)
    names = [n for n in names if n not in ("version", "help")]
    assert len(names) >= 15, res.stdout
    return names


@pytest.mark.lavik_only
def test_sample_config_documents_every_flag():
    text = (PACKAGING / "lavik.conf").read_text()
    for name in flag_names():
        # Set, or shown commented out with its default.
        assert re.search(r"^#? ?%s(\s|$)" % re.escape(name), text, re.M), name


@pytest.mark.lavik_only
def test_sample_config_starts(spawn_server, tmp_path):
    argv = [LAVIK_BIN, PACKAGING / "lavik.conf", "--data-file", tmp_path / "lavik.data",
            "--log-dir", tmp_path / "logs", "--port", "{port}"]
    s = spawn_server(argv=argv, workdir=tmp_path)
    assert s.client().ping() is True
    assert s.client().config_get("bind") == {"bind": "127.0.0.1"}


def test_daemonize_forks_and_keeps_a_pidfile(tmp_path):
    """daemonize yes: the command returns at once (exit 0) while the server goes on in the
    background; pidfile holds the server's pid and is removed when it shuts down."""
    port = free_port()
    pidfile = tmp_path / "server.pid"
    if TARGET == "redis":
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(tmp_path)]
    else:
        argv = [str(LAVIK_BIN), "--port", str(port), "--data-file", str(tmp_path / "lavik.data"),
                "--log-dir", str(tmp_path / "logs")]
    argv += ["--daemonize", "yes", "--pidfile", str(pidfile)]
    launched = subprocess.run(argv, capture_output=True, timeout=30, cwd=tmp_path)
    assert launched.returncode == 0, launched.stderr
    assert wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), timeout=10)
    pid = int(pidfile.read_text())
    c = redis.Redis(port=port, decode_responses=True, socket_timeout=10)
    try:
        assert wait_for(lambda: quiet_ping(c), timeout=20)
        assert c.info("server")["process_id"] == pid
        try:
            c.shutdown(nosave=True)  # redis-py takes the closed connection as the answer
        except redis.ConnectionError:
            pass
    finally:
        if not wait_for(lambda: not pid_alive(pid), timeout=20):
            os.kill(pid, signal.SIGKILL)
    assert not pidfile.exists()


def quiet_ping(c):
    try:
        return c.ping()
    except redis.RedisError:
        return False


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def unit_file():
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",))
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read(PACKAGING / "lavik.service")
    return parser


@pytest.mark.lavik_only
def test_systemd_unit_keys():
    unit = unit_file()
    assert set(unit.sections()) == {"Unit", "Service", "Install"}
    svc = unit["Service"]
    assert svc["Type"] == "simple"
    assert svc["ExecStart"] == "/usr/local/bin/lavik /etc/lavik/lavik.conf"
    assert svc["Restart"] == "on-failure"
    assert int(svc["LimitNOFILE"]) >= 10032  # maxclients' default plus files
    assert svc["User"] not in ("", "root")
    assert svc["NoNewPrivileges"] == "yes"
    assert svc["ProtectSystem"] == "strict"
    # io_uring must stay allowed by the syscall filter; O_DIRECT needs nothing special.
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register"):
        assert call in svc["SystemCallFilter"].split()
    assert "PrivateDevices" not in svc or svc["PrivateDevices"] == "no"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    # The paths the sample config uses are the unit's writable directories.
    conf = (PACKAGING / "lavik.conf").read_text()
    assert "data-file /var/lib/lavik/" in conf and svc["StateDirectory"] == "lavik"
    assert "log-dir /var/log/lavik" in conf and svc["LogsDirectory"] == "lavik"


@pytest.mark.lavik_only
def test_systemd_unit_verifies(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        # No systemd here: the key check above is what remains; check the syntax by hand.
        for line in (PACKAGING / "lavik.service").read_text().splitlines():
            assert not line or line.startswith(("#", "[")) or "=" in line, line
        return
    # verify wants ExecStart's binary to exist: point it at the built one.
    unit = tmp_path / "lavik.service"
    unit.write_text((PACKAGING / "lavik.service").read_text().replace(
        "/usr/local/bin/lavik", str(LAVIK_BIN)))
    res = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
