"""The build step that records which commit an installed smllm was built from.

Everything else about the package is in pyproject.toml. ``pip install /path/to/clone``
(``installer/install.sh``) builds in the clone: this step asks its git for the commit
(``smllm.base.build.checkout_commit``: only when the package's files are exactly that
commit's) and writes it into the built package as ``smllm/_commit``, which
``smllm export`` names in ``exporter_version``. An editable install writes nothing: smllm
then asks git itself, each time it runs from the checkout.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "src"))
from smllm.base import build  # noqa: E402 - from this source tree, standard library only


class BuildPy(build_py):
    """build_py, then the commit file (when the commit is known)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        commit = build.checkout_commit(os.path.join(HERE, "src", "smllm"))
        if commit is not None:
            target = os.path.join(self.build_lib, "smllm", build.COMMIT_FILE)
            with open(target, "w", encoding="ascii") as fh:
                fh.write(commit + "\n")


setup(cmdclass={"build_py": BuildPy})
