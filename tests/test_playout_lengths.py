"""bench/playout_lengths.py: moves per playout and the share a call's finished boards wait."""

import pytest

from bench.playout_lengths import lengths, main
from bench.step_parts import parse_setting
from gojax.search.params import SearchParams


def test_a_call_waits_for_its_longest_playout():
    config = SearchParams().for_size(7).playout_config()
    r = lengths(config, 7, leaves=2, k=4, calls=2)
    assert r["median"] <= r["p90"] <= r["longest"] and r["mean"] <= r["longest"]
    assert 0 <= r["idle"] < 1 and r["idle"] == pytest.approx(1 - r["mean"] / r["longest"])
    assert lengths(config, 7, leaves=2, k=4, calls=2) == r  # seeded: counts, the same every run


def test_settings_apply_over_the_search_config():
    base = SearchParams().for_size(9).playout_config()
    name, cfg = parse_setting("off:mercy=0", base)
    assert name == "off" and cfg.mercy == 0 and cfg.policy == base.policy and base.mercy > 0
    with pytest.raises(SystemExit, match="mercy"):
        main(["--board", "5", "--setting", "x:mercy"])
