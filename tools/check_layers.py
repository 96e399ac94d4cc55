#!/usr/bin/env python3
"""Fails on an include that goes up a layer, or across families.

A call flows include -> bind -> core -> schedules -> kernels -> device. Includes look down:
core/ is the vocabulary every layer reads (problem model, launch ABI, errors) and itself reads
only the public headers; each other folder reads its own headers, include/, and the folders
listed for it below. A family (families/NAME/) holds two layers: its host files (.c) belong to
the schedule layer, its kernels, configuration tables and planted-bug builds (.cu, .cuh, .h,
.cpp, .inc) to the kernel layer; a family reads another family's headers only when families/uses.txt
says so. A quoted include is resolved the way the compiler does (the including file's folder,
then the target's include path from CMakeLists.txt), so an include that only builds because of
some other folder's path is reported too.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# layer -> layers its sources may include (besides their own folder), lowest layer first
ALLOWED = {
    "include": [],
    "core": ["include"],
    "device": ["include", "core"],
    "kernels": ["include", "core", "device", "primitives"],
    "schedules": ["include", "core", "device", "primitives", "schedules"],
    "bind": ["include", "core"],
}
# Narrower still: of core/, kernels see only the launch ABI and device only error reporting.
ONLY_FROM = {
    ("kernels", "core"): {"launch_abi.h", "conv_params.h", "causal_params.h", "error.h"},
    ("device", "core"): {"error.h"},
}


def family_uses():
    """families/uses.txt: FAMILY -> the families whose headers it may include (CMake reads the
    same lines for the include path)."""
    uses = {}
    with open(os.path.join(ROOT, "families", "uses.txt"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([a-z_0-9]+):(.*)$", line)
            if m:
                uses[m.group(1)] = m.group(2).split()
    return uses


SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cpp", ".inc")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def families():
    path = os.path.join(ROOT, "families")
    return sorted(d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d)))


def headers_in(folder):
    path = os.path.join(ROOT, folder)
    found = set()
    for dirpath, _, names in os.walk(path):
        found |= {n for n in names if n.endswith((".h", ".cuh", ".inc", ".cu"))}
    return found


def kernel_side(family_files):
    """The family files in the kernel layer: its .cu, .cuh, .cpp and .inc files and every header
    they include, directly or not; a family's other headers (.h only its host files read) are
    in the schedule layer."""
    by_name = {os.path.basename(rel): rel for rel in family_files}
    todo = [rel for rel in family_files if not rel.endswith((".c", ".h"))]
    seen = set(todo)
    while todo:
        with open(os.path.join(ROOT, todo.pop()), encoding="utf-8") as f:
            for inc in INCLUDE_RE.findall(f.read()):
                rel = by_name.get(inc)
                if rel and rel not in seen:
                    seen.add(rel)
                    todo.append(rel)
    return seen


def sources():
    """(path relative to ROOT, its layer, the folders it sees as its own)."""
    plain = ["include", "core", "device", "bind", "schedules", "primitives"]
    layer_of = {"primitives": "kernels"}
    for folder in plain:
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(folder, name), layer_of.get(folder, folder), [folder]
    files = {}
    for fam in families():
        for dirpath, _, names in os.walk(os.path.join(ROOT, "families", fam)):
            files.update({os.path.relpath(os.path.join(dirpath, n), ROOT): fam
                          for n in names if n.endswith(SOURCE_EXT)})
    kernel = kernel_side(files)
    uses = family_uses()
    for rel, fam in sorted(files.items()):
        own = [os.path.join("families", f) for f in [fam] + uses.get(fam, [])]
        yield rel, ("kernels" if rel in kernel else "schedules"), own


def main():
    folders = ["include", "core", "device", "bind", "schedules", "primitives"]
    present = {f: headers_in(f) for f in folders}
    fam_headers = {os.path.join("families", f): headers_in(os.path.join("families", f))
                   for f in families()}
    # a family's headers are kernel-layer headers: the schedule layer may read them
    kernel_header_layer = {f: "kernels" for f in fam_headers}
    present.update(fam_headers)
    problems = []
    checked = 0
    for rel, layer, own in sources():
        with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
            text = f.read()
        allowed = list(ALLOWED[layer])
        for inc in INCLUDE_RE.findall(text):
            checked += 1
            if "/" in inc or ".." in inc:
                problems.append(f"{rel}: #include \"{inc}\": use a bare name on the include path")
                continue
            if any(inc in present[o] for o in own):
                continue
            found = [f for f in allowed if f in present and inc in present[f]]
            if found and all(inc in ONLY_FROM.get((layer, f), {inc}) for f in found):
                continue
            if found:
                problems.append(f"{rel}: #include \"{inc}\": the {layer} layer sees only "
                                f"{sorted(ONLY_FROM[(layer, found[0])])} of {found[0]}/")
                continue
            where = [f for f in present if inc in present[f]]
            if any(w in kernel_header_layer for w in where):
                problems.append(f"{rel}: #include \"{inc}\" is in {', '.join(where)}, another "
                                f"family's (families/uses.txt lists who may)")
                continue
            wheres = ", ".join(f"{w}/" for w in where) or "no layer folder"
            problems.append(f"{rel}: #include \"{inc}\" is in {wheres}, which the {layer} layer "
                            f"may not include (allowed: {', '.join(allowed) or 'nothing'})")
    for p in problems:
        print("check_layers:", p, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} include(s) go up a layer or across families",
              file=sys.stderr)
        return 1
    print(f"check_layers: {checked} quoted includes across {len(ALLOWED)} layers and "
          f"{len(fam_headers)} families look down only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
