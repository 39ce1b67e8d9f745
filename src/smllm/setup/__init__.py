"""Setting smllm up: install/uninstall in Claude Code settings files, reading and editing those
files, ``smllm doctor``, and the plugin's private-environment bootstrap."""
