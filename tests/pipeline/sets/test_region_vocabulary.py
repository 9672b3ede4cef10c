"""Issue 33, item 5: one vocabulary for Venn regions and pairwise intersections. "H2R ∩ H2G" was 8 in
``overlap-*.csv`` (the region without H2J) and 11 in ``pairwise-*.csv`` (the whole intersection); now a
region is "H2R ∩ H2G only" and an intersection "H2R ∩ H2G (incl. H2J)" in every table, CSV and view."""
from __future__ import annotations

from pipeline.export.study import pairwise_table, regions_table
from pipeline.sets.overlap import intersection_label, overlap_analysis, region_label
from pipeline.views import failure_overlap, venn

# H2R ∩ H2G = {a, b, c} of which c is also in H2J: the region "only" holds 2, the intersection 3
SETS = {"h2r": {"a", "b", "c", "d"}, "h2g": {"a", "b", "c", "e"}, "h2j": {"c", "f"}}
UNIVERSE = set("abcdefghij")


def test_the_names_say_which_is_which():
    assert region_label("h2r") == "H2R only" and region_label("h2r&h2g") == "H2R ∩ H2G only"
    assert region_label("h2r&h2g&h2j") == "all three"
    assert intersection_label("h2r&h2g") == "H2R ∩ H2G (incl. H2J)"
    assert intersection_label("h2g&h2j") == "H2G ∩ H2J (incl. H2R)"
    assert intersection_label("h2r&planted") == "H2R ∩ PLANTED"  # a further task's pair names no region
    assert venn.region_label("h2r&h2g") == region_label("h2r&h2g")


def test_no_label_means_a_region_in_one_table_and_an_intersection_in_another():
    analysis = overlap_analysis(SETS, UNIVERSE)
    exported_regions = dict(zip(regions_table(analysis)["region"], regions_table(analysis)["queries"]))
    exported_pairs = dict(zip(pairwise_table(analysis)["pair"], pairwise_table(analysis)["overlap"]))
    shown_regions = dict(zip(failure_overlap.regions_frame(analysis)["region"],
                             failure_overlap.regions_frame(analysis)["queries"]))
    shown_pairs = dict(zip(failure_overlap.pairwise_frame(analysis)["pair"],
                           failure_overlap.pairwise_frame(analysis)["overlap"]))
    assert exported_regions["H2R ∩ H2G only"] == shown_regions["H2R ∩ H2G only"] == 2
    assert exported_pairs["H2R ∩ H2G (incl. H2J)"] == shown_pairs["H2R ∩ H2G (incl. H2J)"] == 3
    assert not set(exported_regions) & set(exported_pairs) and not set(shown_regions) & set(shown_pairs)
    assert "H2R ∩ H2G" not in {**exported_regions, **exported_pairs, **shown_regions, **shown_pairs}
