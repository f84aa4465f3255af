#!/usr/bin/env python3
"""Keeps doc/commands.md's "Counts" section true to its rows.

Every command row under "## Commands by group" looks like
    | `NAME` | **supported** | notes |           or
    | `NAME SUB` | **not yet** — #4 | notes |
(a subcommand's name has a space). This script counts the rows per group and status and
rewrites the section between "## Counts" and the next "## " heading.

    scripts/doc_counts.py            rewrite doc/commands.md in place
    scripts/doc_counts.py --check    exit 1 (and say what differs) if the section is stale
    scripts/doc_counts.py --supported
                                     print the names of the supported rows, one per line
                                     (lower case, "container|sub"), for comparing with the
                                     server's COMMAND LIST
"""
import collections
import os
import re
import sys

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "doc", "commands.md")
ROW = re.compile(r"^\| `([^`]+)` \| \*\*(supported|not yet|never)\*\*( — ([^|]*?))? *\|")
GROUP = re.compile(r"^### (.+?) \((\d+)\)$")


def parse(text):
    """[(group, name, status, issue)] for every command row."""
    rows = []
    group = None
    in_commands = False
    for line in text.splitlines():
        if line.startswith("## "):
            in_commands = line.startswith("## Commands by group")
            group = None
            continue
        if not in_commands:
            continue
        m = GROUP.match(line)
        if m:
            group = m.group(1)
            continue
        if line.startswith("### "):
            group = None  # e.g. Sentinel: no rows counted
            continue
        m = ROW.match(line)
        if m and group:
            rows.append((group, m.group(1), m.group(2), (m.group(4) or "").strip()))
    return rows


def render(rows):
    groups = []
    for g, *_ in rows:
        if g not in groups:
            groups.append(g)

    def tally(sel):
        c = collections.Counter(r[2] for r in sel)
        return "| %d | %d | %d | %d |" % (len(sel), c["supported"], c["not yet"], c["never"])

    cmds = [r for r in rows if " " not in r[1]]
    subs = [r for r in rows if " " in r[1]]
    out = ["## Counts", "", "| | Rows | supported | not yet | never |", "|---|---:|---:|---:|---:|",
           "| **All** " + tally(rows), "| commands " + tally(cmds),
           "| subcommands " + tally(subs)]
    for g in groups:
        out.append("| %s %s" % (g, tally([r for r in rows if r[0] == g])))
    split = collections.Counter(r[3] for r in rows if r[2] == "not yet")
    order = sorted(split, key=lambda k: (not k.startswith("#"), k))
    out += ["", '"not yet" splits as: %s.' % ", ".join("%s %d" % (k, split[k]) for k in order),
            "Generated from the rows below by `scripts/doc_counts.py`.", ""]
    return "\n".join(out) + "\n"


def replace_section(text, section):
    start = text.index("## Counts\n")
    end = text.index("\n## ", start + 1) + 1
    return text[:start] + section + text[end:]


def main(argv):
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    rows = parse(text)
    if "--supported" in argv:
        for _, name, status, _ in rows:
            if status == "supported":
                print(name.lower().replace(" ", "|"))
        return 0
    new = replace_section(text, render(rows))
    if "--check" in argv:
        if new != text:
            print("doc/commands.md: the Counts section does not match the rows; "
                  "run scripts/doc_counts.py", file=sys.stderr)
            return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
