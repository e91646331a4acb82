"""One gojax engine's configuration, and the `gojax gtp` options that make it.

An `EngineConfig` is everything that decides how a gojax engine plays: the search parameters
(`SearchParams`, with the playout policy's settings and the seed), the budget per move, the
number of trees, resignation and the playout device.  `gojax gtp` builds one from its options
(`from_args`); the arena and the scaling study build them in code and pass them on; `command()`
writes the `gojax gtp` command that plays the same games, and `from_command` reads one back.
Every failure is a ValueError with one line that names the option as a user types it.

Layering: this module imports search/ and kernels/, never cli.py, arena.py or scaling.py.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import re
import shlex

from gojax.kernels.geometry import MAX_SIZE, MIN_SIZE
from gojax.search.device import PLAYOUT_DEVICES
from gojax.search.params import CHOICES, SearchParams

DEFAULT_SIMULATIONS = 3000  # per move, when neither --simulations nor --seconds is given
GTP_THREADS_HELP = "on a CPU backend, 1 when L x K x T <= {small} below 13x13 (--size), else one virtual device " \
                   "per core, each on one thread; every core elsewhere"


# --- argparse types: a bad number is one line and exit code 2 ------------------------------------
def _at_least(text: str, low: int, kind: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {kind} whole number, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _at_least(text, 1, "a positive")


def whole_number(text: str) -> int:
    return _at_least(text, 0, "a")


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def board_size(text: str) -> int:
    value = positive_int(text)
    if not MIN_SIZE <= value <= MAX_SIZE:
        raise argparse.ArgumentTypeError(f"board size must be {MIN_SIZE}..{MAX_SIZE}, got {value}")
    return value


@dataclasses.dataclass(frozen=True)
class EngineConfig:
    """How one gojax engine plays.  `params.seed` seeds its searches; `params.resign_threshold`
    is the value below which it resigns when `resign` is on."""

    params: SearchParams = SearchParams()
    simulations: int | None = DEFAULT_SIMULATIONS  # per move; a cap under a clock; None: time only
    seconds: float | None = None  # per move without a clock (with simulations: whichever ends first)
    exact: bool = False  # spend exactly `simulations` a move: no early stop, no rounding up (studies)
    trees: int = 1  # root parallelisation: trees with seeds seed .. seed + trees - 1 share the budget
    resign: bool = True
    playout_device: str = "auto"  # search/device.PLAYOUT_DEVICES

    def __post_init__(self):
        if self.simulations is None and self.seconds is None:
            raise ValueError("an engine needs --simulations or --seconds per move")
        if self.simulations is not None and self.simulations < 1:
            raise ValueError(f"--simulations must be at least 1, got {self.simulations}")
        if self.seconds is not None and not self.seconds > 0:
            raise ValueError(f"--seconds must be above 0, got {self.seconds}")
        if self.exact and self.simulations is None:
            raise ValueError("--exact-simulations needs --simulations")
        if self.trees < 1:
            raise ValueError(f"--trees must be at least 1, got {self.trees}")
        if self.playout_device not in PLAYOUT_DEVICES:
            raise ValueError(f"--playout-device must be one of {PLAYOUT_DEVICES}, got {self.playout_device!r}")

    @property
    def resigns(self) -> bool:
        return self.resign and self.params.resign_threshold > 0

    def player_options(self, log=None, verbose: bool = True):
        """The `PlayerOptions` of a Player that plays with this configuration."""
        import sys

        from gojax.player import PlayerOptions
        return PlayerOptions(simulations=self.simulations, seconds=self.seconds, resign=self.resigns,
                             log=sys.stderr if log is None else log, verbose=verbose, trees=self.trees,
                             playout_device=self.playout_device, exact=self.exact)

    def command(self, program: str = "gojax", *extra: str) -> str:
        """The `gojax gtp` command that plays as this configuration does (settings at their
        defaults left out); `extra` options (--quiet, --log-file ...) are appended.  ValueError
        for a setting that has no option."""
        d, p = SearchParams(), self.params
        args = ["gtp"]
        if self.simulations is not None:
            args += ["--simulations", str(self.simulations)]
        if self.exact:
            args.append("--exact-simulations")
        if self.seconds is not None:
            args += ["--seconds", repr(self.seconds)]
        if not self.resign:
            args.append("--no-resign")
        elif p.resign_threshold != d.resign_threshold:
            args += ["--resign-threshold", repr(p.resign_threshold)]
        if p.seed != d.seed:
            args += ["--seed", str(p.seed)]
        if self.trees != 1:
            args += ["--trees", str(self.trees)]
        if self.playout_device != "auto":
            args += ["--playout-device", self.playout_device]
        for f in dataclasses.fields(SearchParams):
            value = getattr(p, f.name)
            if value == getattr(d, f.name) or f.name in ("seed", "resign_threshold"):
                continue
            if "help" not in f.metadata:
                raise ValueError(f"SearchParams.{f.name} = {value!r} has no `gojax gtp` option")
            flag = "--" + f.name.replace("_", "-")
            if isinstance(value, bool):
                args.append(flag if value else "--no-" + f.name.replace("_", "-"))
            else:
                args += [flag, repr(value) if isinstance(value, float) else str(value)]
        return " ".join([program] + [shlex.quote(a) for a in args + list(extra)])

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EngineConfig:
        """From options parsed by a parser that `add_engine_options` made."""
        params = params_from_args(args, resign_threshold=0.0 if args.no_resign else args.resign_threshold)
        simulations = args.simulations
        if simulations is None and args.seconds is None:
            simulations = DEFAULT_SIMULATIONS
        return cls(params, simulations, args.seconds, args.exact_simulations, args.trees,
                   not args.no_resign and args.resign_threshold > 0, args.playout_device)

    @classmethod
    def from_command(cls, cmd: str) -> EngineConfig:
        """From a `gojax gtp ...` command line (whatever program path or `python -m gojax` starts
        it), read as `gojax gtp` reads its options.  ValueError for another program or a bad option."""
        argv = shlex.split(cmd)
        if not is_gojax_gtp(cmd):
            raise ValueError(f"not a `gojax gtp` command: {cmd!r}")
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                args = gtp_parser().parse_args(argv[argv.index("gtp") + 1:])
        except SystemExit:
            why = err.getvalue().strip().splitlines()
            raise ValueError(f"{cmd!r}: {why[-1] if why else 'cannot read its options'}") from None
        return cls.from_args(args)


def is_gojax_gtp(cmd: str) -> bool:
    """Whether a command line starts gojax's GTP engine (`gojax gtp`, `python -m gojax gtp`)."""
    argv = shlex.split(cmd)
    if "gtp" not in argv:
        return False
    return any(os.path.basename(a).startswith("gojax") for a in argv[:argv.index("gtp")])


