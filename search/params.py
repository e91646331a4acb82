"""Every search parameter in one frozen dataclass, with the paper's equation numbers
(seed 000 = Gelly & Silver 2011).  Defaults are what we use unless a caller says otherwise.

A field made with `flag(...)` is also a command-line option of every gojax command that searches
(gojax/cli.add_search_options builds them from here: the help text lives only here), and
CHOICES holds the allowed values that both the command line and `__post_init__` check."""

from __future__ import annotations

import dataclasses

SELECTIONS = ("uct", "rave")
SCHEDULES = ("hand", "mse")
PRIORS = ("auto", "none", "even", "grandfather", "mogo", "shape", "shape_wins", "learnt", "net")
AMAF_RULES = ("first", "same_colour")
FINAL_MOVES = ("visits", "value")
POLICIES = ("uniform", "mogo", "learnt")
PASS_IN_TREE = ("always", "endgame")
RULES = ("chinese", "tromp-taylor")
IN_FLIGHT = ("descend", "sidestep", "stop")
FALLBACKS = ("uniform", "learnt")
CHOICES = {"fallback": FALLBACKS, "selection": SELECTIONS, "schedule": SCHEDULES, "prior": PRIORS, "amaf_rule": AMAF_RULES,
           "final_move": FINAL_MOVES, "pass_in_tree": PASS_IN_TREE, "policy": POLICIES, "rules": RULES,
           "in_flight": IN_FLIGHT}


# --value-weight auto: the weight of the value head's matches against Pachi at 3,000 simulations
# (bench/results/strength/README.md, "A value head on the prior net's own trunk")
AUTO_VALUE_WEIGHT = 0.25


def flag(default, help: str, group: str = "search", metavar: str | None = None):
    """A field that is also a command-line option (--field-name); `help` is its one description."""
    return dataclasses.field(default=default, metadata={"help": help, "group": group, "metavar": metavar})


