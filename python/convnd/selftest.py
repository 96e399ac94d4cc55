"""python -m convnd.selftest: convnd-selftest, the program shipped in this package beside
libconvnd.so.0 (docs/errata.md). It runs every schedule:config on small cases on this machine's
device (CUDA when there is one, else the emulated device), compares each with the CPU reference
and with the direct schedule, and appends what fails to the errata file, which the planner (and so
torch.ops.convnd) obeys from then on. Arguments are the program's: --quick, --full, --only LIST,
--errata PATH, --no-errata, --device gpu|emulated, --seed N, --quiet. Exit status: 0 all passed,
1 a failure (written to the errata), 2 an error."""
import os
import subprocess
import sys

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "convnd-selftest")


def main(argv=None):
    """Runs convnd-selftest with argv (default: this process's arguments); returns its status."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not os.access(PROGRAM, os.X_OK):
        print(f"convnd.selftest: {PROGRAM} is missing from the installed package", file=sys.stderr)
        return 2
    return subprocess.call([PROGRAM] + args)


if __name__ == "__main__":
    sys.exit(main())
