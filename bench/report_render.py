#!/usr/bin/python3
"""Writes README.md and the SVG charts of a bench/report.sh result directory.

    bench/report_render.py bench/results/<date>

Reads DIR/meta.txt (key=value lines written by report.sh: settings, machine, per-configuration
versions, memory snapshots and checks) and DIR/points.csv (one row per measured point), so a
committed result directory can be re-rendered without the git-ignored raw/ output. Writes
DIR/README.md, DIR/throughput.svg, DIR/latency.svg and DIR/fixed-rate.svg. Python standard
library only (charts through bench/svgplot.py).
"""

import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import svgplot  # noqa: E402


def read_meta(path):
    meta = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                meta[k] = v
    return meta


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def ds_label(n):
    n = int(n)
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if n >= div:
            return ("%.2f" % (n / div)).rstrip("0").rstrip(".") + unit
    return str(n)


def ops(v):
    return "-" if v is None else "{:,.0f}".format(v)


def ms(v):
    return "-" if v is None else "%.3f" % v


def mib(v):
    return "-" if v is None else "{:,.1f}".format(v / 1048576)


# A point during which the rest of the machine (other people's jobs, kernel time charged to no
# process) used more than a quarter of one CPU is marked as disturbed: on a quiet machine the
# rest stays within a few percent, even at 100k requests/s over loopback.
REST_FLAG_PCT = 25
FLAG_NOTE = ("† marks a point during which the rest of the machine used more than %d%% of one "
             "CPU (other people's jobs; see the CPU table): treat it as disturbed." % REST_FLAG_PCT)


def flag(p):
    return " †" if p and p.get("other_pct") is not None and p["other_pct"] > REST_FLAG_PCT else ""


def pct(v):
    return "?" if v is None else "%.0f" % v


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


class Config:
    """One server x data set, in run order."""

    def __init__(self, tag, meta):
        self.tag = tag
        p = "config.%s." % tag
        self.server = meta[p + "server"]
        self.keys = int(meta[p + "keys"])
        self.version = meta.get(p + "version", self.server)
        self.meta = {k[len(p):]: v for k, v in meta.items() if k.startswith(p)}
        self.label = "%s / %s" % (self.version, ds_label(self.keys))
        self.points = []

    def phase(self, phase):
        return [p for p in self.points if p["phase"] == phase]

    def at(self, phase, conns):
        for p in self.phase(phase):
            if p["connections"] == conns:
                return p
        return None

    def peak(self, phase):
        pts = self.phase(phase)
        return max(pts, key=lambda p: p["ops"]) if pts else None

    def mem(self, key):
        v = self.meta.get(key, "").split()
        return (num(v[0]), num(v[1])) if len(v) == 2 else (None, None)


def dataset_cache_mb(configs, meta, keys):
    """lavik's --cache-mb for the data set of `keys` keys (recorded per configuration; older
    runs recorded only the CACHE_MB knob)."""
    for c in configs:
        if c.meta.get("keys") == keys and c.meta.get("cache_mb"):
            return int(c.meta["cache_mb"])
    return int(meta.get("knob.CACHE_MB", "0"))


def lavik_caches(configs, meta):
    """'2048 MiB with 1,000,000 keys, 256 MiB with 2,621,440 keys', or one size if all are equal."""
    sizes = []
    for n in meta.get("datasets", "").split():
        sizes.append((dataset_cache_mb(configs, meta, n), n))
    if len({mb for mb, _ in sizes}) <= 1:
        return "%s MiB" % (sizes[0][0] if sizes else meta.get("knob.CACHE_MB", "?"))
    return ", ".join("%d MiB with %s keys" % (mb, "{:,}".format(int(n))) for mb, n in sizes)


