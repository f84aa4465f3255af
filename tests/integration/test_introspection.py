"""Introspection and server commands of issue #12: INFO's Cluster section, MEMORY, OBJECT
FREQ/IDLETIME, COMMAND GETKEYS/GETKEYSANDFLAGS/LIST FILTERBY, movablekeys, LOLWUT, LASTSAVE,
SAVE/BGSAVE, CONFIG RESETSTAT, lazyfree counters, CLIENT LIST qbuf. Every test encodes Redis
7.0.15's replies; where figures differ between servers, properties of them are asserted."""

import time

import pytest

from conftest import RespError, wait_until


def info_text(c, *section):
    text = c.cmd("INFO", *section)
    assert isinstance(text, bytes), text
    return text.decode()


def sections(text):
    return [line[2:] for line in text.splitlines() if line.startswith("# ")]


def info_fields(text):
    fields = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, _, v = line.partition(":")
            fields[k] = v
    return fields


# --------------------------------------------------------------------------- INFO Cluster


@pytest.mark.parametrize("args", [[], ["all"], ["everything"], ["default"]])
def test_info_has_cluster_section_before_keyspace(raw, args):
    names = sections(info_text(raw(), *args))
    assert "Cluster" in names
    assert names.index("Cluster") == names.index("Keyspace") - 1
    assert names.index("CPU") < names.index("Modules") < names.index("Errorstats")
    if args in ([], ["default"]):
        assert names.index("Errorstats") < names.index("Cluster")
    else:
        assert names.index("Latencystats") < names.index("Cluster")


def test_info_cluster_alone(raw):
    assert raw().cmd("INFO", "cluster") == b"# Cluster\r\ncluster_enabled:0\r\n"
    assert sections(info_text(raw(), "keyspace", "cluster")) == ["Cluster", "Keyspace"]
    assert raw().cmd("INFO", "modules") == b"# Modules\r\n"
