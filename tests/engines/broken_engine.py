"""A deliberately broken GTP engine for the match runner's tests (a real process over pipes):
`illegal` answers every genmove with A1 (occupied from the second time on), `crash` exits on
its second genmove, `crash-first` on its first, `hang` never answers genmove, and `nostart`
fails at start-up the way a Python engine with a broken import does."""

import sys
import time

mode = sys.argv[1]
if mode == "nostart":
    sys.exit("ModuleNotFoundError: No module named 'kernels' (broken_engine nostart)")
genmoves = 0
for line in sys.stdin:
    parts = line.split()
    if not parts:
        continue
    cid = parts[0] if parts[0].isdigit() else ""
    cmd = parts[1] if cid else parts[0]
    if cmd == "genmove":
        genmoves += 1
        if mode == "crash-first" or (mode == "crash" and genmoves == 2):
            print("broken_engine: crashing", file=sys.stderr, flush=True)
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        reply = "A1" if mode == "illegal" else ("C3" if genmoves == 1 else "pass")
    elif cmd == "quit":
        print(f"={cid}\n", flush=True)
        break
    else:
        reply = ""
    print(f"={cid} {reply}\n" if reply else f"={cid}\n", flush=True)
