"""`gojax.evaluate` and `gojax evaluate`: many positions, many playouts each, every local device.

Position i is played out with the key fold_in(key(seed), i): its numbers do not depend on the
batch it lands in nor on the number of devices.  Batches are split over `jax.devices()` with
shard_map (each device runs its own playout loop on its slice; no cross-device traffic inside
a playout).  Several processes or hosts: call `jax.distributed.initialize()` first (on CPUs also
`jax.config.update("jax_cpu_collectives_implementation", "gloo")`); `jax.devices()` then lists
every process's devices, every process feeds the same positions, each plays its devices' share,
and all of them get every result; `run_evaluate` writes its file from process 0 only.

Rows hold no timings, so two runs with the same seed give the same bytes.  Every file is read
before any work starts: a missing or unreadable one is an error (SgfInputError), not a skip.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator

import jax
import jax.numpy as jnp
import numpy as np

from gojax.kernels.geometry import BLACK
from gojax.kernels.host import Board
from gojax.kernels.playout import PlayoutConfig, pad_to_multiple, sharded_playouts
from gojax.kernels.state import BoardState, batch_from_host


def evaluate(positions, playouts: int = 1024, policy: str = "uniform", key: jax.Array | None = None,
             seed: int = 0, start_index: int = 0, devices: int | None = None,
             config: PlayoutConfig | None = None, local: bool = False) -> dict:
    """Evaluate positions: a list of host Boards, a batched BoardState [L], or SGF paths (a
    path or a list of them; files or folders: every position of every game, in order).

    Returns numpy arrays: win_rate [L] (Black wins, ties count half), stderr [L] (of the win
    rate, sqrt(p (1 - p) / playouts)), score_mean [L] (Black's area minus White's minus komi),
    ownership [L, P] (+1 Black), amaf_value [L, 2, P] (mean outcome for Black of the playouts in
    which Black / White played the point first; NaN where none did), amaf_count [L, 2, P].
    `config` (kernels/playout.PlayoutConfig, e.g. SearchParams.playout_config()) replaces
    `policy` when given: the playouts of a search with every rule's setting.  With several
    processes (jax.distributed), every process calls it with the same positions and each plays
    its devices' share, unless `local`: this process's positions on its own devices."""
    if isinstance(positions, (str, os.PathLike)) or (isinstance(positions, (list, tuple)) and positions
                                                      and isinstance(positions[0], (str, os.PathLike))):
        paths = [positions] if isinstance(positions, (str, os.PathLike)) else list(positions)
        paths = [os.fspath(p) for p in paths]
        check_sgf_files(paths)
        positions = [board for _, _, board in sgf_positions(paths)]
    if not isinstance(positions, BoardState):  # a finished game is played on: its dead stones come off
        positions = batch_from_host([b.resumed() if b.game_over else b for b in positions])
    states = positions
    n = states.color.shape[0]
    base = jax.random.key(seed) if key is None else key
    keys = jax.vmap(lambda i: jax.random.fold_in(base, i))(jnp.arange(start_index, start_index + n))
    multi = jax.process_count() > 1 and not local
    d = jax.device_count() if multi else min(devices or jax.local_device_count(), jax.local_device_count())
    states, keys = pad_to_multiple(states, keys, d)
    fn, sharding = sharded_playouts(d, playouts, config or PlayoutConfig(policy=policy), local=not multi)
    fn = jax.jit(fn)
    if multi:  # every process holds every position: each builds its devices' slices, then all gather
        from jax.experimental import multihost_utils
        states = jax.tree.map(lambda x: _global(np.asarray(x), sharding), states)
        keys = jax.random.wrap_key_data(_global(np.asarray(jax.random.key_data(keys)), sharding))
        r = jax.tree.map(lambda a: np.asarray(multihost_utils.process_allgather(a, tiled=True)), fn(states, keys))
    else:
        states, keys = jax.device_put((states, keys), sharding)
        r = jax.device_get(fn(states, keys))
    p = r.wins[:n] / playouts
    count = r.amaf_count[:n]
    with np.errstate(invalid="ignore", divide="ignore"):
        amaf_value = np.where(count > 0, r.amaf_wins[:n] / count, np.nan)
    return {"win_rate": p, "stderr": np.sqrt(p * (1 - p) / playouts), "score_mean": r.score[:n].mean(1),
            "ownership": r.ownership[:n], "amaf_value": amaf_value, "amaf_count": count,
            "cap_hits": r.cap_hit[:n].sum(1)}


def _global(x: np.ndarray, sharding) -> jax.Array:
    """A global array over every process's devices from the whole array, which each process holds."""
    return jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])


