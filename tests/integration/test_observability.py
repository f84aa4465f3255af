"""Operator visibility: INFO commandstats / errorstats / latencystats, CONFIG RESETSTAT, SLOWLOG,
LATENCY, and (Lavik only) the Prometheus endpoint behind --metrics-port."""

import http.client
import re
import time

import pytest

from conftest import RespError, ServerProcess, encode_command, free_port, spread_keys

CMDSTAT_FIELDS = ["calls", "usec", "usec_per_call", "rejected_calls", "failed_calls"]
DEFAULTS = {
    "slowlog-log-slower-than": "10000",
    "slowlog-max-len": "128",
    "latency-monitor-threshold": "0",
    "latency-tracking": "yes",
    "latency-tracking-info-percentiles": "50 99 99.9",
}


@pytest.fixture
def c(raw):
    """A raw connection on the shared server with fresh statistics; the observability
    parameters are put back to their defaults afterwards."""
    conn = raw()
    assert conn.cmd("CONFIG", "RESETSTAT") == "OK"
    yield conn
    restore = raw()
    for name, value in DEFAULTS.items():
        assert restore.cmd("CONFIG", "SET", name, value) == "OK"
    restore.cmd("SLOWLOG", "RESET")
    restore.cmd("LATENCY", "RESET")


def info(conn, *sections):
    text = conn.cmd("INFO", *sections)
    assert isinstance(text, bytes), text
    return text.decode()


def stat_lines(text, prefix):
    """{name: {field: value}} from lines such as 'cmdstat_get:calls=1,usec=2,...'."""
    out = {}
    for line in text.splitlines():
        if line.startswith(prefix):
            name, _, rest = line[len(prefix):].partition(":")
            out[name] = dict(kv.split("=", 1) for kv in rest.split(",")) if rest else {}
    return out


def headers(text):
    return [line[2:] for line in text.splitlines() if line.startswith("# ")]


# --------------------------------------------------------------------------- INFO sections


def test_commandstats_counts_calls_rejections_and_failures(c):
    assert c.cmd("SET", "k", "v") == "OK"
    assert c.cmd("GET", "k") == b"v"
    assert isinstance(c.cmd("GET"), RespError)  # arity: rejected before running
    assert isinstance(c.cmd("INCR", "k"), RespError)  # ran and failed
    c.cmd("CONFIG", "GET", "maxclients")
    assert isinstance(c.cmd("CONFIG"), RespError)  # container without subcommand: rejected
    stats = stat_lines(info(c, "commandstats"), "cmdstat_")
    for name in ("set", "get", "incr", "config|get", "config"):
        assert list(stats[name]) == CMDSTAT_FIELDS, name
    assert stats["set"]["calls"] == "1"
    assert stats["get"]["calls"] == "1"
    assert stats["get"]["rejected_calls"] == "1"
    assert stats["get"]["failed_calls"] == "0"
    assert stats["incr"]["failed_calls"] == "1"
    assert stats["config|get"]["calls"] == "1"
    assert stats["config"]["calls"] == "0" and stats["config"]["rejected_calls"] == "1"
    assert re.fullmatch(r"\d+\.\d\d", stats["set"]["usec_per_call"])
    # CONFIG RESETSTAT ran after the reset: only itself is left (and this INFO, not yet).
    assert "config|resetstat" in stats


def test_commandstats_count_a_scripts_refused_calls_as_rejected(c):
    # As Redis's scriptCall: a redis.call refused before it runs (wrong arity, a write from a
    # read-only script) counts in that command's rejected_calls; the script's own reply is an
    # error, so EVAL / EVAL_RO count a failed call.
    assert isinstance(c.cmd("EVAL_RO", "return redis.pcall('set', 'a', 'b')", 0), RespError)
    assert isinstance(c.cmd("EVAL", "return redis.pcall('set', 'a')", 0), RespError)
    assert isinstance(c.cmd("EVAL", "return redis.pcall('get', 'a', 'b')", 0), RespError)
    stats = stat_lines(info(c, "commandstats"), "cmdstat_")
    assert stats["set"]["calls"] == "0" and stats["set"]["rejected_calls"] == "2"
    assert stats["get"]["calls"] == "0" and stats["get"]["rejected_calls"] == "1"
    assert stats["eval"]["calls"] == "2" and stats["eval"]["failed_calls"] == "2"
    assert stats["eval_ro"]["failed_calls"] == "1"
    assert stat_lines(info(c, "errorstats"), "errorstat_")["ERR"] == {"count": "3"}


