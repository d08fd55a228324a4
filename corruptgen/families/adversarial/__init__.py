"""Adversarial transfer sets (Laugros, PhD thesis 2022, §3.2 and §3.3.3.1): FGSM, LL-FGSM, PGD, LL-PGD, MI-FGSM and
Carlini–Wagner L2 crafted on a surrogate model and stored losslessly. The attacks themselves live in
:mod:`corruptgen.attacks`, shared with white-box evaluation."""

from . import benchmark, corruptions  # noqa: F401 (register the corruptions and the family)
