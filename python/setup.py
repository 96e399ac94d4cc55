"""Builds the convnd PyTorch package: the C++ operator (torch.utils.cpp_extension) linked
against libconvnd.so, which is shipped inside the package.

libconvnd.so comes from CONVND_LIB_DIR when set (a CMake build folder of this repository,
absolute or relative to the repository root);
otherwise this script builds it with CMake from the repository this folder belongs to, on every
core (CONVND_CUDA=AUTO|ON|OFF as for the library; AUTO builds the GPU kernels when nvcc is found;
CONVND_CUDA_ARCHS picks the GPU architectures, default the visible GPU's, else 80;90). Its
progress goes to stderr, which pip shows with -v.

    pip install --no-build-isolation ./python      # from the repository root
    python -m build --wheel --no-isolation python  # a wheel carrying libconvnd.so (pip install build)

The extension is compiled against the installed torch's C++ ABI, so the package requires that
torch release (major.minor).
"""
import glob
import os
import shutil
import subprocess
import sys
import time

import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PKG = os.path.join(HERE, "convnd")


def cuda_architectures():
    """CMAKE_CUDA_ARCHITECTURES for the library: CONVND_CUDA_ARCHS when set (CMake's syntax, e.g.
    "90" or "80;90"), else the visible GPUs' compute capabilities (nvidia-smi), else 80;90 (Ampere
    SASS, Hopper SASS + PTX): one or two architectures, not the CMake default's three, since each
    multiplies the tensor-core units' compile time."""
    if os.environ.get("CONVND_CUDA_ARCHS"):
        return os.environ["CONVND_CUDA_ARCHS"]
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        caps = sorted({c.strip().replace(".", "") for c in out.stdout.split()
                       if c.strip().replace(".", "").isdigit()})
        if out.returncode == 0 and caps:
            return ";".join(caps)
    except (OSError, subprocess.SubprocessError):
        pass
    return "80;90"


def built_library_dir():
    if os.environ.get("CONVND_LIB_DIR"):
        # pip runs this script from python/: a relative path is taken from the repository root.
        libdir = os.environ["CONVND_LIB_DIR"]
        return libdir if os.path.isabs(libdir) else os.path.join(REPO, libdir)
    build = os.path.join(HERE, "build", "libconvnd")
    cuda = os.environ.get("CONVND_CUDA", "AUTO")
    jobs = str(os.cpu_count() or 2)
    configure = ["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 "-DCONVND_BUILD_TESTS=OFF", "-DCONVND_BUILD_BENCH=OFF", f"-DCONVND_CUDA={cuda}"]
    gpu = "the emulated device only"
    if cuda != "OFF":
        archs = cuda_architectures()
        configure.append(f"-DCMAKE_CUDA_ARCHITECTURES={archs}")
        gpu = (f"GPU kernels for CUDA architectures {archs} when nvcc is found (each one adds "
               "minutes: the README says how many; CONVND_CUDA_ARCHS=90 builds one)")
    # pip shows a build's output only with -v: everything goes to stderr, CMake's lines included,
    # so that `pip install -v` shows what is being built and how far it has got.
    say(f"building libconvnd.so with CMake in {build}: Release, CONVND_CUDA={cuda}, {gpu}, "
        f"{jobs} jobs")
    start = time.monotonic()
    subprocess.check_call(configure, stdout=sys.stderr)
    subprocess.check_call(["cmake", "--build", build, "--target", "convnd_shared",
                           "convnd-selftest", "-j", jobs], stdout=sys.stderr)
    say(f"libconvnd.so built in {time.monotonic() - start:.0f} s")
    return build


def say(line):
    print(f"convnd setup.py: {line}", file=sys.stderr, flush=True)


def ship_library():
    """Copies libconvnd.so.<major> (the name the extension records) and convnd-selftest (run by
    `python -m convnd.selftest`; it finds the library beside itself) into the package."""
    libdir = built_library_dir()
    selftest = os.path.join(libdir, "selftest", "convnd-selftest")
    if not os.path.isfile(selftest):
        raise RuntimeError(f"no {selftest} in {libdir}: build the convnd-selftest target")
    shutil.copyfile(selftest, os.path.join(PKG, "convnd-selftest"))
    os.chmod(os.path.join(PKG, "convnd-selftest"), 0o755)
    found = sorted(glob.glob(os.path.join(libdir, "libconvnd.so.*")) +
                   glob.glob(os.path.join(libdir, "lib*", "libconvnd.so.*")), key=len)
    if not found:
        raise RuntimeError(f"no libconvnd.so.* in {libdir}: build the convnd_shared target")
    real = os.path.realpath(found[0])
    soname = os.path.basename(found[0])  # libconvnd.so.0
    shutil.copyfile(real, os.path.join(PKG, soname))
    return soname


def torch_requirement():
    """The torch release the extension is built against: its C++ ABI is not stable across
    releases, so a wheel says which one it needs (e.g. torch==2.9.*)."""
    major, minor = torch.__version__.split("+")[0].split(".")[:2]
    return f"torch=={major}.{minor}.*"


soname = ship_library()

setup(
    name="convnd",
    version="0.1.0",
    description="convnd convolution kernels as PyTorch operators (torch.ops.convnd)",
    packages=["convnd"],
    install_requires=[torch_requirement()],
    package_data={"convnd": [soname, "convnd-selftest"]},
    ext_modules=[
        CppExtension(
            "convnd._C",
            ["csrc/convnd_op.cpp"],
            include_dirs=[os.path.join(REPO, "include")],
            library_dirs=[PKG],
            libraries=[":" + soname],
            extra_link_args=["-Wl,-rpath,$ORIGIN"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
