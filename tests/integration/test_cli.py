"""lavik's own command line: --version/--help, flag errors (exit code 2), both flag
spellings, a config file, the published quick-start command and the no-flags default.

All of these are lavik-only: with LAVIK_TEST_TARGET=redis they are deselected."""

import subprocess

import pytest

from conftest import LAVIK_BIN, free_port, port_is_free

pytestmark = pytest.mark.lavik_only

MIB = 1024 * 1024


def run_lavik(args, cwd, timeout=10):
    """Runs lavik to completion (a flag error must exit, never start serving)."""
    return subprocess.run([str(LAVIK_BIN)] + args, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def redis_cli(port, *args):
    res = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), "--raw", *args],
                         capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_version(tmp_path):
    res = run_lavik(["--version"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "lavik" in res.stdout.lower()


def test_help(tmp_path):
    res = run_lavik(["--help"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "--port" in res.stdout


def test_unknown_flag(tmp_path):
    res = run_lavik(["--frob"], tmp_path)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "frob" in lines[0]
    assert not (tmp_path / "data").exists()  # nothing was started


def test_bad_port_value(tmp_path):
    res = run_lavik(["--port", "abc"], tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip(), "expected a message on stderr"


def test_storage_spdk_not_available(tmp_path):
    res = run_lavik(["--storage", "spdk"], tmp_path)
    assert res.returncode == 2
    assert "SPDK" in res.stderr


def data_args(tmp_path):
    return ["--data-file", str(tmp_path / "lavik.data"), "--log-dir", str(tmp_path / "logs")]


@pytest.mark.parametrize("form", ["separate", "equals"])
def test_port_flag_forms(spawn_server, tmp_path, form):
    port_args = ["--port", "{port}"] if form == "separate" else ["--port={port}"]
    s = spawn_server(argv=[LAVIK_BIN] + port_args + data_args(tmp_path), workdir=tmp_path)
    c = s.client()
    assert c.ping() is True
    assert c.info("server")["tcp_port"] == s.port


def test_config_file_first_argument(spawn_server, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    conf = tmp_path / "lavik.conf"
    port = free_port()
    conf.write_text(f"# test config\nport {port}\n")
    s = spawn_server(argv=[LAVIK_BIN, conf], workdir=tmp_path, cwd=cwd, port=port)
    c = s.client()
    assert c.set("from-config", "yes") is True
    assert c.get("from-config") == "yes"
    assert c.info("server")["tcp_port"] == s.port


def test_quick_start_command_line(spawn_server, tmp_path):
    work = tmp_path / "quickstart"
    work.mkdir()
    data = work / "data"
    subprocess.run(["fallocate", "-l", "512M", str(data)], check=True)
    assert data.stat().st_size == 512 * MIB
    logs = work / "logs"
    argv = [LAVIK_BIN, "--bind", "127.0.0.1", "--port", "{port}", "--metrics-port", "0",
            "--network", "kernel", "--storage", "uring", "--threads", "2", "--no-pin-workers",
            "--registered-buffer-mb-per-worker", "64", "--shutdown-checkpoint",
            "--data-file", str(data), "--log-dir", str(logs)]
    s = spawn_server(argv=argv, workdir=tmp_path)
    assert redis_cli(s.port, "PING") == "PONG\n"
    assert redis_cli(s.port, "SET", "greeting", "hello from Lavik") == "OK\n"
    assert redis_cli(s.port, "GET", "greeting") == "hello from Lavik\n"
    assert s.terminate() == 0, s.stderr_text()
    assert data.stat().st_size == 512 * MIB
    assert logs.is_dir()
    assert [p for p in logs.iterdir() if p.is_file()], "no log file written"


def test_no_flags_uses_defaults(spawn_server, tmp_path):
    cwd = tmp_path / "empty"
    cwd.mkdir()
    # The default port is 6379; if someone else holds it, pass only --port.
    if port_is_free(6379):
        s = spawn_server(argv=[LAVIK_BIN], workdir=tmp_path, cwd=cwd, port=6379)
        assert s.port == 6379
    else:
        s = spawn_server(argv=[LAVIK_BIN, "--port", "{port}"], workdir=tmp_path, cwd=cwd)
    assert s.client().ping() is True
    assert (cwd / "data").exists()
    assert s.terminate() == 0, s.stderr_text()
    assert (cwd / "logs").is_dir()