# --- the options ----------------------------------------------------------------------------------
def add_playout_device(p, default: str) -> None:
    p.add_argument("--playout-device", choices=PLAYOUT_DEVICES, default=default,
                   help="where the playouts run: default = JAX's default device (a GPU where there is one); cpu ="
                        " the host's CPU, where a lone search's small calls can take less time than on a GPU; auto ="
                        " the CPU unless the default device plays this search's calls clearly faster (in at most"
                        " 80%% of the CPU's time), timed at warm-up (the same as default on a machine without an"
                        f" accelerator; default: {default})")


def add_playout_workers(p) -> None:
    p.add_argument("--playout-workers", type=int, default=None, metavar="N",
                   help="processes besides this one that each play a share of every round's playouts on a core of"
                        " their own (search/workers.py), on every board size; 0 = none (default: on a CPU backend,"
                        " one per core but this process's for a search of at most 64 boards per call with"
                        " --cpu-threads left automatic, started at the first search on 13x13 or larger; else none)")


def add_cpu_threads(p, default: str) -> None:
    from gojax.runtime import SMALL_BATCH
    default = default.format(small=SMALL_BATCH)
    p.add_argument("--cpu-threads", type=int, default=None, metavar="N",
                   help=f"threads XLA's CPU backend splits each kernel over; 0 = every core, on one device"
                        f" (default: {default}; any N keeps one device; see gojax/runtime.py)")


def add_search_options(p) -> None:
    """Every SearchParams field made with search.params.flag, as --field-name: the help text,
    allowed values and default come from the dataclass (one source per setting)."""
    d = SearchParams()
    groups = {"search": p.add_argument_group("search parameters (seed 000 equation numbers; search/params.py)"),
              "policy": p.add_argument_group("playout policy (kernels/policy.py)")}
    for f in dataclasses.fields(SearchParams):
        if "help" not in f.metadata:
            continue
        g, default = groups[f.metadata["group"]], getattr(d, f.name)
        name = "--" + f.name.replace("_", "-")
        if isinstance(default, bool):  # a setting that is on by default is turned off with --no-...
            g.add_argument(name, action=argparse.BooleanOptionalAction if default else "store_true",
                           default=default, help=f.metadata["help"])
            continue
        shown = f"{default:g}" if isinstance(default, float) else (default if default != "" else "none")
        kind = {"choices": CHOICES[f.name]} if f.name in CHOICES else {"type": type(default)}
        g.add_argument(name, default=default, metavar=f.metadata["metavar"], help=f"{f.metadata['help']} ({shown})",
                       **kind)


