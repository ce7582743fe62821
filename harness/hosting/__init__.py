"""Hosted bots, shared by a ladder and ``serve``: a submitted bundle checked and unpacked
(:mod:`~harness.hosting.bundle`), kept content-addressed on disk
(:mod:`~harness.hosting.files`) and built in a box (:mod:`~harness.hosting.build`)."""
