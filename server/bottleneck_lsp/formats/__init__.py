"""A document presented: the text report, the diff report, SARIF, speedscope, a Chrome
trace, and the wording they share. Imports ``schema`` and ``analysis``."""