def add_engine_options(p) -> None:
    """The options of an `EngineConfig`: budget per move, resignation, seed, trees, playout
    device and every search parameter."""
    p.add_argument("--simulations", type=positive_int, default=None,
                   help=f"simulations (playouts) per move (default {DEFAULT_SIMULATIONS}, and a cap under a GUI's"
                        " clock; none with --seconds alone). The search stops early once its most visited move cannot"
                        " change, and rounds up to whole rounds of L x K playouts: --exact-simulations spends exactly"
                        " this many")
    p.add_argument("--exact-simulations", action="store_true",
                   help="spend exactly --simulations playouts a move, no early stop (scaling studies)")
    p.add_argument("--seconds", type=positive_float, default=None,
                   help="seconds per move without a clock, on their own (with --simulations as well: whichever ends"
                        " first)")
    p.add_argument("--resign-threshold", type=float, default=SearchParams().resign_threshold,
                   help=f"resign below this value for us (default {SearchParams().resign_threshold:g}); 0 never"
                        " resigns")
    p.add_argument("--no-resign", action="store_true", help="never resign")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trees", type=positive_int, default=1, metavar="T",
                   help="root parallelisation: T trees with seeds seed..seed+T-1 share the simulations, one device"
                        " call per round, root statistics merged (default 1)")
    add_playout_device(p, "auto")
    add_search_options(p)


def add_gtp_options(p) -> None:
    """`gojax gtp`'s options: the engine's, and those of the GTP process around it (board,
    logs, GUI quirks, XLA threads)."""
    p.add_argument("--size", type=board_size, default=9, help="initial board size (default 9)")
    p.add_argument("--komi", type=float, default=7.5)
    p.add_argument("--log-file", default=None, help="write logs here instead of stderr")
    p.add_argument("--quiet", action="store_true", help="no per-move search summary")
    p.add_argument("--lizzie", action="store_true",
                   help="answer `version` with 0.17.0: Lizzie takes any engine for Leela Zero and stalls below 0.15")
    p.add_argument("--no-warmup", action="store_true",
                   help="do not compile at clear_board (the first genmove on each size compiles)")
    add_cpu_threads(p, GTP_THREADS_HELP)
    add_playout_workers(p)
    add_engine_options(p)


def gtp_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gojax gtp")
    add_gtp_options(p)
    return p


def params_from_args(args, **overrides) -> SearchParams:
    """SearchParams from the parsed flags (and `--seed` where the command has one), every file
    they name loaded once: ValueError with one line, the setting named as the user typed it."""
    fields = {f.name: getattr(args, f.name) for f in dataclasses.fields(SearchParams)
              if "help" in f.metadata and hasattr(args, f.name)}
    if hasattr(args, "seed"):
        fields["seed"] = args.seed
    fields.update(overrides)
    try:
        params = SearchParams(**fields)
    except ValueError as err:  # resign_threshold -> --resign-threshold
        raise ValueError(re.sub(r"^(\w+) must", lambda m: f"--{m[1].replace('_', '-')} must", str(err))) from None
    if params.prior in ("auto", "shape", "shape_wins"):  # load it now: a bad file is a one-line error, not a failing genmove
        import zipfile

        from gojax.search import shape
        try:
            shape.load_model(params.shape_model)
        except (OSError, KeyError, zipfile.BadZipFile) as err:
            raise ValueError(f"--shape-model {params.shape_model}: {getattr(err, 'strerror', None) or err}") from None
        except ValueError as err:  # it names the file
            raise ValueError(f"--shape-model {err}") from None
    # The playouts' own checks (a learnt policy's model file) before anything starts.
    params.playout_config()
    if params.prior_model_path is not None:  # the tree's prior reads its own model (a linear one or a net)
        from gojax.kernels.prior_net import model_size
        model_size(params.prior_model_path)
    if params.value_weight != 0 and params.value_model:  # negative: auto, 0.25 with this model
        from gojax.kernels.prior_net import load_value
        load_value(params.value_model)
    return params
