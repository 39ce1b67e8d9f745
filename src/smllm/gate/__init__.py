"""The approval gate: decide on a tool call, run the review chain, journal it.

``review`` is the gate's place in PreToolUse (:func:`evaluate`, :class:`Verdict`); ``policy``
reads and compiles the policy files and assesses a call statically; ``shell`` analyses Bash
commands; ``reviewers`` are the user, the LLM judge and the command reviewer; ``grants`` are
the workspace amendments.
"""

from smllm.gate.review import CHOICES, Verdict, evaluate

__all__ = ["CHOICES", "Verdict", "evaluate"]
