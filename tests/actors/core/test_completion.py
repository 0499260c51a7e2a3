"""Reading the chat completion and the ``{hud, digest}`` inside it."""

from __future__ import annotations

import orjson
import pytest

from actors.agent.core.completion import (
    HUD_FALLBACK_CHARS,
    Analysis,
    Completion,
    parse_analysis,
    parse_chat_completion,
)
from actors.core.errors import LLMBadResponse, LLMError
from actors.core.shapes import NO_OUTPUT


def body(content: object = "hi", usage: object = None, **extra: object) -> bytes:
    data: dict[str, object] = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    if usage is not None:
        data["usage"] = usage
    data.update(extra)
    return orjson.dumps(data)


# --- parse_chat_completion ---------------------------------------------------------------------


def test_completion_returns_stripped_content_and_usage():
    result = parse_chat_completion(
        body('  \n{"hud": "x"}\n ', usage={"prompt_tokens": 350, "completion_tokens": 90})
    )
    assert result == Completion(content='{"hud": "x"}', tokens_in=350, tokens_out=90)


def test_completion_uses_the_first_choice():
    data = {
        "choices": [{"message": {"content": "first"}}, {"message": {"content": "second"}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2},
    }
    assert parse_chat_completion(orjson.dumps(data)).content == "first"


def test_completion_without_usage_counts_zero_tokens():
    result = parse_chat_completion(body("text"))
    assert (result.tokens_in, result.tokens_out) == (0, 0)


@pytest.mark.parametrize(
    "usage",
    [
        "lots",
        [350, 90],
        {"prompt_tokens": "350", "completion_tokens": "90"},
        {"prompt_tokens": None, "completion_tokens": None},
        {"prompt_tokens": -5, "completion_tokens": -1},
        {},
    ],
    ids=["string", "list", "string-counts", "null-counts", "negative-counts", "empty-object"],
)
def test_completion_with_invalid_usage_counts_zero_tokens(usage):
    result = parse_chat_completion(body("text", usage=usage))
    assert (result.tokens_in, result.tokens_out) == (0, 0)


def test_completion_does_not_count_booleans_as_tokens():
    result = parse_chat_completion(
        body("text", usage={"prompt_tokens": True, "completion_tokens": False})
    )
    assert (result.tokens_in, result.tokens_out) == (0, 0)


def test_completion_counts_each_usage_field_independently():
    result = parse_chat_completion(
        body("text", usage={"prompt_tokens": 12, "completion_tokens": "x"})
    )
    assert (result.tokens_in, result.tokens_out) == (12, 0)


def test_completion_body_not_json_is_bad_response():
    with pytest.raises(LLMBadResponse, match="not JSON") as info:
        parse_chat_completion(b"<html>502 Bad Gateway</html>")
    assert "502 Bad Gateway" in str(info.value)


def test_completion_bad_response_is_an_llm_error():
    with pytest.raises(LLMError):
        parse_chat_completion(b"")


def test_completion_invalid_utf8_is_bad_response():
    with pytest.raises(LLMBadResponse, match="not JSON"):
        parse_chat_completion(b'{"choices": "\xff\xfe"}')


@pytest.mark.parametrize("raw", [b"[]", b'"text"', b"42", b"null"])
def test_completion_body_not_an_object_is_bad_response(raw):
    with pytest.raises(LLMBadResponse, match="not a JSON object"):
        parse_chat_completion(raw)


@pytest.mark.parametrize(
    "data",
    [{}, {"choices": []}, {"choices": None}, {"choices": "x"}, {"choices": ["not an object"]}],
    ids=["missing", "empty", "null", "string", "non-object-choice"],
)
def test_completion_without_choices_is_bad_response(data):
    with pytest.raises(LLMBadResponse, match="no choices"):
        parse_chat_completion(orjson.dumps(data))


def test_completion_error_object_is_mentioned_in_the_message():
    data = {"error": {"message": "Rate limit exceeded: free-models-per-day", "code": 429}}
    with pytest.raises(LLMBadResponse) as info:
        parse_chat_completion(orjson.dumps(data))
    assert "no choices" in str(info.value)
    assert "Rate limit exceeded: free-models-per-day" in str(info.value)


def test_completion_error_detail_is_bounded():
    data = {"error": {"message": "e" * 5_000}}
    with pytest.raises(LLMBadResponse) as info:
        parse_chat_completion(orjson.dumps(data))
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("content", [None, "", "   \n\t", 42, ["a"], {"hud": "x"}])
def test_completion_without_text_content_is_bad_response(content):
    with pytest.raises(LLMBadResponse, match="no text content"):
        parse_chat_completion(body(content))


@pytest.mark.parametrize(
    "choice", [{}, {"message": None}, {"message": "text"}], ids=["no-message", "null", "string"]
)
def test_completion_choice_without_message_object_is_bad_response(choice):
    with pytest.raises(LLMBadResponse, match="no text content"):
        parse_chat_completion(orjson.dumps({"choices": [choice]}))


# --- parse_analysis ----------------------------------------------------------------------------


def test_analysis_reads_plain_json():
    assert parse_analysis(
        '{"hud": "Editing main.py", "digest": "User edits main.py."}'
    ) == Analysis(hud="Editing main.py", digest="User edits main.py.", parsed_ok=True)


def test_analysis_strips_hud_and_digest():
    result = parse_analysis('{"hud": "  Reading docs \\n", "digest": "\\tDocs open. "}')
    assert (result.hud, result.digest) == ("Reading docs", "Docs open.")


def test_analysis_reads_json_in_json_fence():
    content = '```json\n{"hud": "Debugging", "digest": "A stack trace is visible."}\n```'
    assert parse_analysis(content) == Analysis(
        hud="Debugging", digest="A stack trace is visible.", parsed_ok=True
    )


def test_analysis_reads_json_in_bare_fence():
    content = '```\n{"hud": "Chatting", "digest": "Telegram is open."}\n```'
    assert parse_analysis(content) == Analysis(
        hud="Chatting", digest="Telegram is open.", parsed_ok=True
    )


def test_analysis_reads_json_in_fence_on_one_line():
    result = parse_analysis('```json {"hud": "h", "digest": "d"}```')
    assert result == Analysis(hud="h", digest="d", parsed_ok=True)


def test_analysis_reads_object_embedded_in_prose():
    content = (
        'Sure! Here is the JSON:\n{"hud": "Reviewing PR", "digest": "GitHub PR #12."}\n'
        "Hope it helps."
    )
    assert parse_analysis(content) == Analysis(
        hud="Reviewing PR", digest="GitHub PR #12.", parsed_ok=True
    )


def test_analysis_reads_fenced_object_after_prose():
    content = 'Here you go:\n```json\n{"hud": "Reading mail", "digest": "Inbox."}\n```'
    assert parse_analysis(content) == Analysis(hud="Reading mail", digest="Inbox.", parsed_ok=True)


def test_analysis_embedded_object_without_hud_falls_back_to_raw():
    content = 'The answer is {"digest": "only a digest"} as requested.'
    assert parse_analysis(content) == Analysis(hud=content, digest=content, parsed_ok=False)


def test_analysis_embedded_object_with_empty_hud_falls_back_to_raw():
    content = 'Result: {"hud": "  ", "digest": "d"}'
    assert parse_analysis(content) == Analysis(hud=content, digest=content, parsed_ok=False)


@pytest.mark.parametrize("content", ['["hud", "digest"]', "42", "3.5", "null", '"a string"'])
def test_analysis_json_that_is_not_an_object_falls_back_to_raw(content):
    assert parse_analysis(content) == Analysis(hud=content, digest=content, parsed_ok=False)


def test_analysis_plain_text_uses_first_80_chars_as_hud_and_all_as_digest():
    content = "The user is editing a Python file in VS Code and looking at a failing test. " * 3
    result = parse_analysis(content)
    assert HUD_FALLBACK_CHARS == 80
    assert result.hud == content.strip()[:80]
    assert len(result.hud) == 80
    assert result.digest == content.strip()
    assert result.parsed_ok is False


def test_analysis_short_plain_text_is_both_hud_and_digest():
    assert parse_analysis("  Idle  ") == Analysis(hud="Idle", digest="Idle", parsed_ok=False)


def test_analysis_fallback_hud_cuts_by_characters_not_bytes():
    content = "Привет 👋 " * 20
    result = parse_analysis(content)
    assert result.hud == content.strip()[:80]
    assert result.digest == content.strip()


def test_analysis_of_empty_text_is_no_output():
    assert parse_analysis("   ") == Analysis(hud=NO_OUTPUT, digest=NO_OUTPUT, parsed_ok=False)


def test_analysis_broken_json_falls_back_to_raw():
    content = '{"hud": "Editing", "digest": "unterminated'
    assert parse_analysis(content) == Analysis(hud=content, digest=content, parsed_ok=False)


def test_no_output_marker_is_em_dash():
    assert NO_OUTPUT == "—"


@pytest.mark.parametrize(
    ("content", "expected_hud", "expected_digest"),
    [
        ('{"digest": "d"}', "—", "d"),
        ('{"hud": "h"}', "h", "—"),
        ('{"hud": "", "digest": ""}', "—", "—"),
        ('{"hud": "   ", "digest": "\\n"}', "—", "—"),
        ('{"hud": null, "digest": null}', "—", "—"),
        ('{"hud": 5, "digest": ["a"]}', "—", "—"),
        ('{"hud": {"x": 1}, "digest": true}', "—", "—"),
        ("{}", "—", "—"),
    ],
    ids=[
        "no-hud",
        "no-digest",
        "empty",
        "blank",
        "null",
        "number-list",
        "object-bool",
        "empty-obj",
    ],
)
def test_analysis_missing_or_invalid_field_is_no_output(content, expected_hud, expected_digest):
    result = parse_analysis(content)
    assert (result.hud, result.digest) == (expected_hud, expected_digest)
    assert result.parsed_ok is True


def test_analysis_keeps_multibyte_text():
    result = parse_analysis('{"hud": "Привет 👋", "digest": "日本語のテキスト"}')
    assert (result.hud, result.digest) == ("Привет 👋", "日本語のテキスト")


def test_analysis_ignores_extra_fields():
    result = parse_analysis('{"hud": "h", "digest": "d", "confidence": 0.9}')
    assert result == Analysis(hud="h", digest="d", parsed_ok=True)


def test_analysis_reads_strings_with_raw_line_breaks():
    # llama-cpp-python's JSON grammar lets a model put a line break or a tab in a string as it
    # is, which strict JSON forbids; the object is still the answer.
    content = '{ "hud": "Port 8080 is taken\n\tby the web container", "digest": "Docker:\nfails." }'
    analysis = parse_analysis(content)
    assert analysis.parsed_ok is True
    assert analysis.hud == "Port 8080 is taken\n\tby the web container"
    assert analysis.digest == "Docker:\nfails."


def test_completion_names_the_model_that_answered():
    assert parse_chat_completion(body("text", model="openai/gpt-4o-mini")).model == (
        "openai/gpt-4o-mini"
    )


@pytest.mark.parametrize(
    "model",
    [None, "", "   ", 42, ["a"], "x" * 201, "line\nbreak", "tab\there", "bell\x07"],
    ids=["null", "empty", "blank", "number", "list", "too-long", "newline", "tab", "control"],
)
def test_completion_without_a_readable_model_names_none(model: object):
    assert parse_chat_completion(body("text", model=model)).model is None
