"""Human annotation of the typology's assignments and its validation: the annotation store and its CSV
round trip (``store``; ``migrations`` brings a store made by older code up to date on open) and the agreement figures (``validation``: Cohen's kappa, per-category precision).

May import the packages above it (``data`` to ``typology``), ``core`` and third-party libraries.
"""
