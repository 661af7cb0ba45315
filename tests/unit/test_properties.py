"""Property-based tests (hypothesis): error counting, normalisation, non-negative estimates,
and fuzzing of the importers and the table reader (a valid table or a WerestError, nothing
else). Example counts are kept moderate so the file runs in well under a minute."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import jiwer
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from werest.errors import WerestError
from werest.estimation.estimate import estimate_utterances
from werest.features.proxy import Ranking
from werest.ingest.importers import import_table
from werest.ingest.table import read_table
from werest.model.files import Models, default_model_path, load_model
from werest.model.regressor import StackedWerRegressor
from werest.text import Normaliser, corpus_rate, count_errors, error_rate, normalise_many

FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOME = settings(max_examples=80, deadline=None)

words = st.lists(st.sampled_from(["a", "b", "c", "the", "cat", "25", "don't"]), max_size=12)
sentences = words.map(" ".join)
any_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


# --------------------------------------------------------------------------- error counting


@SOME
@given(text=any_text, normaliser=st.sampled_from(["whisper_english", "whisper_basic", "none"]))
def test_a_hypothesis_equal_to_its_reference_scores_zero(text, normaliser):
    normalised = normalise_many([text], Normaliser(normaliser)).iloc[0]
    counts = count_errors([normalised], [normalised], "word").iloc[0]
    assert counts["substitutions"] == counts["deletions"] == counts["insertions"] == 0
    chars = count_errors([normalised], [normalised], "char").iloc[0]
    assert chars[["substitutions", "deletions", "insertions"]].sum() == 0


@SOME
@given(reference=sentences, hypothesis=sentences)
def test_counts_agree_with_jiwer_and_wer_is_not_negative(reference, hypothesis):
    ours = count_errors([reference], [hypothesis], "word").iloc[0]
    assert ours["reference_length"] == len(reference.split())
    assert ours["hypothesis_length"] == len(hypothesis.split())
    errors = ours["substitutions"] + ours["deletions"] + ours["insertions"]
    rate = error_rate([errors], [ours["reference_length"]])[0]
    assert np.isnan(rate) or rate >= 0
    if reference.strip():  # jiwer refuses an empty reference
        theirs = jiwer.process_words(reference, hypothesis or "")
        assert (ours["substitutions"], ours["deletions"], ours["insertions"], ours["hits"]) == (
            theirs.substitutions,
            theirs.deletions,
            theirs.insertions,
            theirs.hits,
        )


@SOME
@given(reference=any_text.filter(lambda t: t.strip()), hypothesis=any_text)
def test_character_counts_agree_with_jiwer(reference, hypothesis):
    ours = count_errors([reference], [hypothesis], "char").iloc[0]
    theirs = jiwer.process_characters(reference, hypothesis)
    assert (ours["substitutions"], ours["deletions"], ours["insertions"], ours["hits"]) == (
        theirs.substitutions,
        theirs.deletions,
        theirs.insertions,
        theirs.hits,
    )


@SOME
@given(reference=words.filter(bool), extra=st.integers(min_value=1, max_value=5))
def test_insertions_make_wer_above_one_possible(reference, extra):
    inserted = reference + ["zz"] * (len(reference) + extra)  # more words than the reference
    counts = count_errors([" ".join(reference)], [" ".join(inserted)], "word").iloc[0]
    assert counts["insertions"] == len(reference) + extra and counts["deletions"] == 0
    assert counts["insertions"] / counts["reference_length"] > 1


@SOME
@given(pairs=st.lists(st.tuples(sentences, sentences), min_size=1, max_size=10))
def test_corpus_wer_is_total_errors_over_total_words(pairs):
    refs, hyps = zip(*pairs, strict=True)
    counts = count_errors(list(refs), list(hyps), "word")
    errors = counts["substitutions"] + counts["deletions"] + counts["insertions"]
    total_words = sum(len(r.split()) for r in refs)
    rate = corpus_rate(errors, counts["reference_length"])
    if total_words == 0:
        assert np.isnan(rate)
    else:
        assert rate == pytest.approx(errors.sum() / total_words)
        assert rate >= 0


# --------------------------------------------------------------------------- estimates


@pytest.fixture(scope="module")
def regressor() -> StackedWerRegressor:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 2, size=(120, 3))
    y = np.clip(X[:, 0] * 0.6 + rng.normal(0, 0.1, 120), 0, None)
    model = StackedWerRegressor(
        models=["hgb", "rf"],
        param_grids={"hgb": {"max_iter": [20]}, "rf": {"n_estimators": [10]}},
        n_splits=2,
    )
    return model.fit(X, y)


finite_or_not = st.one_of(
    st.floats(allow_nan=True, allow_infinity=False, width=32),
    st.floats(min_value=-1e6, max_value=1e6),
)


@FEW
@given(rows=st.lists(st.lists(finite_or_not, min_size=3, max_size=3), min_size=1, max_size=20))
def test_regressor_predictions_are_never_negative(regressor, rows):
    predicted = regressor.predict(np.asarray(rows, dtype=float))
    assert np.all(predicted >= 0) and np.all(predicted <= 1)


@pytest.fixture(scope="module")
def default_model():
    return Models(load_model(default_model_path()))


transcripts = st.lists(
    st.tuples(st.sampled_from(["u1", "u2", "u3", "u4"]), st.sampled_from("abc"), sentences),
    min_size=2,
    max_size=12,
    unique_by=lambda row: row[:2],
)


@FEW
@given(rows=transcripts)
def test_estimated_wer_is_never_negative(default_model, rows):
    table = pd.DataFrame(rows, columns=["utt_id", "system", "hypothesis"]).assign(dataset="d")
    targets = sorted(table["system"].unique())
    utterances = estimate_utterances(
        table, default_model, targets, ranking=Ranking.from_order(["a", "b", "c"])
    )
    predicted = utterances["predicted_wer"].dropna()
    assert (predicted >= 0).all()
    assert utterances.loc[utterances["status"] == "ok", "predicted_wer"].notna().all()


# --------------------------------------------------------------------------- fuzzing


def outcome(function, *args, **kwargs) -> pd.DataFrame | WerestError:
    """A valid table or a WerestError; any other exception fails the test."""
    try:
        table = function(*args, **kwargs)
    except WerestError as error:
        assert str(error) and "\n" not in str(error)
        return error
    assert isinstance(table, pd.DataFrame)
    assert not table.duplicated([c for c in ("dataset", "utt_id", "system") if c in table]).any()
    return table


lines_of = st.lists(any_text, max_size=6).map("\n".join)
file_bytes = st.one_of(st.binary(max_size=200), lines_of.map(lambda t: t.encode("utf-8")))


@FEW
@given(data=file_bytes, reference=file_bytes)
def test_kaldi_and_sclite_importers_on_random_files(data, reference):
    with tempfile.TemporaryDirectory() as folder:
        hyp, ref = Path(folder) / "sysA.txt", Path(folder) / "ref.txt"
        hyp.write_bytes(data)
        ref.write_bytes(reference)
        for fmt in ("kaldi", "sclite"):
            outcome(import_table, fmt, [hyp], reference=str(ref))


@FEW
@given(data=file_bytes, ids=st.lists(st.text("ab-_/ ", max_size=8), max_size=4))
def test_sphinx_importer_on_random_transcriptions(data, ids):
    with tempfile.TemporaryDirectory() as folder:
        etc = Path(folder) / "etc"
        etc.mkdir()
        (etc / "c_test.transcription").write_bytes(data)
        (etc / "c_test.fileids").write_text("\n".join(ids), encoding="utf-8")
        outcome(import_table, "sphinx", [Path(folder)])


pipe_lines = st.lists(
    st.tuples(st.text("0123.mp3 ", max_size=6), st.sampled_from(["|", "", "||"]), any_text),
    max_size=5,
).map(lambda rows: "\n".join(f"{a}{b}{c}" for a, b, c in rows).encode("utf-8"))


@FEW
@given(ground=st.one_of(pipe_lines, file_bytes), system=st.one_of(pipe_lines, file_bytes))
def test_thennal10_importer_on_random_pipe_files(ground, system):
    with tempfile.TemporaryDirectory() as folder:
        language = Path(folder) / "transcriptions" / "en"
        language.mkdir(parents=True)
        (language / "ground.txt").write_bytes(ground)
        (language / "whisper.txt").write_bytes(system)
        outcome(import_table, "thennal10", [Path(folder)])


csv_cells = st.one_of(any_text, st.sampled_from(["", "/a/b/x1.wav", "x1.", "0.5", '"q"']))
dighr_csv = st.lists(st.lists(csv_cells, min_size=1, max_size=5), max_size=5)
DIGHR_HEADERS = st.sampled_from(
    [
        ["files", "actual", "transcription_en-US", "word_error_rate"],
        ["files", "text", "transcription"],
        ["paths", "sentence", "transcriptionUS", "transcriptionUK", "word_error_rate"],
        ["actual", "transcription_en-US"],
    ]
)


@FEW
@given(header=DIGHR_HEADERS, rows=dighr_csv, noise=st.binary(max_size=40))
def test_dighr_importer_on_csvs_built_from_random_text(header, rows, noise):
    import csv

    with tempfile.TemporaryDirectory() as folder:
        dated = Path(folder) / "190101"
        dated.mkdir()
        with open(dated / "google.csv", "w", encoding="utf-8", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(rows)
        (dated / "azure.csv").write_bytes((",".join(header) + "\n").encode() + noise)
        outcome(import_table, "dighr", [Path(folder)])


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=6,
)
KEYS = ["dataset", "utt_id", "system", "hypothesis", "reference", "duration", "audio"]
jsonl_records = st.lists(
    st.dictionaries(st.sampled_from(KEYS) | any_text, json_values, max_size=7), max_size=5
)
csvish = st.text(alphabet=',;\t"\n abcdhu1é0.-', max_size=150).map(
    lambda t: "dataset,utt_id,system,hypothesis\n" + t
)


@FEW
@given(
    data=st.one_of(
        st.binary(max_size=300),
        csvish.map(lambda t: t.encode("utf-8")),
        jsonl_records.map(lambda rs: "\n".join(json.dumps(r) for r in rs).encode("utf-8")),
    ),
    suffix=st.sampled_from([".csv", ".tsv", ".jsonl", ".parquet"]),
)
def test_table_reader_on_random_files(data, suffix):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"t{suffix}"
        path.write_bytes(data)
        outcome(read_table, path)
        outcome(read_table, path, numeric=("duration", "reference"))
