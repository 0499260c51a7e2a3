"""Stack traces in OCR text: a table of real-looking traces per language, as a terminal, an
IDE or a browser console shows them and as OCR returns them (indentation kept or lost), and
near misses that must not count as traces."""

from __future__ import annotations

import time

import pytest

from actors.core.screen_budget import READ_CHARS
from actors.core.stack_traces import MAX_TRACE_LINES, StackTrace, find_stack_traces
from tests.support.harness import ROOT

PYTHON = """Traceback (most recent call last):
  File "/home/ana/sinain-relay/actors/ticker.py", line 212, in tick
    self._start(now)
  File "/home/ana/sinain-relay/actors/ticker.py", line 274, in _start
    raise ValueError(f"bad interval {interval}")
ValueError: bad interval -1"""

PYTHON_FLAT = """Traceback (most recent call last):
File "app.py", line 3, in <module>
main()
File "app.py", line 2, in main
return {}["user"]
KeyError: 'user'"""
"""The same shape with the indentation lost, as OCR often returns it."""

PYTHON_311 = """Traceback (most recent call last):
  File "/srv/api/views.py", line 41, in get_user
    return users[user_id].name
           ~~~~~^^^^^^^^^
IndexError: list index out of range"""

JAVASCRIPT = """TypeError: Cannot read properties of undefined (reading 'map')
    at renderList (/Users/ana/app/src/components/List.jsx:12:23)
    at Array.forEach (<anonymous>)
    at Object.<anonymous> (/Users/ana/app/src/index.js:3:1)
    at node:internal/main/run_main_module:28:49"""

JAVASCRIPT_BROWSER = """Uncaught ReferenceError: fetchUser is not defined
    at HTMLButtonElement.onclick (http://localhost:5173/settings:1:1)
    at async loadPage (http://localhost:5173/src/main.ts:40:9)"""

JAVASCRIPT_NODE_ERR = """Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'express' imported from /srv/app/server.mjs
    at packageResolve (node:internal/modules/esm/resolve:854:9)
    at moduleResolve (node:internal/modules/esm/resolve:927:20)"""  # noqa: E501

JAVA = """Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null
	at com.example.billing.InvoiceService.total(InvoiceService.java:42)
	at com.example.billing.Main.main(Main.java:11)"""  # noqa: E501

JAVA_CAUSED_BY = """org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'dataSource'
	at org.springframework.beans.factory.support.AbstractAutowireCapableBeanFactory.initializeBean(AbstractAutowireCapableBeanFactory.java:1804)
	at org.springframework.boot.SpringApplication.run(SpringApplication.java:1306)
	... 12 more
Caused by: java.net.ConnectException: Connection refused
	at java.base/sun.nio.ch.Net.connect0(Native Method)
	at java.base/sun.nio.ch.Net.connect(Net.java:579)
	... 20 more"""  # noqa: E501

KOTLIN = """java.lang.IllegalStateException: Fragment not attached to a context.
    at androidx.fragment.app.Fragment.requireContext(Fragment.kt:972)
    at com.example.notes.NotesFragment.onViewCreated$lambda$0(NotesFragment.kt:58)"""

GO = """panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.parse({0xc000012345, 0x3, 0x3})
	/home/ana/go/src/relay/main.go:27 +0x1d
main.main()
	/home/ana/go/src/relay/main.go:12 +0x45
exit status 2"""

GO_FLAT = """panic: assignment to entry in nil map
goroutine 7 [running]:
github.com/ana/relay/store.(*Cache).Put(...)
/home/ana/relay/store/cache.go:88
created by main.main in goroutine 1
/home/ana/relay/main.go:19 +0x2b"""


@pytest.mark.parametrize(
    ("text", "language", "last_line"),
    [
        (PYTHON, "python", "ValueError: bad interval -1"),
        (PYTHON_FLAT, "python", "KeyError: 'user'"),
        (PYTHON_311, "python", "IndexError: list index out of range"),
        (JAVASCRIPT, "javascript", "    at node:internal/main/run_main_module:28:49"),
        (JAVASCRIPT_BROWSER, "javascript", "    at async loadPage (http://localhost:5173/src/main.ts:40:9)"),
        (JAVASCRIPT_NODE_ERR, "javascript", "    at moduleResolve (node:internal/modules/esm/resolve:927:20)"),  # noqa: E501
        (JAVA, "java", "\tat com.example.billing.Main.main(Main.java:11)"),
        (JAVA_CAUSED_BY, "java", "\t... 20 more"),
        (KOTLIN, "java", "    at com.example.notes.NotesFragment.onViewCreated$lambda$0(NotesFragment.kt:58)"),  # noqa: E501
        (GO, "go", "\t/home/ana/go/src/relay/main.go:12 +0x45"),
        (GO_FLAT, "go", "/home/ana/relay/main.go:19 +0x2b"),
    ],
)  # fmt: skip
def test_a_trace_is_found_whole_amid_other_text(text: str, language: str, last_line: str) -> None:
    ocr = f"$ make test\nrunning 12 checks\n{text}\n\nTerminal — zsh — 80x24\n$ "

    (found,) = find_stack_traces(ocr)

    assert found.language == language
    lines = found.text.split("\n")
    assert lines[0] == text.split("\n", maxsplit=1)[0]
    assert lines[-1] == last_line
    assert found.text in text


