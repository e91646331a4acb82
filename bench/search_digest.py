"""A fingerprint of the search: SHA-256 over what a forest of 8 trees and a lone search return.

A host-side change that should leave the search exactly as it was (a faster path to the same
numbers) must leave this digest unchanged: run it in a checkout before and after the change.

    python bench/search_digest.py [--simulations 1000] [--set FIELD=VALUE ...]

Each tree searches one of `gojax bench`'s positions with its own seed; the digest covers every
root move's visits, Q, Q~, Q* and prior, the principal variation, the node count and the
ownership map.  The CPU backend is deterministic for a given jax version; compare digests from
one machine and one jax.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench.oracle_positions import parse_settings  # noqa: E402
from gojax.bench import bench_positions  # noqa: E402
from gojax.search.forest import Forest  # noqa: E402
from gojax.search.mcts import Search  # noqa: E402
from gojax.search.params import SearchParams  # noqa: E402


def digest(simulations: int, params: SearchParams) -> str:
    positions = bench_positions(9)
    boards = [positions[g % len(positions)] for g in range(8)]
    results = Forest(boards, [dataclasses.replace(params, seed=g) for g in range(8)]).run(simulations, stop_early=False)
    results.append(Search(positions[1], dataclasses.replace(params, seed=11)).run(simulations=simulations,
                                                                                  stop_early=False))
    h = hashlib.sha256()
    for r in results:
        h.update(repr((r.move, [(m.move, m.visits, m.q, m.q_amaf, m.q_star, m.prior) for m in r.moves], r.pv,
                       r.nodes)).encode())
        h.update(np.asarray(r.ownership).tobytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulations", type=int, default=1000)
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="a SearchParams field (repeatable)")
    args = ap.parse_args()
    print(digest(args.simulations, SearchParams(**parse_settings(args.set))))


if __name__ == "__main__":
    main()
