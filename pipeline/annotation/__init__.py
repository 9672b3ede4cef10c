"""Human annotation of the typology's assignments and its validation: the annotation store (``store``; what
it holds, ``items``; drawing samples, ``sampling``; its CSV round trip, ``csv_format``; its schema as
migrations, ``schema``, whose steps that bring a store made by older code up to date are in
``migrations``), the items a sample draws from finished typology runs (``typology_items``) and the
agreement figures (``validation``: Cohen's kappa, per-category precision).

May import the packages above it (``data`` to ``typology``), ``core`` and third-party libraries.
"""
