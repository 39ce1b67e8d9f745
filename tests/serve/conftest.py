"""Fixtures of the viewer's tests; the world they build is in serve_world.py."""

from serve_world import (  # noqa: F401 - fixtures and the summary hook, for pytest
    artifacts,
    pytest_terminal_summary,
    raw_viewer,
    store_viewer,
    viewer,
    world,
)
