#!/usr/bin/env python3
"""Fails if modules of a crate import each other in a circle.

For every module, its children are compared as whole subtrees: an edge
child A -> child B means code under A names a path under B (`crate::…`,
`super::…` or `self::…`). A circle among siblings (A -> B -> A) is reported
with the lines that make it. A module using its own parent or children is
not a circle: that is how Rust modules nest.

Usage: module_cycles.py CRATE_SRC_DIR...
"""

import re
import sys
from pathlib import Path

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)::\{([^;]*)\};", re.S)


def module_of(src: Path, file: Path) -> tuple:
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def references(module: tuple, text: str):
    """Absolute module paths (tuples of segments) named in `text`."""
    found = []
    for match in USE_GROUP.finditer(text):
        base = resolve(module, match.group(1), [])
        for item in re.split(r",", match.group(2)):
            segs = [s for s in item.strip().split("::") if s and s != "{"]
            segs = [re.split(r"[\s{]", s)[0] for s in segs]
            found.append((base + tuple(s for s in segs if s), match.start()))
    for match in PATH.finditer(text):
        segs = [s for s in match.group(2).split("::") if s and s != "{"]
        found.append((resolve(module, match.group(1), segs), match.start()))
    return found


def resolve(module: tuple, head: str, segs: list) -> tuple:
    """The absolute path `head::segs…` names, seen from `module`."""
    if head == "crate":
        return tuple(segs)
    base = module if head == "self" else module[:-1]
    rest = list(segs)
    while rest and rest[0] == "super":
        base = base[:-1]
        rest.pop(0)
    return base + tuple(rest)


REEXPORT = re.compile(r"\bpub(?:\([^)]*\))?\s+use\s+([A-Za-z_][\w:]*?)(?:::\{([^}]*)\}|::(\w+))\s*;")


def reexports(module: tuple, text: str, modules: set) -> dict:
    """Names a module re-exports from below it: name -> defining module."""
    out = {}
    for match in REEXPORT.finditer(text):
        path = [s for s in match.group(1).split("::") if s]
        if path and path[0] in ("crate", "self", "super"):
            origin = resolve(module, path[0], path[1:])
        else:
            origin = module + tuple(path)
        names = match.group(2).split(",") if match.group(2) else [match.group(3)]
        for name in names:
            name = re.split(r"\s+as\s+", name.strip())[-1].strip()
            target = origin
            while target and target not in modules:
                target = target[:-1]
            if name:
                out[name] = target
    return out


def check(src: Path) -> list:
    files = {module_of(src, f): f for f in src.rglob("*.rs")}
    modules = set(files)
    texts = {m: strip_comments(f.read_text()) for m, f in files.items()}
    exported = {m: reexports(m, t, modules) for m, t in texts.items()}
    edges = {}
    for module, file in files.items():
        text = texts[module]
        for path, at in references(module, text):
            # The longest existing module the path names, followed through
            # a re-export (`crate::Name` naming what `lib.rs` re-exports).
            target = path
            while target and target not in modules:
                target = target[:-1]
            rest = path[len(target):]
            if rest and rest[0] in exported.get(target, {}):
                target = exported[target][rest[0]]
            line = text.count("\n", 0, at) + 1
            edges.setdefault((module, target), []).append(f"{file}:{line}")
    problems = []
    parents = {m[:-1] for m in modules if m} | {()}
    for parent in parents:
        children = {m[len(parent)] for m in modules if len(m) > len(parent) and m[: len(parent)] == parent}
        graph = {c: set() for c in children}
        where = {}
        for (a, b), lines in edges.items():
            if len(a) > len(parent) and len(b) > len(parent) and a[: len(parent)] == parent and b[: len(parent)] == parent:
                ca, cb = a[len(parent)], b[len(parent)]
                if ca != cb:
                    graph[ca].add(cb)
                    where.setdefault((ca, cb), lines[0])
        for cycle in cycles(graph):
            name = "::".join(parent) or "crate"
            steps = " -> ".join(cycle + [cycle[0]])
            # The members of a strongly connected component, not always a
            # path: every edge among them is named.
            members = set(cycle)
            detail = "; ".join(f"{a} -> {b} at {at}" for (a, b), at in sorted(where.items())
                               if a in members and b in members)
            problems.append(f"{src}: modules of {name} import in a circle: {steps} ({detail})")
    return problems


def cycles(graph: dict) -> list:
    """One cycle per strongly connected component larger than one node."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(path_in(graph, set(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_in(graph: dict, component: set) -> list:
    """A simple cycle through the component, for the message."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in component)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            return path
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            return path
        path.append(fresh[0])
        seen.add(fresh[0])


def main() -> int:
    problems = []
    for arg in sys.argv[1:]:
        problems.extend(check(Path(arg)))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
