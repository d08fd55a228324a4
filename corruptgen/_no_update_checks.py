"""No network request the user did not ask for: imported first by :mod:`corruptgen`, before any library that sends
one when it is imported, so a build talks only to the source and the output it was given.

albumentations (2.0.8) asks PyPI for its latest version on ``import albumentations`` unless the environment variable
``NO_ALBUMENTATIONS_UPDATE`` is ``1`` or ``true`` (its ``__init__.py``). datasets and huggingface_hub send nothing on
import; their telemetry is only sent by explicit ``send_telemetry`` calls, which datasets does not make.
"""

import os

os.environ["NO_ALBUMENTATIONS_UPDATE"] = "1"  # inherited by spawned workers; Ray workers import corruptgen first too
