"""Dataset-card templates, one per benchmark family (``<benchmark>.md``) plus ``generic.md``: installed as the package
data ``corruptgen.cards``."""
