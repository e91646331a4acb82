"""Every search parameter in one frozen dataclass, with the paper's equation numbers
(seed 000 = Gelly & Silver 2011).  Defaults are what we use unless a caller says otherwise."""

from __future__ import annotations

import dataclasses

SELECTIONS = ("uct", "rave")
SCHEDULES = ("hand", "mse")
PRIORS = ("none", "even", "grandfather", "mogo", "shape")
AMAF_RULES = ("first", "same_colour")
FINAL_MOVES = ("visits", "value")
POLICIES = ("uniform", "mogo")
PASS_IN_TREE = ("always", "endgame")
RULES = ("chinese", "tromp-taylor")


@dataclasses.dataclass(frozen=True)
class SearchParams:
    # --- selection --------------------------------------------------------------------------
    selection: str = "rave"  # "uct": plain UCT (eq. 7); "rave": MC-RAVE Q* (eq. 12)
    schedule: str = "mse"  # beta schedule for "rave": "hand" (eq. 19) or "mse" (eq. 47)
    rave_k: float = 1000.0  # eq. 19 equivalence parameter k (the paper's best: 1,000 or more)
    rave_bias: float = 0.02  # eq. 47 RAVE bias b (the paper gives no value; chosen by self-play,
    #                          bench/results/strength/README.md)
    rave_c: float = 0.0  # eq. 18 UCT-RAVE exploration c (the paper's best with RAVE: 0)
    uct_c: float = 0.7  # eq. 7 exploration constant for plain UCT
    fpu: float = 1.0  # first-play urgency: the value of an action with no MC and no AMAF data
    # --- heuristic prior knowledge (eq. 48-52) -------------------------------------------------
    prior: str = "shape"  # none | even | grandfather | mogo | shape (search/priors.py); shape measured
    #                       strongest against GNU Go (bench/results/strength/README.md)
    prior_equiv: float = 50.0  # M, equivalent experience: C(s,a) = C~(s,a) = M (the paper's best: 50)
    shape_model: str = ""  # the "shape" prior's gammas (search/shape.py); "" = the bundled 9x9 file
    shape_temperature: float = 1.0  # "shape": H = sigmoid(log(n p) / T), p the model's move probability
    shape_hard_verdicts: bool = False  # "shape": MoGo's good and bad verdicts (capture, real escape / eye
    #                                    fill, self-atari, ladder run) keep H = 1 and 0; the learnt value
    #                                    ranks only the neutral moves.  Off: the verdict is one more feature
    # --- AMAF backup (eq. 16-17) ---------------------------------------------------------------
    amaf_rule: str = "first"  # "first": skip a point played earlier after s_t by either colour
    #                           (Fuego); "same_colour": only by the same colour (Algorithm 2)
    # --- the playouts (SPEC.md "Playouts"; kernels/policy.py) ----------------------------------
    policy: str = "mogo"  # "uniform", or "mogo": seed 000 sec. 3.6's pattern-biased rules
    nakade_prob: float = 0.0  # MoGo rule: the vital point of a 3-point eye space (kernels/policy.py)
    fill_board_prob: float = 0.0  # MoGo's "fill board": a point whose 3x3 block is empty
    self_atari_prob: float = 0.0  # redraw a uniform playout move that self-ataris 2+ stones (Fuego, Pachi);
    #                               off: it lost in self-play and slows the playouts
    pool_prob: float = 0.0  # poolRave p (seed 004 sec. IV.A; their start values p = 1/2, k = 10)
    pool_size: int = 10  # poolRave k: the k best moves by AMAF value Q~ at the leaf's node
    pool_min_visits: int = 100  # the pool comes from the deepest node on the path with this many simulations
    cmc_prob: float = 0.0  # contextual Monte-Carlo p (seed 004 sec. IV.B); tables live for the whole game
    mercy: float = 0.25  # a playout ends once one colour leads by this fraction of the board's points in
    #                      captures, at least 10 stones (kernels/playout.py; 0 = off): such a playout's
    #                      winner is almost never in doubt (docs/history.md, "Mercy rule")
    # --- batching -------------------------------------------------------------------------------
    leaves: int = 8  # L: leaves per device call, kept apart by virtual loss; 8 measured best against
    #                  GNU Go of 4, 8 and 16 (bench/results/strength/README.md)
    playouts_per_leaf: int = 4  # K: playouts from each leaf (a simulation is one playout); small, because
    #                             each device call is one round of feedback to the tree
    virtual_loss: float = 1.0  # in-flight leaves count as this many times K lost simulations
    # --- the tree's moves ---------------------------------------------------------------------
    pass_in_tree: str = "always"  # "always": pass is an action at every node (the tree plays real
    #                               Go and converges to its minimax value); "endgame": only after
    #                               the opponent passed or when every legal move fills an own eye
    # --- counting a finished game (SPEC.md "Rules"; gojax/judge.py) ---------------------------------
    rules: str = "chinese"  # "chinese": area after the dead stones are taken off (the tree plays a
    #                         game that ended in two passes on in its playouts; the player passes
    #                         only when the judged count wins); "tromp-taylor": every stone counts
    # --- memory ---------------------------------------------------------------------------------
    max_nodes: int = 20_000  # node budget: arrays are preallocated; when full, leaves are
    #                          evaluated without being added
    # --- the move -------------------------------------------------------------------------------
    final_move: str = "visits"  # "visits": most visited root action; "value": highest Q*
    resign_threshold: float = 0.1  # resign when the chosen move's value for us is below this; 0 = never
    resign_min_simulations: int = 1000  # ... and at least this many simulations were run
    reuse_tree: bool = True  # keep the played subtree between moves
    seed: int = 0

    def __post_init__(self):
        for name, allowed in (("selection", SELECTIONS), ("schedule", SCHEDULES), ("prior", PRIORS),
                              ("amaf_rule", AMAF_RULES), ("final_move", FINAL_MOVES),
                              ("pass_in_tree", PASS_IN_TREE), ("policy", POLICIES), ("rules", RULES)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        probs = (self.pool_prob, self.cmc_prob, self.nakade_prob, self.fill_board_prob, self.self_atari_prob, self.mercy)
        if not (all(0 <= x <= 1 for x in probs) and self.pool_size >= 1):
            raise ValueError("pool, cmc, nakade, fill-board and self-atari probabilities and mercy must be in [0, 1];"
                             " pool_size >= 1")
        if self.shape_temperature <= 0:
            raise ValueError("shape_temperature must be > 0")
        if self.leaves < 1 or self.playouts_per_leaf < 1 or self.max_nodes < 2:
            raise ValueError("leaves, playouts_per_leaf must be >= 1 and max_nodes >= 2")

    def playout_config(self):
        """The device policy these parameters ask for (kernels/playout.PlayoutConfig)."""
        from kernels.playout import PlayoutConfig
        return PlayoutConfig(policy=self.policy, amaf_rule=self.amaf_rule, pool_prob=self.pool_prob,
                             cmc_prob=self.cmc_prob, nakade_prob=self.nakade_prob,
                             fill_board_prob=self.fill_board_prob, self_atari_prob=self.self_atari_prob,
                             mercy=self.mercy)

    @property
    def uses_mogo_verdicts(self) -> bool:
        """The priors built on MoGo's verdicts (the device computes them with the playouts)."""
        return self.prior in ("mogo", "shape")

    @property
    def batch(self) -> int:
        """Playouts per device call, L * K."""
        return self.leaves * self.playouts_per_leaf
