#!/usr/bin/env python3
"""Checks src/'s layering against src/layers.txt (doc/layers.md).

Fails (exit 1, one line per problem) when:
  - layers.txt has a cycle, names an unknown library, or a src/ folder is missing from it;
  - a file includes a header of a library its own library may not reach through layers.txt;
  - an included project header does not exist;
  - files include each other in a cycle (a unit is foo.h with foo.cc: a.cc including b.h and
    b.cc including a.h is a cycle), unless layers.txt lists the cycle as a `known-cycle:` (debt
    written down, to be paid; a new file joining it or a new cycle fails).
Run from anywhere; `make test` runs it before building.
"""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SRC = os.path.join(ROOT, "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Folders of src/ that are programs, not libraries in the table: they may include any library.
PROGRAMS = {"tools"}


def read_layers(path):
    deps, problems, known = {}, [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("known-cycle:"):
                known.append(set(line.split(":", 1)[1].split()))
                continue
            m = re.match(r"^([a-z_]+):([^|]*)(\|.*)?$", line)
            if not m:
                problems.append(f"layers.txt:{n}: cannot read {line!r}")
                continue
            deps[m.group(1)] = m.group(2).split()
    for lib, ds in deps.items():
        for d in ds:
            if d not in deps:
                problems.append(f"layers.txt: {lib} depends on unknown library {d}")
    return deps, problems, known


def strong_components(graph):
    """The strongly connected components of more than one node (Tarjan), as sets."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def find_cycle(graph):
    """One cycle of `graph` (node -> iterable of nodes) as a list, or None."""
    color, stack = {}, []

    def visit(node):
        color[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if color.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if color.get(nxt) is None:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        color[node] = 2
        return None

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if color.get(node) is None:
            found = visit(node)
            if found:
                return found
    return None


def reach(deps):
    out = {}
    for lib in deps:
        seen, todo = set(), list(deps[lib])
        while todo:
            d = todo.pop()
            if d in seen or d not in deps:
                continue
            seen.add(d)
            todo.extend(deps[d])
        out[lib] = seen
    return out


def main():
    deps, problems, known = read_layers(os.path.join(SRC, "layers.txt"))
    cycle = find_cycle(deps)
    if cycle:
        problems.append("layers.txt has a cycle: " + " -> ".join(cycle))
    reachable = reach(deps)
    folders = sorted(d for d in os.listdir(SRC) if os.path.isdir(os.path.join(SRC, d)))
    for d in folders:
        if d not in deps and d not in PROGRAMS:
            problems.append(f"src/{d}/ is not in layers.txt")

    units = {}  # "lib/name" -> set of "lib/name" it includes
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(SRC, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, SRC)
                unit = os.path.splitext(rel)[0]
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    target_lib = inc.split("/", 1)[0]
                    if not os.path.exists(os.path.join(SRC, inc)):
                        problems.append(f"src/{rel}: includes {inc}, which does not exist")
                        continue
                    target = os.path.splitext(inc)[0]
                    if target != unit:
                        units.setdefault(unit, set()).add(target)
                    if folder in PROGRAMS or target_lib == folder:
                        continue
                    if target_lib not in reachable.get(folder, ()):
                        problems.append(f"src/{rel}: includes {inc}: {folder} may not reach "
                                        f"{target_lib} (src/layers.txt)")
    for comp in strong_components(units):
        if not any(comp <= k for k in known):
            problems.append("files include each other in a cycle: " + " ".join(sorted(comp)))
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_layers: {len(deps)} libraries, {len(units)} units' includes follow src/layers.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
