"""`gojax-katago`: KataGo's command line in front of gojax, for tools that start `katago`.

    gojax-katago analysis -model M -config C [-override-config K=V,...] [-- gojax analysis options]
    gojax-katago gtp -model M -config C [-override-config K=V,...] [-- gojax gtp options]
    gojax-katago version

KaTrain, and any tool that lets its user choose KataGo's executable, can be pointed at this
command.  The config file (KataGo's `key = value` lines) and the overrides are read; the keys
gojax has a setting for are applied (CONFIG_KEYS), every other key is named once on stderr.
gojax has no neural network: the model is not read.  Options after `--` go to `gojax analysis`
or `gojax gtp` as they are (`gojax analysis --help`).
"""

from __future__ import annotations

import sys

from gojax import __version__

USAGE = ("usage: gojax-katago {analysis,gtp,version} [-model FILE] [-config FILE] [-override-config K=V,...]"
         " [-- gojax options]")

# KataGo config key -> the gojax option it sets, per subcommand.
CONFIG_KEYS = {
    "analysis": {"maxVisits": "--visits", "maxTime": "--max-time", "reportAnalysisWinratesAs": "--report-as",
                 "numAnalysisThreads": "--batch"},
    "gtp": {"maxVisits": "--simulations", "maxTime": "--seconds"},
}
FLAGS_WITH_VALUE = ("-model", "-config", "-override-config", "-human-model", "-analysis-threads", "-override-version")
FLAGS_ALONE = ("-quit-without-waiting",)


class UsageError(ValueError):
    pass


def read_config(path: str) -> dict[str, str]:
    """KataGo's config format: `key = value` per line, `#` starts a comment."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as err:
        raise UsageError(f"cannot read -config {path}: {err.strerror or err}") from None
    settings = {}
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("@include"):
            continue
        key, eq, value = line.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"-config {path} line {number}: expected key = value, got {line!r}")
        settings[key.strip()] = value.strip()
    return settings


def parse_overrides(text: str) -> dict[str, str]:
    """-override-config's `K=V,K=V`."""
    settings = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"-override-config: expected K=V, got {part!r}")
        settings[key.strip()] = value.strip()
    return settings


def translate(argv: list[str], log=sys.stderr) -> list[str]:
    """gojax-katago's arguments -> `gojax` CLI arguments (names what it does not use on `log`)."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        raise UsageError("a subcommand is required")
    command, rest = argv[0], argv[1:]
    if command not in CONFIG_KEYS:
        raise UsageError(f"KataGo's {command!r} is not provided (gojax-katago runs analysis, gtp and version;"
                         " `gojax --help` lists gojax's own commands)")
    passed: list[str] = []
    if "--" in rest:
        cut = rest.index("--")
        rest, passed = rest[:cut], rest[cut + 1:]
    flags: dict[str, str] = {}
    i = 0
    while i < len(rest):
        flag = rest[i]
        if flag in FLAGS_ALONE:
            i += 1
            continue
        if flag not in FLAGS_WITH_VALUE:
            raise UsageError(f"unknown argument {flag!r}")
        if i + 1 >= len(rest):
            raise UsageError(f"{flag} needs a value")
        flags[flag] = rest[i + 1]
        i += 2
    settings = read_config(flags["-config"]) if "-config" in flags else {}
    settings.update(parse_overrides(flags.get("-override-config", "")))
    if "-analysis-threads" in flags:
        settings["numAnalysisThreads"] = flags["-analysis-threads"]
    known = CONFIG_KEYS[command]
    out = [command]
    for key, value in settings.items():
        if key in known:
            out += [known[key], value]
    unused = sorted(k for k in settings if k not in known)
    if unused:
        print(f"[gojax-katago] not used by gojax {command}: {', '.join(unused)}", file=log)
    for flag in ("-model", "-human-model"):
        if flag in flags:
            print(f"[gojax-katago] {flag} {flags[flag]}: gojax has no neural network; not read", file=log)
    return out + passed


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "version":
        print(f"gojax {__version__} behind KataGo's command line (gojax-katago); no neural network")
        return 0
    try:
        args = translate(argv)
    except UsageError as err:
        print(f"gojax-katago: {err}\n{USAGE}", file=sys.stderr)
        return 2
    from gojax.cli import main as gojax_main
    return gojax_main(args)


if __name__ == "__main__":
    sys.exit(main())
