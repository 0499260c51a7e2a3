"""The prompt corpus: windows of the shapes a user's screen really has, and the words a summary
of each must be able to use.

Each case is a short capture session in the shape Sinain's capture client and audio pipeline
post it (``POST /sense`` bodies with ``meta`` and ``observation``, ``POST /feed``
transcripts), replayed into a window the way the relay builds one. The shapes: code in an
editor (line numbers, gutter, tabs, breadcrumbs, status bar), terminals (test runs,
tracebacks, build and container errors), browsers (search results, documentation, chrome and
menus repeated on every frame), chat (Slack and Telegram, with names, times and a question)
and mixed languages (Russian, Japanese and German beside English code), and busy windows:
while the user works the capture client sends an event every few seconds, so the window is
often full (two windows of the shipped demo session among them). Several cases put
their error or question past the 200th character of an OCR text. Some follow the facts of
Sinain's own evaluation scenarios (a JSON decode traceback, a failed npm build, a Rust panic,
a merge conflict, a container that will not start), in texts of their own.

``expected`` lists the words a summary must be able to use (the error, the failing test, the
question, the file, the person); each occurs, case aside, in the case's input.
:func:`case_window` builds the window a tick would read 3 s after the last event.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import takewhile
from typing import Any

from actors.core.bodies import FeedInput, convert, sense_input
from actors.core.prompt import PreviousDigest, build_prompt
from actors.core.records import FeedItem, SenseEvent
from actors.core.window import ContextWindow, build_context_window
from config.app_names import normalize_app_name
from transport.demo.replay import SessionEvent, load_session

T0_MS = 1_769_901_200_000
"""Server time of the first event of every case."""
MAX_AGE_MS = 120_000
"""The window's age, the relay's default."""
TICK_AFTER_MS = 3_000
"""A case's tick comes this long after its last event (the default debounce)."""
SHAPES = ("code", "terminal", "browser", "chat", "mixed")


@dataclass(frozen=True, slots=True)
class Case:
    """One window of the corpus."""

    name: str
    shape: str
    """One of :data:`SHAPES`."""
    events: tuple[SessionEvent, ...]
    expected: tuple[str, ...]
    """Words a summary must be able to use; each occurs (case aside) in the input."""
    busy: bool = False
    """A window as the user's work fills it: many events, a few seconds apart."""


def screen(at: float, app: str, title: str, ocr: str, *, kind: str = "text") -> SessionEvent:
    """A ``POST /sense`` body as the capture client sends it, ``at`` seconds into the case."""
    facts = [f"app: {app}", f"window: {title}", "ssim: 0.87"]
    if ocr:
        facts.append(f"ocr: {ocr.splitlines()[0]}")
    body: dict[str, Any] = {
        "type": kind,
        "ts": T0_MS + at * 1000,
        "ocr": ocr,
        "meta": {"ssim": 0.87, "app": app, "windowTitle": title, "screen": 0},
        "observation": {"title": f"{kind} in {app}", "subtitle": title, "facts": facts},
    }
    return SessionEvent(at, "/sense", body)


def switch(at: float, app: str, title: str) -> SessionEvent:
    """The capture client's event for an app switch: a ``context`` event without OCR."""
    return screen(at, app, title, "", kind="context")


def said(at: float, text: str) -> SessionEvent:
    """A transcript as Sinain's audio pipeline posts it."""
    return SessionEvent(at, "/feed", {"text": text, "source": "audio"})


def bridged(at: float, text: str) -> SessionEvent:
    """A transcript in the original audio bridge's format."""
    body = {"text": f"[PERIODIC] (normal)\nContext (1 entries):\n[2s ago, openrouter] {text}"}
    return SessionEvent(at, "/feed", body)


def _lines(*parts: str) -> str:
    return "\n".join(part.strip("\n") for part in parts if part)


# -- the chrome that frames every capture of an app ----------------------------------------------


def vscode(tabs: str, crumbs: str, body: str, status: str) -> str:
    """A VS Code window: tabs bar, breadcrumbs, the editor with its gutter, status bar."""
    return _lines(tabs, crumbs, body, status)


def chrome(tabs: str, url: str, page: str) -> str:
    """A Chrome window: tab strip, address bar, bookmarks bar, the page."""
    bookmarks = "Bookmarks  Gmail  GitHub  Jira  Confluence  Grafana  Sentry  All Bookmarks"
    return _lines(tabs, f"←  →  C  ⌂  {url}", bookmarks, page)


SLACK_SIDEBAR = """Acme Eng ▾
Home
DMs
Activity
Threads
Drafts & sent
Channels
# deploys
# general
# incidents
# sinain-dev
Direct messages
Anna Petrova
Kenji Watanabe
Lukas Becker
Add coworkers"""


def slack(channel: str, topic: str, messages: str) -> str:
    """A Slack window: the sidebar, the channel's header, the messages, the composer."""
    header = f"# {channel}  ☆\n{topic}\nMessages  Files  Pins  +"
    return _lines(SLACK_SIDEBAR, header, messages, f"Message #{channel}\nAa  @  😀  ➤")


def menu_bar(app: str, menus: str, clock: str) -> str:
    """macOS's menu bar as the OCR reads it at the top of a full-screen capture."""
    return f" {app}  {menus}    ᯤ  100%  {clock}"


# -- code ------------------------------------------------------------------------------------

_IDLE_TABS = "idle.py  ×    ticker.py    test_idle.py    README.md"
_IDLE_STATUS = (
    "main*  ⊗ 0  ⚠ 2    Ln {ln}, Col 18   Spaces: 4   UTF-8   LF   {{}} Python   "
    "3.11.9 ('.venv': venv)   ♫ Prettier"
)


def _code_idle() -> Case:
    first = vscode(
        _IDLE_TABS,
        "sinain-relay › actors › core › idle.py › classify",
        """
12  class MediaState(Enum):
13      NONE = 0
14      PLAYING = 1
15      PAUSED = 2
16
17  IDLE_AFTER_MS = 90_000
18
19  def classify(last_input_ms: int, now_ms: int, media: MediaState) -> str:
20      if now_ms - last_input_ms > IDLE_AFTER_MS:
21          return "idle"
22      return "active"
""",
        _IDLE_STATUS.format(ln=19),
    )
    second = vscode(
        _IDLE_TABS,
        "sinain-relay › actors › core › idle.py › classify",
        """
19  def classify(last_input_ms: int, now_ms: int, media: MediaState) -> str:
20      if media is MediaState.PLAYING:
21          return "watching"
22      if now_ms - last_input_ms > IDLE_AFTER_MS:
23          return "idle"
24      return "active"
25
26
27  def describe(state: str) -> str:
28      return {"idle": "Idle", "watching": "Watching a video"}.get(state, "Active")
""",
        _IDLE_STATUS.format(ln=21),
    )
    return Case(
        "code-idle-classify",
        "code",
        (
            switch(0, "Code", "idle.py — sinain-relay"),
            screen(0.4, "Code", "idle.py — sinain-relay", first),
            bridged(1, "so what we need to fix is the idle detection"),
            screen(11, "Code", "idle.py — sinain-relay", second),
            bridged(14, "when a video is paused it should still count as watching"),
        ),
        ("idle.py", "classify", "MediaState", "PLAYING", "watching"),
    )


