"""`gojax`: the command line.  One entry point, one subcommand per job; flags live only here.

    gojax bench [--board 9] [--batch 1024] [--playouts-per-position K] [--policy P] [--json]
    gojax bench --search [--simulations 3000] [--leaves L] [--playouts-per-leaf K] [--json]
    gojax gtp [--size 9] [--komi 7.5] [--simulations 3000 | --seconds S] [search options]
    gojax match --black CMD --white CMD --games N --out DIR [--size 9] [--alternate]
    gojax scaling --study selfplay|gnugo --n 250 500 ... --games G --out DIR
    gojax evaluate FILES... --playouts P --out OUT.jsonl|.csv [--seed S] [--plot DIR]
    gojax analyze FILES... --simulations N --out OUT.jsonl [--trees G]   (a search per position)
    gojax analysis [--visits 500] [search options]       (KataGo's JSON analysis protocol)
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import sys
import tempfile

from gojax.engine_config import (
    EngineConfig,
    add_cpu_threads,
    add_gtp_options,
    add_playout_device,
    add_playout_workers,
    add_search_options,
    board_size,
    params_from_args,
    positive_float,
    positive_int,
    whole_number,
)


# --- checks made before any work starts: a bad path is one line and exit code 2 -----------------
def writable_folder(command: str, flag: str, path: str, keep: bool = True) -> None:
    """Prove the folder takes a file, making it and its missing parents (with `keep` False, for
    the proof only: a run that makes it itself and fails leaves nothing behind), or exit with
    why not."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise SystemExit(f"gojax {command}: {flag} {path} is a file, not a folder")
    missing, parent = [], os.path.abspath(path)
    while not os.path.exists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".gojax-write-check-"):
            pass
    except OSError as err:
        raise SystemExit(f"gojax {command}: cannot write to {flag} {path}: {err.strerror or err}") from None
    finally:
        for folder in [] if keep else missing:  # deepest first
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def writable_file(command: str, flag: str, path: str) -> None:
    """The file can be created or appended to (its folder is made if needed), or exit with why not."""
    if os.path.isdir(path):
        raise SystemExit(f"gojax {command}: {flag} {path} is a folder, not a file")
    writable_folder(command, flag, os.path.dirname(os.path.abspath(path)))
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise SystemExit(f"gojax {command}: cannot write to {flag} {path}: permission denied")


