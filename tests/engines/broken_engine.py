"""A deliberately broken GTP engine for the match runner's forfeit tests (a real process over
pipes): `illegal` answers every genmove with A1 (occupied from the second time on), `crash`
exits on its first genmove, `hang` never answers genmove."""

import sys
import time

mode = sys.argv[1]
for line in sys.stdin:
    parts = line.split()
    if not parts:
        continue
    cid = parts[0] if parts[0].isdigit() else ""
    cmd = parts[1] if cid else parts[0]
    if cmd == "genmove":
        if mode == "crash":
            sys.exit(3)
        if mode == "hang":
            time.sleep(3600)
        reply = "A1"
    elif cmd == "quit":
        print(f"={cid}\n", flush=True)
        break
    else:
        reply = ""
    print(f"={cid} {reply}\n" if reply else f"={cid}\n", flush=True)
