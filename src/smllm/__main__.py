from __future__ import annotations

import gc

from smllm.cli import main

code = main()
gc.freeze()  # the process ends: teardown skips a full GC pass (see scripts/smllm)
raise SystemExit(code)