def _code_ts_problems() -> Case:
    tabs = "analyzer.ts  ●    context-window.ts    types.ts    package.json"
    crumbs = "sinain-core › src › agent › analyzer.ts › analyzeContext"
    status = (
        "feat/fallbacks*  ⊗ 1  ⚠ 0    Ln 88, Col 12   Spaces: 2   UTF-8   LF   TypeScript   5.6.3"
    )
    body = """
80  export async function analyzeContext(
81    ctx: ContextWindow,
82    config: AgentConfig,
83  ): Promise<AgentResult> {
84    const models = [config.model, ...config.fallbackModels];
85    for (const model of models) {
86      const res = await callModel(model, ctx, config);
87      if (res.status === 429) {
88        await sleep(retryAfterMs(res) ?? 500);
89        continue;
90      }
91      return parseResult(res);
92    }
93    throw new Error("all models failed");
94  }
PROBLEMS  1    OUTPUT    DEBUG CONSOLE    TERMINAL    PORTS
⊗ Cannot find name 'retryAfterMs'. Did you mean 'retryAfter'? ts(2304) [Ln 88, Col 17]
"""
    return Case(
        "code-ts-problems-panel",
        "code",
        (
            screen(0, "Code", "analyzer.ts — sinain-core", vscode(tabs, crumbs, body, status)),
            said(4, "why does it not find retry after ms, I exported it from the utils"),
        ),
        ("analyzer.ts", "retryAfterMs", "2304", "analyzeContext"),
    )


def _code_idea_npe() -> Case:
    editor = """
OrderService.java ×   OrderController.java   Order.java   application.yml
shop-backend  src  main  java  com  example  orders  OrderService
51      public BigDecimal total(Long orderId) {
52          Order order = repository.findById(orderId).orElse(null);
53          BigDecimal sum = BigDecimal.ZERO;
54          for (OrderLine line : order.getLines()) {
55              sum = sum.add(line.getPrice().multiply(line.getQuantity()));
56          }
57          return sum.add(order.getShipping().getCost());
58      }
"""
    run = """
Run:   OrderServiceApplication ×
2026-02-01T10:42:17.311  INFO 48211 --- [main] c.e.orders.OrderServiceApplication : Started in 3.1 seconds
2026-02-01T10:42:19.027 ERROR 48211 --- [nio-8080-exec-1] o.a.c.c.C.[.[.[/].[dispatcherServlet] : Servlet.service() threw exception
java.lang.NullPointerException: Cannot invoke "Shipping.getCost()" because the return value of "Order.getShipping()" is null
	at com.example.orders.OrderService.total(OrderService.java:57)
	at com.example.orders.OrderController.total(OrderController.java:31)
"""
    return Case(
        "code-idea-null-pointer",
        "code",
        (
            screen(0, "IntelliJ IDEA", "shop-backend – OrderService.java", editor),
            screen(6, "IntelliJ IDEA", "shop-backend – OrderService.java", _lines(editor, run)),
        ),
        ("NullPointerException", "OrderService.java", "getShipping", "total"),
    )


def _code_react_question() -> Case:
    tabs = "App.tsx  ●    api.ts    index.css"
    crumbs = "dashboard-web › src › App.tsx › App › useEffect() callback"
    status = "main  ⊗ 0  ⚠ 1    Ln 14, Col 5   Spaces: 2   UTF-8   LF   TypeScript JSX"
    body = """
 1  import { useEffect, useState } from "react";
 2  import { fetchData } from "./api";
 3
 4  export function App() {
 5    const [data, setData] = useState<Row[] | null>(null);
 6
 7    useEffect(() => {
 8      fetchData().then(setData);
 9    }, []);
10
11    if (!data) return <Spinner />;
12    return <Table rows={data} />;
13  }
"""
    return Case(
        "code-react-useeffect-question",
        "code",
        (
            screen(0, "Code", "App.tsx — dashboard-web", vscode(tabs, crumbs, body, status)),
            said(5, "how do I add error handling to this useEffect hook?"),
        ),
        ("useEffect", "App.tsx", "fetchData", "error"),
    )


def _code_diff_review() -> Case:
    tabs = "handlers.js (Working Tree)  ×    user-service.js    order-service.js"
    crumbs = "api-server › src › handlers.js"
    status = "refactor/services*  ↑2  ⊗ 0  ⚠ 0    Ln 4, Col 1   Spaces: 2   UTF-8   LF   JavaScript"
    diff = """
SOURCE CONTROL    Message (⌘Enter to commit on 'refactor/services')    ✓ Commit
Changes  3    handlers.js M    user-service.js U    order-service.js U
 1 - async function handleRequest(req, res) {
 2 -   const user = await db.query('SELECT * FROM users WHERE id = $1', [req.params.id]);
 3 -   const orders = await db.query('SELECT * FROM orders WHERE user_id = $1', [user.id]);
 1 + async function handleRequest(req, res) {
 2 +   const user = await userService.findById(req.params.id);
 3 +   const orders = await orderService.findByUserId(user.id);
 4 +   res.json({ user, orders });
"""
    return Case(
        "code-diff-refactor",
        "code",
        (
            screen(
                0,
                "Code",
                "handlers.js (Working Tree) — api-server",
                vscode(tabs, crumbs, diff, status),
            ),
            said(7, "okay the refactor into services looks right, let me commit it"),
        ),
        ("handleRequest", "userService", "findByUserId", "refactor"),
    )


def _code_neovim() -> Case:
    status = " NORMAL  feat/nested  parser.rs                              rust  utf-8[unix]  {pos}"
    first = _lines(
        """
118     fn parse_group(&mut self) -> Result<Node, ParseError> {
119         let open = self.expect(Token::LBracket)?;
120         let mut items = Vec::new();
121         while !self.at(Token::RBracket) {
122             items.push(self.parse_expr()?);
123         }
124         let depth = self.stack[self.depth + 2];
125         Ok(Node::Group { open, items, depth })
126     }
""",
        status.format(pos="42%  124:24"),
    )
    second = _lines(
        """
124         let depth = self.stack[self.depth + 2];
125         Ok(Node::Group { open, items, depth })
126     }
127
128     fn tokenize(input: &str) -> Vec<Token> {
129         input.chars().filter_map(Token::from_char).collect()
130     }
""",
        status.format(pos="44%  128:8"),
    )
    return Case(
        "code-neovim-rust",
        "code",
        (
            screen(0, "iTerm2", "nvim src/parser.rs", first),
            screen(9, "iTerm2", "nvim src/parser.rs", second),
        ),
        ("parser.rs", "parse_group", "tokenize", "ParseError"),
    )


