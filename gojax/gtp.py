"""GTP version 2, layer 1 of 3: the protocol engine.

Reads command lines, cleans them as the GTP 2 spec says (control characters other than HT and
LF removed, HT to space, everything after '#' dropped, empty lines ignored), splits off the
numeric id, calls the handler `cmd_<name>` (with '-' in names as '_'), and writes `=id reply`
or `?id message`, each followed by a blank line.  A handler raises GtpError for a `?` reply;
any other exception is also turned into a `?` reply, logged on stderr, and the engine stays up.
Only replies go to `out`.  Layer 2 is gojax/gtp_commands.py, layer 3 the wiring in gojax/cli.py.
"""

from __future__ import annotations

import os
import re
import select
import sys
import traceback

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


class GtpError(Exception):
    """A command that fails; its message is the `?` reply."""


class Quit(Exception):
    """Raised by the quit handler after its reply."""


def clean(line: str) -> str:
    line = line.split("#", 1)[0]
    line = line.replace("\t", " ")
    return _CONTROL.sub("", line).strip()


def command(name: str | None = None, streams: bool = False):
    """Mark a handler method as the GTP command `name` (default: the method name).  A streaming
    handler (lz-analyze) gets the id first and writes its own reply."""
    def mark(fn):
        fn.gtp_name = name or fn.__name__
        fn.gtp_streams = streams
        return fn
    return mark


class GtpEngine:
    def __init__(self, handlers, out=None, log=None):
        self.handlers = handlers
        self.out = out or sys.stdout
        self.log = log or sys.stderr
        self.input = None
        self.table = {}
        for attr in dir(type(handlers)):
            fn = getattr(handlers, attr)
            if callable(fn) and hasattr(fn, "gtp_name"):
                self.table[fn.gtp_name] = fn
        handlers.engine = self

    def commands(self) -> list[str]:
        return sorted(self.table)

    def known(self, name: str) -> bool:
        return name in self.table

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()

    def respond(self, cid: str, ok: bool, body: str = "") -> None:
        head = ("=" if ok else "?") + cid
        self.write(f"{head} {body}\n\n" if body else f"{head}\n\n")

    def handle(self, line: str) -> bool:
        """Process one raw line; returns False after `quit`."""
        line = clean(line)
        if not line:
            return True
        parts = line.split()
        cid = ""
        if parts[0].isdigit():
            cid = parts.pop(0)
            if not parts:
                self.respond(cid, False, "missing command")
                return True
        name, args = parts[0].lower(), parts[1:]
        fn = self.table.get(name)
        if fn is None:
            self.respond(cid, False, "unknown command")
            return True
        try:
            body = fn(cid, *args) if fn.gtp_streams else fn(*args)
        except Quit:
            self.respond(cid, True)
            return False
        except GtpError as err:
            self.respond(cid, False, str(err))
            return True
        except Exception as err:  # noqa: BLE001 - the engine must stay up
            print(f"[gojax] internal error in {name}: {err}", file=self.log)
            traceback.print_exc(file=self.log)
            self.respond(cid, False, f"internal error: {err}")
            return True
        if body is not None:  # streaming handlers write their own reply
            self.respond(cid, True, body)
        return True

    def serve(self, stream) -> None:
        """Read commands until quit or end of input."""
        self.input = LineReader(stream)
        while True:
            line = self.input.readline()
            if line is None or not self.handle(line):
                break

    def input_waiting(self) -> bool:
        """Is another command waiting?  (A streaming handler stops when one is.)"""
        return self.input is None or self.input.waiting()


class LineReader:
    """Lines from a pipe or terminal without Python's read-ahead buffer, so that `waiting`
    (select on the file descriptor) sees every command not yet handled.  Streams without a
    file descriptor (io.StringIO in tests) are read as they are and always report input."""

    def __init__(self, stream):
        self.stream = stream
        self.buffer = b""
        try:
            self.fd = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None

    def readline(self) -> str | None:
        if self.fd is None:
            line = self.stream.readline()
            return line or None
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, 65536)
            if not chunk:
                if not self.buffer:
                    return None
                line, self.buffer = self.buffer, b""
                return line.decode("utf-8", "replace")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"

    def waiting(self) -> bool:
        if self.fd is None or self.buffer:
            return True
        return bool(select.select([self.fd], [], [], 0)[0])