def _add_bench(sub):
    p = sub.add_parser("bench", help="playout throughput (playouts from the empty board; --policy picks them)")
    p.add_argument("--board", type=board_size, default=9, help="board size (default 9)")
    p.add_argument("--batch", type=positive_int, default=1024, help="boards in flight per device call (default 1024)")
    p.add_argument("--playouts-per-position", type=positive_int, default=1, metavar="K",
                   help="playouts per start position; batch / K positions (default 1)")
    p.add_argument("--repeats", type=positive_int, default=None,
                   help="timed batches, or with --search timed searches per position; the median is reported"
                        " (default 5 batches, 1 search per position)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="end stdout with one JSON line")
    p.add_argument("--no-progress", action="store_true")
    add_cpu_threads(p, "on a CPU backend, 1 with --search of at most {small} boards per call and one virtual"
                        " device per core, each on one thread, above; else every core")
    add_playout_workers(p)
    add_playout_device(p, "default")
    s = p.add_argument_group("search benchmark (--search)")
    s.add_argument("--search", action="store_true", help="time whole searches instead of bare playouts")
    s.add_argument("--simulations", type=positive_int, default=3000, help="simulations (playouts) per search")
    s.add_argument("--trees", type=positive_int, default=None, metavar="G",
                   help="search G trees together, one device call per round (search/forest.py)")
    s.add_argument("--sgf", nargs="+", default=None, metavar="FILE",
                   help="search from the positions (after --move moves) of these game records (files or folders) "
                        "instead of the empty board and two random games; real games' positions cost the host more "
                        "per leaf")
    s.add_argument("--move", type=int, default=None, metavar="N", help="with --sgf: moves to replay (default: all)")
    s.add_argument("--jobs", type=positive_int, default=1, metavar="J",
                   help="J processes at once, each with its own searches (a forest of --trees G, or lone searches)"
                        " and seeds, sharing the device: their aggregate simulations/s, timed together once all have"
                        " compiled (default 1)")
    add_search_options(p)
    p.set_defaults(func=_run_bench)


def search_params(args, **overrides):
    """params_from_args for the command line: a bad setting ends the command with one line."""
    try:
        return params_from_args(args, **overrides)
    except ValueError as err:
        raise SystemExit(f"gojax: {err}") from None


def _run_bench(args) -> int:
    from gojax.bench import bench_playouts, format_report, record_positions
    positions = None
    if args.playout_device != "default" and not args.search:
        raise SystemExit("gojax bench: --playout-device needs --search (bare playouts run on the default device)")
    if args.sgf:
        if not args.search:
            raise SystemExit("gojax bench: --sgf needs --search (playouts are timed from the empty board)")
        try:
            positions = record_positions(args.sgf, args.move)
        except ValueError as err:
            raise SystemExit(f"gojax bench: {err}") from None

    def report(r: dict, text) -> int:  # the report, then (with --json) its JSON line
        if positions:
            r.update(sgf=args.sgf, move=args.move)
        print(text(r))
        if args.json:
            print(json.dumps(r))
        return 0
    if args.jobs > 1:
        if not args.search:
            raise SystemExit("gojax bench: --jobs needs --search (processes that share a device run searches)")
        from gojax.bench import bench_jobs, format_jobs_report
        kwargs = {"board": args.board, "simulations": args.simulations, "params": search_params(args),
                  "positions": positions, "playout_device": args.playout_device}
        if args.trees:
            kind, kwargs = "forest", {**kwargs, "trees": args.trees, "repeats": args.repeats or 3}
        else:
            kind, kwargs = "search", {**kwargs, "repeats": args.repeats or 1}
        try:
            return report(bench_jobs(args.jobs, kind, kwargs, args.job_setup, progress=not args.no_progress),
                          format_jobs_report)
        except RuntimeError as err:
            raise SystemExit(f"gojax bench: {err}") from None
    if args.search and args.trees:
        from gojax.bench import bench_forest, format_forest_report
        return report(bench_forest(args.board, args.simulations, args.trees, search_params(args),
                                   repeats=args.repeats or 3, progress=not args.no_progress, positions=positions,
                                   playout_device=args.playout_device), format_forest_report)
    if args.search:
        from gojax.bench import bench_search, format_search_report
        r = bench_search(args.board, args.simulations, search_params(args), repeats=args.repeats or 1,
                         progress=not args.no_progress, positions=positions, playout_device=args.playout_device,
                         playout_workers=args.playout_workers_applied, share_from=args.playout_share_from)
        r["xla_cpu_threads"] = args.cpu_threads_applied or "all"
        return report(r, format_search_report)
    try:
        r = bench_playouts(args.board, args.batch, args.playouts_per_position, args.repeats or 5, args.seed,
                           search_params(args).playout_config(), progress=not args.no_progress)
    except ValueError as err:
        raise SystemExit(f"gojax bench: {err}") from None
    return report(r, format_report)


def _add_gtp(sub):
    p = sub.add_parser("gtp", help="the GTP engine on stdin/stdout (GoGui, Sabaki, Lizzie, twogtp, KGS)")
    add_gtp_options(p)
    p.set_defaults(func=_run_gtp)


def _run_gtp(args) -> int:
    try:
        config = EngineConfig.from_args(args)
    except ValueError as err:
        raise SystemExit(f"gojax: {err}") from None
    try:
        log = open(args.log_file, "a", buffering=1) if args.log_file else sys.stderr
    except OSError as err:
        raise SystemExit(f"gojax gtp: cannot write to --log-file {args.log_file}: {err.strerror or err}") from None
    # Only protocol replies may reach stdout: keep it for GTP, and point file descriptor 1 at
    # stderr so that anything else (JAX, XLA, C libraries) printing there cannot corrupt it.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    from gojax.gtp import GtpEngine
    from gojax.gtp_commands import GtpCommands
    from gojax.kernels.learnt import ModelError
    from gojax.player import Player
    try:
        options = dataclasses.replace(config.player_options(log, verbose=not args.quiet),
                                      playout_workers=args.playout_workers_applied,
                                      playout_share_from=args.playout_share_from)
        player = Player(args.size, args.komi, config.params, options)
    except ModelError as err:  # a learnt policy fitted for another board size
        raise SystemExit(f"gojax gtp: {err}") from None
    threads = f" with {args.cpu_threads_applied} XLA CPU thread(s)" if args.cpu_threads_applied else ""
    if args.playout_workers_applied:
        threads += (f"{' and' if threads else ' with'} {args.playout_workers_applied} playout worker process(es)"
                    + (f" for boards of {args.playout_share_from}x{args.playout_share_from} and more"
                       if args.playout_share_from else ""))
    print(f"[gojax] ready on {_device()}{threads}; kernels compile at the first clear_board of each board size"
          + (" (--no-warmup: at the first genmove)" if args.no_warmup else ""), file=log, flush=True)
    GtpEngine(GtpCommands(player, warm_up=not args.no_warmup, lizzie=args.lizzie), out=protocol, log=log).serve(sys.stdin)
    return 0


def _device() -> str:
    from gojax.bench import device_description
    return device_description()


def _add_match(sub):
    p = sub.add_parser("match", help="many games between two GTP engines (resumable)")
    p.add_argument("--black", required=True, help="engine A's command (Black in the first game)")
    p.add_argument("--white", required=True, help="engine B's command")
    p.add_argument("--games", type=positive_int, default=10)
    p.add_argument("--size", type=board_size, default=9)
    p.add_argument("--komi", type=float, default=7.5)
    p.add_argument("--alternate", action="store_true", help="swap colours every game")
    p.add_argument("--out", required=True, help="folder for results.jsonl and games/*.sgf")
    p.add_argument("--referee", choices=["gnugo", "gojax"], default="gnugo")
    p.add_argument("--move-timeout", type=positive_float, default=120.0, help="seconds per genmove before a forfeit")
    p.add_argument("--max-moves", type=positive_int, default=None, help="stop and score a game after this many moves")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="games played at the same time (default 1); with --parallel-games: arena processes, each "
                        "playing G games at once")
    p.add_argument("--parallel-games", type=positive_int, default=None, metavar="G",
                   help="play G games at once in one process: the `gojax gtp` engines' searches in one device call "
                        "per round, any other engine in its own processes (gojax/arena.py)")
    p.add_argument("--same-seeds", action="store_true",
                   help="do not give gojax and GNU Go a new --seed every game ({game} in a command is always replaced)")
    p.add_argument("--openings", nargs="+", default=[], metavar="SGF",
                   help="SGF files or folders of them: game i starts from opening i (i // 2 with --alternate, so "
                        "each engine plays each opening from both sides), cycling")
    p.add_argument("--opening-moves", type=positive_int, default=None, metavar="N",
                   help="play only the first N moves of each opening (default all)")
    p.add_argument("--name-black", default=None)
    p.add_argument("--name-white", default=None)
    _add_distributed(p, "rounds of N x --jobs games split over the processes; process 0 writes results.jsonl")
    p.add_argument("--force", action="store_true",
                   help="resume into an --out whose games were played with other settings (engines, board), mixing"
                        " them; without it such a resume is refused and names what changed")
    p.add_argument("--json", action="store_true", help="end stdout with the summary as one JSON line")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_match)