# -- terminals ---------------------------------------------------------------------------------


def _term_pytest() -> Case:
    run = """
(.venv) dev@mbp sinain-relay % python -m pytest tests/test_idle.py -q
============================= test session starts ==============================
platform darwin -- Python 3.11.9, pytest-8.3.4, pluggy-1.5.0
rootdir: /Users/dev/src/sinain-relay
configfile: pyproject.toml
plugins: timeout-2.3.1, hypothesis-6.151.9
collected 6 items

tests/test_idle.py ..F...                                                [100%]

=================================== FAILURES ===================================
________________________ test_paused_video_is_not_idle _________________________

    def test_paused_video_is_not_idle():
>       assert classify(0, 120_000, MediaState.PAUSED) == "watching"
E       AssertionError: assert 'idle' == 'watching'

tests/test_idle.py:31: AssertionError
=========================== short test summary info ============================
FAILED tests/test_idle.py::test_paused_video_is_not_idle - AssertionError: assert 'idle' == 'watching'
========================= 1 failed, 5 passed in 0.21s ==========================
"""
    return Case(
        "term-pytest-failed",
        "terminal",
        (
            switch(0, "Terminal", "zsh — sinain-relay — 120×40"),
            screen(2, "Terminal", "zsh — sinain-relay — 120×40", run),
            bridged(6, "okay, the paused video test fails, as expected"),
        ),
        ("FAILED", "test_paused_video_is_not_idle", "AssertionError", "test_idle.py"),
    )


def _term_traceback() -> Case:
    ocr = """
dev@mbp etl % python app.py data/2026-02-01.jsonl
loading data/2026-02-01.jsonl (14.2 MB)
Traceback (most recent call last):
  File "/Users/dev/src/etl/app.py", line 42, in main
    result = process_data(input_file)
  File "/Users/dev/src/etl/processor.py", line 18, in process_data
    return json.loads(raw)
  File "/usr/local/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)
dev@mbp etl %
"""
    return Case(
        "term-python-json-traceback",
        "terminal",
        (screen(0, "iTerm2", "python app.py — etl", ocr),),
        ("Traceback", "JSONDecodeError", "processor.py", "error"),
    )


def _term_npm_build() -> Case:
    ocr = """
dev@mbp sinain-core % npm run build

> sinain-core@1.0.0 build
> tsc -p tsconfig.json

src/agent/analyzer.ts:88:15 - error TS2304: Cannot find name 'retryAfterMs'.

88         await sleep(retryAfterMs(res) ?? 500);
                       ~~~~~~~~~~~~

Found 1 error in src/agent/analyzer.ts:88

npm ERR! code ELIFECYCLE
npm ERR! errno 2
npm ERR! sinain-core@1.0.0 build: `tsc -p tsconfig.json`
npm ERR! Exit status 2
npm ERR! Failed at the sinain-core@1.0.0 build script.
"""
    return Case(
        "term-npm-build-failed",
        "terminal",
        (
            screen(0, "Terminal", "npm run build — sinain-core", ocr),
            said(5, "the build is broken again"),
        ),
        ("TS2304", "retryAfterMs", "ELIFECYCLE", "build"),
    )


def _term_cargo_panic() -> Case:
    ocr = """
dev@mbp brackets % cargo test
   Compiling brackets v0.3.1 (/Users/dev/src/brackets)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.84s
     Running unittests src/lib.rs (target/debug/deps/brackets-4f0e2a7c1b9d3e55)

running 4 tests
test parser::tests::empty_input ... ok
test parser::tests::single_group ... ok
test parser::tests::nested_groups ... FAILED
test lexer::tests::tokens ... ok

failures:

---- parser::tests::nested_groups stdout ----
thread 'parser::tests::nested_groups' panicked at src/parser.rs:124:21:
index out of bounds: the len is 3 but the index is 5
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
error: test failed, to rerun pass `--lib`
"""
    return Case(
        "term-cargo-panic",
        "terminal",
        (
            screen(0, "iTerm2", "cargo test — brackets", ocr),
            said(4, "an index out of bounds in the parser, of course"),
        ),
        ("panicked", "nested_groups", "parser.rs", "out of bounds"),
    )


def _term_docker() -> Case:
    ocr = """
dev@mbp shop % docker compose up -d
[+] Running 4/5
 ✔ Network shop_default       Created                                      0.1s
 ✔ Container shop-redis-1     Started                                      0.6s
 ✔ Container shop-postgres-1  Started                                      0.7s
 ✔ Container shop-worker-1    Started                                      0.9s
 ⠿ Container shop-web-1       Starting                                     1.0s
Error response from daemon: driver failed programming external connectivity on endpoint shop-web-1: Bind for 0.0.0.0:8080 failed: port is already allocated
dev@mbp shop %
"""
    return Case(
        "term-docker-port-allocated",
        "terminal",
        (
            screen(0, "Terminal", "docker compose up — shop", ocr),
            said(5, "the web container keeps failing to start, what is holding port 8080?"),
        ),
        ("docker", "shop-web-1", "already allocated", "8080"),
    )


def _term_merge_conflict() -> Case:
    ocr = """
dev@mbp sinain-core % git status -sb
## feat/fallbacks...origin/feat/fallbacks [ahead 3]
dev@mbp sinain-core % git merge main
Auto-merging src/config.ts
CONFLICT (content): Merge conflict in src/config.ts
Auto-merging src/agent/analyzer.ts
Automatic merge failed; fix conflicts and then commit the result.
dev@mbp sinain-core %
"""
    return Case(
        "term-merge-conflict",
        "terminal",
        (
            screen(0, "Terminal", "zsh — sinain-core", ocr),
            said(6, "help, I'm stuck with these merge conflicts, which version do I keep?"),
        ),
        ("CONFLICT", "config.ts", "merge", "feat/fallbacks"),
    )


def _term_go_test() -> Case:
    first = """
dev@mbp gateway % go test ./...
ok  	github.com/acme/gateway/internal/auth	0.412s
ok  	github.com/acme/gateway/internal/config	0.108s
?   	github.com/acme/gateway/cmd/gateway	[no test files]
--- FAIL: TestRetryBackoff (0.00s)
    backoff_test.go:42: attempt 3: got 2s, want 4s
FAIL
FAIL	github.com/acme/gateway/internal/retry	0.217s
ok  	github.com/acme/gateway/internal/router	0.331s
FAIL
"""
    second = """
dev@mbp gateway % go test ./internal/retry -run TestRetryBackoff -v
=== RUN   TestRetryBackoff
    backoff_test.go:42: attempt 3: got 2s, want 4s
--- FAIL: TestRetryBackoff (0.00s)
FAIL
exit status 1
FAIL	github.com/acme/gateway/internal/retry	0.198s
"""
    return Case(
        "term-go-test-fail",
        "terminal",
        (
            screen(0, "iTerm2", "go test — gateway", first),
            screen(12, "iTerm2", "go test — gateway", _lines(first, second)),
        ),
        ("TestRetryBackoff", "backoff_test.go", "FAIL", "want 4s"),
    )