@dataclasses.dataclass(frozen=True)
class SearchParams:
    # --- selection --------------------------------------------------------------------------
    selection: str = flag("rave", "tree policy: uct (eq. 7) or rave, MC-RAVE Q* (eq. 12)")
    schedule: str = flag("mse", "RAVE beta schedule: hand (eq. 19) or mse (eq. 47)")
    rave_k: float = flag(1000.0, "eq. 19 equivalence parameter k")
    rave_bias: float = flag(0.02, "eq. 47 RAVE bias b (the paper gives no value; chosen by self-play)")
    rave_c: float = flag(0.0, "eq. 18 UCT-RAVE exploration c")
    puct: float = flag(0.0, "c: AlphaGo's exploration term c p sqrt(N(s)) / (1 + N(s,a)) added to the tree policy's "
                            "value (Silver et al. 2016), p the prior's move probability (for a softmax prior, its "
                            "own p, from H), N without the prior's simulations; 0: off", metavar="C")
    uct_c: float = flag(0.7, "eq. 7 UCT exploration constant")
    fpu: float = 1.0  # first-play urgency: the value of an action with no MC and no AMAF data
    # --- heuristic prior knowledge (eq. 48-52) -------------------------------------------------
    prior: str = flag("auto", "heuristic prior, eq. 48-52 (search/priors.py; learnt: a learnt linear model, "
                              "--prior-model, as the tree's prior; net: the prior net, a small convolutional net "
                              "fitted to KataGo's policy; auto: net given --prior-model or on a board size with a "
                              "bundled net (9x9, 13x13), else shape; chosen by matches, bench/results/strength/README.md)")
    prior_model: str = flag("", "--prior learnt / net / auto: its model (.npz from `gojax learn-policy` or "
                                "`gojax learn-net`; empty: the bundled one for the board size)", metavar="NPZ")
    prior_symmetries: int = flag(1, "--prior net: the net's logits averaged over S of the board's 8 symmetries "
                                    "(1, 2, 4 or 8; the net runs S times per new node)", metavar="S")
    prior_equiv: float = flag(25.0, "M, the prior's equivalent experience: C(s,a) = C~(s,a) = M (set against "
                                    "Pachi; bench/results/strength/README.md)")
    prior_amaf_equiv: float = flag(-1.0, "C~(s,a), the prior's equivalent experience on the AMAF side alone "
                                         "(eq. 48-52; negative: M): a prior that the AMAF term carries fades as "
                                         "eq. 47's beta does", metavar="M~")
    prior_reply: float = flag(0.0, "each playout's first move (the answer to the leaf's move) drawn from the prior's "
                                   "move probabilities at temperature T (the net's, or a learnt or shape model's) "
                                   "instead of the playout policy (0: off)", metavar="T")
    shape_model: str = flag("", "--prior shape: gammas from `gojax learn-prior` (empty: the bundled 9x9 model)",
                            metavar="NPZ")
    shape_temperature: float = flag(1.0, "--prior shape: H = sigmoid(log(n p) / T), p the model's move probability",
                                    metavar="T")
    shape_wins: float = flag(210.0, "--prior shape_wins: c, each move's MC edge gets M even simulations (H = 0.5) "
                                    "and c x sqrt(p) won ones, p the shape model's move probability (Pachi's "
                                    "pattern prior form)", metavar="C")
    shape_hard_verdicts: bool = flag(False, "--prior shape: MoGo's good / bad verdicts keep H = 1 / 0; the model "
                                            "ranks the rest")
    # --- leaf evaluation: a value head beside the playouts (Silver et al. 2016) ------------------
    value_weight: float = flag(-1.0, "w: each playout's outcome z is backed up as (1 - w) z + w v, v the value "
                                     "head's estimate of the leaf (AlphaGo's leaf evaluation, its lambda = 1 - w); "
                                     "0: the playouts alone; negative: auto, 0.25 where the search has a net with "
                                     "a value head (--value-model, or the bundled 9x9 and 13x13 nets; chosen by matches, "
                                     "bench/results/strength/README.md), else 0; only at the komi the head was "
                                     "fitted at", metavar="W")
    value_model: str = flag("", "--value-weight: the prior net whose value head gives v (`gojax learn-value`; "
                                "empty: the prior's net, or else the board size's bundled one)", metavar="NPZ")
    # --- AMAF backup (eq. 16-17) ---------------------------------------------------------------
    amaf_rule: str = flag("first", "AMAF credit (eq. 16-17): first skips a point played earlier by either colour "
                                   "(Fuego), same_colour only by the same colour (Algorithm 2)")
    amaf_rule_moves: bool = flag(True, "AMAF credit for playout moves a policy rule chose (false: only the uniform "
                                       "draw's moves earn it; bench/results/strength/README.md, knowledge per playout)")
    amaf_horizon: int = flag(0, "only the first N moves of a playout earn AMAF credit (0: all of them)", metavar="N")
    amaf_decay: float = flag(0.0, "AMAF credit of a playout move weighted from 1 at the playout's start down to "
                                  "1 / (1 + D) at its end (0: all weigh 1; kernels/playout.py)", metavar="D")
    # --- the playouts (SPEC.md "Playouts"; kernels/policy.py) ----------------------------------
    policy: str = flag("mogo", "playouts: uniform, mogo (seed 000 sec. 3.6's pattern-biased rules) or learnt (a "
                               "softmax over shape and tactical features fitted to a teacher, kernels/learnt.py)",
                       group="policy")
    policy_model: str = flag("", "the learnt policy's weights (.npz from `gojax learn-policy`; empty: the bundled "
                                 "9x9 model)", group="policy", metavar="NPZ")
    policy_scale: float = flag(1.0, "the learnt policy's logits times F: above 1 sharper playouts, below 1 more "
                                    "random ones", group="policy", metavar="F")
    amaf_max_prob: float = flag(1.0, "learnt policy: a playout move drawn with a probability above P earns no "
                                     "AMAF credit (1: every move earns it)", group="policy", metavar="P")
    fallback: str = flag("uniform", "mogo policy: its last rule's move, uniform or a draw from the learnt policy "
                                    "(--policy-model, --policy-scale)", group="policy")
    uniform_mix: float = flag(0.0, "learnt policy: a uniform playout move instead of the policy's draw with "
                                   "probability P (0: never)", group="policy", metavar="P")
    save_prob: float = flag(1.0, "MoGo rule 1: save own stones the last move put in atari", group="policy",
                            metavar="P")
    pattern_prob: float = flag(1.0, "MoGo rule 2: a 3x3 hane/cut pattern next to the last move", group="policy",
                               metavar="P")
    capture_prob: float = flag(1.0, "MoGo rule 3: capture an opponent chain in atari anywhere", group="policy",
                               metavar="P")
    nakade_prob: float = flag(0.0, "MoGo rule: the vital point of a 3-point eye space (0: off)", group="policy",
                              metavar="P")
    fill_board_prob: float = flag(0.0, "MoGo rule: a point whose 3x3 block is empty (0: off)", group="policy",
                                  metavar="P")
    playout_patterns: str = flag("", "the pattern rule's 3x3 table: MoGo's hane and cut shapes when empty, else a "
                                     "uint8 [2, 65536] .npy (`gojax export-patterns`)", group="policy",
                                 metavar="NPY")
    two_lib_prob: float = flag(0.0, "MoGo-style rule after save: extend an own chain next to the last move left "
                                    "with two liberties, or atari the last move's two-liberty chain where its "
                                    "escape looks hopeless (0: off)", group="policy", metavar="P")
    self_atari_prob: float = flag(0.0, "redraw a uniform playout move that self-ataris 2+ stones (0: off)",
                                  group="policy", metavar="P")
    pool_prob: float = flag(0.0, "poolRave p, seed 004 sec. IV.A (0: off)", group="policy", metavar="P")
    pool_size: int = flag(10, "poolRave k: the k best moves by AMAF value at the leaf's node", group="policy",
                          metavar="K")
    pool_min_visits: int = 100  # the pool comes from the deepest node on the path with this many simulations
    cmc_prob: float = flag(0.0, "contextual Monte-Carlo p, seed 004 sec. IV.B (0: off)", group="policy", metavar="P")
    mercy: float = flag(0.25, "end a playout once one colour leads by F x the board's points in captures (0: off)",
                        group="policy", metavar="F")
    steps_per_test: int = flag(1, "playout moves per test of the playout loop's end (kernels/playout."
                                   "PlayoutConfig.steps_per_test; the same moves for every value)",
                               group="policy", metavar="N")
    # --- batching -------------------------------------------------------------------------------
    leaves: int = flag(8, "L: leaves per device call, kept apart by virtual loss", metavar="L")
    playouts_per_leaf: int = flag(4, "K: playouts from each leaf (a simulation is one playout); small, since each "
                                     "device call is one round of feedback to the tree", metavar="K")
    virtual_loss: float = 1.0  # in-flight leaves count as this many times K lost simulations
    # The same statistics either way (tests/test_forest.py): off only costs host work.
    verdicts_ahead: bool = flag(True, "each round's leaf verdicts (legal masks, MoGo codes) come back from the "
                                      "device ahead of its playouts, so the next round's descents find that "
                                      "round's new nodes with their priors (in-flight descend only; not with the "
                                      "grandfather prior)")
    # The same statistics either way (tests/test_forest.py): a speed setting for a forest whose host
    # is the limit (a GPU).  On a CPU backend the wave calls run on the search's thread and cost more
    # than they save (bench/results/forest/README.md, "Descents in waves").
    waves: int = flag(1, "a round's L descents in W waves: after each wave but the last one small device call "
                         "gives that wave's new nodes their legal moves and priors, which a later descent of the "
                         "round would otherwise compute on the host (with verdicts_ahead only; for a GPU)",
                      metavar="W")
    in_flight: str = flag("descend", "a descent that reaches a node whose playouts are still on the device: "
                                     "descend (give it its prior, on the host unless the device's verdicts for it "
                                     "are back, and go on), sidestep (take the parent's best action whose child is "
                                     "not in flight: no host prior) or stop "
                                     "(end there; the leaf plays K more playouts from that node)")
    # --- the tree's moves ---------------------------------------------------------------------
    pass_in_tree: str = "always"  # "always": pass is an action at every node (the tree plays real
    #                               Go and converges to its minimax value); "endgame": only after
    #                               the opponent passed or when every legal move fills an own eye
    # --- counting a finished game (SPEC.md "Rules"; gojax/judge.py) ---------------------------------
    rules: str = flag("chinese", "counting a finished game: chinese (dead stones taken off as gojax/judge.py "
                                 "judges them; the tree plays a two-pass leaf on) or tromp-taylor (every stone "
                                 "counts, as on CGOS); GTP kgs-rules sets it too")
    # --- memory ---------------------------------------------------------------------------------
    expand_after: int = flag(0, "a node's children join the tree only once it has N simulations of its own; "
                                "before that its leaves are played from it without a new node, as when the "
                                "node budget is full (0: at once; Pachi expands after 8)", metavar="N")
    max_nodes: int = flag(20_000, "node budget: arrays are preallocated; when full, leaves are evaluated "
                                  "without being added")
    # --- the move -------------------------------------------------------------------------------
    final_move: str = "visits"  # "visits": most visited root action; "value": highest Q*
    resign_threshold: float = 0.1  # resign when the chosen move's value for us is below this; 0 = never
    resign_min_simulations: int = 1000  # ... and at least this many simulations were run
    reuse_tree: bool = True  # keep the played subtree between moves
    seed: int = 0

    def __post_init__(self):
        for name, allowed in CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        probs = (self.save_prob, self.pattern_prob, self.capture_prob, self.pool_prob, self.cmc_prob,
                 self.nakade_prob, self.fill_board_prob, self.self_atari_prob, self.two_lib_prob,
                 self.mercy)
        if not (all(0 <= x <= 1 for x in probs) and self.pool_size >= 1):
            raise ValueError("the playout rules' probabilities (save, pattern, capture, pool, cmc, nakade, fill-board, "
                             "two-liberty, self-atari) and mercy must be in [0, 1];"
                             " pool_size >= 1")
        if self.shape_temperature <= 0 or self.shape_wins < 0:
            raise ValueError("shape_temperature must be > 0 and shape_wins >= 0")
        if self.puct < 0:
            raise ValueError(f"puct must be >= 0 (0: off), got {self.puct}")
        if self.puct and self.prior in ("none", "shape_wins"):
            raise ValueError(f"puct needs a prior that gives each move a value H (not {self.prior!r})")
        if self.prior_symmetries not in (1, 2, 4, 8):
            raise ValueError(f"prior_symmetries must be 1, 2, 4 or 8, got {self.prior_symmetries}")
        if self.prior_reply < 0:
            raise ValueError(f"prior_reply must be >= 0 (a temperature; 0: off), got {self.prior_reply}")
        for name, low in (("leaves", 1), ("playouts_per_leaf", 1), ("max_nodes", 2), ("expand_after", 0)):
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}, got {getattr(self, name)}")
        if not 0 <= self.resign_threshold < 1:
            raise ValueError(f"resign_threshold must be in [0, 1) (a win rate; 0 never resigns), got {self.resign_threshold}")
        if not self.value_weight <= 1:
            raise ValueError(f"value_weight must be in [0, 1] (negative: auto), got {self.value_weight}")
        if not 1 <= self.waves <= self.leaves:
            raise ValueError(f"waves must be 1 .. leaves ({self.leaves}), got {self.waves}")

    def playout_config(self):
        """The device policy these parameters ask for (kernels/playout.PlayoutConfig): every
        PlayoutConfig field that SearchParams has, by name; the rest keep the kernel's defaults
        (the search's defaults differ in two: MoGo playouts and the mercy rule on)."""
        from gojax.kernels.playout import PlayoutConfig
        return PlayoutConfig(**{f.name: getattr(self, f.name) for f in dataclasses.fields(PlayoutConfig)
                                if hasattr(self, f.name)})

    def for_size(self, size: int) -> SearchParams:
        """These parameters as a search on a `size` x `size` board applies them: `auto` becomes
        `net` given --prior-model or where a net is bundled for the size (kernels/prior_net.bundled),
        else `shape`; `net` without --prior-model reads the size's bundled net.  With a value
        weight and no --value-model, the value head is the prior net's, or the size's bundled net's;
        an auto (negative) weight becomes AUTO_VALUE_WEIGHT where that net has a value head, else 0."""
        resolved = self._prior_for_size(size)
        if resolved.value_weight < 0:
            from gojax.kernels.prior_net import has_value, is_net
            path = resolved.prior_model_path
            net = resolved.value_model or (path if path and is_net(path) and has_value(path) else "")
            resolved = dataclasses.replace(resolved, value_weight=AUTO_VALUE_WEIGHT if net else 0.0, value_model=net)
        if resolved.value_weight > 0 and not resolved.value_model:
            from gojax.kernels.learnt import ModelError
            from gojax.kernels.prior_net import bundled, is_net
            path = resolved.prior_model_path
            net = path if path and is_net(path) else bundled(size)
            if net is None:  # a ModelError: GTP's boardsize refuses the size and keeps the game
                raise ModelError(f"--value-weight {self.value_weight:g}: no net is bundled for {size}x{size}; "
                                 f"give --value-model NPZ (gojax learn-value) or --value-weight 0")
            resolved = dataclasses.replace(resolved, value_model=net)
        return resolved

    def _prior_for_size(self, size: int) -> SearchParams:
        if self.prior == "auto" and self.prior_model:
            return dataclasses.replace(self, prior="net")
        if self.prior not in ("auto", "net") or self.prior_model:
            return self
        from gojax.kernels.prior_net import bundled
        net = bundled(size)
        if net:
            return dataclasses.replace(self, prior="net", prior_model=net)
        return dataclasses.replace(self, prior="shape") if self.prior == "auto" else self

    @property
    def uses_mogo_verdicts(self) -> bool:
        """The priors built on MoGo's verdicts (the device computes them with the playouts)."""
        return self.prior in ("auto", "mogo", "shape", "shape_wins", "learnt", "net")

    @property
    def prior_model_path(self) -> str | None:
        """The model file a learnt prior reads: --prior-model, or else for `learnt` "" (the bundled
        linear model, kernels/learnt.load_model) and for `net` the bundled 9x9 prior net (`for_size`
        picks the size's own); None for the other priors, and for `auto` without --prior-model
        before `for_size`."""
        if self.prior == "net" and not self.prior_model:
            from gojax.kernels.prior_net import BUNDLED
            return BUNDLED
        if self.prior == "auto":
            return self.prior_model or None
        return self.prior_model if self.prior in ("learnt", "net") else None

    @property
    def uses_shapes(self) -> bool:
        """The priors that read each candidate's 3x3 shape (search/shape.py)."""
        return self.prior in ("shape", "shape_wins")

    @property
    def in_flight_rule(self) -> str:
        """`in_flight` as the search applies it: the grandfather prior reads the tree when a
        descent first passes through a node, so under it every descent descends."""
        return "descend" if self.prior == "grandfather" else self.in_flight

    @property
    def uses_verdicts_ahead(self) -> bool:
        """`verdicts_ahead` where it applies: a descent gives an in-flight node its prior there."""
        return self.verdicts_ahead and self.in_flight_rule == "descend" and self.prior != "grandfather"

    @property
    def batch(self) -> int:
        """Playouts per device call, L * K."""
        return self.leaves * self.playouts_per_leaf
