"""The one inference core both studies' verdicts go through (issue 40).

A claim is declared as data (its type, statistic, threshold or margin, level, scope, how configurations and
datasets combine, its comparison family); the modules here decide. Claim modules (``pipeline.findings``,
``pipeline.aware``, ``pipeline.predict``, ``ltr.findings``) measure and call in; they hold no decision code
of their own. Modules, one concern each (import from the module, this package re-exports nothing):

- ``claims``: the claim types (bound, equivalence, order, effect) and their decision rules;
- ``combine``: across configurations or datasets (every one: intersection-union, no correction; somewhere:
  corrected; pooled: a meta-analytic estimate with its heterogeneity);
- ``power``: the minimum detectable effect at a verdict's n and the n that would decide it;
- ``paired``: paired tests on discrete data (integer counts, exact rationals) and fixed comparison families;
- ``paired_share``: the difference of two shares on the same units (Newcombe's paired score interval), an
  estimate the claim types read;
- ``summary``: an estimate read from its summary (a paired t from mean, SD and n: what a stored LearnDCG
  result keeps), without importing ``scipy.stats``.

Not here: the published sizes of well-known models, each with its source, and the check of a stated size
against them live beside the other model sizes, in ``pipeline/llm/published_sizes.tsv`` read by
``pipeline.llm.sizes`` (``published_size``, ``check_stated_size``): a model's size is an LLM concern, and
``core`` knows no models.
"""
