"""Issue 33: data is shown by the user's name for it, never a cache path (the MQ2008 sample showed as
``…/cache/letor_folds/mq2008-sample`` in the Results selector, figure titles and LaTeX)."""
from __future__ import annotations

from ltr.data.datasets import display_name


def test_a_folder_is_named_by_its_folder_and_a_registry_name_as_it_is(tmp_path):
    assert display_name(str(tmp_path / "cache" / "letor_folds" / "mq2008-sample")) == "mq2008-sample"
    assert display_name(str(tmp_path / "MQ2008") + "/") == "MQ2008"
    assert display_name("mq2008") == "mq2008" and display_name("synthetic-web10k:seed=1") == "synthetic-web10k:seed=1"