def test_resetstat_clears_command_and_error_stats(c):
    c.cmd("GET", "x")
    c.cmd("NO-SUCH-COMMAND")
    assert "cmdstat_get" in info(c, "commandstats")
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    text = info(c, "commandstats", "errorstats", "latencystats")
    assert "cmdstat_get:" not in text
    assert "errorstat_" not in text
    assert "latency_percentiles_usec_get:" not in text
    assert "total_error_replies:0" in info(c, "stats")


def io_counts(conn):
    fields = dict(line.split(":", 1) for line in info(conn, "stats").splitlines() if ":" in line)
    return int(fields["total_reads_processed"]), int(fields["total_writes_processed"])


def test_reads_and_writes_processed_count_socket_reads_and_writes(c, raw):
    """total_reads_processed / total_writes_processed: the reads that brought requests and the
    writes that carried replies, zeroed by CONFIG RESETSTAT."""
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    # RESETSTAT's own read was counted before it ran, its reply's write after; then INFO's read.
    assert io_counts(c) == (1, 1)
    other = raw()
    reads, writes = io_counts(c)
    assert other.cmd("PING") == "PONG"
    assert other.cmd("PING") == "PONG"
    # Two reads and two writes of `other`, and the first INFO's write.
    assert io_counts(c) == (reads + 3, writes + 3)


def test_a_pipelines_replies_leave_together_across_workers(c, raw):
    """Replies to the requests of one read leave in one write, as Redis writes them together —
    with Lavik also when the pipeline alternates between keys of two workers, where each request
    for the other worker's key waits for a hop there and back (the replies before it wait for
    it rather than leaving one write per stretch)."""
    a, b = spread_keys(2, "obs:together")
    c.cmd("DEL", a, b)
    assert c.cmd("SET", a, "va") == "OK"
    assert c.cmd("SET", b, "vb") == "OK"
    p = raw()
    assert p.cmd("PING") == "PONG"
    _, writes = io_counts(c)
    p.send(b"".join(encode_command("GET", k) for k in [a, b] * 16))
    assert [p.reply() for _ in range(32)] == [b"va", b"vb"] * 16
    # One write is the first INFO's reply; the 32 replies took one more (a write per hop would
    # be 16 or more: bounded loosely, a held reply may leave early on a loaded machine).
    assert io_counts(c)[1] - writes <= 4


