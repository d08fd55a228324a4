"""Built-in PSF kernel stacks (OpticsBench, OpticsBench-RG, the ImageNet-C defocus disk): installed as the package
data ``corruptgen.kernels``; regenerate with ``python scripts/make_kernels.py``."""
