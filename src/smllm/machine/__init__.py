"""State machines (seed 001): loader, engine, audit, and the hooks' view of them."""
