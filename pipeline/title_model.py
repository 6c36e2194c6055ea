"""The title classifier: the probability that a title candidate (:mod:`pipeline.candidates`) is a
paper's title.

A gradient-boosted tree ensemble (scikit-learn ``GradientBoostingClassifier``, log-loss; Friedman
2001, "Greedy Function Approximation") trained by :mod:`evaluation.train_titles`, stored as JSON
(``data/title_model.json``); prediction needs numpy only. Loading raises ValueError when the
stored feature names differ from :data:`pipeline.candidates.FEATURES` (retrain after a change).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from .candidates import FEATURES, Candidate

MODEL_PATH = Path(__file__).resolve().parent / "data" / "title_model.json"
#: Candidates scored at once.
CHUNK = 2048


class TitleModel:
    """A stored tree ensemble; :meth:`predict` gives probabilities, shape ``(n,)``."""

    def __init__(self, spec: dict):
        if not isinstance(spec, dict) or not spec.get("features") or not spec.get("trees"):
            raise ValueError("it holds no model (no features or no trees)")
        if tuple(spec["features"]) != FEATURES:
            raise ValueError("it was trained on other features: rerun python -m evaluation.train_titles")
        self.threshold = float(spec["threshold"])
        self.learning_rate = float(spec["learning_rate"])
        self.init = float(spec["init_log_odds"])
        if not (0 < self.threshold < 1 and np.isfinite([self.learning_rate, self.init]).all()):
            raise ValueError("its threshold, learning rate or initial log-odds is out of range")
        self.trees = []
        for t in spec["trees"]:
            left, right, feat = (np.asarray(t[k], dtype=int) for k in ("left", "right", "feature"))
            thr, value = (np.asarray(t[k], dtype=float) for k in ("threshold", "value"))
            n = len(left)
            nodes = np.arange(n)
            inner = left >= 0
            # scikit-learn numbers a child after its parent: every path ends, every index is valid
            if not (n and len(right) == len(feat) == len(thr) == len(value) == n
                    and ((left > nodes) | (left == -1)).all() and ((right > nodes) | (right == -1)).all()
                    and (left < n).all() and (right < n).all() and ((right >= 0) == inner).all()
                    and ((feat[inner] >= 0) & (feat[inner] < len(FEATURES))).all()
                    and np.isfinite(value).all() and np.isfinite(thr[inner]).all()):
                raise ValueError("a tree is malformed")
            self.trees.append((left, right, feat, thr, value))
        if not self.trees:
            raise ValueError("it has no trees")
        # the trees padded to one size and stacked, leaves marked by feature -1
        size = max(len(t[0]) for t in self.trees)

        def stack(k: int, fill: float) -> np.ndarray:
            return np.stack([np.pad(t[k], (0, size - len(t[k])), constant_values=fill) for t in self.trees])

        feats = stack(2, -1)
        feats[stack(0, -1) < 0] = -1  # a leaf: no feature to test
        # flattened tree after tree: nodes are indices into these arrays
        base = (np.arange(len(self.trees)) * size)[:, None]
        self._roots = base[:, 0]
        self._flat = ((stack(0, -1) + base).ravel(), (stack(1, -1) + base).ravel(), feats.ravel(),
                      stack(3, 0.0).ravel(), stack(4, 0.0).ravel())
        self._depth = _depth(self.trees)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Probabilities that each row of ``x`` ``(n, len(FEATURES))`` is a title; all trees walked
        together, one level per step."""
        left, right, feat, thr, value = self._flat
        rows = np.arange(len(x))[:, None]
        node = np.broadcast_to(self._roots, (len(x), len(self._roots)))
        for _ in range(self._depth):
            f = feat[node]
            go_left = x[rows, np.maximum(f, 0)] <= thr[node]
            node = np.where(f >= 0, np.where(go_left, left[node], right[node]), node)
        score = self.init + self.learning_rate * value[node].sum(axis=1)
        return 1.0 / (1.0 + np.exp(-score))

    def scores(self, cands: list[Candidate]) -> np.ndarray:
        """Probabilities ``(len(cands),)``, :data:`CHUNK` rows at a time."""
        if not cands:
            return np.zeros(0)
        return np.concatenate([self.predict(np.array([c.vector() for c in cands[i:i + CHUNK]], dtype=float))
                               for i in range(0, len(cands), CHUNK)])


def _depth(trees: list) -> int:
    """The deepest leaf's depth over all trees (children are numbered after their parents)."""
    deepest = 0
    for left, right, *_ in trees:
        depth = np.zeros(len(left), dtype=int)
        for i in range(len(left)):
            for child in (left[i], right[i]):
                if child >= 0:
                    depth[child] = depth[i] + 1
        deepest = max(deepest, int(depth.max()))
    return deepest


@functools.cache
def load(path: str | None = None) -> TitleModel:
    """The stored model (cached per path); ValueError naming the file when it is unreadable or invalid."""
    where = Path(path or MODEL_PATH)
    try:
        return TitleModel(json.loads(where.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"title model {where} is not usable: {exc}") from exc
