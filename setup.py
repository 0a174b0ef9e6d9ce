"""Build the optional compiled kernels (BM25 top k, text counting); without a C compiler Python/numpy is used."""

import os

from setuptools import Extension, setup

# -ffp-contract=off: no fused multiply-add, so the kernel's scores are the numpy path's floats.
FLAGS = ["/fp:precise"] if os.name == "nt" else ["-O3", "-ffp-contract=off", "-fno-fast-math"]

setup(
    ext_modules=[
        Extension(f"ragdesk.core.{name}", [f"ragdesk/core/{name}.c"], extra_compile_args=FLAGS, optional=True)
        for name in ("_kernel", "_text")
    ]
)
