"""The second extraction stage with the real multilingual-e5-small model (skipped when the
build has not produced dist/models, or ONNX Runtime is not installed): a paraphrase no
pattern catches is classified, refused clauses never reach the model, pattern results stay."""

from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[1] / "dist" / "models"
if not (MODELS / "manifest.json").exists():
    pytest.skip("dist/models/manifest.json missing: run `python3 build.py` to build the models",
                allow_module_level=True)
pytest.importorskip("onnxruntime", reason="the e5 test needs ONNX Runtime (cpython extra)")
pytest.importorskip("tokenizers", reason="the e5 test needs tokenizers (cpython extra)")

from omoide.embeddings.onnx_provider import OnnxEmbedder  # noqa: E402
from omoide.governance.extract import extract  # noqa: E402
from omoide.governance.prototypes import classifier_for  # noqa: E402

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def classifier():
    return classifier_for(OnnxEmbedder.from_model_id("omoide/multilingual-e5-small", "q8",
                                                     threads=1))


@pytest.mark.parametrize(("text", "kind"), [
    ("pho on a rainy evening makes me so happy", "preference"),
    ("I'm picking up the ukulele", "decision"),
    ("Sundays mean pancakes in my house", "pattern"),
])
def test_a_paraphrase_no_pattern_catches_is_classified(classifier, text, kind):
    assert extract([text])[0] == []  # the pattern stage alone finds nothing
    found, unmatched = extract([text], classifier=classifier)
    assert [(c.kind, c.via) for c in found] == [(kind, "prototype")]
    assert found[0].key.startswith(f"{kind}:") and unmatched == []


@pytest.mark.parametrize("text", [
    "Do you think cats are great?", "My sister can't live without pottery",
    "姉は陶芸が生きがいらしい", "what a day", "疲れたー", "Tell me about pottery",
])
def test_questions_reports_and_small_talk_stay_empty(classifier, text):
    assert extract([text], classifier=classifier)[0] == []


def test_pattern_results_are_unchanged_and_the_classifier_is_cached(classifier):
    messages = ["I prefer TypeScript. I always commit before pushing.", "来月から陶芸教室に通う"]
    plain, _ = extract(messages)
    staged, _ = extract(messages, classifier=classifier)
    assert [(c.key, c.via) for c in staged] == [(c.key, "pattern") for c in plain]
    assert classifier_for(classifier.embedder) is classifier