def _term_log_tail() -> Case:
    info = "\n".join(
        f"2026-02-01 10:42:{s:02d},{ms:03d} INFO  [http] GET /api/orders/{n} 200 {t}ms"
        for s, ms, n, t in (
            (11, 118, 4411, 12),
            (11, 509, 4412, 9),
            (12, 37, 4415, 14),
            (12, 772, 4417, 11),
            (13, 203, 4418, 10),
        )
    )
    ocr = _lines(
        "dev@mbp ~ % kubectl logs -f deploy/orders-api -n shop",
        info,
        "2026-02-01 10:42:13,880 WARN  [pool] connection pool 19/20 in use",
        "2026-02-01 10:42:14,015 ERROR [pool] psycopg.OperationalError: connection to server "
        'at "orders-db" (10.0.3.7), port 5432 failed: Connection refused',
        "2026-02-01 10:42:14,016 INFO  [http] GET /api/orders/4419 503 2ms",
    )
    return Case(
        "term-kubectl-log-error",
        "terminal",
        (screen(0, "iTerm2", "kubectl logs — shop", ocr),),
        ("OperationalError", "orders-db", "5432", "refused"),
    )


def _term_switching() -> Case:
    ocr = """
TERMINAL    PROBLEMS    OUTPUT    DEBUG CONSOLE
dev@mbp api % npm run dev
> api@2.3.0 dev
> tsx watch src/server.ts
ERROR: Connection refused to localhost:5432
Is the database running?
"""
    return Case(
        "term-app-churn-db-refused",
        "terminal",
        (
            switch(0, "Google Chrome", "localhost:3000"),
            switch(2, "Terminal", "zsh — api"),
            screen(4, "Code", "server.ts — api", ocr),
            switch(6, "Docker Desktop", "Containers"),
            said(8, "where did my postgres container go?"),
        ),
        ("Connection refused", "5432", "database", "Docker"),
    )


# -- browsers ----------------------------------------------------------------------------------


def _browser_search() -> Case:
    tabs = "G python asyncio timeout - Google Search  ×    asyncio — Python 3.12 docs    +"
    url = "google.com/search?q=python+asyncio+timeout&oq=python+asyncio+timeout"
    nav = "Google  python asyncio timeout  ×  🎤  🔍\nAll  Images  Videos  News  Shopping  More  Tools"
    page_one = _lines(
        nav,
        """
About 1,230,000 results (0.31 seconds)
docs.python.org › library › asyncio-task
Coroutines and Tasks — Python 3.12.2 documentation
asyncio.timeout(delay) returns an asynchronous context manager that can be used to limit
the amount of time spent waiting on something.
stackoverflow.com › questions › 29384512
How to set a timeout for an asyncio task? - Stack Overflow
Use asyncio.wait_for(coro, timeout) and catch TimeoutError; since 3.11 prefer asyncio.timeout.
""",
    )
    page_two = _lines(
        nav,
        """
superfastpython.com › asyncio-timeout
Asyncio Timeout Best Practices - Super Fast Python
Learn how to cancel slow coroutines with wait_for() and the timeout() context manager.
People also ask
What is the difference between wait_for and timeout in asyncio?
Does asyncio.timeout cancel the task?
realpython.com › async-io-python
Async IO in Python: A Complete Walkthrough – Real Python
""",
    )
    return Case(
        "browser-google-search",
        "browser",
        (
            switch(0, "Google Chrome", "python asyncio timeout - Google Search"),
            screen(
                1,
                "Google Chrome",
                "python asyncio timeout - Google Search",
                chrome(tabs, url, page_one),
            ),
            screen(
                9,
                "Google Chrome",
                "python asyncio timeout - Google Search",
                chrome(tabs, url, page_two),
            ),
            said(12, "so wait_for or the new timeout context manager"),
        ),
        ("asyncio.timeout", "wait_for", "TimeoutError", "cancel the task"),
    )


_MDN_SIDEBAR = """
MDN Web Docs   References   Guides   Plus   Curriculum   Blog   Tools    Log in
References › Web APIs › HTMLMediaElement › paused
In this article
Value
Examples
Specifications
Browser compatibility
See also
"""


def _browser_mdn() -> Case:
    tabs = "HTMLMediaElement: paused property - Web APIs | MDN  ×    +"
    url = "developer.mozilla.org/en-US/docs/Web/API/HTMLMediaElement/paused"
    first = _lines(
        _MDN_SIDEBAR,
        """
HTMLMediaElement: paused property
Baseline  Widely available
The read-only HTMLMediaElement.paused property tells whether the media element is paused.
Value
A boolean value. true is paused and false is not paused.
""",
    )
    second = _lines(
        _MDN_SIDEBAR,
        """
Examples
if (obj.paused) {
  obj.play();
}
Specifications
HTML Standard # dom-media-paused
Browser compatibility
See also: HTMLMediaElement.play(), HTMLMediaElement.pause(), the playing and pause events
""",
    )
    return Case(
        "browser-mdn-docs",
        "browser",
        (
            screen(
                0,
                "Firefox",
                "HTMLMediaElement: paused property - Web APIs | MDN",
                chrome(tabs, url, first),
            ),
            screen(
                8,
                "Firefox",
                "HTMLMediaElement: paused property - Web APIs | MDN",
                chrome(tabs, url, second),
            ),
            bridged(10, "so paused is true as soon as pause is called, fine"),
        ),
        ("HTMLMediaElement", "paused", "read-only", "pause events"),
    )


_GITHUB_HEADER = """
acme / sinain-relay   Public    Watch 12   Fork 3   Star 41
<> Code   ⊙ Issues 17   ⇅ Pull requests 4   ▶ Actions   ⊞ Projects   ⓘ Security   ⌁ Insights
"""


def _browser_github_issue() -> Case:
    tabs = "Digest goes stale after LLM outage · Issue #212 · acme/sinain-relay  ×    +"
    url = "github.com/acme/sinain-relay/issues/212"
    first = _lines(
        _GITHUB_HEADER,
        """
Digest goes stale after LLM outage #212
⊙ Open   kenji-w opened this issue 2 hours ago · 3 comments
kenji-w commented 2 hours ago
After OpenRouter returned 503 for ten minutes the digest never updated again, even once the
provider was back. /health shows agent.state=open and consecutiveFailures=3.
""",
    )
    second = _lines(
        _GITHUB_HEADER,
        """
lukas-b commented 40 minutes ago
I can reproduce it with the fake LLM in mode fail-then-ok. The breaker reopens after the probe.
anna-p commented 5 minutes ago
Does the probe tick count as a failure when it times out, or only on a 5xx?
Write  Preview
Add a comment
Comment
""",
    )
    return Case(
        "browser-github-issue-question",
        "browser",
        (
            screen(
                0,
                "Google Chrome",
                "Digest goes stale after LLM outage · Issue #212",
                chrome(tabs, url, first),
            ),
            screen(
                10,
                "Google Chrome",
                "Digest goes stale after LLM outage · Issue #212",
                chrome(tabs, url, second),
            ),
        ),
        ("#212", "probe", "consecutiveFailures", "kenji-w", "times out"),
    )


