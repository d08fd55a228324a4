"""Package data: the built-in PSF kernel stacks (``kernels/``) and the dataset-card templates (``cards/``)."""