def _arena_match(cfg, args) -> dict:
    from gojax.arena import ArenaEngine, engine_from_command, run_arena
    a, b = engine_from_command(cfg.name_a, cfg.engine_a), engine_from_command(cfg.name_b, cfg.engine_b)
    if not isinstance(a, ArenaEngine) and not isinstance(b, ArenaEngine):
        raise ValueError("--parallel-games needs a `gojax gtp` engine on one side at least")
    return run_arena(a, b, cfg, parallel=args.parallel_games, progress=not args.no_progress, jobs=args.jobs)


def _engine_name(cmd: str) -> str:
    """A short name for an engine command: its program, or the module of `python -m module`."""
    import os
    import shlex
    argv = shlex.split(cmd)
    if not argv:
        return "engine"
    if os.path.basename(argv[0]).startswith("python") and "-m" in argv[1:-1]:
        return argv[argv.index("-m", 1) + 1]
    return os.path.basename(argv[0])


def _run_match(args) -> int:
    from gojax.match import (
        EngineFailure,
        MatchConfig,
        OpeningError,
        ResumeError,
        format_summary,
        json_safe,
        opening_files,
        run_match,
    )
    if _processes(args)[1] == 0:  # the writer's check (another process's would race its folder)
        writable_folder("match", "--out", args.out, keep=False)
    a = args.name_black or _engine_name(args.black)
    b = args.name_white or _engine_name(args.white)
    if a == b:
        a, b = a + "-A", b + "-B"
    cfg = MatchConfig(engine_a=args.black, engine_b=args.white, games=args.games, size=args.size, komi=args.komi,
                      alternate=args.alternate, out=args.out, referee=args.referee, move_timeout=args.move_timeout,
                      max_moves=args.max_moves, name_a=a, name_b=b, vary_seeds=not args.same_seeds,
                      force=args.force)
    try:
        cfg.openings = opening_files(args.openings)
        cfg.opening_moves = args.opening_moves
        if args.parallel_games:
            summary = _arena_match(cfg, args)
        else:
            summary = run_match(cfg, progress=not args.no_progress, jobs=max(1, args.jobs), processes=_processes(args))
    except (OpeningError, ResumeError, EngineFailure, ValueError) as err:
        print(f"gojax match: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(format_summary(summary, a, b))
    if args.json:
        print(json.dumps(json_safe(summary), allow_nan=False))
    return 0


def _add_results(sub):
    p = sub.add_parser("results", help="a match folder's summary; with --versus, two folders compared game by game")
    p.add_argument("folder", help="a `gojax match --out` folder (results.jsonl, match.json)")
    p.add_argument("--versus", metavar="BASE", default=None,
                   help="another folder that played the same games (opponent, board, komi, colours, seeds): the "
                        "games each engine won alone and a sign test on them (gojax/match_results.py)")
    p.add_argument("--engine", default=None,
                   help="the engine whose wins count, in folders without match.json (default: the one named gojax...)")
    p.add_argument("--force", action="store_true", help="pair folders whose match.json settings differ")
    p.add_argument("--json", action="store_true", help="end stdout with the figures as one JSON line")
    p.set_defaults(func=_run_results)


def _run_results(args) -> int:
    from gojax.match import format_summary, json_safe
    from gojax.match_results import ResultsError, folder_summary, format_paired, load_folder, paired
    try:
        new = load_folder(args.folder, args.engine)
        out = {"summary": folder_summary(new)}
        if args.versus:
            out["paired"] = paired(new, load_folder(args.versus, args.engine), force=args.force)
    except (ResultsError, OSError) as err:
        print(f"gojax results: {err}", file=sys.stderr)
        return 2
    print(f"{args.folder}:")
    print(format_summary(out["summary"], new.engine, new.opponent))
    if args.versus:
        print(format_paired(out["paired"], args.folder, args.versus))
    if args.json:
        print(json.dumps(json_safe(out), allow_nan=False))
    return 0


def _add_scaling(sub):
    p = sub.add_parser("scaling", help="playout-count study: 2N vs N, or N vs GNU Go (resumable)")
    p.add_argument("--study", choices=["selfplay", "gnugo"], default="selfplay")
    p.add_argument("--n", type=positive_int, nargs="+", default=[250, 500, 1000, 2000, 4000, 8000],
                   help="simulation counts N (default 250 .. 8000)")
    p.add_argument("--games", type=positive_int, default=100, help="games per point (default 100)")
    p.add_argument("--size", type=board_size, default=9)
    p.add_argument("--komi", type=float, default=7.5)
    p.add_argument("--gnugo", default="gnugo --mode gtp --level 10 --chinese-rules")
    p.add_argument("--policy", choices=["uniform", "mogo", "learnt"], default=None,
                   help="playout policy of every gojax engine (default: gojax gtp's)")
    p.add_argument("--engine-options", default="", help="extra `gojax gtp` options for every gojax engine")
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="games played at the same time in each match (default 1); with --parallel-games: arena "
                        "processes, each playing G games at once")
    p.add_argument("--parallel-games", type=positive_int, default=None, metavar="G",
                   help="play each match's games G at once in one process, gojax's searches in one device call "
                        "per round, GNU Go in its own processes (gojax/arena.py)")
    p.add_argument("--force", action="store_true",
                   help="resume into matches played with other settings, mixing them (see gojax match --force)")
    _add_distributed(p, "each match's rounds of N x --jobs games split over the processes; process 0 writes")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_scaling)


