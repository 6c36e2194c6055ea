"""The team's measurement and training tools, beside the product package :mod:`pipeline`: the
fixture gate (:mod:`evaluation.evaluate`), the dedup evaluation (:mod:`evaluation.evaluate_dedup`),
the real-world evaluation (:mod:`evaluation.evaluate_real`), the gold checks they share
(:mod:`evaluation.gold`) and the title classifier's training (:mod:`evaluation.train_titles`).
Run from the repository root, e.g. ``python -m evaluation.evaluate_real``; see docs/evaluation.md."""