def load(d):
    meta = read_meta(os.path.join(d, "meta.txt"))
    tags = []
    for k in meta:
        if k.startswith("config.") and k.endswith(".server"):
            tags.append(k[len("config."):-len(".server")])
    configs = {t: Config(t, meta) for t in tags}
    with open(os.path.join(d, "points.csv")) as f:
        for row in csv.DictReader(f):
            p = {
                "phase": row["phase"],
                "connections": int(row["connections"]),
                "rate": int(row["rate"]) if row["rate"] else None,
                "ops": float(row["ops_per_sec"]),
                "achieved": num(row["achieved_rate"]),
                "sustained": row["sustained"] == "true",
                "p50": num(row["p50_ms"]),
                "p99": num(row["p99_ms"]),
                "p999": num(row["p999_ms"]),
                "p9999": num(row["p9999_ms"]),
                "srv_pct": num(row["server_cpu_pct"]),
                "cli_pct": num(row["client_cpu_pct"]),
                # Process times (precise run time) and /proc/stat (tick samples) do not add up
                # exactly; a small negative remainder means "about nothing".
                "other_pct": max(0.0, num(row.get("other_cpu_pct")))
                if num(row.get("other_cpu_pct")) is not None else None,
                "softirq_pct": num(row.get("softirq_pct")),
                "quiet_wait": num(row.get("quiet_wait_s")),
                "busy_before": num(row.get("busy_before_pct")),
                "us_req": num(row["server_us_per_req"]),
                "steal": num(row["steal_pct"]),
                "load1": num(row["load1"]),
                "used": num(row["used_memory"]),
                "rss": num(row["rss_bytes"]),
            }
            configs[row["tag"]].points.append(p)
    return meta, [configs[t] for t in tags]


def styles(configs):
    """Colour per server, dash per data set, in run order."""
    servers, datasets, out = [], [], {}
    for c in configs:
        if c.server not in servers:
            servers.append(c.server)
        if c.keys not in datasets:
            datasets.append(c.keys)
    for c in configs:
        out[c.tag] = (svgplot.COLORS[servers.index(c.server) % len(svgplot.COLORS)],
                      svgplot.DASHES[datasets.index(c.keys) % len(svgplot.DASHES)])
    return out


def charts(d, meta, configs):
    st = styles(configs)
    conns = sorted({p["connections"] for c in configs for p in c.phase("get") + c.phase("set")})
    subtitle = "%s, %s CPUs; lavik-bench pipeline 1, %s s windows; %s" % (
        meta.get("cpu_model", "?"), meta.get("cpus", "?"), meta.get("knob.DURATION", "?"),
        meta.get("date", ""))
    for fname, title, key, ylabel, unit, y_log in (
            ("throughput.svg", "Throughput vs connections", "ops", "ops/s", "", False),
            ("latency.svg", "p99.9 latency vs connections", "p999", "p99.9 (ms, log scale)",
             " ms", True)):
        panels = []
        for phase in ("get", "set"):
            pnl = svgplot.Panel(phase.upper(), "connections (log scale)", ylabel, x_log=True,
                                x_ticks=conns, y_unit=unit, x_plain=True, y_log=y_log,
                                y_plain=y_log)
            for c in configs:
                pts = [(p["connections"], p[key], bool(flag(p))) for p in c.phase(phase)]
                color, dash = st[c.tag]
                pnl.add(c.label, pts, color, dash)
            panels.append(pnl)
        with open(os.path.join(d, fname), "w") as f:
            f.write(svgplot.figure(
                panels, title=title, subtitle=subtitle,
                note="Client and server share one 2-vCPU VM (loopback). Hollow marker: other "
                "work on the VM used more than %d%% of one CPU during that window." % REST_FLAG_PCT))
    panels = []
    for key, name in (("p50", "p50"), ("p99", "p99")):
        pnl = svgplot.Panel("GET %s at a fixed offered rate" % name, "offered GET/s",
                            "%s (ms, log scale)" % name, y_log=True, y_unit=" ms",
                            y_plain=True)
        for c in configs:
            pts = [(p["rate"], p[key], not p["sustained"]) for p in c.phase("rate")]
            color, dash = st[c.tag]
            pnl.add(c.label, pts, color, dash)
        panels.append(pnl)
    with open(os.path.join(d, "fixed-rate.svg"), "w") as f:
        f.write(svgplot.figure(
            panels, title="GET latency at fixed rates (%s connections)"
            % meta.get("knob.RATE_CONNECTIONS", "?"), subtitle=subtitle,
            note="Hollow marker: the rate was not sustained (achieved < 97% of offered)."))


