"""TREC DL data: the file formats (``trec_io``) and the dataset registry, loading and coverage (``datasets``).

The first stage of the failure study: every other package may import it. It imports only ``core``,
the standard library and third-party libraries.
"""
