"""LETOR data: the reader (letor), its binary cache (cache), the registry of data sets and fold
loading (datasets), the synthetic presets (synthetic) and padded-list batches on the device (batching)."""