# --- positions from SGF --------------------------------------------------------------------

class SgfInputError(ValueError):
    """Some of the SGF files asked for are missing or cannot be read: nothing was evaluated."""


def check_sgf_files(paths: Iterable[str]) -> dict[str, int]:
    """{file: number of moves} for every SGF file named or found in the folders named; raises
    SgfInputError listing every missing or unreadable one (a game with an illegal move
    included), before any work is done."""
    from gojax.sgf import SgfError, load_sgf
    moves, bad = {}, []
    for path in _expand(paths):
        try:
            with open(path, "rb") as f:
                _, info = load_sgf(f.read())
            moves[path] = len(info["moves"])
        except OSError as err:
            bad.append(f"{path}: {err.strerror or err}")
        except SgfError as err:
            bad.append(f"{path}: {err}")
    if bad:
        raise SgfInputError(f"{len(bad)} SGF file(s) cannot be read: " + "; ".join(bad))
    if not moves:
        raise SgfInputError(f"no SGF files in {', '.join(map(str, paths))}")
    return moves


def sgf_positions(paths: Iterable[str], log=sys.stderr) -> Iterator[tuple[str, int, Board]]:
    """(file, move number, board) for every position of every game (move 0: the start).
    Folders are searched for *.sgf; unreadable files are reported and skipped (check_sgf_files
    refuses them up front)."""
    from gojax.sgf import SgfError, load_sgf
    for path in _expand(paths):
        try:
            with open(path, "rb") as f:
                data = f.read()
            board, info = load_sgf(data)  # the whole game: an illegal move anywhere rejects the file
        except (OSError, SgfError) as err:
            print(f"[evaluate] skipping {path}: {err}", file=log)
            continue
        for note in info["notes"]:
            print(f"[evaluate] {path}: {note}", file=log)
        for i, before in enumerate(info["history"]):
            yield path, i, before
        yield path, len(info["history"]), board