def _browser_ci_log() -> Case:
    tabs = "CI · acme/sinain-relay@4e1c9b2  ×    +"
    url = "github.com/acme/sinain-relay/actions/runs/13057194823/job/36421907712"
    page = _lines(
        _GITHUB_HEADER,
        """
CI  #481   fix: breaker counts probe timeouts
test (3.11)   failed 3 minutes ago in 1m 42s
> ✓ Set up job
> ✓ Run actions/checkout@v4
> ✓ Set up Python 3.11
> ✓ Install dependencies
v ✗ Run python -m pytest -x -q
  ........................................................................ [ 61%]
  ..........F
  FAILED tests/actors/test_schedule.py::test_probe_timeout_reopens_the_circuit - assert 'open' == 'degraded'
  1 failed, 118 passed in 41.07s
  Error: Process completed with exit code 1.
""",
    )
    return Case(
        "browser-ci-log",
        "browser",
        (screen(0, "Google Chrome", "CI · acme/sinain-relay@4e1c9b2", chrome(tabs, url, page)),),
        ("test_probe_timeout_reopens_the_circuit", "exit code 1", "FAILED", "test_schedule.py"),
    )


def _browser_stackoverflow() -> Case:
    tabs = "python - How to cancel an asyncio task after a timeout? - Stack Overflow  ×    +"
    url = "stackoverflow.com/questions/29384512/how-to-cancel-an-asyncio-task-after-a-timeout"
    so_header = """
stackoverflow   About   Products   For Teams   Search…   Log in   Sign up
Home   Questions   Tags   Users   Companies   Labs   Jobs   Discussions   Collectives
"""
    first = _lines(
        so_header,
        """
How to cancel an asyncio task after a timeout?
Asked 9 years, 4 months ago   Modified 1 year ago   Viewed 188k times
I start a long-running coroutine with loop.create_task() and want it cancelled if it has not
finished after five seconds. asyncio.wait() returns the pending set but the task keeps running.
What is the idiomatic way to do this?
python   python-asyncio   timeout
""",
    )
    second = _lines(
        so_header,
        """
23 Answers   Sorted by: Highest score (default)
412  Wrap the awaitable in asyncio.wait_for(); on timeout it cancels the task and raises
     TimeoutError. Python 3.11 adds asyncio.timeout(), a context manager doing the same.
     answered Jan 5, 2016 by dano
""",
    )
    return Case(
        "browser-stackoverflow",
        "browser",
        (
            screen(
                0,
                "Safari",
                "How to cancel an asyncio task after a timeout?",
                chrome(tabs, url, first),
            ),
            screen(
                7,
                "Safari",
                "How to cancel an asyncio task after a timeout?",
                chrome(tabs, url, second),
            ),
        ),
        ("create_task", "wait_for", "idiomatic", "dano"),
    )


def _browser_aws() -> Case:
    tabs = "api-service | Services | ECS | eu-central-1  ×    +"
    url = "eu-central-1.console.aws.amazon.com/ecs/v2/clusters/production/services/api-service"
    aws_header = """
aws   Services   Search [Option+S]   ▣   🔔   ?   ⚙   Frankfurt ▾   dev-admin @ acme-prod ▾
Amazon Elastic Container Service › Clusters › production › Services › api-service
"""
    page = _lines(
        aws_header,
        """
api-service   Update service   Delete service
Status  Active    Desired tasks  2    Running tasks  2    Pending tasks  0
Deployment configuration   Rolling update   Min running tasks 100%   Max running tasks 200%
Task definition  api-service:57   Launch type  FARGATE   Platform version  LATEST
Health and metrics   Deployments and events   Tasks   Logs   Networking   Configuration
""",
    )
    return Case(
        "browser-aws-ecs",
        "browser",
        (
            screen(0, "Google Chrome", "api-service | Services | ECS", chrome(tabs, url, page)),
            said(6, "how do I roll out the new task definition without downtime?"),
        ),
        ("ECS", "api-service", "Rolling update", "downtime"),
    )


# -- chat --------------------------------------------------------------------------------------


def _chat_slack_question() -> Case:
    topic = "sinain dev talk — relay, core, overlay. Deploys in #deploys"
    first = slack(
        "sinain-dev",
        topic,
        """
Today
Lukas Becker  10:31 AM
pushed the breaker change, the probe now backs off properly
Kenji Watanabe  10:35 AM
nice, I'll try it on staging after lunch
""",
    )
    second = slack(
        "sinain-dev",
        topic,
        """
Today
Kenji Watanabe  10:35 AM
nice, I'll try it on staging after lunch
Anna Petrova  10:44 AM
the HUD on my machine has shown the same line since 10:40 and /agent/digest is 6 minutes old
@dev can you check why the relay's digest is stale on staging?
""",
    )
    return Case(
        "chat-slack-question",
        "chat",
        (
            switch(0, "Slack", "sinain-dev (Channel) - Acme Eng - Slack"),
            screen(1, "Slack", "sinain-dev (Channel) - Acme Eng - Slack", first),
            screen(15, "Slack", "sinain-dev (Channel) - Acme Eng - Slack", second),
        ),
        ("Anna Petrova", "stale", "staging", "sinain-dev", "10:44"),
    )


def _chat_slack_deploy() -> Case:
    topic = "Deploy notifications. Ask in #sinain-dev"
    page = slack(
        "deploys",
        topic,
        """
Today
Deploy Bot  APP  11:02 AM
🚀 orders-api v2.14.0 to production started by lukas-b
Deploy Bot  APP  11:06 AM
❌ orders-api v2.14.0 failed: migration 0042_add_refund_status failed
django.db.utils.ProgrammingError: column "refund_status" of relation "orders_order" already exists
Kenji Watanabe  11:07 AM
did anyone run the migrations by hand on prod yesterday?
""",
    )
    return Case(
        "chat-slack-deploy-failed",
        "chat",
        (screen(0, "Slack", "deploys (Channel) - Acme Eng - Slack", page),),
        ("ProgrammingError", "0042_add_refund_status", "refund_status", "Kenji", "by hand"),
    )