def _run_scaling(args) -> int:
    from gojax.match import SMALL_SAMPLE, EngineFailure, ResumeError, remove_if_empty
    from gojax.scaling import run_scaling
    if _processes(args)[1] == 0:
        writable_folder("scaling", "--out", args.out, keep=False)
    extra = (f"--policy {args.policy} " if args.policy else "") + args.engine_options
    made = [os.path.abspath(args.out)] if not os.path.exists(args.out) else []
    try:
        rows = run_scaling(args.study, args.n, args.games, args.out, args.size, args.komi, args.gnugo,
                           extra, progress=not args.no_progress, jobs=args.jobs, parallel_games=args.parallel_games or 0,
                           force=args.force, processes=_processes(args))
    except (EngineFailure, ResumeError, ValueError) as err:
        remove_if_empty(made)
        print(f"gojax scaling: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # finished games are saved; the match runner said where
        return 130
    for r in rows:
        print(f"N={r['n']}: {r['wins']:g}/{r['games']} = {r['win_rate']:.3f} [{r['win_lo']:.3f}, {r['win_hi']:.3f}],"
              f" Elo {r['elo']:+.0f} [{r['elo_lo']:+.0f}, {r['elo_hi']:+.0f}]"
              + (" (too few games for a figure)" if r["games"] < SMALL_SAMPLE else ""))
    print(f"wrote {args.out}/scaling.csv and scaling.png")
    return 0


def _add_distributed(p, how: str = "each process its share; process 0 writes the rows") -> None:
    p.add_argument("--coordinator", default=None, metavar="HOST:PORT",
                   help=f"several processes or hosts (jax.distributed): process 0's address; give every process the"
                        f" same command, files and --out on a shared file system: {how}")
    p.add_argument("--num-processes", type=positive_int, default=None, metavar="N", help="with --coordinator")
    p.add_argument("--process-id", type=int, default=None, metavar="I", help="with --coordinator: 0 .. N-1")


def _processes(args) -> tuple[int, int]:
    """(N, I) of a command started with --coordinator; (1, 0) otherwise."""
    if getattr(args, "coordinator", None) is None:
        return 1, 0
    return args.num_processes, args.process_id


def _start_distributed(args) -> None:
    """jax.distributed.initialize from --coordinator, --num-processes, --process-id (before any
    backend exists; on CPUs with gloo collectives)."""
    if getattr(args, "coordinator", None) is None:
        if getattr(args, "num_processes", None) is not None or getattr(args, "process_id", None) is not None:
            raise SystemExit(f"gojax {args.command}: --num-processes and --process-id go with --coordinator")
        return
    n, i = args.num_processes, args.process_id
    if args.command == "analyze" and args.jobs > 1:
        raise SystemExit(f"gojax {args.command}: --coordinator and --jobs: one or the other")
    if getattr(args, "parallel_games", None):
        raise SystemExit(f"gojax {args.command}: --coordinator plays games through GTP processes: not with"
                         " --parallel-games")
    if n is None or i is None or not 0 <= i < n:
        raise SystemExit(f"gojax {args.command}: --coordinator needs --num-processes N and --process-id 0..N-1")
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=args.coordinator, num_processes=n, process_id=i)


def _add_evaluate(sub):
    p = sub.add_parser("evaluate", help="win rate, score and ownership of every position of SGF games")
    p.add_argument("files", nargs="+", help="SGF files or folders of them")
    p.add_argument("--playouts", type=positive_int, default=1024, help="playouts per position (default 1024)")
    p.add_argument("--policy", choices=["uniform", "mogo", "learnt"], default="uniform",
                   help="playout policy (uniform: the unbiased estimate of the position's value)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch", type=positive_int, default=64, help="positions per device call (default 64)")
    p.add_argument("--out", required=True, help="OUT.jsonl or OUT.csv; rows already there are skipped")
    p.add_argument("--plot", default=None, metavar="DIR", help="ownership heat map of each game's last position")
    p.add_argument("--no-progress", action="store_true")
    add_cpu_threads(p, "one virtual device per core, each on one thread, on a CPU backend; else every core")
    _add_distributed(p)
    p.set_defaults(func=_run_evaluate)