def _expand(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                for name in sorted(files):
                    if name.lower().endswith(".sgf"):
                        yield os.path.join(root, name)
        else:
            yield p


# --- the CLI job -------------------------------------------------------------------------------

def done_rows(out: str) -> int:
    if not os.path.exists(out):
        return 0
    with open(out) as f:
        lines = [line for line in f if line.strip()]
    if out.endswith(".csv"):
        return max(0, len(lines) - 1)
    good = 0
    for line in lines:
        try:
            json.loads(line)
            good += 1
        except json.JSONDecodeError:
            break
    return good


def run_evaluate(paths: list[str], out: str, playouts: int = 1024, seed: int = 0, batch: int = 64,
                 policy: str = "uniform", plot_dir: str | None = None, progress: bool = True,
                 log=sys.stderr) -> int:
    """Stream every position of the SGF files through `evaluate` in batches, appending one row
    per position to OUT (.jsonl or .csv); rows already there are skipped.  Returns rows written.
    With several processes (jax.distributed) all must see the same OUT; process 0 writes it."""
    final_move = check_sgf_files(paths)  # before any work: a bad file is an error, not a skip
    skip = done_rows(out)
    writer = jax.process_index() == 0
    if skip and writer:
        print(f"[evaluate] resuming: {skip} rows already in {out}", file=log)
        truncate_to_rows(out, skip)
    csv_mode = out.endswith(".csv")
    from tqdm import tqdm
    bar = tqdm(desc="evaluate", unit="pos", file=log, disable=not progress, initial=skip)
    written, index, pending = 0, 0, []
    with open(out if writer else os.devnull, "a") as f:
        if csv_mode and skip == 0:
            f.write("file,move,to_play,win_rate,stderr,score_mean,ownership,win_rate_for\n")
        for item in sgf_positions(paths, log):
            if index < skip:
                index += 1
                continue
            pending.append((index, *item))
            index += 1
            if len(pending) == batch:
                written += _flush(pending, f, playouts, seed, policy, csv_mode, plot_dir, final_move)
                bar.update(len(pending))
                pending = []
        if pending:
            written += _flush(pending, f, playouts, seed, policy, csv_mode, plot_dir, final_move)
            bar.update(len(pending))
    bar.close()
    return written


def truncate_to_rows(out: str, rows: int) -> None:
    with open(out) as f:
        lines = [line for line in f if line.strip()]
    keep = lines[:rows + (1 if out.endswith(".csv") else 0)]
    with open(out + ".tmp", "w") as f:  # replaced at once: a reader never sees the file half written
        f.writelines(line if line.endswith("\n") else line + "\n" for line in keep)
    os.replace(out + ".tmp", out)


def _flush(pending, f, playouts, seed, policy, csv_mode, plot_dir, final_move) -> int:
    sizes = {b.size for _, _, _, b in pending}
    rows = []
    for size in sorted(sizes):  # one call per board size in the batch
        group = [x for x in pending if x[3].size == size]
        res = evaluate([b for _, _, _, b in group], playouts, policy, seed=seed, start_index=group[0][0]) \
            if _contiguous(group) else _evaluate_each(group, playouts, policy, seed)
        for j, (idx, path, move, board) in enumerate(group):
            rows.append((idx, path, move, board, {k: v[j] for k, v in res.items()}))
    rows.sort(key=lambda r: r[0])
    for _idx, path, move, board, r in rows:
        own = [round(float(x), 3) for x in r["ownership"]]
        color = "B" if board.to_play == BLACK else "W"
        if csv_mode:
            f.write(f"{json.dumps(path)},{move},{color},{r['win_rate']:.6f},{r['stderr']:.6f},"
                    f"{r['score_mean']:.4f},\"{' '.join(map(str, own))}\",B\n")
        else:
            f.write(json.dumps({"file": path, "move": move, "to_play": color, "win_rate_for": "B",
                                "win_rate": round(float(r["win_rate"]), 6),
                                "stderr": round(float(r["stderr"]), 6), "score_mean": round(float(r["score_mean"]), 4),
                                "ownership": own}) + "\n")
        if plot_dir and move == final_move[path] and jax.process_index() == 0:  # one map per game: its last position
            name = os.path.splitext(os.path.basename(path))[0]
            plot_ownership(board, r["ownership"], os.path.join(plot_dir, f"{name}_move{move}.png"),
                           title=f"{os.path.basename(path)} after move {move}: Black wins {r['win_rate']:.1%}")
    f.flush()
    return len(rows)


def _contiguous(group) -> bool:
    return all(b[0] == a[0] + 1 for a, b in zip(group, group[1:]))


def _evaluate_each(group, playouts, policy, seed):
    parts = [evaluate([b], playouts, policy, seed=seed, start_index=idx) for idx, _, _, b in group]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def plot_ownership(board: Board, ownership: np.ndarray, path: str, title: str = "") -> None:
    """A heat map of ownership (+1 Black, -1 White) with the stones drawn on top."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = board.size
    grid = np.asarray(ownership).reshape(n, n)
    fig, ax = plt.subplots(figsize=(5, 5))
    im = ax.imshow(grid, origin="lower", cmap="RdBu_r", vmin=-1, vmax=1)
    for p in np.flatnonzero(board.stones):
        r, c = divmod(int(p), n)
        ax.add_patch(plt.Circle((c, r), 0.4, color="black" if board.stones[p] == BLACK else "white", ec="black"))
    cols = [board.geometry.to_gtp(c)[0] for c in range(n)]
    ax.set_xticks(range(n), cols)
    ax.set_yticks(range(n), [str(r + 1) for r in range(n)])
    ax.set_title(title or "ownership (red: Black, blue: White)", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.046, label="ownership (+1 Black)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
