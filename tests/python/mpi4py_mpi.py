#!/usr/bin/env python3
"""mpi4py_mpi.py: prints which MPI the installed mpi4py was built on ("openmpi",
"mpich" or "unknown"), from the libraries its MPI extension links, without
initializing MPI. Exits 1 when mpi4py or numpy cannot be imported."""

import glob
import os
import subprocess
import sys

try:
    import mpi4py
    import numpy  # noqa: F401  (the tests need it too)
except ImportError as e:
    print(e)
    sys.exit(1)

libs = ""
for so in glob.glob(os.path.join(os.path.dirname(mpi4py.__file__), "MPI*.so")):
    libs += subprocess.run(["ldd", so], stdout=subprocess.PIPE, text=True).stdout
if "libmpi.so.40" in libs or "libopen-" in libs:
    print("openmpi")
elif "libmpich" in libs:
    print("mpich")
else:
    print("unknown")
