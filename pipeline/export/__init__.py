"""Publication files of the failure study (``python -m pipeline export``): figures as SVG (text kept as
text), PDF and PNG, tables as CSV and booktabs LaTeX, per-query CSVs of the hard sets, ``manifest.json``
(:mod:`core.export` writes them). ``venn``: the matplotlib Venn diagram (also the page's layout);
``study``: one stored study's files; ``sampling``: H2G's sampling noise beside them. Imports ``findings``, ``study`` and the stages above them."""
