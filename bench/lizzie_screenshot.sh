#!/usr/bin/env bash
# docs/lizzie.png: Debian's Lizzie (liblizzie-java) analysing a game with gojax, on a virtual
# display.  Needs: apt-get install liblizzie-java xvfb xdotool x11-apps imagemagick (and java).
#     bash bench/lizzie_screenshot.sh [GAME.sgf] [MOVES] [OUT.png]
# Lizzie's own files (~/.config/leela-zero, ~/.local/share/leela-zero) are written over.
set -euo pipefail
cd "$(dirname "$0")/.."
game=${1:-bench/results/strength/pachi_3000/games/game0001.sgf}
moves=${2:-24}
out=${3:-docs/lizzie.png}
work=$(mktemp -d)
display=:97

# The first MOVES moves of the game, as Lizzie opens it.
python - "$game" "$moves" "$work/position.sgf" <<'EOF'
import sys
from sgfmill import sgf
game = sgf.Sgf_game.from_bytes(open(sys.argv[1], "rb").read())
cut = sgf.Sgf_game(game.get_size())
cut.get_root().set("KM", game.get_komi())
node = cut.get_root()
for n in game.get_main_sequence()[1:int(sys.argv[2]) + 1]:
    colour, move = n.get_move()
    node = node.new_child()
    node.set_move(colour, move)
open(sys.argv[3], "wb").write(cut.serialise())
EOF

# Lizzie writes default settings on its first start; then gojax is its engine, on a 9x9 board,
# in a 1280x800 window.
Xvfb $display -screen 0 1280x800x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null; pkill -f "lizzie.jar $work" 2>/dev/null || true' EXIT
export DISPLAY=$display
sleep 2
[ -f ~/.config/leela-zero/lizzie-config.txt ] || timeout 30 java -jar /usr/share/java/lizzie.jar >/dev/null 2>&1 || true
python - "$(command -v gojax)" <<'EOF'
import json, os, sys
config = os.path.expanduser("~/.config/leela-zero/lizzie-config.txt")
c = json.load(open(config))
c["leelaz"]["engine-command"] = sys.argv[1] + " gtp --lizzie --quiet --simulations 100000"
c["ui"]["board-size"] = 9
json.dump(c, open(config, "w"), indent=2)
persist = os.path.expanduser("~/.local/share/leela-zero/lizzie-persist")
p = json.load(open(persist))
p["ui-persist"]["main-window-position"] = [0, 0, 1280, 800]
p["ui-persist"]["gtp-console-position"] = [0, 0, 0, 0]
json.dump(p, open(persist, "w"), indent=2)
EOF

timeout 200 java -jar /usr/share/java/lizzie.jar "$work/position.sgf" > "$work/lizzie.log" 2>&1 &
sleep 25                                   # the engine starts and compiles
xdotool mousemove 1185 783 click 1         # ">|": to the last move
xdotool mousemove 1270 300                 # the pointer off the board
sleep 100                                  # analysis
xwd -root -silent | convert xwd:- -resize 1024x640 -colors 256 "PNG8:$out"
grep -c "lz-analyze" "$work/lizzie.log" >/dev/null && echo "wrote $out"