def _chat_telegram_russian() -> Case:
    sidebar = """
Telegram
Поиск
Все чаты   Работа   Личное
Бэкенд команда
Мама
Избранное
Дмитрий Соколов
"""
    first = _lines(
        sidebar,
        """
Бэкенд команда
5 участников, 2 в сети
Дмитрий Соколов  14:02
Привет! После деплоя воркер падает при импорте заказов
Дмитрий Соколов  14:03
Traceback (most recent call last):
  File "worker/import_orders.py", line 77, in handle
    customer = payload["user_id"]
KeyError: 'user_id'
""",
    )
    second = _lines(
        sidebar,
        """
Бэкенд команда
5 участников, 2 в сети
Дмитрий Соколов  14:03
KeyError: 'user_id'
Ольга Иванова  14:05
Похоже, поставщик переименовал поле в customer_id
Дмитрий Соколов  14:06
Ты посмотрел логи за вчера? Там то же самое?
Написать сообщение…
""",
    )
    return Case(
        "chat-telegram-russian",
        "chat",
        (
            screen(0, "Telegram", "Бэкенд команда", first),
            screen(11, "Telegram", "Бэкенд команда", second),
            said(14, "ага, значит customer_id, сейчас проверю"),
        ),
        ("KeyError", "user_id", "Дмитрий", "customer_id", "логи"),
    )


def _chat_teams_meeting() -> Case:
    ocr = """
Microsoft Teams   Search   ⋯   ⓘ
Chat   Teams   Calendar   Calls   Files
Sprint 14 review   Meeting chat   Shared   Recap
Priya Natarajan  09:58
slides: https://acme.sharepoint.com/sites/eng/Sprint14-review.pptx
Tom Okafor  10:02
the latency graph for the checkout flow is on slide 9, p95 went from 310 ms to 870 ms
Priya Natarajan  10:04
Tom, is the regression from the new fraud check or from the database migration?
Type a message
"""
    return Case(
        "chat-teams-meeting",
        "chat",
        (
            screen(0, "Microsoft Teams", "Sprint 14 review | Microsoft Teams", ocr),
            said(3, "the regression is the fraud check I think, the migration went out after"),
        ),
        ("Priya", "fraud check", "870 ms", "regression", "Sprint14-review.pptx"),
    )


def _chat_discord() -> Case:
    channels = """
Rust Community
# announcements
# beginners
# help-async
# showcase
VOICE CHANNELS
🔊 Lounge
"""
    first = _lines(
        channels,
        """
# help-async
ferris_fan — Today at 21:14
my tokio task never finishes when the channel sender is dropped in another task
ferris_fan — Today at 21:15
error[E0373]: async block may outlive the current function, but it borrows `tx`, which is owned by the current function
""",
    )
    second = _lines(
        channels,
        """
# help-async
ferris_fan — Today at 21:15
error[E0373]: async block may outlive the current function, but it borrows `tx`, which is owned by the current function
crab_helper — Today at 21:17
use `async move` so the block owns tx; do you also need tx after the spawn?
Message #help-async
""",
    )
    return Case(
        "chat-discord-rust",
        "chat",
        (
            screen(0, "Discord", "#help-async | Rust Community", first),
            screen(9, "Discord", "#help-async | Rust Community", second),
        ),
        ("E0373", "async move", "crab_helper", "tokio", "after the spawn"),
    )


# -- mixed languages ----------------------------------------------------------------------------


def _mixed_japanese_docs() -> Case:
    tabs = "Pythonのasyncioでタイムアウトを設定する方法 - Qiita  ×    +"
    url = "qiita.com/tanaka_k/items/8f3b2c1d9e0a7b6c5d4e"
    qiita = "Qiita   トレンド   質問   公式イベント   Organization   ログイン   新規登録"
    first = _lines(
        qiita,
        """
Pythonのasyncioでタイムアウトを設定する方法
@tanaka_k   2025年11月03日に更新
はじめに
長時間かかるコルーチンを途中で止めたい場合、asyncio.wait_for() を使います。
async def main():
    try:
        await asyncio.wait_for(fetch_all(), timeout=5.0)
    except TimeoutError:
        print("タイムアウトしました")
""",
    )
    second = _lines(
        qiita,
        """
Python 3.11 以降では asyncio.timeout() も使えます。
async with asyncio.timeout(5.0):
    await fetch_all()
コメント
佐藤 まり   2025年11月05日
キャンセルされたタスクの後片付けはどこで行うべきですか？
""",
    )
    return Case(
        "mixed-japanese-qiita",
        "mixed",
        (
            screen(
                0,
                "Google Chrome",
                "Pythonのasyncioでタイムアウトを設定する方法 - Qiita",
                chrome(tabs, url, first),
            ),
            screen(
                10,
                "Google Chrome",
                "Pythonのasyncioでタイムアウトを設定する方法 - Qiita",
                chrome(tabs, url, second),
            ),
        ),
        ("wait_for", "TimeoutError", "タイムアウト", "佐藤", "後片付け"),
    )


def _mixed_german_code() -> Case:
    tabs = "rechnung.py  ×    steuer.py    test_rechnung.py"
    crumbs = "buchhaltung › src › rechnung.py › Rechnung › gesamtbetrag"
    status = "main*  ⊗ 0  ⚠ 0    Zeile 48, Spalte 9   Leerzeichen: 4   UTF-8   LF   Python 3.12.1"
    body = """
40  class Rechnung:
41      \"\"\"Eine Rechnung mit Positionen und Mehrwertsteuer.\"\"\"
42
43      def gesamtbetrag(self) -> Decimal:
44          # Summe aller Positionen, gerundet auf zwei Nachkommastellen
45          netto = sum(p.preis * p.menge for p in self.positionen)
46          steuer = netto * self.steuersatz
47          return (netto + steuer).quantize(Decimal("0.01"))
"""
    terminal = """
TERMINAL
(.venv) dev@mbp buchhaltung % pytest tests/test_rechnung.py -q
F.                                                                       [100%]
FAILED tests/test_rechnung.py::test_gesamtbetrag_mit_rabatt - decimal.InvalidOperation: [<class 'decimal.InvalidOperation'>]
1 failed, 1 passed in 0.09s
"""
    return Case(
        "mixed-german-code",
        "mixed",
        (
            screen(0, "Code", "rechnung.py — buchhaltung", vscode(tabs, crumbs, body, status)),
            screen(
                8,
                "Code",
                "rechnung.py — buchhaltung",
                vscode(tabs, crumbs, _lines(body, terminal), status),
            ),
            said(11, "warum schlägt der Rabatt-Test fehl? Der Steuersatz ist doch gesetzt"),
        ),
        (
            "gesamtbetrag",
            "InvalidOperation",
            "test_gesamtbetrag_mit_rabatt",
            "Rabatt",
            "Steuersatz",
        ),
    )


