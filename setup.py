"""Build the optional compiled kernels (BM25 top k and derivation; text: chunking, counting, walking);
without a C compiler the Python/numpy twins are used."""

import os

from setuptools import Extension, setup

# -ffp-contract=off: no fused multiply-add, so the kernel's scores are the numpy path's floats.
FLAGS = ["/fp:precise"] if os.name == "nt" else ["-O3", "-ffp-contract=off", "-fno-fast-math", "-pthread"]
LINK = [] if os.name == "nt" else ["-pthread"]  # the walk stats notes in threads (glibc < 2.34 needs it)

setup(
    ext_modules=[
        Extension(
            f"ragdesk.core.{name}",
            [f"ragdesk/core/{name}.c"],
            depends=["ragdesk/core/_common.h"],
            extra_compile_args=FLAGS,
            extra_link_args=LINK,
            optional=True,
        )
        for name in ("_kernel", "_text")
    ]
)
