"""How a build runs: a plan rendered into shards and a checksummed manifest, and a finished build read back.

``run`` (the driver: lock, resume, the final manifest) -> ``planning`` and ``schedule`` (chunk tasks, longest first,
the tail cut) -> ``executors`` (in this process, the ``worker_pool`` with its ``lifeline``, or Ray) -> ``pipeline`` and
``chunk`` (decode, corrupt, encode, write one chunk's shards) -> ``manifest`` (``manifest_schema``, ``fingerprint``,
``source_diff``, ``invocation``); ``build_dir`` is the output folder before a build, ``reader`` a finished build,
``options`` and ``trace`` the run's settings and its optional timeline. The engine names no family: it runs what the
family contract (:mod:`corruptgen.family`) plans.
"""
