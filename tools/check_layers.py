#!/usr/bin/env python3
"""Fails on an include that goes up a layer.

A call flows include -> bind -> core -> schedules -> kernels -> device. Includes look down:
core/ is the vocabulary every layer reads (problem model, launch ABI, errors) and itself reads
only the public headers; each other folder reads its own headers, include/, and the folders
listed for it below. A quoted include is resolved the way the compiler does (the including
file's folder, then the target's include path from CMakeLists.txt), so an include that only
builds because of some other folder's path is reported too.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# folder -> folders its sources may include (besides their own), lowest layer first
ALLOWED = {
    "include": [],
    "core": ["include"],
    "device": ["include", "core"],
    "kernels": ["include", "core", "device"],
    "schedules": ["include", "core", "device", "kernels"],
    "bind": ["include", "core"],
}
# Narrower still: of core/, kernels see only the launch ABI and device only error reporting.
ONLY_FROM = {
    ("kernels", "core"): {"launch_abi.h", "conv_params.h", "causal_params.h", "error.h"},
    ("device", "core"): {"error.h"},
}
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".cpp")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def headers_of(folder):
    path = os.path.join(ROOT, folder)
    return {f for f in os.listdir(path) if f.endswith((".h", ".cuh"))}


def main():
    present = {folder: headers_of(folder) for folder in ALLOWED}
    problems = []
    checked = 0
    for folder, allowed in ALLOWED.items():
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not name.endswith(SOURCE_EXT):
                continue
            rel = os.path.join(folder, name)
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE_RE.findall(text):
                checked += 1
                if "/" in inc or ".." in inc:
                    problems.append(f"{rel}: #include \"{inc}\": use a bare name on the include path")
                    continue
                if inc in present[folder]:
                    continue
                found = [f for f in allowed if inc in present[f]]
                if found and all(inc in ONLY_FROM.get((folder, f), {inc}) for f in found):
                    continue
                if found:
                    problems.append(f"{rel}: #include \"{inc}\": {folder}/ sees only "
                                    f"{sorted(ONLY_FROM[(folder, found[0])])} of {found[0]}/")
                    continue
                above = [f for f in ALLOWED if f != folder and inc in present[f]]
                where = ", ".join(f"{f}/" for f in above) or "no layer folder"
                problems.append(f"{rel}: #include \"{inc}\" is in {where}, which {folder}/ may "
                                f"not include (allowed: {', '.join(allowed) or 'nothing'})")
    for p in problems:
        print("check_layers:", p, file=sys.stderr)
    if problems:
        print(f"check_layers: {len(problems)} include(s) go up a layer", file=sys.stderr)
        return 1
    print(f"check_layers: {checked} quoted includes across {len(ALLOWED)} layers look down only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
