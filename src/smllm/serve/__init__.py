"""``smllm serve``: a read-only web viewer of sessions, approvals and machines.

``source`` reads the data (the embedded index and the journals, or the team store),
``sessionscan`` keeps one pass over a
session's logs, ``views`` turns records into what a page shows (redacted unless
``--raw``), ``diagram`` draws machines as SVG, ``machineview`` reads smllm sessions,
``access`` guards every request (token, Host, read-only methods, CSP) and ``app`` wires
the routes, the templates and the static files. Starlette, uvicorn and Jinja2 are an
optional extra: ``pip install 'smllm[serve]'``.
"""