def _run_evaluate(args) -> int:
    from gojax.evaluate import SgfInputError, run_evaluate
    if not args.out.endswith((".jsonl", ".csv")):
        raise SystemExit("gojax evaluate: --out must end in .jsonl or .csv")
    writable_file("evaluate", "--out", args.out)
    if args.plot:
        writable_folder("evaluate", "--plot", args.plot)
    try:  # run_evaluate reads every file before it writes anything
        n = run_evaluate(args.files, args.out, args.playouts, args.seed, args.batch, args.policy, args.plot,
                         progress=not args.no_progress)
    except SgfInputError as err:
        raise SystemExit(f"gojax evaluate: {err}") from None
    except KeyboardInterrupt:
        return _interrupted("evaluate", args.out)
    print(f"wrote {n} rows to {args.out}")
    return 0


def _add_analyze(sub):
    p = sub.add_parser("analyze", help="a search for every position of SGF games, many trees at once (resumable)")
    p.add_argument("files", nargs="+", help="SGF files or folders of them")
    p.add_argument("--simulations", type=positive_int, default=1000, help="simulations per position (default 1000)")
    p.add_argument("--trees", type=positive_int, default=16, metavar="G",
                   help="positions searched together, one device call per round (default 16)")
    p.add_argument("--playouts", type=positive_int, default=256,
                   help="playouts per position for evaluate's columns (default 256)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="P",
                   help="worker processes, each searching its own batches of G positions (default 1; on a GPU several"
                        " fill the device that one forest's host work leaves idle; the rows are the same)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="OUT.jsonl; rows already there are skipped")
    p.add_argument("--no-progress", action="store_true")
    add_cpu_threads(p, "one virtual device per core, each on one thread, on a CPU backend; else every core")
    _add_distributed(p)
    add_search_options(p)
    p.set_defaults(func=_run_analyze)


def _interrupted(command: str, out: str) -> int:
    """^C during evaluate or analyze: the rows written so far stay, and the same command goes on
    from there (a row half written is dropped then)."""
    from gojax.evaluate import done_rows
    print(f"\ngojax {command}: interrupted; {done_rows(out)} rows in {out}: run the same command to go on",
          file=sys.stderr)
    return 130


def _run_analyze(args) -> int:
    from gojax.analyze import run_analyze
    from gojax.evaluate import SgfInputError
    if not args.out.endswith(".jsonl"):
        raise SystemExit("gojax analyze: --out must end in .jsonl")
    writable_file("analyze", "--out", args.out)
    from gojax.kernels.learnt import ModelError
    params = search_params(args)
    existed = os.path.exists(args.out)
    try:  # run_analyze reads every file before it writes anything
        n = run_analyze(args.files, args.out, args.simulations, params, args.trees, args.playouts,
                        progress=not args.no_progress, jobs=args.jobs, cpu_threads=args.cpu_threads)
    except (SgfInputError, ModelError) as err:  # ModelError: a learnt policy fitted for another board size
        if not existed and os.path.exists(args.out) and not os.path.getsize(args.out):
            os.remove(args.out)  # leave nothing behind that looks like a result
        raise SystemExit(f"gojax analyze: {err}") from None
    except KeyboardInterrupt:
        return _interrupted("analyze", args.out)
    print(f"wrote {n} rows to {args.out}")
    return 0


def _add_analysis(sub):
    p = sub.add_parser("analysis", help="KataGo's JSON analysis protocol on stdin/stdout (gojax/analysis.py)")
    p.add_argument("--visits", type=positive_int, default=500, help="simulations per turn without maxVisits (500)")
    p.add_argument("--batch", type=positive_int, default=64, metavar="G",
                   help="queued turns searched together, one device call per round (default 64)")
    p.add_argument("--report-as", choices=["SIDETOMOVE", "BLACK", "WHITE"], default="SIDETOMOVE",
                   help="whose view winrates, scores and ownership take (KataGo's reportAnalysisWinratesAs;"
                        " a query's overrideSettings replaces it)")
    p.add_argument("--max-time", type=positive_float, default=None, metavar="SECONDS",
                   help="seconds per turn at most (KataGo's maxTime; a query's overrideSettings replaces it)")
    p.add_argument("--seed", type=int, default=0)
    # KataGo's command line, so that a tool that starts `katago analysis ...` can start gojax.
    p.add_argument("-config", dest="katago_config", default=None, help="accepted and ignored (KataGo's config)")
    p.add_argument("-model", dest="katago_model", default=None, help="accepted and ignored (KataGo's network)")
    p.add_argument("-analysis-threads", dest="katago_threads", default=None, help="accepted and ignored")
    p.add_argument("-quit-without-waiting", dest="katago_quit", action="store_true", help="accepted and ignored")
    add_cpu_threads(p, "1 on a CPU backend when L x K <= {small}, else every core")
    add_search_options(p)
    p.set_defaults(func=_run_analysis)


def _run_analysis(args) -> int:
    from gojax.analysis import AnalysisEngine
    params = search_params(args)
    for flag, value in (("-config", args.katago_config), ("-model", args.katago_model),
                        ("-analysis-threads", args.katago_threads)):
        if value is not None:
            print(f"[gojax] analysis: {flag} {value} ignored (gojax has no config file or network)", file=sys.stderr)
    AnalysisEngine(params, args.visits, args.report_as, batch=args.batch, max_time=args.max_time).serve(
        sys.stdin, sys.stdout)
    return 0


def _add_learn_prior(sub):
    p = sub.add_parser("learn-prior", help="fit the shape prior (--prior shape) to gojax's moves in match folders, "
                                           "or to a teacher's policy (--teacher)")
    p.add_argument("folders", nargs="*", help="match folders (results.jsonl + games/), searched recursively")
    p.add_argument("--teacher", metavar="NPZ", help="fit to this teacher file's move distributions instead "
                                                    "(bench/teacher_policy.py: KataGo's network policy)")
    p.add_argument("--min-simulations", type=int, default=2000,
                   help="learn only from gojax engines searching at least this many simulations (2000)")
    p.add_argument("--learn-from", nargs="+", choices=["gojax", "pachi"], default=["gojax"],
                   help="whose moves to learn: gojax's, Pachi's (`-t =N` games), or both (default gojax)")
    p.add_argument("--compare", default=None, metavar="NPZ",
                   help="also report this model's held-out accuracy (e.g. the bundled search/data/shape9.npz)")
    p.add_argument("--holdout-every", type=int, default=5, metavar="K",
                   help="hold out every K-th game to measure prediction (5; 0: none)")
    p.add_argument("--iterations", type=positive_int, default=30, help="MM iterations (30)")
    p.add_argument("--size", type=positive_int, default=9, help="learn from the games of this board size (9)")
    p.add_argument("--diamond", action="store_true",
                   help="add the diamond feature (the 12 points within distance 2; search/shape.py)")
    p.add_argument("--out", required=True, help="OUT.npz for --shape-model")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_learn_prior)


