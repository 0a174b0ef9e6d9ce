"""Build the optional compiled BM25 top-k kernel; without a C compiler the numpy path is used."""

import os

from setuptools import Extension, setup

# -ffp-contract=off: no fused multiply-add, so the kernel's scores are the numpy path's floats.
FLAGS = ["/fp:precise"] if os.name == "nt" else ["-O3", "-ffp-contract=off", "-fno-fast-math"]

setup(
    ext_modules=[Extension("ragdesk.core._kernel", ["ragdesk/core/_kernel.c"], extra_compile_args=FLAGS, optional=True)]
)
