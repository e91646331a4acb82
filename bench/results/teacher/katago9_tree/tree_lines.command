python bench/tree_lines.py --games bench/results/strength/pachi_3000_net48x6 --out bench/results/teacher/katago9_tree --count 1500 --simulations 3000 --per-root 6 --min-visits 30 --max-depth 4
