"""The failure paper's claims checked on what the stores hold (``python -m pipeline findings``).

Each check returns a :class:`pipeline.findings.finding.Finding`: the paper's figure, the claim's rule,
the measured figures, a verdict (``holds``, ``does not hold``, ``inconclusive`` or ``not measurable
here``, with the reason) and what it rests on (studies, annotation runs, preference results, with the
models and their digests). The paper's figures and each claim's rule (type, statistic, threshold and side or
margin, level, combine, family, minimum n and what it counts) are data (``paper_claims.json``, the preference
rates included); every measured figure is read from a stored study, the annotation store or a stored
preference result, and the inference core (:mod:`core.inference`) decides: no module here holds decision code.
A verdict is never softened: any configuration that contradicts a claim (Holm-corrected across the family)
makes it ``does not hold``; a configuration whose evidence cannot carry a verdict (n under the minimum, an
interval across the threshold, a sub-1B or unknown-size model, a universe under half of the judged queries)
makes it ``inconclusive``, with the MDE and the n that would decide.

Modules: ``finding`` (the result type, the claims file, ``claim_rule``), ``evidence`` (the gates, the models a
headline names, each part from its decision with the family's correction), ``scope`` (which studies a check
reads), ``overlap`` (all_three_under_10pct, half_exclusive, h2r_h2j_largest), ``stability``
(structure_stable), ``agreement`` (typology_agreement), ``preference`` (difficulty_aware_preferred),
``registry`` (every check, in the paper's order). Imports ``study`` and the stages above it.
"""