def pct_change(a, b):
    return (a / b - 1) * 100


def summary(configs):
    lines = []
    by = {(c.server, c.keys): c for c in configs}
    datasets = []
    for c in configs:
        if c.keys not in datasets:
            datasets.append(c.keys)
    for keys in datasets:
        lv = by.get(("lavik", keys))
        for c in configs:
            if c.keys != keys or c.server == "lavik" or lv is None:
                continue
            parts = []
            for phase in ("get", "set"):
                a, b = lv.peak(phase), c.peak(phase)
                if a and b:
                    d = pct_change(a["ops"], b["ops"])
                    parts.append("%s peak %s%s vs %s%s ops/s (%+.1f%%)" % (
                        phase.upper(), ops(a["ops"]), flag(a), ops(b["ops"]), flag(b), d))
            if parts:
                lines.append("- %s keys, lavik vs %s: %s." % (ds_label(keys), c.server,
                                                              "; ".join(parts)))
    small = min(datasets) if datasets else None
    for c in configs:
        if c.server == "lavik" and c.keys != small and ("lavik", small) in by:
            base = by[("lavik", small)]
            parts = []
            for phase in ("get", "set"):
                a, b = c.peak(phase), base.peak(phase)
                if a and b:
                    parts.append("%s %.1f%%%s" % (phase.upper(), a["ops"] / b["ops"] * 100,
                                                  " †" if flag(a) or flag(b) else ""))
            lines.append("- lavik at %s keys keeps %s of its %s-key peak." % (
                ds_label(c.keys), " and ".join(parts), ds_label(small)))
    peaks = [p for c in configs for ph in ("get", "set") for p in [c.peak(ph)] if p]

    def span(key):
        v = [p[key] for p in peaks if p[key] is not None]
        return "%.0f-%.0f%%" % (min(v), max(v)) if v else "?"

    allp = [p for c in configs for p in c.points if p["phase"] != "warmup"]
    flagged = [p for p in allp if flag(p)]
    if allp:
        lines.insert(0, "- %d of %d measured points ran while the rest of the machine (other "
                     "people's jobs) used more than %d%% of one CPU (marked † below)%s." % (
                         len(flagged), len(allp), REST_FLAG_PCT,
                         ": differences between servers in this run are mostly noise from that "
                         "load" if len(flagged) * 3 > len(allp) else ""))
    if peaks:
        lines.append(
            "- CPU at the peaks (percent of one CPU; the VM has two, 200%%): server %s, "
            "load generator %s, rest of the machine (other people's processes and kernel time "
            "charged to no process) %s. The server is not the only thing limiting these "
            "numbers; the server CPU per request (below) compares the servers' own cost."
            % (span("srv_pct"), span("cli_pct"), span("other_pct")))
    return lines


def quiet_text(meta, configs):
    wait = int(meta.get("knob.QUIET_WAIT", "0") or 0)
    pts = [p for c in configs for p in c.points if p["busy_before"] is not None]
    if not wait or not pts:
        return "off"
    limit = float(meta.get("knob.QUIET_MAX", "0"))
    busy = sum(1 for p in pts if p["busy_before"] >= limit)
    return ("before each point up to %d s until the machine was busy below %.0f%% of one CPU for "
            "1 s: waited %.0f s in all; %d of %d points started without reaching it"
            % (wait, limit, sum(p["quiet_wait"] or 0 for p in pts), busy, len(pts)))


