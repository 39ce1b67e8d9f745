"""The hot path's JSON equals the json package's, byte for byte and value for value."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smllm.base import jsonfast

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(values)
def test_dumps_and_loads_match_json(value: Any) -> None:
    """dumps equals json.dumps(ensure_ascii=False, compact); loads inverts it like json.loads."""
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert expected == jsonfast.dumps(value)
    assert json.loads(expected) == jsonfast.loads(expected)
    assert json.loads(expected) == jsonfast.loads(expected.encode("utf-8", "surrogatepass")
                                                  .decode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("bad", ["{", "[1,]", "1 2", "", "   ", "{'a': 1}", "\ufeff{}", "nul"])
def test_errors_are_json_errors(bad: str) -> None:
    """Bad input raises json's own JSONDecodeError with its standard message."""
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(bad)
    with pytest.raises(json.JSONDecodeError) as actual:
        jsonfast.loads(bad)
    assert str(expected.value) == str(actual.value)


def test_surrounding_whitespace_and_bytes() -> None:
    """Whitespace around the value and UTF-8 bytes are accepted as json.loads accepts them."""
    assert {"x": [1, "é"]} == jsonfast.loads(b' \n{"x": [1, "\\u00e9"]}\t\r\n')
