"""Human annotation of the typology's assignments and its validation: the annotation store and its CSV
round trip (``store``) and the agreement figures (``validation``: Cohen's kappa, per-category precision).

May import the packages above it (``data`` to ``typology``), ``core`` and third-party libraries.
"""