def _mixed_russian_code() -> Case:
    editor = """
sync.py ×   settings.py   README.md
reports  sync.py  выгрузить_отчёт
30  def выгрузить_отчёт(период: str) -> Path:
31      \"\"\"Выгружает отчёт за период в S3 и возвращает путь к файлу.\"\"\"
32      данные = загрузить(период)
33      # TODO: проверить часовой пояс, отчёты сдвигаются на день
34      путь = Path(f"/tmp/отчёт-{период}.csv")
35      путь.write_text(в_csv(данные), encoding="utf-8")
36      return путь
"""
    run = """
Run:  sync ×
/Users/dev/src/reports/.venv/bin/python -m reports.sync --period 2026-01
Загрузка данных за 2026-01… 18 412 строк
botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the PutObject operation: Access Denied
Process finished with exit code 1
"""
    return Case(
        "mixed-russian-code",
        "mixed",
        (
            screen(0, "PyCharm", "reports – sync.py", editor),
            screen(7, "PyCharm", "reports – sync.py", _lines(editor, run)),
            said(10, "опять AccessDenied, у роли нет прав на бакет?"),
        ),
        ("выгрузить_отчёт", "ClientError", "AccessDenied", "PutObject", "часовой пояс"),
    )


def _mixed_japanese_slack() -> Case:
    topic = "本番リリースの連絡用 / Release coordination"
    page = slack(
        "リリース",
        topic,
        """
今日
山田 健太  15:20
v3.2.0 のステージング確認は終わりました
鈴木 花子  15:31
決済APIのテストで TimeoutError: payment gateway did not respond in 30s が出ています
鈴木 花子  15:32
本番デプロイは明日に延期しますか？
""",
    )
    return Case(
        "mixed-japanese-slack",
        "mixed",
        (screen(0, "Slack", "リリース (Channel) - Acme Eng - Slack", page),),
        ("TimeoutError", "鈴木", "延期", "payment gateway", "v3.2.0"),
    )


def _mixed_menu_bar_full_screen() -> Case:
    bar = "Chrome  File  Edit  View  History  Bookmarks  Profiles  Tab  Window  Help"
    tabs = "Übersicht – Grafana  ×    Alerts – Grafana    +"
    url = "grafana.acme.internal/d/orders/uebersicht?orgId=1&from=now-1h&to=now"
    first = _lines(
        menu_bar("Chrome", bar, "Mo. 3. Feb. 10:41"),
        chrome(
            tabs,
            url,
            """
Dashboards › Bestellungen › Übersicht
Anfragen pro Sekunde   412
Fehlerquote   0,4 %
p95 Latenz   310 ms
""",
        ),
    )
    second = _lines(
        menu_bar("Chrome", bar, "Mo. 3. Feb. 10:43"),
        chrome(
            tabs,
            url,
            """
Dashboards › Bestellungen › Übersicht
Anfragen pro Sekunde   388
Fehlerquote   7,9 %
p95 Latenz   1,84 s
Alarm: HighErrorRate ausgelöst für orders-api (Schwelle 5 %)
""",
        ),
    )
    return Case(
        "mixed-german-grafana",
        "mixed",
        (
            screen(0, "Google Chrome", "Übersicht – Grafana", first),
            screen(12, "Google Chrome", "Übersicht – Grafana", second),
            said(15, "die Fehlerquote steigt seit zwei Minuten, ist das der neue Release?"),
        ),
        ("HighErrorRate", "Fehlerquote", "orders-api", "7,9", "Release"),
    )


# -- busy windows: the capture client sends an event every few seconds while the user works ----


def _demo_window(name: str, shape: str, until_s: float, expected: tuple[str, ...]) -> Case:
    """The shipped demo session up to ``until_s``: regions that changed, no chrome."""
    events = tuple(e for e in load_session() if e.at <= until_s)
    return Case(name, shape, events, expected, busy=True)


def _busy_demo_code() -> Case:
    return _demo_window(
        "busy-demo-session-code",
        "code",
        60,
        (
            "classify",
            "test_paused_video_is_not_idle",
            "AssertionError",
            "HTMLMediaElement",
            "idle.py",
        ),
    )


def _busy_demo_chat() -> Case:
    return _demo_window(
        "busy-demo-session-chat",
        "chat",
        120,
        ("Maya Chen", "paused video as idle", "MRMediaRemoteGetNowPlayingInfo", "visibilityState"),
    )


def _busy_edit_test_loop() -> Case:
    tabs = "retry.py  ●    test_retry.py    conftest.py"
    crumbs = "gateway-py › gateway › retry.py › backoff"
    status = "fix/backoff*  ⊗ 0  ⚠ 1    Ln {ln}, Col 9   Spaces: 4   UTF-8   LF   Python 3.12.1"

    def edit(ln: int, body: str) -> str:
        return vscode(tabs, crumbs, body, status.format(ln=ln))

    def run(summary: str) -> str:
        return _lines(
            "[pytest-watch] Change detected: gateway/retry.py",
            "============================= test session starts ==============================",
            "collected 7 items",
            summary,
        )

    title, term = "retry.py — gateway-py", "ptw — gateway-py — 120×40"
    v1 = """
12  def backoff(attempt: int, base_s: float = 0.5) -> float:
13      return base_s * attempt
"""
    v2 = """
12  def backoff(attempt: int, base_s: float = 0.5) -> float:
13      return base_s * 2 ** attempt
"""
    v3 = """
12  def backoff(attempt: int, base_s: float = 0.5, cap_s: float = 8.0) -> float:
13      return min(cap_s, base_s * 2 ** (attempt - 1))
"""
    fail = """
tests/test_retry.py ....F..                                              [100%]
FAILED tests/test_retry.py::test_backoff_doubles - assert 1.0 == 0.5
1 failed, 6 passed in 0.08s
"""
    passed = """
tests/test_retry.py .......                                              [100%]
7 passed in 0.07s
"""
    return Case(
        "busy-edit-test-loop",
        "code",
        (
            screen(0, "Code", title, edit(13, v1)),
            screen(8, "Code", title, edit(13, v2)),
            said(10, "the first attempt should wait half a second, not one"),
            screen(14, "Terminal", term, run(fail)),
            screen(22, "Code", title, edit(12, v3)),
            screen(30, "Terminal", term, run(passed)),
            said(33, "and it is capped at eight seconds now"),
            screen(
                40,
                "Code",
                "test_retry.py — gateway-py",
                vscode(
                    "retry.py    test_retry.py  ●    conftest.py",
                    "gateway-py › tests › test_retry.py › test_backoff_is_capped",
                    """
30  def test_backoff_is_capped():
31      assert backoff(10) == 8.0
""",
                    status.format(ln=31),
                ),
            ),
            screen(
                48,
                "Terminal",
                term,
                run(passed.replace("7 passed", "8 passed").replace(".......", "........")),
            ),
        ),
        ("backoff", "test_backoff_doubles", "cap_s", "test_backoff_is_capped", "8 passed"),
        busy=True,
    )


