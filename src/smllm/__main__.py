from __future__ import annotations

from smllm.cli import main

raise SystemExit(main())
