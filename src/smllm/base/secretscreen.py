"""Journal lines a redaction need not walk: every string of their payload is known clean.

In a redacted export's second pass (:func:`smllm.audit.export.write_document`), a record
in which the first pass found no secret is still masked by value when the document holds
secrets (:meth:`smllm.base.secrets.Masker.mask_value`): every key and string of its payload
is searched for every secret learnt, and for every fragment of one. Most lines hold none,
and most of their strings recur (keys, tool names, outcomes). A :class:`Screen` decides a
line from its raw bytes instead: it cuts the payload's text out of the line, splits it into
its string tokens, and passes the line when every token is in a set of tokens already
judged clean (one set operation in C); a token not yet judged is judged once, by the very
function the walk applies to every string, on the string the JSON parser decodes from it.
A line the screen cannot decide this way is walked, as before.

Why a passed line needs no walk, exactly (the record parsed, so the line is valid JSON):

* **The tokens are the payload's strings.** The screen only reads a line whose payload
  text holds no ``\\"`` (an escaped quote, or an escaped backslash before a closing one):
  then every ``"`` there delimits a string, and splitting on ``"`` from the ``,`` before
  the ``"payload"`` key gives the raw text of each key and string value, at any depth, at
  the odd places. Escapes inside a token (``\\n``, ``\\u00e9``, ``\\ud800``…) are decoded
  before it is judged, and a token is remembered by its raw bytes, so ``p\\u0061ss`` is
  judged as ``pass``. Non-ASCII text needs no care: the judge sees the decoded string,
  exactly what the walk sees.
* **The cut holds the payload.** The line must begin ``{`` and hold no ``{`` or ``[``
  before its first ``,"payload":``, so that key is a top-level one (its quote cannot close
  a string: ``payload":`` would then stand outside one). From the last ``,"id":"`` to the
  end, the line must hold no bracket, no brace but its last character, no backslash and
  no ``payload``: so those members (``id``, ``causation_id``, ``v``, ``prev``, ``hash``:
  the envelope, which is never redacted, and whose values are new on every line) are
  top-level ones, and none of them is a later ``payload`` (JSON keeps the last of two). The
  payload the parser kept lies between the two.
* **The judge is the walk's own, string by string.** Masking changes a payload only where
  a learnt secret, or a fragment of one, occurs in a key or a string, and the judge is
  ``mask_text(text) == text``: a pure function of the string. Numbers, ``true``,
  ``false`` and ``null`` are never touched.

Lines smllm writes meet every condition (:func:`smllm.journal.codec.encode_record`);
anything else (a torn or foreign line, a payload quoting ``"``) is walked.
``tests/test_secretscreen.py`` checks the screen against the full walk on the redaction
corpus, on generated payloads with escapes, non-ASCII and secret-named keys, and on lines
crafted to cut the payload wrongly.

The first pass keeps its walk (:func:`smllm.base.secrets.learn`): measured on the
benchmark's log, a screen over raw lines (cutting, splitting, the set look-up) costs about
as much as the walk, whose strings are mostly remembered already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from smllm.base import jsonfast

if TYPE_CHECKING:
    from collections.abc import Callable

_PAYLOAD = b',"payload":'
_ENVELOPE_TAIL = b',"id":"'
#: tokens remembered at most (a log's ids are new on every few lines: the set is emptied
#: when full, and the recurring keys and values come back at once)
_SIZE = 1 << 14
#: longer tokens are judged each time they occur (outputs, which seldom recur)
_LONGEST = 128


def payload_span(raw: bytes) -> tuple[int, int] | None:
    """Where the payload's text lies in the record line ``raw``, from the ``,`` before its
    key to the envelope's tail, when the cut is provably right (see the module's text);
    None otherwise."""
    start = raw.find(_PAYLOAD)
    if start < 0 or raw[:1] != b"{" or raw.find(b"{", 1, start) >= 0 or (
            raw.find(b"[", 0, start) >= 0):
        return None
    end = raw.rfind(_ENVELOPE_TAIL)
    last = len(raw) - 1
    if end < start or raw.find(b"}", end) != last or raw.find(b"\\", end) >= 0:
        return None
    for ch in (b"{", b"[", b"]", b"payload"):
        if raw.find(ch, end) >= 0:
            return None
    if raw.find(b"\\", start, end) >= 0 and raw.find(b'\\"', start, end) >= 0:
        return None
    return start, end


def decoded(token: bytes) -> str | None:
    """The string a raw JSON string token stands for (None: not a valid one)."""
    if b"\\" not in token:
        try:
            return token.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        text = jsonfast.loads(b'"' + token + b'"')
    except ValueError:
        return None
    return text if isinstance(text, str) else None


class Screen:
    """Passes the record lines whose payload strings ``judge`` finds clean, one by one,
    remembering the clean tokens (a bounded set)."""

    __slots__ = ("_clean", "_judge")

    def __init__(self, judge: Callable[[str], bool]) -> None:
        self._judge = judge
        self._clean: set[bytes] = set()

    def passes(self, raw: bytes) -> bool:
        """True: every string of the payload of the record line ``raw`` is clean, so
        walking it would change and learn nothing. False: walk it (the screen cannot
        tell, or some string is not clean)."""
        span = payload_span(raw)
        if span is None:
            return False
        tokens = raw[span[0] : span[1]].split(b'"')[1::2]
        clean = self._clean
        if clean.issuperset(tokens):
            return True
        for token in tokens:
            if token in clean:
                continue
            text = decoded(token)
            if text is None or not self._judge(text):
                return False
            if len(token) <= _LONGEST:
                if len(clean) >= _SIZE:
                    clean.clear()
                clean.add(token)
        return True
