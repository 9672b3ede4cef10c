"""The NDCG cutoffs the study reports everywhere: validation, test, store columns, tables."""
NDCG_CUTOFFS = (1, 3, 5, 10)