def test_commands_answered_from_another_worker_are_counted_before_their_reply(c, raw):
    """A request whose key another worker owns may be answered by that worker directly on the
    client's socket: its call is counted before the reply leaves, so INFO from any connection,
    right after the reply, shows it — as in Redis."""
    keys = spread_keys(2, "obs:answered")
    conns = [raw() for _ in range(4)]
    for k in keys:
        assert c.cmd("SET", k, "v") == "OK"
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    calls = 0
    for conn in conns:
        for k in keys:
            assert conn.cmd("GET", k) == b"v"
            calls += 1
            assert conn.cmd("GET", k + ":missing") is None
            calls += 1
            for other in conns:
                assert stat_lines(info(other, "commandstats"), "cmdstat_")["get"]["calls"] \
                    == str(calls)
    stats = dict(line.split(":", 1) for line in info(c, "stats").splitlines() if ":" in line)
    assert stats["keyspace_hits"] == str(calls // 2)
    assert stats["keyspace_misses"] == str(calls // 2)


def test_slow_commands_run_on_another_worker_are_in_the_slow_log(c, raw):
    keys = spread_keys(2, "obs:slowremote")
    conn = raw()
    assert conn.cmd("CLIENT", "SETNAME", "slowpoke") == "OK"
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    for k in keys:
        assert conn.cmd("SET", k, "v") == "OK"
        assert conn.cmd("GET", k) == b"v"
    entries = c.cmd("SLOWLOG", "GET", "-1")
    logged = [[a.decode() for a in e[3]] for e in entries if e[5] == b"slowpoke"]
    for k in keys:
        assert ["SET", k, "v"] in logged and ["GET", k] in logged


def test_errorstats_by_error_code(c):
    assert isinstance(c.cmd("NO-SUCH-COMMAND"), RespError)
    assert isinstance(c.cmd("GET"), RespError)
    assert isinstance(c.cmd("CONFIG", "NOPE"), RespError)
    c.cmd("SET", "k", "v")
    assert isinstance(c.cmd("INCR", "k"), RespError)
    errors = stat_lines(info(c, "errorstats"), "errorstat_")
    assert errors == {"ERR": {"count": "4"}}
    stats = dict(line.split(":", 1) for line in info(c, "stats").splitlines() if ":" in line)
    assert stats["total_error_replies"] == "4"


def test_noauth_is_a_rejected_call(spawn_server):
    s = spawn_server(extra_args=["--requirepass", "pw"])
    with s.raw() as conn:
        assert conn.cmd("GET", "k") == RespError("NOAUTH Authentication required.")
        assert conn.cmd("AUTH", "pw") == "OK"
        text = info(conn, "commandstats", "errorstats")
    assert stat_lines(text, "cmdstat_")["get"]["rejected_calls"] == "1"
    # The fixture's start-up PING was refused too.
    assert int(stat_lines(text, "errorstat_")["NOAUTH"]["count"]) >= 1


def test_section_selection(c):
    default = headers(info(c))
    assert "Errorstats" in default
    assert "Commandstats" not in default and "Latencystats" not in default
    for which in ("all", "everything"):
        h = headers(info(c, which))
        assert h.index("Commandstats") < h.index("Errorstats") < h.index("Latencystats")
        assert h.index("Latencystats") < h.index("Keyspace")
    assert headers(info(c, "commandstats")) == ["Commandstats"]
    assert headers(info(c, "latencystats", "errorstats")) == ["Errorstats", "Latencystats"]


def test_latencystats_percentiles_from_config(c):
    c.cmd("SET", "k", "v")
    c.cmd("GET", "k")
    line = [x for x in info(c, "latencystats").splitlines()
            if x.startswith("latency_percentiles_usec_get:")]
    assert len(line) == 1
    assert re.fullmatch(r"latency_percentiles_usec_get:p50=\d+\.\d{3},p99=\d+\.\d{3},"
                        r"p99\.9=\d+\.\d{3}", line[0]), line[0]
    assert c.cmd("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99.99 100") == "OK"
    text = info(c, "latencystats")
    assert re.search(r"latency_percentiles_usec_get:p50=[\d.]+,p99\.99=[\d.]+,p100=[\d.]+\r\n",
                     text), text
    assert c.cmd("CONFIG", "SET", "latency-tracking", "no") == "OK"
    assert info(c, "latencystats").strip() == "# Latencystats"


# --------------------------------------------------------------------------- SLOWLOG


def test_slowlog_logs_everything_at_zero(raw, c):
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    assert c.cmd("CLIENT", "SETNAME", "obs-client") == "OK"
    assert c.cmd("SET", "foo", "bar") == "OK"
    entries = c.cmd("SLOWLOG", "GET", "2")
    assert len(entries) == 2
    newest = entries[0]
    assert len(newest) == 6
    ident, when, duration, argv, peer, name = newest
    assert argv == [b"SET", b"foo", b"bar"]
    assert abs(when - time.time()) < 30
    assert duration >= 0
    assert re.fullmatch(rb"127\.0\.0\.1:\d+", peer), peer
    assert name == b"obs-client"
    assert entries[1][3] == [b"CLIENT", b"SETNAME", b"obs-client"]
    assert entries[1][0] == ident - 1
    # GET with no count: at most 10; -1: all.
    for _ in range(12):
        c.cmd("PING")
    assert len(c.cmd("SLOWLOG", "GET")) == 10
    # GET -1 returns every entry; it is logged itself only after it ran.
    assert len(c.cmd("SLOWLOG", "GET", "-1")) == c.cmd("SLOWLOG", "LEN") - 1
    assert c.cmd("SLOWLOG", "LEN") >= 14


def test_pipelined_commands_are_timed_each_from_their_own_start(c):
    """In a pipeline each command's duration starts where the previous one ended (Lavik reads
    the clock once per pipelined command): a fast command after a slow one is not slow."""
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "10000") == "OK"
    c.cmd("DEL", "obs:pipe:n")
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    busy = "local i = 0 while i < 5000000 do i = i + 1 end return i"
    c.send(encode_command("SET", "obs:pipe", "v") + encode_command("EVAL", busy, "0") +
           b"".join(encode_command("GET", "obs:pipe") for _ in range(5)) +
           encode_command("INCR", "obs:pipe:n"))
    assert [c.reply() for _ in range(8)] == ["OK", 5000000] + [b"v"] * 5 + [1]
    entries = c.cmd("SLOWLOG", "GET", "-1")
    # The script alone took over 10 ms; the GETs and the INCR after it, run at once, did not.
    assert [e[3][0] for e in entries] == [b"EVAL"], entries
    assert entries[0][2] >= 10000
    stats = stat_lines(info(c, "commandstats"), "cmdstat_")
    assert stats["get"]["calls"] == "5"
    assert int(stats["get"]["usec"]) < 10000
    assert int(stats["eval"]["usec"]) >= 10000


def test_slowlog_off_at_minus_one(c):
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
    assert c.cmd("SLOWLOG", "RESET") == "OK"
    for i in range(5):
        c.cmd("SET", f"k{i}", "v")
    assert c.cmd("SLOWLOG", "LEN") == 0
    assert c.cmd("SLOWLOG", "GET") == []


def test_slowlog_max_len_trims(c):
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    for i in range(10):
        c.cmd("SET", f"k{i}", "v")
    assert c.cmd("CONFIG", "SET", "slowlog-max-len", "3") == "OK"
    c.cmd("PING")
    assert c.cmd("SLOWLOG", "LEN") == 3
    entries = c.cmd("SLOWLOG", "GET", "-1")
    assert [e[3][0] for e in entries] == [b"SLOWLOG", b"PING", b"CONFIG"]
    ids = [e[0] for e in entries]
    assert ids == sorted(ids, reverse=True)


def test_slowlog_trims_arguments(c):
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    c.cmd("SET", "big", "x" * 200)
    args = []
    for i in range(25):
        args += [f"k{i}", "v"]
    c.cmd("MSET", *args)
    mset, big_set = c.cmd("SLOWLOG", "GET", "2")[0][3], c.cmd("SLOWLOG", "GET", "3")[2][3]
    assert big_set == [b"SET", b"big", b"x" * 128 + b"... (72 more bytes)"]
    assert len(mset) == 32
    assert mset[29:31] == [b"k14", b"v"]
    assert mset[31] == b"... (20 more arguments)"


def test_slowlog_errors_and_help(c):
    assert c.cmd("SLOWLOG", "GET", "-2") == RespError(
        "ERR count should be greater than or equal to -1")
    assert c.cmd("SLOWLOG", "GET", "x") == RespError(
        "ERR count should be greater than or equal to -1")
    assert c.cmd("SLOWLOG", "LEN", "x") == RespError(
        "ERR wrong number of arguments for 'slowlog|len' command")
    assert c.cmd("SLOWLOG", "FOO") == RespError("ERR unknown subcommand 'FOO'. Try SLOWLOG HELP.")
    help_lines = c.cmd("SLOWLOG", "HELP")
    assert help_lines[0] == "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "RESET" in help_lines


def test_slowlog_redacts_auth(c):
    assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    c.cmd("AUTH", "secret-password")
    assert c.cmd("SLOWLOG", "GET", "1")[0][3] == [b"AUTH", b"(redacted)"]


# --------------------------------------------------------------------------- LATENCY


def slow_command(c):
    """Runs MSETs over more and more keys until one takes at least 1 ms."""
    for n in (2000, 20000, 100000, 200000):
        args = []
        for i in range(n):
            args += [f"lat{i}", "v"]
        c.cmd("MSET", *args)
        if c.cmd("LATENCY", "LATEST"):
            return
    pytest.fail("no command took 1 ms")


def test_latency_latest_history_reset(c):
    assert c.cmd("LATENCY", "RESET") >= 0
    assert c.cmd("CONFIG", "SET", "latency-monitor-threshold", "1") == "OK"
    slow_command(c)
    latest = c.cmd("LATENCY", "LATEST")
    events = {e[0]: e for e in latest}
    assert b"command" in events  # MSET is not a fast command
    event, when, last_ms, max_ms = events[b"command"]
    assert abs(when - time.time()) < 30
    assert 1 <= last_ms <= max_ms
    history = c.cmd("LATENCY", "HISTORY", "command")
    assert history and all(len(s) == 2 and s[1] >= 1 for s in history)
    assert history[-1][0] == when
    assert c.cmd("LATENCY", "HISTORY", "no-such-event") == []
    assert c.cmd("LATENCY", "RESET", "no-such-event") == 0
    assert c.cmd("LATENCY", "RESET") >= 1
    assert c.cmd("LATENCY", "LATEST") == []


def test_latency_off_records_nothing(c):
    c.cmd("LATENCY", "RESET")
    for i in range(5):
        c.cmd("SET", f"k{i}", "v")
    assert c.cmd("LATENCY", "LATEST") == []


def test_latency_errors_and_help(c):
    assert c.cmd("LATENCY", "HISTORY") == RespError(
        "ERR wrong number of arguments for 'latency|history' command")
    assert c.cmd("LATENCY", "FOO") == RespError("ERR unknown subcommand 'FOO'. Try LATENCY HELP.")
    help_lines = c.cmd("LATENCY", "HELP")
    assert help_lines[0] == "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert "LATEST" in help_lines
    assert "HISTOGRAM [COMMAND ...]" in help_lines


# The keys Redis's LATENCY HISTOGRAM uses: the levels 1024·2^k ns of an HdrHistogram with two
# significant digits, each keyed by its highest equivalent value in µs (1, 2, 4, 8, 16, 33, 66...).
HISTOGRAM_KEYS = [((1 << (10 + k)) + (1 << (3 + k)) - 1) // 1000 for k in range(21)]


def histograms(conn, *names):
    flat = conn.cmd("LATENCY", "HISTOGRAM", *names)
    out = {}
    for name, body in zip(flat[::2], flat[1::2]):
        assert body[0] == b"calls" and body[2] == b"histogram_usec", body
        cdf = body[3]
        out[name.decode()] = (body[1], list(zip(cdf[::2], cdf[1::2])))
    return out


def test_latency_histogram_counts_calls_cumulatively(c):
    for i in range(7):
        c.cmd("SET", f"h{i}", "v")
    c.cmd("GET", "h0")
    c.cmd("CLIENT", "ID")
    got = histograms(c, "set", "GET", "nosuchcommand")
    assert sorted(got) == ["get", "set"]
    for name, calls in (("set", 7), ("get", 1)):
        n, cdf = got[name]
        assert n == calls
        keys = [k for k, _ in cdf]
        counts = [v for _, v in cdf]
        assert all(k in HISTOGRAM_KEYS for k in keys), keys
        assert keys == sorted(keys) and counts == sorted(set(counts)), cdf
        assert counts[-1] == calls
    # A container names its subcommands; "container|sub" names one.
    assert list(histograms(c, "client")) == ["client|id"]
    assert list(histograms(c, "client|id")) == ["client|id"]
    assert {"set", "get", "client|id"} <= set(histograms(c))
    assert histograms(c, "lpush") == {}
    assert c.cmd("CONFIG", "RESETSTAT") == "OK"
    assert histograms(c, "set") == {}


# --------------------------------------------------------------------------- /metrics

METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"'
SAMPLE = re.compile(rf"({METRIC_NAME})(\{{{LABEL}(?:,{LABEL})*\}})? (\S+)")
HELP = re.compile(rf"# HELP ({METRIC_NAME}) .*")
TYPE = re.compile(rf"# TYPE ({METRIC_NAME}) (counter|gauge|summary|histogram|untyped)")


def scrape(port, method="GET", path="/metrics"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request(method, path)
    resp = conn.getresponse()
    body = resp.read().decode()
    conn.close()
    return resp, body


def parse_exposition(text):
    """Checks every line against the 0.0.4 text format; returns {(name, labels): value}."""
    samples = {}
    types = {}
    for line in text.splitlines():
        if line.startswith("# HELP"):
            assert HELP.fullmatch(line), line
        elif line.startswith("# TYPE"):
            m = TYPE.fullmatch(line)
            assert m, line
            assert m.group(1) not in types, f"second TYPE for {m.group(1)}"
            types[m.group(1)] = m.group(2)
        else:
            m = SAMPLE.fullmatch(line)
            assert m, line
            name, labels, value = m.groups()
            float(value)  # a Go ParseFloat value
            base = re.sub(r"_(sum|count|bucket)$", "", name)
            assert name in types or base in types, f"sample before its TYPE: {line}"
            samples[(name, labels or "")] = float(value)
    return samples


@pytest.mark.lavik_only
def test_metrics_endpoint(spawn_server):
    port = free_port()
    s = spawn_server(extra_args=["--metrics-port", str(port)])
    resp, body = scrape(port)
    assert resp.status == 200
    assert resp.getheader("Content-Type").startswith("text/plain; version=0.0.4")
    before = parse_exposition(body)
    for name in ("lavik_connected_clients", "lavik_connections_received_total", "lavik_keys",
                 "lavik_storage_capacity_bytes", "lavik_storage_used_bytes",
                 "lavik_storage_live_bytes", "lavik_cache_hits_total", "lavik_cache_misses_total",
                 "lavik_defrag_segments_reclaimed_total", "lavik_error_replies_total"):
        assert (name, "") in before, name
    assert before[("lavik_up", "")] == 1
    for kind in ("index", "cache", "buffers", "rss"):
        assert ("lavik_memory_bytes", f'{{kind="{kind}"}}') in before
    with s.raw() as conn:
        for i in range(10):
            conn.cmd("SET", f"k{i}", "v")
        conn.cmd("GET", "k1")
        conn.cmd("INCR", "k1")
        after = parse_exposition(scrape(port)[1])
    assert after[("lavik_commands_total", '{cmd="set"}')] >= \
        before.get(("lavik_commands_total", '{cmd="set"}'), 0) + 10
    assert after[("lavik_command_failed_total", '{cmd="incr"}')] == 1
    assert after[("lavik_command_errors_total", '{code="ERR"}')] >= 1
    assert ("lavik_command_latency_seconds", '{cmd="get",quantile="0.99"}') in after
    assert after[("lavik_command_latency_seconds_count", '{cmd="set"}')] >= 10
    assert after[("lavik_keys", "")] == 10
    assert sum(v for (n, _), v in after.items() if n == "lavik_worker_commands_total") >= 12
    assert after[("lavik_connections_received_total", "")] > \
        before[("lavik_connections_received_total", "")]
    assert scrape(port, path="/")[0].status == 404
    assert scrape(port, path="/metricsx")[0].status == 404
    assert scrape(port, method="POST")[0].status == 405
    # Shutting down with the endpoint running is clean.
    assert s.terminate() == 0


@pytest.mark.lavik_only
def test_metrics_device_latency_histogram(spawn_server):
    # appendfsync always: every SET is written and synced before its reply, so both kinds of
    # device operation have completed by the time the scrape runs.
    port = free_port()
    s = spawn_server(extra_args=["--metrics-port", str(port), "--appendfsync", "always"])
    with s.raw() as conn:
        for i in range(20):
            conn.cmd("SET", f"k{i}", "v" * 100)
    m = parse_exposition(scrape(port)[1])
    for op in ("write", "sync"):
        count = m[("lavik_device_latency_seconds_count", f'{{op="{op}"}}')]
        assert count >= 1, op
        assert m[("lavik_device_latency_seconds_bucket", f'{{op="{op}",le="+Inf"}}')] == count
        buckets = sorted((float(labels.split('le="')[1].rstrip('"}')), v)
                         for (n, labels), v in m.items()
                         if n == "lavik_device_latency_seconds_bucket"
                         and f'op="{op}"' in labels and "+Inf" not in labels)
        values = [v for _, v in buckets]
        assert values == sorted(values) and values[-1] <= count  # cumulative
        assert m[("lavik_device_latency_seconds_sum", f'{{op="{op}"}}')] > 0
    assert s.terminate() == 0


@pytest.mark.lavik_only
def test_metrics_port_in_use_is_a_start_up_error(spawn_server):
    port = free_port()
    spawn_server(extra_args=["--metrics-port", str(port)])
    other = ServerProcess(extra_args=["--metrics-port", str(port)])
    try:
        with pytest.raises(RuntimeError):
            other.start()
        assert other.proc.returncode == 1
        assert "Address already in use" in other.stderr_text()
        assert f"metrics on 127.0.0.1:{port}" in other.stderr_text()
    finally:
        other.cleanup()
