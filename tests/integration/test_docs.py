"""doc/commands.md stays true: its Counts section matches its rows, and the rows marked
supported are exactly the commands and subcommands the running server registers."""
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "doc_counts.py")


def test_counts_section_matches_rows():
    done = subprocess.run(["/usr/bin/python3", SCRIPT, "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def _text(v):
    return v.decode() if isinstance(v, bytes) else v


@pytest.mark.lavik_only
def test_supported_rows_are_the_registered_commands(raw):
    documented = set(subprocess.run(["/usr/bin/python3", SCRIPT, "--supported"],
                                    capture_output=True, text=True, check=True).stdout.split())
    conn = raw()
    registered = {_text(n) for n in conn.cmd("COMMAND", "LIST")}
    for info in conn.cmd("COMMAND", "INFO", *sorted(registered)):
        # [name, arity, flags, first, last, step, categories, tips, key specs, subcommands]
        for sub in info[9]:
            registered.add(_text(sub[0]))
    assert documented - registered == set(), "documented as supported but not registered"
    assert registered - documented == set(), "registered but not documented as supported"
    with open(os.path.join(ROOT, "doc", "commands.md"), encoding="utf-8") as f:
        doc = f.read()
    assert f"`COMMAND COUNT` is {conn.cmd('COMMAND', 'COUNT')};" in doc
