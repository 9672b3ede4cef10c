"""The failure paper's claims checked on what the stores hold (``python -m pipeline findings``).

Each check returns a :class:`pipeline.findings.finding.Finding`: the paper's figure, the measured
figures, a verdict (``holds``, ``does not hold``, ``not measurable here`` with the reason) and what it
rests on (studies, annotation runs, preference results, with the models and their digests). The
paper's figures are data (``paper_claims.json``; the preference rates are
``pipeline.prompting.preference.STUDY_RATES``); every measured figure is read from a stored study,
the annotation store or a stored preference result. A verdict is never softened: any configuration
that contradicts a claim makes it ``does not hold``.

Modules: ``finding`` (the result type, verdict rules), ``scope`` (which studies a check reads),
``overlap`` (all_three_under_10pct, half_exclusive, h2r_h2j_largest), ``stability``
(structure_stable), ``agreement`` (typology_agreement), ``preference`` (difficulty_aware_preferred),
``registry`` (every check, in the paper's order). Imports ``study`` and the stages above it.
"""
