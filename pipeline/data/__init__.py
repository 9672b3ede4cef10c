"""TREC DL data: the file formats (``trec_io``; JSON-lines records, ``jsonl``), the dataset registry, loading and
coverage (``datasets``), and several answers per query of one generator (``samples``).

The first stage of the failure study: every other package may import it. It imports only ``core``,
the standard library and third-party libraries.
"""
