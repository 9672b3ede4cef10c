"""Error classes shared by both studies' libraries (each study re-exports the ones it raises)."""


class DatasetError(ValueError):
    """A data set that cannot be used as asked; the message is one line saying why."""
