"""Reading options as the programs themselves read them.

Shared by the family modules: skipping a launcher's own options to find the program it
runs (options with a separate argument consume it; ``--`` ends the options).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from smllm.gate.shell._parse import Word


def skip_options(args: list[Word], with_arg: frozenset[str], positional: int) -> list[Word]:
    """The words after a launcher's options and its first ``positional`` operands."""
    i = 0
    while i < len(args):
        v = args[i].value
        if v is None:
            break
        if v == "--":
            i += 1
            break
        if v.startswith("-") and len(v) > 1:
            if v in with_arg:
                i += 2
                continue
            i += 1
            continue
        break
    rest = args[i:]
    return rest[positional:]
