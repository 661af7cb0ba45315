"""Bounded memory: the stages over partitions of an input, locally or on Dask."""
