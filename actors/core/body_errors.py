"""A body that does not decode into its struct, said in one line that names the field.

msgspec says ``Expected `str`, got `int` - at `$.text```; a client reads ``text must be a
string, not a whole number``. The field is named as the client wrote it (``meta.app``,
``facts[0]``); a field of fixed values lists them (``channel must be one of stream, agent``).
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from msgspec import inspect

from actors.core.errors import BadRequest

_WANTS = {
    "str": "a string",
    "int": "a whole number",
    "float": "a number",
    "bool": "true or false",
    "object": "an object",
    "array": "an array",
    "array of strings": "an array of strings",
}
_GOT = {**_WANTS, "float": "a number with a fraction", "null": "null"}
_AT = re.compile(r"^(?P<what>.*?)(?: - at `(?P<path>[^`]*)`(?: in `(?P<owner>[^`]*)`)?)?$", re.S)
_EXPECTED = re.compile(r"^Expected `(?P<want>[^`]*)`(?P<rest>.*?)(?:, got `(?P<got>[^`]*)`)?$")
_BOUND = re.compile(r"^ (?P<op>>=|<=|>|<) (?P<n>\S+)$")
_LENGTH = re.compile(r"^ of length (?P<op>>=|<=) (?P<n>\d+)$")
_FIELD = re.compile(r"^Object (?P<how>missing required|contains unknown) field `(?P<name>[^`]*)`$")
_NUMBERS = {inspect.IntType, inspect.FloatType}
_AS_NUMBER = re.compile(r"^Expected `int`")
_BOUND_WORDS = {">=": "at least", "<=": "at most", ">": "above", "<": "below"}
_UNITS = {"str": "characters", "object": "fields", "array": "items"}

_PATTERNS = {r"'\\S'": "that is not blank"}


def bad_body(exc: msgspec.ValidationError, kind: type[Any]) -> BadRequest:
    """The :class:`BadRequest` for a body that is not a ``kind``."""
    match = _AT.match(str(exc))
    assert match is not None  # the pattern matches any text
    what, path, owner = match["what"], match["path"], match["owner"]
    if owner is not None:  # a key of an object: `key` in `$.extra`
        return BadRequest(f"the field names of {_name(owner)} {_must(what, None)}")
    field = _FIELD.match(what)
    if field and field["how"] == "missing required":
        return BadRequest(f"{_child(path, field['name'])} is required")
    if field:
        accepted = ", ".join(sorted(_fields(kind)))
        return BadRequest(f"unknown field {_child(path, field['name'])}; accepted: {accepted}")
    node, required = _field_type(kind, path)
    if required and what.endswith(", got `null`"):  # null counts as absent
        return BadRequest(f"{_name(path)} is required")
    choices = [str(v) for v in node.values] if isinstance(node, inspect.LiteralType) else None
    if isinstance(node, inspect.UnionType) and {type(_unwrap(t)) for t in node.types} >= _NUMBERS:
        what = _AS_NUMBER.sub("Expected `float`", what)  # msgspec names the branch it tried last
    if what.startswith("Invalid enum value"):
        sent = what.removeprefix("Invalid enum value").strip()
        return BadRequest(f"{_name(path)} must be one of {', '.join(choices or ())}, not {sent}")
    if what == "Number out of range":
        return BadRequest(f"{_name(path)} is out of range")
    if not what.startswith("Expected `"):  # a check of the struct's own, in words already
        return BadRequest(what)
    if path is None and what.startswith("Expected `object`"):
        got = _EXPECTED.match(what)
        return BadRequest(f"body must be a JSON object, not {_GOT.get(got['got'] if got else '')}")
    if isinstance(node, inspect.ListType) and isinstance(_unwrap(node.item_type), inspect.StrType):
        what = what.replace("Expected `array", "Expected `array of strings", 1)
    return BadRequest(f"{_name(path)} {_must(what, choices)}")


def _must(what: str, choices: list[str] | None) -> str:
    """``must be a string of at most 32 characters, not a whole number``, from msgspec's
    ``Expected `str` of length <= 32`` (and the like)."""
    match = _EXPECTED.match(what)
    if match is None:
        return what
    types = [t for t in match["want"].split(" | ") if t != "null"]
    if choices:
        want = f"one of {', '.join(choices)}"
    else:
        if "int" in types and "float" in types:
            types.remove("int")
        want = " or ".join(_WANTS.get(t, t) for t in types)
    rest = match["rest"]
    if bound := _BOUND.match(rest):
        rest = f" {_BOUND_WORDS[bound['op']]} {bound['n'].removesuffix('.0')}"
    elif length := _LENGTH.match(rest):
        unit = _UNITS.get(types[0] if types else "", "items")
        unit = unit.removesuffix("s") if length["n"] == "1" else unit
        rest = f" of {_BOUND_WORDS[length['op']]} {length['n']} {unit}"
    elif rest == " that's a multiple of 1.0":
        want, rest = "a whole number", ""
    elif rest.startswith(" matching regex "):
        pattern = rest.removeprefix(" matching regex ")
        rest = " " + _PATTERNS.get(pattern, f"matching {pattern}")
    got = f", not {_GOT.get(match['got'], match['got'])}" if match["got"] else ""
    return f"must be {want}{rest}{got}"


def _name(path: str | None) -> str:
    """``meta.app`` from ``$.meta.app``; ``body`` for the body itself; ``each field of extra``
    for any value of the object ``extra`` (``$.extra[...]``)."""
    if not path or path == "$":
        return "body"
    if path.endswith("[...]"):
        return f"each field of {_name(path.removesuffix('[...]'))}"
    return path.removeprefix("$.").removeprefix("$")


def _child(path: str | None, name: str) -> str:
    return name if not path or path == "$" else f"{_name(path)}.{name}"


def _fields(kind: type[Any]) -> list[str]:
    info = inspect.type_info(kind)
    return [f.encode_name for f in info.fields] if isinstance(info, inspect.StructType) else []


def _field_type(kind: type[Any], path: str | None) -> tuple[inspect.Type | None, bool]:
    """The type of the field at ``path`` in ``kind``, without its constraints and ``null``,
    and whether the field is required."""
    node: inspect.Type | None = inspect.type_info(kind)
    required = False
    for step in re.findall(r"\.(\w+)|\[[^\]]*\]", (path or "$").removeprefix("$")):
        node, required = _step(node, step)
    return _unwrap(node), required


def _step(node: inspect.Type | None, name: str) -> tuple[inspect.Type | None, bool]:
    """The type of field ``name`` of ``node`` (an item or value when ``name`` is empty), and
    whether it is a required field."""
    node = _unwrap(node)
    if isinstance(node, inspect.StructType):
        field = next((f for f in node.fields if f.encode_name == name), None)
        return (field.type, field.required) if field else (None, False)
    if isinstance(node, inspect.ListType):
        return node.item_type, False
    if isinstance(node, inspect.DictType):
        return node.value_type, False
    return None, False


def _unwrap(node: inspect.Type | None) -> inspect.Type | None:
    """``node`` without its constraints, and without ``null`` when it is optional."""
    while True:
        if isinstance(node, inspect.Metadata):
            node = node.type
        elif isinstance(node, inspect.UnionType):
            kinds = [t for t in node.types if not isinstance(t, inspect.NoneType)]
            if len(kinds) != 1:
                return node
            node = kinds[0]
        else:
            return node
