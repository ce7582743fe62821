"""Playing a tournament's games on a Dask cluster: the worker side (one arena per worker
process) in :mod:`harness.cluster.worker`, the client side in :mod:`harness.cluster.client`.
"""