def _run_learn_prior(args) -> int:
    from pathlib import Path

    from tqdm import tqdm

    from gojax import learn
    from gojax.search import shape
    if bool(args.folders) == bool(args.teacher):
        raise SystemExit("gojax learn-prior: give match folders or --teacher NPZ (one of the two)")
    for folder in args.folders:
        if not os.path.isdir(folder):
            raise SystemExit(f"gojax learn-prior: {folder}: no such folder (give folders of match results)")
    if args.teacher and not os.path.isfile(args.teacher):
        raise SystemExit(f"gojax learn-prior: --teacher {args.teacher}: no such file")
    if args.teacher and args.diamond:
        raise SystemExit("gojax learn-prior: --diamond learns from match folders only")
    writable_file("learn-prior", "--out", args.out)
    bar = None if args.no_progress else (lambda rows: tqdm(rows, desc="games", unit="game"))
    try:
        compare = shape.ShapeModel.load(args.compare) if args.compare else None
    except (OSError, ValueError, KeyError) as err:
        raise SystemExit(f"gojax learn-prior: --compare {args.compare}: {err}") from None
    diamond = args.diamond or (compare is not None and compare.uses_diamond)  # features both models need
    if args.teacher:
        try:
            pos = learn.from_teacher(args.teacher, None if args.no_progress else
                                     (lambda rows: tqdm(rows, desc="positions", unit="position")))
        except (OSError, ValueError, KeyError) as err:
            raise SystemExit(f"gojax learn-prior: --teacher {args.teacher}: {err}") from None
    else:
        pos = learn.collect([Path(f) for f in args.folders], args.min_simulations, bar, tuple(args.learn_from),
                            args.size, diamond)
    if not pos.chosen and args.teacher:
        raise SystemExit(f"gojax learn-prior: --teacher {args.teacher}: no position with a legal move")
    if not pos.chosen:
        raise SystemExit(f"gojax learn-prior: no {args.size}x{args.size} moves by {' or '.join(args.learn_from)} at >= "
                         f"{args.min_simulations} simulations found")
    train, test = learn.split(pos, args.holdout_every)
    model = shape.fit(train.feats if args.diamond else [f[:, :5] for f in train.feats], train.chosen, args.iterations,
                      targets=train.targets or None)
    model.save(args.out)
    what = "teacher positions" if args.teacher else "moves"
    print(f"fitted to {len(train.chosen)} {what} from {len(set(train.games))} games; wrote {args.out}")
    if test.chosen:
        compared = [(f"model {args.compare}", learn.accuracy(compare, test))] if compare else []
        for name, r in [("mogo verdict", learn.accuracy(model, test, verdict_only=True)),
                        ("shape model", learn.accuracy(model, test))] + compared:
            print(f"held out ({r['positions']} moves, {len(set(test.games))} games), {name}: top-1 {r['top1']:.3f}"
                  + ("" if name == "mogo verdict" else f", log-likelihood {r['loglik']:.3f} (uniform {r['uniform_loglik']:.3f})"))
    return 0


