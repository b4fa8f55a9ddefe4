"""The interactive prompt: multi-line SQL with completion, highlighting and history.

Enter runs the statement once it is complete (ends with a top-level ``;``,
quotes and comments respected; a client command such as ``quit`` needs no
``;``), otherwise it starts a new line. Tab asks the gateway's completion
API; the history file survives restarts. Ctrl-C at the prompt clears the
input, Ctrl-D on an empty line exits.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.styles import Style
from pygments.lexers.sql import SqlLexer

from sparkgate.api.errors import GatewayError
from sparkgate.client.client import PROMPT, SqlClient, parse_client_command
from sparkgate.client.executor import Executor
from sparkgate.sql import TokenKind, is_complete, tokenize

__all__ = ["GatewayCompleter", "Repl", "is_ready", "word_start"]

log = logging.getLogger(__name__)

_STYLE = Style.from_dict({"prompt": "ansigreen bold", "continuation": "ansigreen"})
_NAME_PARTS = (TokenKind.WORD, TokenKind.QUOTED_IDENTIFIER, TokenKind.DOT)


def is_ready(text: str) -> bool:
    """Whether Enter should run ``text`` rather than start a new line."""
    if not text.strip():
        return False
    return is_complete(text) or parse_client_command(text) is not None


def word_start(text: str) -> int:
    """Offset where the dotted name ending at the end of ``text`` starts."""
    tokens = tokenize(text)
    start = len(text)
    for token in reversed(tokens):
        if token.end != start or token.kind not in _NAME_PARTS:
            break
        start = token.start
    return start


class GatewayCompleter(Completer):
    """Candidates from the gateway's completion API; they replace the word at the cursor."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        text = document.text
        position = document.cursor_position
        before = text[:position]
        start = word_start(before)
        try:
            candidates = self._executor.complete(text, position)
        except GatewayError:
            log.debug("Completion failed", exc_info=True)
            return
        typed = before[start:]
        for candidate in candidates:
            if candidate == typed:
                continue
            yield Completion(candidate, start_position=start - position)


class Repl:
    """Reads statements until QUIT, EXIT or Ctrl-D and runs each through the client."""

    def __init__(self, client: SqlClient, *, history_file: Path | None = None) -> None:
        self.client = client
        history: History
        if history_file is not None:
            history_file.parent.mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(history_file))
        else:
            history = InMemoryHistory()
        self._session: PromptSession[str] = PromptSession(
            message=FormattedText([("class:prompt", PROMPT)]),
            multiline=True,
            prompt_continuation=lambda width, _line, _wrap: FormattedText(
                [("class:continuation", " " * max(width - 2, 0) + "> ")]
            ),
            key_bindings=self._bindings(),
            history=history,
            completer=GatewayCompleter(client.executor),
            complete_while_typing=False,
            auto_suggest=AutoSuggestFromHistory(),
            lexer=PygmentsLexer(SqlLexer),
            style=_STYLE,
            enable_history_search=False,
            include_default_pygments_style=True,
        )

    @staticmethod
    def _bindings() -> KeyBindings:
        bindings = KeyBindings()

        @Condition
        def ready() -> bool:
            from prompt_toolkit.application import get_app

            return is_ready(get_app().current_buffer.text)

        @bindings.add("enter", filter=ready)
        def _run(event: KeyPressEvent) -> None:
            event.current_buffer.validate_and_handle()

        @bindings.add("escape", "enter")
        def _newline(event: KeyPressEvent) -> None:
            event.current_buffer.insert_text("\n")

        return bindings

    def run(self) -> None:
        terminal = self.client.terminal
        while not self.client.quit_requested:
            try:
                text = self._session.prompt()
            except KeyboardInterrupt:
                continue  # Ctrl-C clears the line
            except EOFError:
                break  # Ctrl-D
            if not text.strip():
                continue
            self.client.execute(text)
            if not self.client.quit_requested:
                terminal.line()
            terminal.flush()
