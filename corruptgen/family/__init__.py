"""The contract a benchmark family implements and the engine runs: ``benchmark`` (``Benchmark``, ``Grid``, ``Option``,
the family registry), ``plan`` (``Plan``, ``Subset``, ``SourceSpec``: frozen, hashed to the plan id) and
``preprocess`` (the preprocessing a plan names). Families and the engine both import it; it imports neither.
"""
