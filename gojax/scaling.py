"""`gojax scaling`: how strength grows with the number of simulations per move.

Two studies, each a series of resumable matches (gojax/match.py) under one folder:
  selfplay  gojax at 2N simulations vs gojax at N, colours alternating (seed 004, Table 1)
  gnugo     gojax at N simulations vs GNU Go (level 10 by default; seed 000, Table 1)
Writes OUT/scaling.csv (one row per N: games, wins, win rate, standard error, Elo and its 95%
interval) and OUT/scaling.png (win rate vs N with error bars, MoGo's published points beside
them on 9x9 and, for self-play, 19x19; Elo vs log2 N).
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import shlex
import sys

from gojax.arena import ArenaEngine, ExternalEngine, run_arena
from gojax.engine_config import EngineConfig
from gojax.match import MatchConfig, run_match

FIELDS = ["study", "n", "games", "wins", "win_rate", "stderr", "win_lo", "win_hi", "elo", "elo_lo", "elo_hi"]

# Published points drawn beside ours, by (study, board size): (N, win rate).  selfplay: 2N vs N,
# MoGo, seed 004 Table 1 (its 9x9 and 19x19 columns); gnugo: MoGo against GNU Go 3.7.10 level 10,
# hand-selected schedule, seed 000 Table 1.
PUBLISHED = {
    ("selfplay", 9): ("MoGo, 2N vs N (Lee et al., Table 1)", [(1000, 0.711), (4000, 0.687), (16000, 0.665)]),
    ("selfplay", 19): ("MoGo, 2N vs N, 19x19 (Lee et al., Table 1)",
                       [(1000, 0.905), (4000, 0.845), (16000, 0.802), (256000, 0.585)]),
    ("gnugo", 9): ("MoGo vs GNU Go 3.7.10 (Gelly & Silver 2011, Table 1)", [(3000, 0.69), (10000, 0.82)]),
}


ELO_DRAWN = 800  # where the plot draws an infinite Elo


def gojax_config(simulations: int, options: str = "", seed: int = 0) -> EngineConfig:
    """A study's gojax: `options` as `gojax gtp` reads them, exactly `simulations` a move."""
    base = EngineConfig.from_command(f"gojax gtp {options}")
    return dataclasses.replace(base, simulations=simulations, seconds=None, exact=True,
                               params=dataclasses.replace(base.params, seed=seed))


def run_scaling(study: str, ns: list[int], games: int, out: str, size: int = 9, komi: float = 7.5,
                gnugo: str = "gnugo --mode gtp --level 10 --chinese-rules", extra: str = "",
                move_timeout: float = 300.0, progress: bool = True, jobs: int = 1,
                parallel_games: int = 0, force: bool = False, processes: tuple[int, int] = (1, 0)) -> list[dict]:
    """One match per N (resumable).  `parallel_games` > 0: each match is played by the batched
    arena (gojax/arena.py), that many games at once in each of `jobs` processes (GNU Go in its own
    processes); else `jobs` games at once through GTP processes."""
    if study not in ("selfplay", "gnugo"):
        raise ValueError(f"unknown study {study!r}")
    gojax_config(ns[0], extra)  # a bad option fails before the first game
    program = f"{shlex.quote(sys.executable)} -P -m gojax"
    rows = []
    for n in ns:
        if study == "selfplay":
            a, b = gojax_config(2 * n, extra, seed=1), gojax_config(n, extra, seed=2)
            name_a, name_b, folder = f"gojax-{2 * n}", f"gojax-{n}", f"selfplay_{2 * n}_vs_{n}"
        else:
            a, b = gojax_config(n, extra), gnugo
            name_a, name_b, folder = f"gojax-{n}", "gnugo", f"gnugo_{n}"
        commands = [e.command(program, "--quiet") if isinstance(e, EngineConfig) else e for e in (a, b)]
        cfg = MatchConfig(engine_a=commands[0], engine_b=commands[1], games=games, size=size, komi=komi, alternate=True,
                          out=os.path.join(out, folder), gnugo=gnugo.split(" --level")[0] + " --chinese-rules"
                          if "--level" in gnugo else gnugo, move_timeout=move_timeout,
                          name_a=name_a, name_b=name_b, force=force)
        if parallel_games:
            s = run_arena(ArenaEngine(name_a, a), ArenaEngine(name_b, b) if study == "selfplay" else ExternalEngine(name_b, b),
                          cfg, parallel=parallel_games, progress=progress, jobs=jobs)
        else:
            s = run_match(cfg, progress=progress, jobs=jobs, processes=processes)
        lo, hi = s["elo_95"]
        win_lo, win_hi = s["win_rate_95"]
        rows.append({"study": study, "n": n, "games": s["games"], "wins": s["wins"][name_a],
                     "win_rate": s["win_rate"], "stderr": s["stderr"], "win_lo": win_lo, "win_hi": win_hi,
                     "elo": s["elo"], "elo_lo": lo, "elo_hi": hi})
        if processes[1] == 0:  # one writer
            write_outputs(rows, out, size)
    return rows


def write_outputs(rows: list[dict], out: str, size: int = 9) -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "scaling.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    plot(rows, os.path.join(out, "scaling.png"), size)


def plot(rows: list[dict], path: str, size: int = 9) -> list[str]:
    """Win rate against N and Elo against log2 N, with 95% Wilson intervals (an infinite Elo, all
    games won or lost, is drawn at +-ELO_DRAWN); the published MoGo points of the study and
    board size (PUBLISHED: 9x9, and 19x19 for self-play) are drawn beside gojax's.  Returns the
    win-rate panel's legend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    study = rows[0]["study"] if rows else ""
    ns = [r["n"] for r in rows]
    ax1.errorbar(ns, [r["win_rate"] for r in rows], fmt="o-", capsize=3, label="gojax",
                 yerr=[[r["win_rate"] - r["win_lo"] for r in rows], [r["win_hi"] - r["win_rate"] for r in rows]])
    if (study, size) in PUBLISHED:
        label, points = PUBLISHED[study, size]
        ax1.plot([n for n, _ in points], [w for _, w in points], "s--", color="grey", label=label)
        ticks = sorted(set(ns) | {n for n, _ in points})
    else:
        ticks = ns
    ax1.legend(fontsize=7, loc="lower right")
    ax1.axhline(0.5, color="grey", lw=0.8)
    ax1.set(xscale="log", xlabel="N (simulations per move)", ylim=(0, 1),
            ylabel="win rate of 2N vs N" if study == "selfplay" else "gojax win rate vs GNU Go",
            title=f"{study}: win rate (95% interval)")
    # Label the measured N themselves: a log axis's default minor labels (3x10^2 ...) collide.
    ax1.set_xticks(ticks, [f"{n:,}" for n in ticks])
    ax1.minorticks_off()
    drawn = [{k: max(-ELO_DRAWN, min(ELO_DRAWN, r[k])) for k in ("elo", "elo_lo", "elo_hi")} for r in rows]
    ax2.errorbar([math.log2(n) for n in ns], [d["elo"] for d in drawn],
                 yerr=[[d["elo"] - d["elo_lo"] for d in drawn], [d["elo_hi"] - d["elo"] for d in drawn]],
                 fmt="s-", capsize=3)
    ax2.set(xlabel="log2 N", ylabel="Elo (95% interval)", title=f"{study}: Elo vs log2 N")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return ax1.get_legend_handles_labels()[1]
