"""The one Holm (core.multiple_testing.holm_adjust) is statsmodels' Holm, NaN entries left out of the family."""
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from core.multiple_testing import holm_adjust


@pytest.mark.parametrize("seed", range(5))
def test_holm_adjust_equals_statsmodels_multipletests_holm(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.2, size=12)
    p[3] = p[7]  # a tie
    assert np.allclose(holm_adjust(p), multipletests(p, method="holm")[1], rtol=0, atol=1e-15)


def test_a_missing_p_value_is_left_out_of_the_family_and_stays_missing():
    p = np.array([0.01, np.nan, 0.04, 0.03])
    out = holm_adjust(p)
    assert np.isnan(out[1])
    assert np.allclose(out[[0, 2, 3]], multipletests(p[[0, 2, 3]], method="holm")[1])
