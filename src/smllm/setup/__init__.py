"""Setting smllm up: install/uninstall in Claude Code settings files, reading and editing those
files, ``smllm doctor``, and the plugin's private-environment bootstrap."""

#: the hosts besides Claude Code (``--harness NAME``): the module that installs smllm's
#: hooks there (``resolve_target``, ``plan_install``, ``plan_uninstall``, ``apply``,
#: ``diff``), imported by name on use
INSTALLS = {"codex": "smllm.setup.codex_install", "copilot": "smllm.setup.copilot_install",
            "gemini": "smllm.setup.gemini_install"}
#: and the module that checks it there (``diagnose(project) -> [(status, text)]``)
DOCTORS = {"codex": "smllm.setup.codex_install", "copilot": "smllm.setup.copilot_install",
           "gemini": "smllm.setup.gemini_doctor"}