def render(d):
    meta, configs = load(d)
    charts(d, meta, configs)
    conns = sorted({p["connections"] for c in configs for p in c.phase("get") + c.phase("set")})
    labels = [c.label for c in configs]
    out = []
    w = out.append
    w("# Lavik and redis-server on one 2-vCPU VM, %s" % meta.get("date", "")[:10])
    w("")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shown = os.path.relpath(os.path.abspath(d), root)
    if shown.startswith(".."):
        shown = os.path.abspath(d)
    w("Generated by `bench/report.sh` (re-render: `bench/report_render.py %s`). %d configurations, "
      "run one at a time on the same machine: %s. Every value is %s bytes; keys are \"1\"..\"N\" "
      "with no prefix." % (shown, len(configs), ", ".join(labels),
                          meta.get("knob.VALUE_SIZE", "?")))
    w("")
    note = meta.get("report_note", "")
    if note:
        w("**Note:** %s" % note)
        w("")
    changed = sorted((k[len("changed."):], v) for k, v in meta.items()
                     if k.startswith("changed."))
    if changed:
        w("**Settings that differ from the script's defaults in this run:**")
        w("")
        for k, v in changed:
            w("- `%s` = %s" % (k, v))
        w("")
    w("**Client and server share one 2-vCPU VM** (server on CPU %s, load generator on CPU %s, "
      "loopback TCP), and other people's jobs ran on the same VM during the run (load average "
      "%s at the start, %s at the end). Read the numbers as a relative comparison on this "
      "machine, not as the servers' capacity." % (
          meta.get("knob.SERVER_CPUS", "?"), meta.get("knob.CLIENT_CPUS", "?"),
          meta.get("load_start", "?"), meta.get("load_end", "?")))
    w("")
    lines = summary(configs)
    if lines:
        w("## Summary")
        w("")
        out.extend(lines)
        w("")

    w("## Peaks")
    w("")
    rows = []
    for phase in ("get", "set"):
        for c in configs:
            p = c.peak(phase)
            if p:
                rows.append([phase.upper(), c.label, p["connections"], ops(p["ops"]) + flag(p),
                             ms(p["p999"]), "%.2f" % p["us_req"] if p["us_req"] is not None
                             else "-", "%s / %s / %s" % (pct(p["srv_pct"]), pct(p["cli_pct"]),
                                                         pct(p["other_pct"]))])
    w(md_table(["Command", "Server / keys", "Peak connections", "Peak ops/s", "p99.9 ms",
                "Server CPU µs/req", "CPU % server / client / rest"], rows))
    w("")
    w("Each peak is the best connection count of its own sweep; matched connection counts "
      "follow. " + FLAG_NOTE)
    w("")
    w('<img src="throughput.svg" alt="GET and SET throughput vs connections" width="900">')
    w("")
    w('<img src="latency.svg" alt="GET and SET p99.9 latency vs connections" width="900">')
    w("")

    w("## Undisturbed points only")
    w("")
    w("The sweep points during which the rest of the machine stayed at or below %d%% of one CPU "
      "(no † below): how many there are, the best ops/s among them (connections) and the median "
      "server CPU per request over them. With other people's jobs sharing the two vCPUs, these "
      "are the fairest figures of this run." % REST_FLAG_PCT)
    w("")
    rows = []
    for c in configs:
        row = [c.label]
        for phase in ("get", "set"):
            good = [p for p in c.phase(phase) if p["other_pct"] is not None and not flag(p)]
            if not good:
                row += ["0 of %d" % len(c.phase(phase)), "-", "-"]
                continue
            best = max(good, key=lambda p: p["ops"])
            us = sorted(p["us_req"] for p in good if p["us_req"] is not None)
            row += ["%d of %d" % (len(good), len(c.phase(phase))),
                    "%s (%d)" % (ops(best["ops"]), best["connections"]),
                    "%.2f" % us[len(us) // 2] if us else "-"]
        rows.append(row)
    w(md_table(["Server / keys", "GET points", "GET best ops/s (conns)", "GET median µs/req",
                "SET points", "SET best ops/s (conns)", "SET median µs/req"], rows))
    w("")

    w("## Throughput and p99.9 at each connection count")
    w("")
    w("Cells: **ops/s / p99.9 ms**.")
    w("")
    rows = []
    for phase in ("get", "set"):
        for n in conns:
            row = [phase.upper(), n]
            for c in configs:
                p = c.at(phase, n)
                row.append("%s / %s%s" % (ops(p["ops"]), ms(p["p999"]), flag(p)) if p else "-")
            rows.append(row)
    w(md_table(["Command", "Connections"] + labels, rows))
    w("")
    w(FLAG_NOTE + " p50 / p99 / p99.99 of every point are in `points.csv`.")
    w("")

    w("## CPU per request")
    w("")
    w("Cells: **server CPU µs per request** (server CPU %, client CPU %, rest of the machine "
      "%): utime+stime of the whole server process (all threads) and of lavik-bench from "
      "`/proc/PID/stat` over the measured window, in percent of one CPU; µs/request = server "
      "CPU time / (ops/s x window). \"Rest\" is the machine's busy time from `/proc/stat` "
      "minus the two: other people's processes plus kernel time (loopback softirq) charged to "
      "no process; it is approximate (process times and `/proc/stat` are sampled differently; a "
      "negative remainder is shown as 0). Client and server share the VM with that rest, so "
      "ops/s depends on all three; µs/request is the server's own cost.")
    w("")
    rows = []
    for phase in ("get", "set"):
        for n in conns:
            row = [phase.upper(), n]
            for c in configs:
                p = c.at(phase, n)
                if p and p["us_req"] is not None:
                    row.append("%.2f (%s%%, %s%%, %s%%)" % (
                        p["us_req"], pct(p["srv_pct"]), pct(p["cli_pct"]), pct(p["other_pct"])))
                else:
                    row.append("-")
            rows.append(row)
    w(md_table(["Command", "Connections"] + labels, rows))
    w("")

    w("## GET at fixed rates")
    w("")
    w("Open loop, %s connections, pipeline 1; each configuration's ladder runs from %s GET/s in "
      "steps up to its GET peak x %s. Cells: **p50 / p99 ms**; **NS (achieved X)** where less "
      "than 97%% of the offered rate was achieved (latency of such a point is not meaningful)."
      % (meta.get("knob.RATE_CONNECTIONS", "?"), ops(num(meta.get("knob.RATE_STEP"))),
         meta.get("knob.RATE_FACTOR", "?")))
    w("")
    rates = sorted({p["rate"] for c in configs for p in c.phase("rate")})
    rows = []
    for r in rates:
        row = [ops(r)]
        for c in configs:
            p = next((q for q in c.phase("rate") if q["rate"] == r), None)
            if p is None:
                row.append("-")
            elif not p["sustained"]:
                row.append("NS (achieved %s)%s" % (ops(p["achieved"]), flag(p)))
            else:
                row.append("%s / %s%s" % (ms(p["p50"]), ms(p["p99"]), flag(p)))
        rows.append(row)
    w(md_table(["Offered GET/s"] + labels, rows))
    w("")
    w(FLAG_NOTE)
    w("")
    w('<img src="fixed-rate.svg" alt="GET p50 and p99 at fixed rates" width="900">')
    w("")

    w("## Memory")
    w("")
    rows = []
    for c in configs:
        e_used, e_rss = c.mem("mem_empty")
        l_used, l_rss = c.mem("mem_loaded")
        used = [p["used"] for p in c.points if p["used"] is not None]
        rss = [p["rss"] for p in c.points if p["rss"] is not None]
        rows.append([c.label, "%s / %s" % (mib(e_used), mib(e_rss)),
                     "%s / %s" % (mib(l_used), mib(l_rss)),
                     "%s-%s" % (mib(min(used)), mib(max(used))) if used else "-",
                     "%s-%s" % (mib(min(rss)), mib(max(rss))) if rss else "-",
                     mib(num(c.meta.get("hwm")))])
    w(md_table(["Server / keys", "Empty: used_memory / RSS (MiB)",
                "After fill: used_memory / RSS (MiB)", "used_memory over the points (MiB)",
                "RSS over the points (MiB)", "Peak RSS, VmHWM (MiB)"], rows))
    w("")
    w("`used_memory` is each server's own INFO accounting (lavik: index + value cache + buffers; "
      "redis: its allocator's view of the whole data set); RSS is VmRSS from "
      "`/proc/PID/status`. Snapshots: empty server, after the fill, after every measured point. "
      "lavik keeps values in its data file (O_DIRECT) and only its value cache in DRAM (%s); "
      "redis keeps the whole data set in DRAM." % lavik_caches(configs, meta))
    w("")

    w("## Checks")
    w("")
    rows = []
    for c in configs:
        warn = c.meta.get("log_warnings", "-")
        text = c.meta.get("log_warning_text", "")
        if text:
            warn += ": " + "<br>".join("`%s`" % t.replace("|", "/") for t in text.split("|"))
        rows.append([c.label, c.meta.get("fill", "-"),
                     "<br>".join(c.meta.get("checks", "").split(";")), warn])
    w(md_table(["Server / keys", "Fill (lavik-bench --fill)", "Checks (all passed)",
                "Server log warnings"], rows))
    w("")
    w("A failed check stops `report.sh` with a non-zero status before this README is written.")
    if any("overcommit" in c.meta.get("log_warning_text", "") for c in configs):
        w("redis-server's overcommit warning concerns background saves (fork), which are off "
          "in this run (`--save ''`).")
    w("")

    w("## Machine")
    w("")
    loads = [p["load1"] for c in configs for p in c.points if p["load1"] is not None]
    steal = [p["steal"] for c in configs for p in c.points if p["steal"] is not None]
    other = [p["other_pct"] for c in configs for p in c.points if p["other_pct"] is not None]
    sirq = [p["softirq_pct"] for c in configs for p in c.points if p["softirq_pct"] is not None]
    rows = [
        ["CPU", "%s; %s vCPUs (%s)" % (meta.get("cpu_model"), meta.get("cpus"),
                                        meta.get("cpu_topology"))],
        ["RAM", "%s (%s available at the start), swap %s" % (
            meta.get("mem_total"), meta.get("mem_available_start"), meta.get("swap"))],
        ["Disk (lavik's data file)", meta.get("disk", "?")],
        ["OS / kernel", "%s / %s; transparent hugepages: %s" % (
            meta.get("os"), meta.get("kernel"), meta.get("thp"))],
        ["Pinning", meta.get("pinning", "?")],
        ["Sharing", "load generator and server in the same VM over loopback; other users' jobs "
         "ran too"],
        ["Load average (1/5/15 min)", "%s at the start, %s at the end; 1-min load over the "
         "measured points %s-%s" % (meta.get("load_start"), meta.get("load_end"),
                                    min(loads) if loads else "?",
                                    max(loads) if loads else "?")],
        ["CPU steal over the windows", "max %.2f%%" % max(steal) if steal else "?"],
        ["Rest of the machine over the windows", "%.0f-%.0f%% of one CPU (busy time not "
         "charged to the server or the load generator), of which softirq %.0f-%.0f%%"
         % (min(other), max(other), min(sirq or [0]), max(sirq or [0])) if other else "?"],
        ["Waiting for a quiet machine", quiet_text(meta, configs)],
        ["Open files limit", meta.get("nofile", "?")],
    ]
    w(md_table(["Item", "Value"], rows))
    w("")

    w("## Versions and command lines")
    w("")
    w("- lavik: %s, git %s; binary %s" % (meta.get("lavik_version"), meta.get("git"),
                                          meta.get("lavik_bin")))
    w("- load generator: %s" % meta.get("lavik_bench"))
    for c in configs:
        w("- %s: `%s`" % (c.label, c.meta.get("cmdline", "?")))
    w("")

    w("## Method")
    w("")
    w("- Order: %s; for each server every data set in turn (%s keys), each from an empty "
      "server. Only one server runs at a time." % (
          meta.get("servers"), ", ".join(ds_label(n) for n in meta.get("datasets", "").split())))
    w("- Fill: `lavik-bench --fill` writes keys 1..N exactly once (%s connections, pipeline %s)."
      % (meta.get("knob.FILL_CONNECTIONS"), meta.get("knob.FILL_PIPELINE")))
    w("- Warm-up: %s s of GET at %s connections over the whole key range, once per "
      "configuration." % (meta.get("knob.WARMUP"), meta.get("knob.WARMUP_CONNECTIONS")))
    w("- Sweeps: GET (`--ratio 1:0`) then, after the fixed-rate ladder, SET (`--ratio 0:1`, "
      "overwriting existing keys); uniform random keys over 1..N, pipeline 1, lavik-bench "
      "`--threads 1`; connections %s; each point %s s of warm-up then a %s s window." % (
          meta.get("knob.CONNECTIONS"), meta.get("knob.POINT_WARMUP"),
          meta.get("knob.DURATION")))
    w("- Fixed rates: GET at offered rates (`--rate`), %s s windows; the ladder of each "
      "configuration: %s." % (meta.get("knob.RATE_DURATION"), "; ".join(
          "%s: %s" % (c.label, c.meta.get("rates", "-")) for c in configs)))
    vsize = int(meta.get("knob.VALUE_SIZE", "1024"))
    sets = []
    for n in meta.get("datasets", "").split():
        b = int(n) * vsize
        cache = dataset_cache_mb(configs, meta, n) * 1048576
        sets.append("%s keys = %.2f GiB of values%s" % (
            "{:,}".format(int(n)), b / 2 ** 30,
            " (%.1fx lavik's %d MiB value cache, `--cache-mb %d`)"
            % (b / cache, cache >> 20, cache >> 20) if cache else ""))
    w("- Data sets: %s. lavik keeps its index in DRAM and values in its data file plus the "
      "value cache; redis-server holds everything in DRAM. The machine's "
      "page cache does not help lavik: its data file is opened with O_DIRECT."
      % "; ".join(sets))
    w("- lavik writes every value to its data file (defaults: `--appendfsync everysec`); "
      "redis-server runs with `--save '' --appendonly no` (no persistence).")
    w("- Checks around every configuration: DBSIZE exactly N and STRLEN = %s for keys 1, 2, "
      "N/2, N-1, N and %s random keys after the fill and after the SET sweep; zero misses in "
      "every GET point (lavik-bench's count and INFO keyspace_misses); zero errors in every "
      "point; the server alive after every point and exiting 0 on SIGTERM." % (
          meta.get("knob.VALUE_SIZE"), meta.get("knob.SAMPLES")))
    w("")
    w("Reproduce (from the repository root, with `build/lavik` and `build/lavik-bench` built):")
    w("")
    w("```bash")
    env = " ".join("%s=%s" % (k, "'%s'" % v.split(" (default")[0]
                              if " " in v.split(" (default")[0] else v.split(" (default")[0])
                   for k, v in changed if not k.endswith("_BIN") and k != "RESULTS_DIR")
    w(("%s bench/report.sh" % env).strip())
    w("```")
    w("")
    w("Files: `points.csv` (every point), `meta.txt` (settings, machine, checks), the three SVG "
      "charts; `raw/` (lavik-bench JSON and command line per point, server logs) is not "
      "committed.")
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        sys.stderr.write(__doc__)
        return 2
    render(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
