"""Harness adapters: how each host's hooks speak, mapped onto smllm's one model.

An adapter owns three mappings for its host: the hook payload -> :class:`ToolCall`
(:mod:`smllm.base.catalogue`), a :class:`smllm.gate.Verdict` -> the decision JSON that is
safe on that host, and the deny that is printed when nothing else can be. Claude Code's
is :mod:`smllm.harness.claude`. Hot path: nothing is imported here.
"""
