"""The installed package is self-contained: libconvnd.so.0 is one of its files (the wheel carries
it), the extension finds it beside itself ($ORIGIN run path, not the build folder), and the
package requires the torch release it was compiled against."""
import importlib.metadata
import os
import shutil
import subprocess

import pytest
import torch

import convnd


def test_library_is_a_file_of_the_installed_package():
    files = {str(f) for f in importlib.metadata.distribution("convnd").files}
    assert "convnd/libconvnd.so.0" in files, sorted(files)
    pkg = os.path.dirname(convnd.__file__)
    assert os.path.isfile(os.path.join(pkg, "libconvnd.so.0"))


def test_extension_loads_the_library_beside_it():
    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    dyn = subprocess.run(["readelf", "-d", convnd._C.__file__], capture_output=True, text=True,
                         check=True).stdout
    needed = [l for l in dyn.splitlines() if "(NEEDED)" in l]
    runpath = [l for l in dyn.splitlines() if "(RUNPATH)" in l or "(RPATH)" in l]
    assert any("[libconvnd.so.0]" in l for l in needed), dyn
    assert runpath and all("$ORIGIN" in l for l in runpath), runpath
    # and the process really mapped the package's own copy
    pkg = os.path.realpath(os.path.dirname(convnd.__file__))
    with open("/proc/self/maps") as maps:
        mapped = {l.split()[-1] for l in maps if "libconvnd.so" in l}
    assert mapped == {os.path.join(pkg, "libconvnd.so.0")}, mapped


def test_requires_the_torch_release_it_was_built_against():
    requires = importlib.metadata.requires("convnd") or []
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    assert f"torch=={major}.{minor}.*" in requires, requires
