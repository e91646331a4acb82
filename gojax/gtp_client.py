"""A GTP controller: drives another engine (GNU Go, gojax itself) through pipes.

Used by the match runner, the scaling study and the oracle tests.  Replies are read until
the blank line that ends them, with a deadline per command so that a hung engine cannot hang
its caller.
"""

from __future__ import annotations

import os
import selectors
import shlex
import subprocess
import tempfile
import time


class GtpEngineError(RuntimeError):
    """The engine answered `? ...`, died, or did not answer in time."""


class GtpClient:
    """`stderr="keep"` keeps the engine's stderr in a temporary file, for `stderr_tail` to quote
    when the engine fails."""

    def __init__(self, command: str | list[str], stderr=subprocess.DEVNULL, env=None):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.argv = argv
        self._stderr = tempfile.TemporaryFile() if stderr == "keep" else None
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr if self._stderr is not None else stderr, env=env, bufsize=0)
        self._buffer = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._next_id = 1
        # Set when a reply did not come in time: the engine still owes it, so any later reply is
        # out of step, and close() kills it instead of waiting for a `quit` it may never read.
        self.timed_out = False

    def _exit(self) -> str:
        """How the process ended: its exit code once it has (waiting a moment for it), or a signal."""
        try:
            code = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def _read_reply(self, deadline: float) -> str:
        while b"\n\n" not in self._buffer.replace(b"\r", b""):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.timed_out = True
                raise GtpEngineError(f"no reply within the time limit from {self.argv[0]}")
            if not self._selector.select(timeout=remaining):
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise GtpEngineError(f"{self.argv[0]} closed its output ({self._exit()})")
            self._buffer += chunk
        text = self._buffer.replace(b"\r", b"").decode()
        reply, _, rest = text.partition("\n\n")
        self._buffer = rest.encode()
        return reply

    def send(self, command: str, timeout: float = 60.0) -> str:
        """Send one command; return the reply text after '= ' (raises on '? ')."""
        if self.proc.poll() is not None:
            raise GtpEngineError(f"{self.argv[0]} is not running ({self._exit()})")
        cid = self._next_id
        self._next_id += 1
        try:
            self.proc.stdin.write(f"{cid} {command}\n".encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise GtpEngineError(f"{self.argv[0]} stopped reading commands: {err}") from err
        reply = self._read_reply(time.monotonic() + timeout)
        head, _, body = reply.partition(" ")
        if head == f"={cid}" or head == "=":
            return body.strip()
        if head in (f"?{cid}", "?"):
            raise GtpEngineError(f"{command!r}: {body.strip()}")
        raise GtpEngineError(f"malformed reply to {command!r}: {reply!r}")

    def stderr_tail(self, chars: int = 1500) -> str:
        """The end of what the engine wrote to stderr ("" unless started with stderr="keep")."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - chars))
        return self._stderr.read().decode(errors="replace").strip()

    def dead(self, wait: float = 1.0) -> bool:
        """Has the process exited (given `wait` seconds to finish dying)?"""
        try:
            self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self, timeout: float = 5.0) -> None:
        if self.proc.poll() is None and self.timed_out:
            self.proc.kill()
            self.proc.wait()
        if self.proc.poll() is None:
            try:
                self.send("quit", timeout=timeout)
            except GtpEngineError:
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._selector.close()
        if self._stderr is not None:
            self._stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
