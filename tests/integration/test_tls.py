"""TLS on tls-port, as Redis does it: certificates made here with the openssl CLI (a CA, a server
certificate for 127.0.0.1, a client certificate, and a rogue CA with its own client), then
redis-py and redis-cli over TLS, client authentication (yes, optional, no), plain TCP alongside,
a plain-text client on the TLS port, CONFIG GET/SET of the tls-* parameters and start-up
failures. Every test but the log-line check also runs against redis-server."""

import socket
import ssl
import subprocess
import time

import pytest
import redis

from conftest import LAVIK_BIN, TARGET, free_port

TLS_ERRORS = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, ssl.SSLError,
              OSError)


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_cert(d, name, ca, subject, ext=None):
    openssl("req", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", f"{name}.key", "-out",
            f"{name}.csr", "-subj", subject, cwd=d)
    args = ["x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
            "-CAcreateserial", "-out", f"{name}.crt", "-days", "2"]
    if ext:
        (d / f"{name}.ext").write_text(ext + "\n")
        args += ["-extfile", f"{name}.ext"]
    openssl(*args, cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls-certs")
    for ca in ("ca", "rogue-ca"):
        openssl("req", "-x509", "-new", "-nodes", "-newkey", "rsa:2048", "-keyout", f"{ca}.key",
                "-out", f"{ca}.crt", "-days", "2", "-subj", f"/CN=Lavik test {ca}", cwd=d)
    san = "subjectAltName=IP:127.0.0.1"
    make_cert(d, "server", "ca", "/CN=127.0.0.1", san)
    make_cert(d, "server2", "ca", "/CN=second-server", san)
    make_cert(d, "client", "ca", "/CN=client")
    make_cert(d, "rogue", "rogue-ca", "/CN=rogue")
    return d


def tls_args(certs, tls_port, auth=None):
    args = ["--tls-port", str(tls_port), "--tls-cert-file", str(certs / "server.crt"),
            "--tls-key-file", str(certs / "server.key"), "--tls-ca-cert-file",
            str(certs / "ca.crt")]
    if auth is not None:
        args += ["--tls-auth-clients", auth]
    return args


def tls_client(certs, port, cert="client", **kwargs):
    kwargs.setdefault("socket_timeout", 10)
    kwargs.setdefault("decode_responses", True)
    if cert is not None:
        kwargs["ssl_certfile"] = str(certs / f"{cert}.crt")
        kwargs["ssl_keyfile"] = str(certs / f"{cert}.key")
    return redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=str(certs / "ca.crt"),
                       **kwargs)


def refused(certs, port, cert):
    """True if the server will not serve a TLS client presenting `cert` (None: no certificate)."""
    c = tls_client(certs, port, cert, socket_timeout=5)
    try:
        c.ping()
    except TLS_ERRORS:
        return True
    finally:
        c.close()
    return False


def start_tls(spawn_server, certs, auth=None, extra=()):
    port = free_port()
    s = spawn_server(extra_args=tls_args(certs, port, auth) + list(extra))
    s.tls_port = port
    return s


def server_argv(tmp_path, port, extra):
    """A full command line for the target (for servers the conftest fixture cannot start)."""
    if TARGET == "redis":
        return ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                "--bind", "127.0.0.1"] + extra
    return [str(LAVIK_BIN), "--port", str(port), "--threads", "1", "--data-file",
            str(tmp_path / "lavik.data"), "--log-dir", str(tmp_path / "logs")] + extra


# --------------------------------------------------------------------------- data over TLS