def _busy_slack_scrollback() -> Case:
    title = "incidents (Channel) - Acme Eng - Slack"
    topic = "Production incidents. Runbook: go/runbook"
    messages = [
        "Lukas Becker  09:12 AM\n:rotating_light: checkout p95 above 2s since 09:05",
        "Kenji Watanabe  09:13 AM\nlooking, the payments pod restarted twice",
        "Lukas Becker  09:15 AM\nOOMKilled, limit is 512Mi and the new fraud model loads 600MB",
        "Anna Petrova  09:17 AM\nrolling back fraud-svc to v1.8.3",
        "Kenji Watanabe  09:21 AM\nrollback done, p95 back to 340ms",
        "Anna Petrova  09:24 AM\nwho owns the postmortem, and can we raise the limit before re-deploying?",
    ]
    frames = [
        slack("incidents", topic, "\n".join(messages[max(0, n - 3) : n + 1])) for n in range(2, 6)
    ]
    events = [switch(0, "Slack", title)]
    events += [screen(2 + 9 * n, "Slack", title, frame) for n, frame in enumerate(frames)]
    events.append(said(40, "I can take the postmortem"))
    return Case(
        "busy-slack-scrollback",
        "chat",
        tuple(events),
        ("OOMKilled", "512Mi", "v1.8.3", "postmortem", "Anna Petrova"),
        busy=True,
    )


def _busy_browser_research() -> Case:
    url_search = "google.com/search?q=sqlite+busy+timeout+wal"
    url_docs = "sqlite.org/wal.html"
    url_so = "stackoverflow.com/questions/1063438/sqlite-database-is-locked"
    tabs = "sqlite busy timeout wal - Google Search    Write-Ahead Logging    database is locked - Stack Overflow    +"
    search = """
Google  sqlite busy timeout wal  ×  🎤  🔍
All  Images  Videos  News  Shopping  More  Tools
sqlite.org › wal
Write-Ahead Logging - SQLite
WAL provides more concurrency as readers do not block writers and a writer does not block readers.
stackoverflow.com › questions › 1063438
sqlite3.OperationalError: database is locked - Stack Overflow
"""
    docs_1 = """
SQLite   Home   About   Documentation   Download   License   Support   Purchase   Search
Write-Ahead Logging
1. Overview
The default method by which SQLite implements atomic commit and rollback is a rollback journal.
Beginning with version 3.7.0 (2010-07-21), a new "Write-Ahead Log" option is available.
"""
    docs_2 = """
SQLite   Home   About   Documentation   Download   License   Support   Purchase   Search
2.2. Concurrency
Writers merely append new content to the end of the WAL file. Because writers do nothing that
would interfere with the actions of readers, writers and readers can run at the same time.
However, since there is only one WAL file, there can only be one writer at a time.
"""
    so = """
stackoverflow   About   Products   For Teams   Search…   Log in   Sign up
sqlite3.OperationalError: database is locked
Asked 14 years ago   Modified 2 years ago   Viewed 512k times
My Django app raises "database is locked" under load. I set timeout=20 in the connection options.
Is WAL mode enough, or do I need a busy_timeout as well?
"""
    return Case(
        "busy-browser-research",
        "browser",
        (
            screen(
                0,
                "Google Chrome",
                "sqlite busy timeout wal - Google Search",
                chrome(tabs, url_search, search),
            ),
            screen(9, "Google Chrome", "Write-Ahead Logging", chrome(tabs, url_docs, docs_1)),
            screen(17, "Google Chrome", "Write-Ahead Logging", chrome(tabs, url_docs, docs_2)),
            said(20, "one writer at a time, so the relay's group commit is fine"),
            screen(
                28, "Google Chrome", "database is locked - Stack Overflow", chrome(tabs, url_so, so)
            ),
            screen(36, "Google Chrome", "Write-Ahead Logging", chrome(tabs, url_docs, docs_2)),
        ),
        (
            "one writer at a time",
            "busy_timeout",
            "database is locked",
            "Write-Ahead Log",
            "rollback journal",
        ),
        busy=True,
    )


_BUILDERS = (
    _code_idle,
    _code_ts_problems,
    _code_idea_npe,
    _code_react_question,
    _code_diff_review,
    _code_neovim,
    _term_pytest,
    _term_traceback,
    _term_npm_build,
    _term_cargo_panic,
    _term_docker,
    _term_merge_conflict,
    _term_go_test,
    _term_log_tail,
    _term_switching,
    _browser_search,
    _browser_mdn,
    _browser_github_issue,
    _browser_ci_log,
    _browser_stackoverflow,
    _browser_aws,
    _chat_slack_question,
    _chat_slack_deploy,
    _chat_telegram_russian,
    _chat_teams_meeting,
    _chat_discord,
    _mixed_japanese_docs,
    _mixed_german_code,
    _mixed_russian_code,
    _mixed_japanese_slack,
    _mixed_menu_bar_full_screen,
    _busy_demo_code,
    _busy_edit_test_loop,
    _busy_browser_research,
    _busy_slack_scrollback,
    _busy_demo_chat,
)


def cases() -> tuple[Case, ...]:
    """Every case of the corpus: the shapes one after the other, then the busy windows."""
    return tuple(build() for build in _BUILDERS)


def stored(events: Iterable[SessionEvent]) -> tuple[list[FeedItem], list[SenseEvent]]:
    """``events`` as the buffers would store them (validated, with ids and arrival), the first
    arriving at :data:`T0_MS`."""
    feed: list[FeedItem] = []
    sense: list[SenseEvent] = []
    for n, event in enumerate(events, start=1):
        at = T0_MS + round(event.at * 1000)
        if event.path == "/feed":
            feed.append(FeedItem.stored(n, at, convert(event.body, FeedInput).record()))
        else:
            sense.append(SenseEvent.stored(n, at, sense_input(event.body)))
    return feed, sense


def records(case: Case) -> tuple[list[FeedItem], list[SenseEvent]]:
    """The case's requests as the buffers would store them."""
    return stored(case.events)


def session_prompt(until_s: float, previous: PreviousDigest | None = None) -> str:
    """The prompt a tick :data:`TICK_AFTER_MS` after ``until_s`` seconds of the shipped demo
    session would send, with ``previous`` as the digest before it."""
    feed, sense = stored(takewhile(lambda e: e.at <= until_s, load_session()))
    now = T0_MS + round(until_s * 1000) + TICK_AFTER_MS
    window = build_context_window(feed, sense, now_ms=now, max_age_ms=MAX_AGE_MS)
    return build_prompt(window, now_ms=now, previous=previous)


def tick_ms(case: Case) -> int:
    """Server time of the case's tick: :data:`TICK_AFTER_MS` after its last event."""
    return T0_MS + round(case.events[-1].at * 1000) + TICK_AFTER_MS


def case_window(case: Case) -> ContextWindow:
    """The window a tick reads :data:`TICK_AFTER_MS` after the case's last event."""
    feed, sense = records(case)
    return build_context_window(feed, sense, now_ms=tick_ms(case), max_age_ms=MAX_AGE_MS)


def input_texts(window: ContextWindow) -> Iterator[str]:
    """Every text of the window the prompt may draw on: app names (as the prompt shows them),
    OCR, titles, narratives, transcripts."""
    for event in window.screen:
        app = normalize_app_name(event.app)
        yield from (app, event.window_title, event.title, event.ocr, event.narrative)
    for chunk in window.audio:
        yield chunk.text
