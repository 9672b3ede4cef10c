"""The pipeline's statistics of its own (no pipeline imports): ``agreement`` holds the one Cohen's kappa
that the judge benchmark, the model cards and the annotation validation share."""