@pytest.mark.parametrize(
    "text",
    [
        # Python: the words of a traceback without its frames, or code that raises
        "Traceback (most recent call last): is how Python starts an error report.",
        "Traceback (most recent call last):\nValueError: bad interval -1",
        'raise ValueError("bad interval")\nexcept ValueError as exc:\n    log(exc)',
        'File "notes.txt", line 3 is where the list starts',
        # JavaScript: an error line without frames, prose with "at"
        "Error: the build failed, see the log above",
        "TypeError: x is undefined\nWe should catch it at the boundary (as agreed).",
        "Error: retry later\n    at 10:32:15",
        "Error: we could not meet\n    at home (tomorrow)",
        # Java: a class name in prose, a frame-like line without an exception before it
        "We saw java.lang.NullPointerException in production yesterday.",
        "Lunch\n\tat com.example.Main.main(Main.java:11)",
        "com.example.Config: loaded 12 keys\n\tat the start of the day",
        # Go: the word panic in prose, a goroutine count
        "panic: the demo is tomorrow and nothing works",
        "panic: runtime error\nthe goroutine leak is fixed",
        "goroutine 1 [running]:\nmain.main()",
        # Ordinary screens
        "def classify(last_ms, now_ms):\n    return 'idle' if now_ms > last_ms else 'active'",
        "FAILED tests/test_idle.py::test_paused_video_is_not_idle - AssertionError",
        "",
    ],
)  # fmt: skip
def test_near_misses_are_not_traces(text: str) -> None:
    assert find_stack_traces(text) == ()


def test_traces_come_in_order_each_once_and_at_most_the_limit() -> None:
    ocr = "\n".join([JAVA, "--", PYTHON, "--", JAVA, "--", GO, "--", JAVASCRIPT])

    found = find_stack_traces(ocr, limit=3)

    assert [t.language for t in found] == ["java", "python", "go"]
    assert len({t.text for t in found}) == 3


def test_a_long_trace_keeps_its_head_and_its_end() -> None:
    frames = "\n".join(
        f'  File "/srv/app/layer{n}.py", line {n}, in call{n}\n    return call{n + 1}()'
        for n in range(40)
    )
    text = f"Traceback (most recent call last):\n{frames}\nRecursionError: too deep"

    (found,) = find_stack_traces(text)

    lines = found.text.split("\n")
    assert len(lines) <= MAX_TRACE_LINES
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-1] == "RecursionError: too deep"
    assert lines[1].strip() == "…"


def test_a_trace_that_ocr_cut_off_before_its_exception_line_still_counts() -> None:
    text = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()'

    assert find_stack_traces(text) == (StackTrace(language="python", text=text),)
    after = find_stack_traces(f"{text}\n$ git status\nOn branch main")
    assert after == (StackTrace(language="python", text=text),)  # the frame and its line


def test_a_huge_ocr_without_traces_is_scanned_quickly() -> None:
    text = ("at the edge (of the map) Error: none\n" * 20_000) + "Traceback (most recent call"
    started = time.perf_counter()
    assert find_stack_traces(text) == ()
    assert time.perf_counter() - started < 1.0


def test_a_trace_under_a_minified_bundles_source_line_is_found() -> None:
    # What Node.js printed for an error thrown in npm's minified tar bundle: the file and line,
    # the whole 66 KB source line, a caret line, then the trace.
    text = (ROOT / "tests" / "data" / "minified_trace.txt").read_text(encoding="utf-8")
    assert max(len(line) for line in text.split("\n")) > 60_000

    (found,) = find_stack_traces(text)

    assert found.language == "javascript"
    assert found.text.startswith("TypeError: no paths specified to add to archive\n    at ")
    assert "index.min.js:3:39323" in found.text


def test_only_the_head_of_a_huge_ocr_is_looked_at() -> None:
    head = "x" * 20 + "\n"
    far = "Error: late\n    at f (a.js:1:2)\n"
    text = head * (READ_CHARS // len(head) + 1) + far

    assert find_stack_traces(text) == ()
    assert find_stack_traces(head * 10 + far) != ()