def _add_learn_policy(sub):
    p = sub.add_parser("learn-policy", help="fit the learnt playout policy (--policy learnt) to a teacher's move "
                                            "distributions (bench/teacher_data.py)")
    p.add_argument("data", help="positions.npz written by `python bench/teacher_data.py --pack`")
    p.add_argument("--out", required=True, help="OUT.npz for --policy-model")
    p.add_argument("--epochs", type=positive_int, default=6, help="passes over the training positions (6)")
    p.add_argument("--learning-rate", type=float, default=0.05, help="Adam's step (0.05)")
    p.add_argument("--l2", type=float, default=1e-5, help="L2 penalty on the weights (1e-5)")
    p.add_argument("--seed", type=int, default=0, help="held-out games and batch order")
    p.add_argument("--init", metavar="NPZ", help="start from this model's weights; the L2 penalty then pulls "
                                                 "towards them (e.g. refine the bundled model on a stronger teacher, or on "
                                                 "another board size)")
    p.set_defaults(func=_run_learn_policy)


def _add_conv_shape(p, width: int, depth: int) -> None:
    p.add_argument("--width", type=positive_int, default=width, help=f"channels per 3x3 convolution ({width})")
    p.add_argument("--depth", type=positive_int, default=depth, help=f"3x3 convolutions ({depth})")


def _add_learn_net(sub):
    p = sub.add_parser("learn-net", help="fit the prior net (--prior learnt --prior-model NET) to a teacher's move "
                                         "distributions on top of a learnt linear model")
    p.add_argument("data", nargs="+", help="positions.npz written by `python bench/teacher_policy.py --pack` (or "
                                           "teacher_data.py); several are fitted together, each split into "
                                           "training and held-out games on its own")
    p.add_argument("--linear", default="", metavar="NPZ",
                   help="the learnt linear model the net corrects (`gojax learn-policy`; default: the bundled one)")
    p.add_argument("--out", required=True, help="OUT.npz for --prior-model")
    _add_conv_shape(p, width=32, depth=5)
    p.add_argument("--epochs", type=whole_number, default=20,
                   help="passes over the training positions (20; 0 with --init: the net as it is, measured on the "
                        "data and saved for the data's board size)")
    p.add_argument("--schedule", choices=("constant", "cosine"), default="constant",
                   help="the learning rate: constant, or decaying to 0 over the fit along half a cosine")
    p.add_argument("--learning-rate", type=float, default=2e-3, help="Adam's step size (2e-3; lower to refine an "
                                                                        "--init net)")
    p.add_argument("--init", metavar="NET", default="",
                   help="start from this prior net (its width, depth and linear model; --width, --depth and --linear "
                        "are then ignored): a net fitted on one board size can start another size's")
    p.add_argument("--seed", type=int, default=0, help="held-out games, initial weights and batch order")
    p.add_argument("--measure", metavar="DATA", default="",
                   help="also measure the start and the fitted net on every position of this teacher file (of the "
                        "same board size), e.g. KataGo's policy while fitting to Pachi's pattern prior")
    p.set_defaults(func=_run_learn_net)


def _run_learn_net(args) -> int:
    from gojax import learn_net
    inputs = args.data + ([args.linear] if args.linear else []) + ([args.init] if args.init else [])
    inputs += [args.measure] if args.measure else []
    return _run_policy_job("learn-net", args, inputs, learn_net.main)


def _add_learn_value(sub):
    p = sub.add_parser("learn-value", help="fit a value head to a teacher's win probabilities and save a prior net "
                                           "with it (for --value-weight)")
    p.add_argument("data", help="positions.npz with teacher values (`python bench/teacher_policy.py --pack`)")
    p.add_argument("--net", default="", metavar="NPZ",
                   help="the prior net whose input planes the head reads (default: the bundled 9x9 net)")
    p.add_argument("--out", required=True, help="OUT.npz: the net with its value head, for --value-model")
    _add_conv_shape(p, width=16, depth=3)
    p.add_argument("--epochs", type=whole_number, default=12,
                   help="passes over the training positions (12; 0 with --init: the head as it is, measured on the "
                        "data and saved with --net)")
    p.add_argument("--learning-rate", type=float, default=2e-3, help="Adam's first step size (2e-3; lower to refine "
                                                                        "an --init head), decaying to 0 along half a "
                                                                        "cosine")
    p.add_argument("--init", metavar="NET", default="",
                   help="start from this net's value head (its trunk and layers; --width and --depth are then "
                        "ignored): a head fitted on one board size can start another size's")
    p.add_argument("--seed", type=int, default=0, help="held-out games, initial weights and batch order")
    p.set_defaults(func=_run_learn_value)


def _run_learn_value(args) -> int:
    from gojax import learn_net
    from gojax.kernels import prior_net
    args.net = args.net or prior_net.BUNDLED
    return _run_policy_job("learn-value", args, [args.data, args.net] + ([args.init] if args.init else []),
                           learn_net.value_main)


def _run_policy_job(command: str, args, inputs: list[str], job) -> int:
    """learn-policy / learn-net / balance-policy: inputs checked, `job(args)` run, a bad file one line."""
    import zipfile
    writable_file(command, "--out", args.out)
    for path in inputs:
        if not os.path.isfile(path):
            raise SystemExit(f"gojax {command}: {path}: no such file")
        if not zipfile.is_zipfile(path):
            raise SystemExit(f"gojax {command}: {path}: not an .npz archive")
    try:
        job(args)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
        raise SystemExit(f"gojax {command}: {err}") from None
    return 0


def _run_learn_policy(args) -> int:
    from gojax import learn_policy
    inputs = [args.data] + ([args.init] if args.init else [])
    return _run_policy_job("learn-policy", args, inputs, learn_policy.main)  # ValueErrors name the file


