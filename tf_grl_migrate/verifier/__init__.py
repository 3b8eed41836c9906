"""The verifier: ``--verify`` and ``--verify-against`` prove a migrated site numerically, the
original under TF1 semantics against the migration under TF2, on the user's own code.

- ``driver.py``: the main process's side (plans, asks, decides, caches); no TensorFlow. It takes
  texts and gives outcomes: reading, placing and writing files is ``tf_grl_migrate.api``'s;
- ``probes.py``: what runs for each site, read from the source with ``ast``;
- ``protocol.py``: the requests and the answers, typed and read strictly;
- ``verdict.py``: the one place an outcome is decided, from the values the workers computed;
- ``pool.py`` and ``zygote.py``: the worker processes (TensorFlow imported once), one forked child
  per request, cut off by ``isolation.py``;
- ``tf1.py`` and ``tf2.py``: what a child runs on each side; ``calling.py`` how it calls the code,
  ``loading.py`` and ``script.py`` what of the user's module it runs (never script code).
"""

from .driver import DEFAULT_TIMEOUT, Job, Verification, tensorflow_version, verify, verify_cached
from .protocol import Status

__all__ = ["DEFAULT_TIMEOUT", "Job", "Status", "Verification", "tensorflow_version", "verify", "verify_cached"]