def test_ping_set_get_big_value_and_pipeline(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    c = tls_client(certs, s.tls_port, decode_responses=False)
    assert c.ping() is True
    assert c.set("greeting", "hello over TLS") is True
    assert c.get("greeting") == b"hello over TLS"
    big = bytes(range(256)) * 4096  # 1 MiB, every byte value
    assert c.set("big", big) is True
    assert c.get("big") == big
    assert c.strlen("big") == len(big)
    pipe = c.pipeline(transaction=False)
    for i in range(1000):
        pipe.set(f"k{i}", f"v{i}")
    for i in range(1000):
        pipe.get(f"k{i}")
    replies = pipe.execute()
    assert replies[:1000] == [True] * 1000
    assert replies[1000:] == [f"v{i}".encode() for i in range(1000)]
    c.close()


def test_plain_tcp_still_works_alongside(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    t = tls_client(certs, s.tls_port)
    p = s.client()
    assert t.set("shared", "from-tls") is True
    assert p.get("shared") == "from-tls"
    assert p.set("shared", "from-tcp") is True
    assert t.get("shared") == "from-tcp"
    t.close()
    p.close()


def test_many_tls_clients_on_all_workers(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    clients = [tls_client(certs, s.tls_port) for _ in range(8)]
    for i, c in enumerate(clients):
        assert c.set(f"c{i}", str(i)) is True
    for i, c in enumerate(clients):
        assert c.get(f"c{(i + 1) % 8}") == str((i + 1) % 8)
        c.close()


def test_redis_cli_over_tls(spawn_server, certs):
    s = start_tls(spawn_server, certs)

    def cli(*args):
        res = subprocess.run(
            ["redis-cli", "--tls", "--cacert", str(certs / "ca.crt"), "--cert",
             str(certs / "client.crt"), "--key", str(certs / "client.key"), "-h", "127.0.0.1",
             "-p", str(s.tls_port), "--raw", *args],
            capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
        assert res.returncode == 0, res.stderr
        return res.stdout

    assert cli("PING") == "PONG\n"
    assert cli("SET", "cli-key", "cli value") == "OK\n"
    assert cli("GET", "cli-key") == "cli value\n"


# --------------------------------------------------------------------------- client certificates


def test_auth_clients_yes_requires_a_certificate_from_the_ca(spawn_server, certs):
    s = start_tls(spawn_server, certs)  # the default is yes
    assert refused(certs, s.tls_port, None)
    assert refused(certs, s.tls_port, "rogue")
    assert not refused(certs, s.tls_port, "client")
    assert s.client().ping()


def test_auth_clients_optional(spawn_server, certs):
    s = start_tls(spawn_server, certs, "optional")
    assert not refused(certs, s.tls_port, None)
    assert not refused(certs, s.tls_port, "client")
    # A certificate that is presented is still checked.
    assert refused(certs, s.tls_port, "rogue")


def test_auth_clients_no(spawn_server, certs):
    s = start_tls(spawn_server, certs, "no")
    assert not refused(certs, s.tls_port, None)
    assert not refused(certs, s.tls_port, "rogue")
    assert not refused(certs, s.tls_port, "client")


def test_plain_text_client_on_the_tls_port_is_dropped(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    with socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) as sock:
        sock.sendall(b"*1\r\n$4\r\nPING\r\n")
        data = b""
        closed = False
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(4096)
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            data += chunk
        assert closed
        assert b"PONG" not in data
    s.check_alive()
    assert s.client().ping()
    assert not refused(certs, s.tls_port, "client")


# --------------------------------------------------------------------------- CONFIG


def test_config_get_shows_the_tls_parameters(spawn_server, certs):
    s = start_tls(spawn_server, certs, "optional")
    got = s.client().config_get("tls-*")
    assert got["tls-port"] == str(s.tls_port)
    assert got["tls-cert-file"] == str(certs / "server.crt")
    assert got["tls-key-file"] == str(certs / "server.key")
    assert got["tls-ca-cert-file"] == str(certs / "ca.crt")
    assert got["tls-auth-clients"] == "optional"
    assert got["tls-session-caching"] == "yes"


def test_config_set_bad_certificate_is_refused_and_tls_keeps_working(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    c = s.client()
    with pytest.raises(redis.ResponseError) as e:
        c.config_set("tls-cert-file", str(certs / "missing.crt"))
    assert str(e.value) == ("CONFIG SET failed (possibly related to argument 'tls-cert-file') - "
                            "Unable to update TLS configuration. Check server logs.")
    assert c.config_get("tls-cert-file")["tls-cert-file"] == str(certs / "server.crt")
    # A key that does not match the certificate is refused the same way.
    with pytest.raises(redis.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-key-file", str(certs / "client.key"))
    assert not refused(certs, s.tls_port, "client")


def peer_common_name(certs, port):
    ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    ctx.load_cert_chain(str(certs / "client.crt"), str(certs / "client.key"))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            subject = dict(x[0] for x in tls.getpeercert()["subject"])
            return subject["commonName"]


def test_config_set_certificate_reloads_for_new_connections(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    old = tls_client(certs, s.tls_port)
    assert old.set("k", "v") is True
    assert peer_common_name(certs, s.tls_port) == "127.0.0.1"
    c = s.client()
    assert c.config_set("tls-cert-file", str(certs / "server2.crt"),
                        "tls-key-file", str(certs / "server2.key")) is True
    assert peer_common_name(certs, s.tls_port) == "second-server"
    assert old.get("k") == "v"  # the connection made before the reload goes on
    old.close()


def test_config_set_auth_clients_applies_to_new_connections(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    assert refused(certs, s.tls_port, None)
    assert s.client().config_set("tls-auth-clients", "no") is True
    assert not refused(certs, s.tls_port, None)
    assert s.client().config_set("tls-auth-clients", "yes") is True
    assert refused(certs, s.tls_port, None)


# --------------------------------------------------------------------------- start-up


def test_tls_only_with_port_zero(tmp_path, certs):
    tls_port = free_port()
    argv = server_argv(tmp_path, 0, tls_args(certs, tls_port))
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        c = tls_client(certs, tls_port, socket_timeout=2)
        deadline = time.monotonic() + 10
        while True:
            assert proc.poll() is None, f"server exited with {proc.returncode}"
            try:
                assert c.ping() is True
                break
            except TLS_ERRORS:
                assert time.monotonic() < deadline, "no PONG over TLS"
                time.sleep(0.05)
        assert c.set("only", "tls") is True
        assert c.config_get("port")["port"] == "0"
        c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("bad", ["missing-cert", "missing-key", "no-ca", "bad-key"])
def test_bad_tls_setup_refuses_to_start(tmp_path, certs, bad):
    extra = ["--tls-port", str(free_port())]
    if bad != "missing-cert":
        extra += ["--tls-cert-file", str(certs / "server.crt")]
    if bad == "bad-key":
        extra += ["--tls-key-file", str(certs / "client.key")]
    elif bad != "missing-key":
        extra += ["--tls-key-file", str(certs / "server.key")]
    if bad != "no-ca":
        extra += ["--tls-ca-cert-file", str(certs / "ca.crt")]
    res = subprocess.run(server_argv(tmp_path, free_port(), extra), cwd=tmp_path,
                         capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert res.returncode == 1
    assert "TLS" in res.stdout + res.stderr or "tls" in res.stdout + res.stderr


@pytest.mark.lavik_only
def test_bad_tls_setup_is_one_clear_line_on_stderr(tmp_path, certs):
    missing = certs / "missing.crt"
    extra = ["--tls-port", str(free_port()), "--tls-cert-file", str(missing), "--tls-key-file",
             str(certs / "server.key"), "--tls-ca-cert-file", str(certs / "ca.crt")]
    res = subprocess.run(server_argv(tmp_path, free_port(), extra), cwd=tmp_path,
                         capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    assert res.returncode == 1
    fatal = [line for line in res.stderr.splitlines() if "Fatal" in line]
    assert len(fatal) == 1, res.stderr
    assert f"could not configure TLS: Failed to load certificate: {missing}: " in fatal[0]


@pytest.mark.lavik_only
def test_tls_port_cannot_change_at_runtime(spawn_server, certs):
    s = start_tls(spawn_server, certs)
    with pytest.raises(redis.ResponseError, match="tls-port"):
        s.client().config_set("tls-port", str(free_port()))
    assert not refused(certs, s.tls_port, "client")