def _add_balance_policy(sub):
    p = sub.add_parser("balance-policy", help="simulation balancing of a learnt playout policy against a teacher's "
                                              "values (Huang, Coulom and Lin 2010; bench/teacher_values.py)")
    p.add_argument("values", help="values.npz written by bench/teacher_values.py")
    p.add_argument("--positions", required=True, help="the positions.npz whose games the values index")
    p.add_argument("--model", default="", help="the model to balance (default: the bundled one)")
    p.add_argument("--out", required=True, help="OUT.npz for --policy-model")
    p.add_argument("--iterations", type=positive_int, default=8, help="passes over the training positions (8)")
    p.add_argument("--playouts", type=positive_int, default=32, help="N playouts per estimate (32)")
    p.add_argument("--step", type=float, default=0.1, help="the step alpha (0.1)")
    p.add_argument("--value-range", type=float, nargs=2, default=[0.0, 1.0], metavar=("LO", "HI"),
                   help="balance on the positions whose teacher value (Black's) lies in [LO, HI] (0 1: all)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_run_balance_policy)


def _run_balance_policy(args) -> int:
    from gojax import learn_policy
    return _run_policy_job("balance-policy", args, [args.values, args.positions], learn_policy.balance_main)


def _add_export_patterns(sub):
    p = sub.add_parser("export-patterns", help="the learnt 3x3 shapes as the playouts' pattern table "
                                               "(--playout-patterns)")
    p.add_argument("out", help="the .npy to write")
    p.add_argument("--model", default="", help="a `gojax learn-prior` model (default: the bundled 9x9 one)")
    p.add_argument("--threshold", type=float, default=1.0,
                   help="keep the shapes whose learnt log-gamma is at least this (1.0: 568 of 8,740 classes "
                        "of the bundled model)")
    p.set_defaults(func=_run_export_patterns)


def _run_export_patterns(args) -> int:
    import numpy as np

    from gojax.kernels.patterns import symmetry_classes
    from gojax.search import shape
    writable_file("export-patterns", "OUT", args.out)
    table = shape.playout_patterns(shape.load_model(args.model), args.threshold)
    with open(args.out, "wb") as f:  # np.save would add .npy to another name
        np.save(f, table)
    classes, n = symmetry_classes()
    print(f"wrote {args.out}: {len(np.unique(classes[table[0] > 0]))} of {n} pattern classes")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gojax", description="Monte-Carlo Go on accelerators (JAX).")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_bench(sub)
    _add_gtp(sub)
    _add_export_patterns(sub)
    _add_match(sub)
    _add_results(sub)
    _add_scaling(sub)
    _add_evaluate(sub)
    _add_analyze(sub)
    _add_analysis(sub)
    _add_learn_prior(sub)
    _add_learn_policy(sub)
    _add_learn_net(sub)
    _add_learn_value(sub)
    _add_balance_policy(sub)
    parser.subcommands = sub.choices  # name -> its parser, for errors in a subcommand's own usage
    return parser


# Subcommands that compile kernels for real work and gain from JAX's persistent compilation
# cache (`bench` is left out: it reports the compile time it measures).
CACHED_COMMANDS = ("gtp", "evaluate", "analysis", "analyze")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # shown with the subcommand's usage, not the top level's list of subcommands
        parser.subcommands[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    from gojax.runtime import SPLIT_BOARD, auto_playout_workers, configure_process, share_gpu_memory
    threads, boards = getattr(args, "cpu_threads", None), None
    if threads is not None and threads < 0:
        raise SystemExit(f"gojax {args.command}: --cpu-threads must be 0 (every core) or positive")
    if args.command in ("gtp", "analysis") or (args.command == "bench" and args.search):
        boards = args.leaves * args.playouts_per_leaf * (getattr(args, "trees", None) or 1)
    on_cpu = getattr(args, "playout_device", "default") != "default"
    if args.command in ("gtp", "analysis"):  # engines: often more than one process per GPU
        share_gpu_memory()
    if getattr(args, "jobs", 1) > 1 and args.command == "bench":  # the threads are the job processes' to set
        args.job_setup, threads = (threads, boards, on_cpu, False, args.board), 0
    # Many searches or positions per device call: on a CPU, one virtual device per core (runtime.split_cpu_devices).
    big = args.command in ("evaluate", "analyze") or bool(getattr(args, "parallel_games", 0))
    _start_distributed(args)  # before anything creates a backend, as configure_process may
    size = getattr(args, "size", None) if args.command == "gtp" else getattr(args, "board", None)
    workers = getattr(args, "playout_workers", None)
    if workers is not None and workers < 0:
        raise SystemExit(f"gojax {args.command}: --playout-workers must be 0 (none) or positive")
    if workers is None:  # chosen here (commands with --playout-workers): rounds on boards of SPLIT_BOARD or more
        workers = auto_playout_workers(threads, boards, big) if hasattr(args, "playout_workers") else 0
        args.playout_share_from = SPLIT_BOARD
    else:  # asked for: every round
        args.playout_share_from = 0
    args.playout_workers_applied = workers
    applied = configure_process(args.command in CACHED_COMMANDS, threads, boards, on_cpu, big, size, workers)
    if hasattr(args, "cpu_threads"):
        args.cpu_threads_applied = applied
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
